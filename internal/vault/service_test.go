package vault_test

import (
	"context"
	"testing"

	"github.com/99designs/gqlgen/graphql"

	"github.com/advisorhq/gateway/internal/advisor"
	"github.com/advisorhq/gateway/internal/advisorspec"
	"github.com/advisorhq/gateway/internal/apperr"
	"github.com/advisorhq/gateway/internal/vault"
)

// fakeAPI answers Get Document with get and records the bodies of writes, which it refuses
// with refuse when set.
type fakeAPI struct {
	vault.API
	get    func(wid, vaultID string) (advisorspec.Document, error)
	list   []advisorspec.Document
	bodies []string
	refuse error
}

func (f *fakeAPI) Document(_ context.Context, wid, vaultID string) (advisorspec.Document, error) {
	return f.get(wid, vaultID)
}

func (f *fakeAPI) Documents(context.Context, string, advisorspec.DocumentQuery) (advisorspec.DocumentList, error) {
	return advisorspec.DocumentList{Documents: f.list}, nil
}

func (f *fakeAPI) CreateDocument(_ context.Context, _ string, body []byte) (advisorspec.NewDocument, error) {
	f.bodies = append(f.bodies, string(body))
	return advisorspec.NewDocument{VaultID: "v1", UploadURI: "http://up/v1"}, f.refuse
}

func upstream(code apperr.Code, status int, said string) error {
	return &apperr.Error{Code: code, Message: advisor.SchemaMessage("", said), Upstream: &apperr.Upstream{Status: status, Message: said}}
}

func ptr[T any](v T) *T { return &v }

func TestDocumentInputErrorsSpeakTheSchemasNames(t *testing.T) {
	t.Parallel()
	valid := vault.CreateDocumentInput{Name: "n", Extension: "pdf", Category: "estate_planning", SubCategory: "irrevocable_trusts"}
	with := func(f func(*vault.CreateDocumentInput)) vault.CreateDocumentInput {
		in := valid
		f(&in)
		return in
	}
	for _, tc := range []struct {
		name           string
		in             vault.CreateDocumentInput
		refuse         error
		field, message string
	}{
		{"a sub-category of another category", with(func(in *vault.CreateDocumentInput) { in.Category = "miscellaneous" }), nil,
			"input.subCategory", "input.subCategory IRREVOCABLE_TRUSTS is not one of category MISCELLANEOUS's: UNCATEGORIZED, MISCELLANEOUS_OTHER (documentTaxonomy lists them all)"},
		{"a type the sub-category does not allow", with(func(in *vault.CreateDocumentInput) { in.Type = ptr(vault.DocumentType("pour_over_will")) }), nil,
			"input.type", "input.type POUR_OVER_WILL is not one subCategory IRREVOCABLE_TRUSTS allows: DYNASTY_TRUST, SLAT, GRAT, ILIT, CRUT, QPRT, OTHER"},
		{"a type for a sub-category without types", with(func(in *vault.CreateDocumentInput) {
			in.SubCategory, in.Type = "living_will", ptr(vault.DocumentType("slat"))
		}), nil,
			"input.type", "input.type must be left out: subCategory LIVING_WILL has no types (documentTaxonomy lists the sub-categories that have types)"},
		{"a blank name", with(func(in *vault.CreateDocumentInput) { in.Name = " " }), nil, "input.name", "input.name must not be blank"},
		{"tags only the service knows are wrong", with(func(in *vault.CreateDocumentInput) { in.Tags = []string{"mine"} }),
			upstream(apperr.BadUserInput, 400, "Invalid tags: mine"), "input.tags", "input.tags: Invalid tags: mine"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			api := &fakeAPI{refuse: tc.refuse}
			_, err := vault.NewService(api, vault.DefaultDetailConcurrency).Create(context.Background(), "w", tc.in, nil)
			e, _ := apperr.As(err)
			if e == nil || e.Code != apperr.BadUserInput || e.Field != tc.field || e.Message != tc.message {
				t.Fatalf("got %v, want BAD_USER_INPUT %q %q", err, tc.field, tc.message)
			}
			if tc.refuse == nil && len(api.bodies) > 0 {
				t.Errorf("a refused input reached the service: %v", api.bodies)
			}
		})
	}
}

