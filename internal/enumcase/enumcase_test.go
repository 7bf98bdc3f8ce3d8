package enumcase_test

import (
	"bytes"
	"testing"

	"github.com/advisorhq/gateway/internal/advisorspec"
	"github.com/advisorhq/gateway/internal/enumcase"
)

func TestScreamingFollowsTheGraphQLConvention(t *testing.T) {
	for spec, want := range map[string]string{
		"IndividualRevocableTrust": "INDIVIDUAL_REVOCABLE_TRUST",
		"CCorporation":             "C_CORPORATION",
		"SCorporation":             "S_CORPORATION",
		"estate_planning":          "ESTATE_PLANNING",
		"Uploaded":                 "UPLOADED",
		"NoFileUploaded":           "NO_FILE_UPLOADED",
		"1099":                     "FORM_1099",
		"w2":                       "W2",
		"tax_return_1040":          "TAX_RETURN_1040",
		"form_8949_crypto":         "FORM_8949_CRYPTO",
		"Individual":               "INDIVIDUAL",
		"pour_over_will":           "POUR_OVER_WILL",
		"Last Will and Testament":  "LAST_WILL_AND_TESTAMENT",
		"insightsUnavailable":      "INSIGHTS_UNAVAILABLE",
		"FileTooLarge":             "FILE_TOO_LARGE",
	} {
		if got := enumcase.Screaming(spec); got != want {
			t.Errorf("Screaming(%q) = %q, want %q", spec, got, want)
		}
	}
}

// Every enumeration of the specification converts without two values meeting.
func TestEveryEnumerationOfTheSpecificationConvertsOneToOne(t *testing.T) {
	var subs, types []string
	for _, c := range advisorspec.Categories {
		for _, s := range c.SubCategories {
			subs = append(subs, s.Name)
			types = append(types, s.Types...)
		}
	}
	for name, values := range map[string][]string{
		"TrustType": advisorspec.TrustTypes, "IncorporationForm": advisorspec.IncorporationForms,
		"WillType": advisorspec.WillTypes, "DocumentSubCategory": subs, "DocumentType": types,
	} {
		table := func() (tbl enumcase.Table) {
			defer func() {
				if r := recover(); r != nil {
					t.Errorf("%s: %v", name, r)
				}
			}()
			seen := map[string]bool{}
			var unique []string
			for _, v := range values {
				if !seen[v] {
					seen[v] = true
					unique = append(unique, v)
				}
			}
			return enumcase.NewTable(name, unique...)
		}()
		for _, v := range table.Values() {
			var b bytes.Buffer
			table.Marshal(&b, v)
			back, err := table.Unmarshal(b.String()[1 : b.Len()-1])
			if err != nil || back != v {
				t.Errorf("%s: %q round-trips to %q, %v", name, v, back, err)
			}
		}
	}
}

func TestUnmarshalRefusesUnknownNames(t *testing.T) {
	tbl := enumcase.NewTable("WillType", advisorspec.WillTypes...)
	if _, err := tbl.Unmarshal("PourOverWill"); err == nil {
		t.Error("the specification's spelling must not be accepted as a GraphQL name")
	}
	if _, err := tbl.Unmarshal(3); err == nil {
		t.Error("a number must not be accepted")
	}
}
