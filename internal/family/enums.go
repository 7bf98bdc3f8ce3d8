package family

import (
	"io"

	"github.com/advisorhq/gateway/internal/advisorspec"
	"github.com/advisorhq/gateway/internal/apperr"
	"github.com/advisorhq/gateway/internal/enumcase"
)

// Enumerations hold the specification's spelling, so they go to the upstream as they are;
// MarshalGQL and UnmarshalGQL convert at the GraphQL boundary. The tables are built once from
// the specification's lists and never change.
var (
	contactTypes       = enumcase.NewTable("ContactType", contactTypeNames()...)
	trustTypes         = enumcase.NewTable("TrustType", advisorspec.TrustTypes...)
	incorporationForms = enumcase.NewTable("IncorporationForm", advisorspec.IncorporationForms...)
	willTypes          = enumcase.NewTable("WillType", advisorspec.WillTypes...)
)

func contactTypeNames() []string {
	out := make([]string, len(advisorspec.ContactTypes))
	for i, t := range advisorspec.ContactTypes {
		out[i] = string(t)
	}
	return out
}

// ContactType is what a contact card is: Individual, Trust, Entity, Charity, Will or Class.
type ContactType string

func (t ContactType) MarshalGQL(w io.Writer) { contactTypes.Marshal(w, string(t)) }

func (t *ContactType) UnmarshalGQL(v any) error {
	s, err := contactTypes.Unmarshal(v)
	if err != nil {
		return apperr.BadEnumValue("ContactType", v, contactTypes.GraphQLNames())
	}
	*t = ContactType(s)
	return nil
}

// TrustType is a trust's kind, such as JointRevocableTrust.
type TrustType string

func (t TrustType) MarshalGQL(w io.Writer) { trustTypes.Marshal(w, string(t)) }

func (t *TrustType) UnmarshalGQL(v any) error {
	s, err := trustTypes.Unmarshal(v)
	if err != nil {
		return apperr.BadEnumValue("TrustType", v, trustTypes.GraphQLNames())
	}
	*t = TrustType(s)
	return nil
}

// IncorporationForm is an entity's legal form, such as LimitedLiabilityCompany.
type IncorporationForm string

func (f IncorporationForm) MarshalGQL(w io.Writer) { incorporationForms.Marshal(w, string(f)) }

func (f *IncorporationForm) UnmarshalGQL(v any) error {
	s, err := incorporationForms.Unmarshal(v)
	if err != nil {
		return apperr.BadEnumValue("IncorporationForm", v, incorporationForms.GraphQLNames())
	}
	*f = IncorporationForm(s)
	return nil
}

// WillType is LastWillAndTestament or PourOverWill.
type WillType string

func (t WillType) MarshalGQL(w io.Writer) { willTypes.Marshal(w, string(t)) }

func (t *WillType) UnmarshalGQL(v any) error {
	s, err := willTypes.Unmarshal(v)
	if err != nil {
		return apperr.BadEnumValue("WillType", v, willTypes.GraphQLNames())
	}
	*t = WillType(s)
	return nil
}

// RelationshipRole is how one contact card refers to another. It exists only in the gateway,
// so it is spelled the GraphQL way.
type RelationshipRole string

// The roles, one for each reference field of the specification.
const (
	RoleTrustCreator   RelationshipRole = "TRUST_CREATOR"
	RoleInitialTrustee RelationshipRole = "INITIAL_TRUSTEE"
	RoleOwner          RelationshipRole = "OWNER"
	RoleJointOwner     RelationshipRole = "JOINT_OWNER"
	RoleTestator       RelationshipRole = "TESTATOR"
	RoleExecutor       RelationshipRole = "EXECUTOR"
	RoleClassParty     RelationshipRole = "CLASS_PARTY"
)

// Roles lists every role in schema order.
var Roles = []RelationshipRole{RoleTrustCreator, RoleInitialTrustee, RoleOwner, RoleJointOwner, RoleTestator, RoleExecutor, RoleClassParty}

// MarshalGQL writes the role; roles are GraphQL names, which need no escapes.
func (r RelationshipRole) MarshalGQL(w io.Writer) {
	_, _ = io.WriteString(w, `"`)
	_, _ = io.WriteString(w, string(r))
	_, _ = io.WriteString(w, `"`)
}

func (r *RelationshipRole) UnmarshalGQL(v any) error {
	s, _ := v.(string)
	for _, role := range Roles {
		if string(role) == s {
			*r = role
			return nil
		}
	}
	names := make([]string, len(Roles))
	for i, role := range Roles {
		names[i] = string(role)
	}
	return apperr.BadEnumValue("RelationshipRole", v, names)
}

// EnumTables lists the GraphQL names of each enumeration this package converts, by schema type
// name, so a test can hold the schema to the specification.
func EnumTables() map[string][]string {
	roles := make([]string, len(Roles))
	for i, r := range Roles {
		roles[i] = string(r)
	}
	return map[string][]string{
		"ContactType":       contactTypes.GraphQLNames(),
		"TrustType":         trustTypes.GraphQLNames(),
		"IncorporationForm": incorporationForms.GraphQLNames(),
		"WillType":          willTypes.GraphQLNames(),
		"RelationshipRole":  roles,
	}
}