func TestGetTellsAMissingDocumentFromAFileInProcessing(t *testing.T) {
	t.Parallel()
	api := &fakeAPI{
		get: func(_, vaultID string) (advisorspec.Document, error) {
			if vaultID == "busy" {
				return advisorspec.Document{}, upstream(apperr.NotFound, 404, advisorspec.MessageFileNotReady)
			}
			return advisorspec.Document{}, upstream(apperr.NotFound, 404, "Vault doesn't exist")
		},
		list: []advisorspec.Document{{VaultID: "busy", Name: "n", Category: "family", SubCategory: "family_other"}},
	}
	svc := vault.NewService(api, vault.DefaultDetailConcurrency)
	ctx := advisor.WithCache(context.Background())
	if d, err := svc.Get(ctx, "w", "gone"); d != nil || err != nil {
		t.Errorf("Get of a missing document: %v, %v; want nil, nil", d, err)
	}
	d, err := svc.Get(ctx, "w", "busy")
	if err != nil || d == nil {
		t.Fatalf("Get of a document in processing: %v, %v", d, err)
	}
	if st, _ := svc.FileStatus(ctx, d); st != vault.FileStatusProcessing {
		t.Errorf("file status %q, want %q", st, vault.FileStatusProcessing)
	}
}

func TestTaxonomyIsTheSpecifications(t *testing.T) {
	t.Parallel()
	got := vault.Taxonomy()
	if len(got) != len(advisorspec.Categories) {
		t.Fatalf("%d categories, want %d", len(got), len(advisorspec.Categories))
	}
	for i, c := range advisorspec.Categories {
		if string(got[i].Category) != c.Name || len(got[i].SubCategories) != len(c.SubCategories) {
			t.Fatalf("category %d: %+v, want %+v", i, got[i], c)
		}
		for j, sc := range c.SubCategories {
			g := got[i].SubCategories[j]
			if string(g.SubCategory) != sc.Name || len(g.Types) != len(sc.Types) {
				t.Errorf("%s: %+v, want %+v", c.Name, g, sc)
			}
		}
	}
}

func TestUpdateErrorsOfTheTaxonomySayWhatTheInputLacks(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name           string
		in             vault.UpdateDocumentInput
		said           string // the service's refusal
		field, message string
	}{
		{"a category the document's sub-category is not in", vault.UpdateDocumentInput{Category: ptr(vault.DocumentCategory("miscellaneous"))},
			"Invalid sub-category", "input.subCategory",
			"input.subCategory must be given with category MISCELLANEOUS, as the document's is not one of its: give one of UNCATEGORIZED, MISCELLANEOUS_OTHER (documentTaxonomy lists them all)"},
		{"a sub-category not in the document's category", vault.UpdateDocumentInput{SubCategory: ptr(vault.DocumentSubCategory("passport"))},
			"Invalid sub-category", "input.subCategory",
			"input.subCategory PASSPORT is not one of the document's category's (documentTaxonomy lists each category's)"},
		{"a type the document's sub-category does not allow", vault.UpdateDocumentInput{Type: graphql.OmittableOf(ptr(vault.DocumentType("ilit")))},
			"Invalid type: sub-category w2 has no types", "input.type",
			"input.type must be left out: subCategory W2 has no types (documentTaxonomy lists the sub-categories that have types)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			api := &updateAPI{refuse: upstream(apperr.BadUserInput, 400, tc.said)}
			_, err := vault.NewService(api, vault.DefaultDetailConcurrency).Update(context.Background(), "w", "v", tc.in, nil)
			e, _ := apperr.As(err)
			if e == nil || e.Field != tc.field || e.Message != tc.message || e.Upstream == nil || e.Upstream.Message != tc.said {
				t.Fatalf("got %+v, want %q %q with the service's words %q", e, tc.field, tc.message, tc.said)
			}
		})
	}
}

// updateAPI refuses every Update Document with refuse.
type updateAPI struct {
	vault.API
	refuse error
}

func (u *updateAPI) UpdateDocument(context.Context, string, string, []byte) (advisorspec.Document, error) {
	return advisorspec.Document{}, u.refuse
}
