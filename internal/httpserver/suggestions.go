package httpserver

import (
	"context"
	"regexp"

	"github.com/99designs/gqlgen/graphql"
	"github.com/vektah/gqlparser/v2/ast"
	"github.com/vektah/gqlparser/v2/gqlerror"
	"github.com/vektah/gqlparser/v2/validator/core"
	"github.com/vektah/gqlparser/v2/validator/rules"
)

// With introspection off the schema is the gateway's to keep, and a validation message that
// suggests "Did you mean "limit"?" gives it away a name at a time. gqlgen's switch
// (SetDisableSuggestion) quiets only the field and leaf rules; gqlparser's argument, input
// field, enum value and type rules have quiet twins that must be chosen too, the @oneOf rule
// names a member the query did not write, and the domain packages suggest the right case of an
// enum value. validationRules picks the quiet rules, and withoutSuggestions takes whatever
// suggestion is left out of every error on its way to the caller.

// suggestingRules are the default rules that suggest, each with its quiet twin.
var suggestingRules = []struct {
	name  string
	quiet core.Rule
}{
	{rules.FieldsOnCorrectTypeRule.Name, rules.FieldsOnCorrectTypeRuleWithoutSuggestions},
	{rules.KnownArgumentNamesRule.Name, rules.KnownArgumentNamesRuleWithoutSuggestions},
	{rules.KnownTypeNamesRule.Name, rules.KnownTypeNamesRuleWithoutSuggestions},
	{rules.ScalarLeafsRule.Name, rules.ScalarLeafsRuleWithoutSuggestions},
	{rules.ValuesOfCorrectTypeRule.Name, rules.ValuesOfCorrectTypeRuleWithoutSuggestions},
}

// validationRules returns the rules operations are validated with: GraphQL's own, quiet ones
// when suggest is false (introspection is off, and refused too), and a @oneOf check that names the member the query wrote.
func validationRules(suggest bool) func() *rules.Rules {
	return func() *rules.Rules {
		r := rules.NewDefaultRules()
		values := rules.ValuesOfCorrectTypeRule
		if !suggest {
			for _, s := range suggestingRules {
				r.RemoveRule(s.name)
				if s.name != values.Name {
					r.AddRule(s.quiet.Name, s.quiet.RuleFunc)
				}
			}
			values = rules.ValuesOfCorrectTypeRuleWithoutSuggestions
			r.AddRule(introspectionOff.Name, introspectionOff.RuleFunc)
		}
		r.RemoveRule(values.Name)
		values = oneOfNamesWhatWasWritten(values)
		r.AddRule(values.Name, values.RuleFunc)
		return r
	}
}

// oneOfNull is gqlparser's message for a @oneOf input given one member, null. It names the
// input's first member, whichever the query wrote.
var oneOfNull = regexp.MustCompile(`^Field "(\w+)\.\w+" must be non-null\.$`)

// oneOfNamesWhatWasWritten wraps the rule that checks values so that its @oneOf message names
// the member the query gave, not the input's first.
func oneOfNamesWhatWasWritten(values core.Rule) core.Rule {
	return core.Rule{Name: values.Name, RuleFunc: func(observers *core.Events, addError core.AddErrFunc) {
		type at struct{ line, column int }
		written := map[at]string{}
		// Registered before the rule's own, so it sees each value first.
		observers.OnValue(func(_ *core.Walker, v *ast.Value) {
			if v.Kind != ast.ObjectValue || v.Definition == nil || v.Definition.Directives.ForName("oneOf") == nil || len(v.Children) != 1 {
				return
			}
			if child := v.Children[0]; child.Value != nil && child.Value.Position != nil {
				written[at{child.Value.Position.Line, child.Value.Position.Column}] = child.Name
			}
		})
		values.RuleFunc(observers, func(options ...core.ErrorOption) {
			var e gqlerror.Error
			for _, o := range options {
				o(&e)
			}
			m := oneOfNull.FindStringSubmatch(e.Message)
			if m == nil || len(e.Locations) != 1 {
				addError(options...)
				return
			}
			name, ok := written[at{e.Locations[0].Line, e.Locations[0].Column}]
			if !ok {
				addError(options...)
				return
			}
			addError(append(options, func(err *gqlerror.Error) {
				err.Message = `Field "` + m[1] + "." + name + `" must be non-null.`
			})...)
		})
	}}
}

// suggestion is a suggestion as gqlparser and apperr.BadEnumValue end a message with one.
var suggestion = regexp.MustCompile(`\s*Did you mean [^?]*\?`)

// withoutSuggestions presents errors as present does, without any suggestion in their
// messages. The log has them whole: present logs before it returns.
func withoutSuggestions(present graphql.ErrorPresenterFunc) graphql.ErrorPresenterFunc {
	return func(ctx context.Context, err error) *gqlerror.Error {
		e := present(ctx, err)
		if e == nil || !suggestion.MatchString(e.Message) {
			return e
		}
		quiet := *e
		quiet.Message = suggestion.ReplaceAllString(e.Message, "")
		return &quiet
	}
}
