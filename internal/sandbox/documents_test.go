package sandbox_test

import (
	"fmt"
	"net/http"
	"net/url"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/advisorhq/gateway/internal/advisorspec"
	"github.com/advisorhq/gateway/internal/sandbox"
)

// The document endpoints, walked rule by rule through the specification's Document section,
// its Documents endpoints and rules, and its Errors and Limits tables.

// docsPath is the documents collection of a top account, written with the trailing slash the
// specification gives it.
func docsPath(wid string) string { return "/v2/top-accounts/" + wid + "/documents/" }

func docPath(wid, vaultID string) string { return "/v2/top-accounts/" + wid + "/documents/" + vaultID }

// docOn is f reporting to t: the harness's helpers fail the test they were made for, and a
// subtest must not stop its parent.
func docOn(f *fixture, t *testing.T) *fixture {
	g := *f
	g.t = t
	return &g
}

// docRemove, as a value given to docWith, removes the key.
type docRemove struct{}

// docWith returns a copy of body with changes applied.
func docWith(body map[string]any, changes map[string]any) map[string]any {
	out := make(map[string]any, len(body)+len(changes))
	for k, v := range body {
		out[k] = v
	}
	for k, v := range changes {
		if _, remove := v.(docRemove); remove {
			delete(out, k)
			continue
		}
		out[k] = v
	}
	return out
}

// docFull is an Upload Document body that sets every field the caller may set.
func docFull() map[string]any {
	return map[string]any{
		"name":         "ILIT Agreement",
		"extension":    ".pdf",
		"description":  "Signed copy, with the Crummey letters.",
		"category":     "estate_planning",
		"sub_category": "irrevocable_trusts",
		"type":         "ilit",
		"tags":         []string{"funded", "current"},
	}
}

// docCreate uploads a document's metadata and returns its vault_id and upload address.
func docCreate(t *testing.T, f *fixture, wid string, body map[string]any) (vaultID, uploadURI string) {
	t.Helper()
	r := docOn(f, t).v2("POST", docsPath(wid), body).wantOK(t).object(t)
	return str(t, r, "vault_id"), str(t, r, "upload_uri")
}

func docGet(t *testing.T, f *fixture, wid, vaultID string) map[string]any {
	t.Helper()
	return docOn(f, t).v2("GET", docPath(wid, vaultID), nil).wantOK(t).object(t)
}

// docWantKeys checks that an object has exactly the keys want.
func docWantKeys(t *testing.T, what string, m map[string]any, want ...string) {
	t.Helper()
	got := make([]string, 0, len(m))
	for k := range m {
		got = append(got, k)
	}
	slices.Sort(got)
	want = slices.Sorted(slices.Values(want))
	if !slices.Equal(got, want) {
		t.Errorf("%s has keys %v, want %v", what, got, want)
	}
}

// docWantField checks one field of a decoded object against the value it was sent as.
func docWantField(t *testing.T, m map[string]any, key string, want any) {
	t.Helper()
	if w, ok := want.([]string); ok {
		anys := make([]any, len(w))
		for i, s := range w {
			anys[i] = s
		}
		want = anys
	}
	if got := m[key]; !reflect.DeepEqual(got, want) {
		t.Errorf("%s is %#v, want %#v", key, got, want)
	}
}

// docWantTime checks an ISO 8601 UTC date-time field against the instant it should name.
func docWantTime(t *testing.T, m map[string]any, key string, want time.Time) {
	t.Helper()
	s := str(t, m, key)
	got, err := time.Parse(time.RFC3339Nano, s)
	switch {
	case err != nil:
		t.Errorf("%s %q is not an ISO 8601 date-time: %v", key, s, err)
	case !strings.HasSuffix(s, "Z"):
		t.Errorf("%s %q is not written in UTC, want a Z suffix", key, s)
	case !got.Equal(want):
		t.Errorf("%s is %s, want %s", key, got.Format(time.RFC3339Nano), want.Format(time.RFC3339Nano))
	}
}

// docPage is one page of List Documents.
type docPage struct {
	Documents  []map[string]any `json:"documents"`
	Pagination map[string]any   `json:"pagination"`
}

func docList(t *testing.T, f *fixture, wid, query string) docPage {
	t.Helper()
	var p docPage
	r := docOn(f, t).v2("GET", docsPath(wid)+query, nil).wantOK(t)
	r.decode(t, &p)
	if p.Documents == nil {
		t.Errorf("documents is %s, want an array", r.body)
	}
	return p
}

func (p docPage) ids(t *testing.T) []string {
	t.Helper()
	out := make([]string, len(p.Documents))
	for i, d := range p.Documents {
		out[i] = str(t, d, "vault_id")
	}
	return out
}

func (p docPage) total(t *testing.T) int {
	t.Helper()
	n, ok := p.Pagination["total_count"].(float64)
	if !ok || n != float64(int(n)) {
		t.Fatalf("pagination.total_count is %v, want an integer", p.Pagination["total_count"])
	}
	return int(n)
}

// docListAll pages through List Documents with limit and query, following nextToken, and
// returns every vault_id in the order served.
func docListAll(t *testing.T, f *fixture, wid, query string, limit int) []string {
	t.Helper()
	var all []string
	token := ""
	for page := 0; ; page++ {
		q := url.Values{"limit": {fmt.Sprint(limit)}}
		if token != "" {
			q.Set("nextToken", token)
		}
		p := docList(t, f, wid, "?"+q.Encode()+query)
		ids := p.ids(t)
		if len(ids) > limit {
			t.Fatalf("page %d has %d documents, want at most %d", page, len(ids), limit)
		}
		all = append(all, ids...)
		if len(ids) < limit {
			return all
		}
		token = ids[len(ids)-1]
		if page > 1000 {
			t.Fatalf("paging did not end after %d pages", page)
		}
	}
}

// docDemoWID returns the wid of a demo top account.
func docDemoWID(t *testing.T, f *fixture, externalID string) string {
	t.Helper()
	var page struct {
		TopAccounts []map[string]any `json:"top_accounts"`
	}
	docOn(f, t).v2("GET", "/v2/top-accounts/?limit=100", nil).wantOK(t).decode(t, &page)
	for _, ta := range page.TopAccounts {
		if ta["external_id"] == externalID {
			return str(t, ta, "wid")
		}
	}
	t.Fatalf("no demo top account %s", externalID)
	return ""
}

func TestUploadDocumentAnswersWidVaultIDAndUploadURI(t *testing.T) {
	t.Parallel()
	f := emptySandbox(t)
	wid := f.addTopAccount("UP-1", "Upload family")

	first := f.v2("POST", docsPath(wid), docFull()).wantOK(t).object(t)
	docWantKeys(t, "Upload Document response", first, "wid", "vault_id", "upload_uri")
	docWantField(t, first, "wid", wid)
	vaultID, uri := str(t, first, "vault_id"), str(t, first, "upload_uri")
	if vaultID == "" || len(vaultID) > advisorspec.MaxVaultID {
		t.Errorf("vault_id %q has %d characters, want 1 to %d", vaultID, len(vaultID), advisorspec.MaxVaultID)
	}
	if len(uri) > advisorspec.MaxUploadURI {
		t.Errorf("upload_uri has %d characters, want at most %d", len(uri), advisorspec.MaxUploadURI)
	}
	if u, err := url.Parse(uri); err != nil || !u.IsAbs() {
		t.Errorf("upload_uri %q is not an absolute address: %v", uri, err)
	}

	// The collection path without its trailing slash is the same endpoint.
	second := f.v2("POST", strings.TrimSuffix(docsPath(wid), "/"), pdfDocument("second")).wantOK(t).object(t)
	if str(t, second, "vault_id") == vaultID || str(t, second, "upload_uri") == uri {
		t.Errorf("two uploads got vault_id %v and %v, upload_uri %v and %v; want different ones",
			vaultID, second["vault_id"], uri, second["upload_uri"])
	}
}

func TestUploadDocumentAcceptsEveryCategoryAndSubCategory(t *testing.T) {
	t.Parallel()
	f := emptySandbox(t)
	wid := f.addTopAccount("TAXONOMY", "Taxonomy family")
	for _, cat := range advisorspec.Categories {
		t.Run(cat.Name, func(t *testing.T) {
			for _, sub := range cat.SubCategories {
				body := map[string]any{"name": sub.Name, "extension": "pdf", "category": cat.Name, "sub_category": sub.Name}
				r := docOn(f, t).v2("POST", docsPath(wid), body)
				if r.status != http.StatusOK {
					t.Errorf("category %s, sub_category %s: status %d, want 200; body %s", cat.Name, sub.Name, r.status, r.body)
					continue
				}
				got := docGet(t, f, wid, str(t, r.object(t), "vault_id"))
				docWantField(t, got, "category", cat.Name)
				docWantField(t, got, "sub_category", sub.Name)
			}
		})
	}
	// The specification's table has 7 categories and 55 sub-categories; the taxonomy the
	// sandbox checks against must not have lost a row.
	subs := 0
	for _, c := range advisorspec.Categories {
		subs += len(c.SubCategories)
	}
	if len(advisorspec.Categories) != 7 || subs != 55 {
		t.Errorf("taxonomy has %d categories and %d sub-categories, want 7 and 55", len(advisorspec.Categories), subs)
	}
}

func TestUploadDocumentTypeBelongsToItsSubCategory(t *testing.T) {
	t.Parallel()
	f := emptySandbox(t)
	wid := f.addTopAccount("TYPES", "Types family")
	type pair struct {
		category string
		sub      advisorspec.SubCategory
	}
	var pairs []pair
	for _, c := range advisorspec.Categories {
		for _, s := range c.SubCategories {
			pairs = append(pairs, pair{c.Name, s})
		}
	}
	// The specification gives no message for a type that does not fit; these are the code's.
	refusal := func(s advisorspec.SubCategory) string {
		if len(s.Types) == 0 {
			return "Invalid type: sub-category " + s.Name + " has no types"
		}
		return "Invalid type: sub-category " + s.Name + " allows " + strings.Join(s.Types, ", ")
	}
	types := 0
	for _, home := range pairs {
		for _, typ := range home.sub.Types {
			types++
			t.Run(fmt.Sprintf("type %s is accepted on %s and refused elsewhere", typ, home.sub.Name), func(t *testing.T) {
				body := map[string]any{"name": typ, "extension": "pdf", "category": home.category, "sub_category": home.sub.Name, "type": typ}
				id, _ := docCreate(t, f, wid, body)
				docWantField(t, docGet(t, f, wid, id), "type", typ)
				for _, other := range pairs {
					if slices.Contains(other.sub.Types, typ) {
						continue
					}
					r := docOn(f, t).v2("POST", docsPath(wid), docWith(body, map[string]any{"category": other.category, "sub_category": other.sub.Name}))
					r.wantError(t, http.StatusBadRequest, refusal(other.sub))
				}
			})
		}
	}
	if types != 8 {
		t.Errorf("taxonomy lists %d types, want the specification's 8 (pour_over_will and seven irrevocable trust types)", types)
	}
}

func TestUploadDocumentRules(t *testing.T) {
	t.Parallel()
	f := emptySandbox(t)
	wid := f.addTopAccount("RULES", "Rules family")
	base := pdfDocument("Trust summary")
	supported := make([]string, len(advisorspec.Extensions))
	for i, e := range advisorspec.Extensions {
		supported[i] = e.Name
	}
	unsupported := func(ext string) string {
		return "Unsupported extension: " + ext + " (supported: " + strings.Join(supported, ", ") + ")"
	}
	for _, tc := range []struct {
		name    string
		path    string // default: the collection of wid
		body    any
		status  int    // default 400
		message string // empty: the upload succeeds
	}{
		{name: "name missing is Bad Request", body: docWith(base, map[string]any{"name": docRemove{}}), message: "Bad Request"},
		{name: "extension missing is Bad Request", body: docWith(base, map[string]any{"extension": docRemove{}}), message: "Bad Request"},
		{name: "category missing is Bad Request", body: docWith(base, map[string]any{"category": docRemove{}}), message: "Bad Request"},
		{name: "sub_category missing is Bad Request", body: docWith(base, map[string]any{"sub_category": docRemove{}}), message: "Bad Request"},
		{name: "empty body is Bad Request", body: nil, message: "Bad Request"},
		{name: "empty name is Bad Request", body: docWith(base, map[string]any{"name": ""}), message: "Bad Request"},
		{name: "blank name is Bad Request", body: docWith(base, map[string]any{"name": "  \t "}), message: "Bad Request"},
		{name: "empty extension is Bad Request", body: docWith(base, map[string]any{"extension": ""}), message: "Bad Request"},
		{name: "blank category is Bad Request", body: docWith(base, map[string]any{"category": " "}), message: "Bad Request"},
		{name: "empty sub_category is Bad Request", body: docWith(base, map[string]any{"sub_category": ""}), message: "Bad Request"},
		// JSON null is how many clients write an absent value, so a required field sent as null
		// is missing, not present with a bad value.
		{name: "null name is missing", body: docWith(base, map[string]any{"name": nil}), message: "Bad Request"},
		{name: "null extension is missing", body: docWith(base, map[string]any{"extension": nil}), message: "Bad Request"},
		{name: "null category is missing", body: docWith(base, map[string]any{"category": nil}), message: "Bad Request"},
		{name: "null sub_category is missing", body: docWith(base, map[string]any{"sub_category": nil}), message: "Bad Request"},

		{name: "unknown category is refused", body: docWith(base, map[string]any{"category": "pets"}), message: "Invalid category"},
		{name: "category is matched exactly", body: docWith(base, map[string]any{"category": "Family"}), message: "Invalid category"},
		{name: "category that is not a string is refused", body: docWith(base, map[string]any{"category": 7}), message: "Invalid category"},
		{name: "unknown sub-category is refused", body: docWith(base, map[string]any{"sub_category": "family_photos"}), message: "Invalid sub-category"},
		{name: "sub-category of another category is refused", body: docWith(base, map[string]any{"sub_category": "passport"}), message: "Invalid sub-category"},
		{name: "type on a sub-category without types is refused", body: docWith(base, map[string]any{"type": "grat"}),
			message: "Invalid type: sub-category family_other has no types"},
		{name: "unknown type is refused", body: docWith(docFull(), map[string]any{"type": "charitable_lead_trust"}),
			message: "Invalid type: sub-category irrevocable_trusts allows dynasty_trust, slat, grat, ilit, crut, qprt, other"},
		{name: "empty type is refused", body: docWith(docFull(), map[string]any{"type": ""}), message: "Invalid type"},
		{name: "null type is no type", body: docWith(docFull(), map[string]any{"type": nil})},
		{name: "type is optional", body: docWith(docFull(), map[string]any{"type": docRemove{}})},

		{name: "unknown tag is refused by name", body: docWith(base, map[string]any{"tags": []string{"urgent"}}), message: "Invalid tags: urgent"},
		{name: "a blank tag name is refused as blank", body: docWith(base, map[string]any{"tags": []string{"current", " "}}), message: "tags must not contain a blank tag name"},
		{name: "tag names are trimmed before matching", body: docWith(base, map[string]any{"tags": []string{" reviewed "}})},
		{name: "an unknown tag is named trimmed", body: docWith(base, map[string]any{"tags": []string{" urgent "}}), message: "Invalid tags: urgent"},
		{name: "only the invalid tags are listed", body: docWith(base, map[string]any{"tags": []string{"current", "urgent", "reviewed", "Top-Secret"}}),
			message: "Invalid tags: urgent, Top-Secret"},
		{name: "tags that are not an array are refused", body: docWith(base, map[string]any{"tags": "current"}), message: "tags must be an array of strings"},
		{name: "empty tags are no tags", body: docWith(base, map[string]any{"tags": []string{}})},

		{name: "unsupported extension is refused", body: docWith(base, map[string]any{"extension": ".exe"}), message: unsupported(".exe")},
		{name: "unsupported extension without a dot is refused", body: docWith(base, map[string]any{"extension": "txt"}), message: unsupported("txt")},
		{name: "a lone dot is no extension", body: docWith(base, map[string]any{"extension": "."}), message: unsupported(".")},

		{name: "name of 200 characters passes", body: docWith(base, map[string]any{"name": strings.Repeat("n", 200)})},
		{name: "name limit counts characters, not bytes", body: docWith(base, map[string]any{"name": strings.Repeat("é", 200)})},
		{name: "name of 201 characters is refused", body: docWith(base, map[string]any{"name": strings.Repeat("n", 201)}),
			message: "name must be at most 200 characters"},
		// Every supported extension is short, so 32 characters pass the length rule and then
		// meet the supported-extension rule.
		{name: "extension of 32 characters passes the length rule", body: docWith(base, map[string]any{"extension": strings.Repeat("x", 32)}),
			message: unsupported(strings.Repeat("x", 32))},
		{name: "extension of 33 characters is refused", body: docWith(base, map[string]any{"extension": strings.Repeat("x", 33)}),
			message: "extension must be at most 32 characters"},
		{name: "description of 2000 characters passes", body: docWith(base, map[string]any{"description": strings.Repeat("d", 2000)})},
		{name: "description of 2001 characters is refused", body: docWith(base, map[string]any{"description": strings.Repeat("d", 2001)}),
			message: "description must be at most 2000 characters"},
		{name: "blank description is refused", body: docWith(base, map[string]any{"description": "  "}), message: "description must not be blank"},
		{name: "null description is no description", body: docWith(base, map[string]any{"description": nil})},

		{name: "name that is not a string is refused", body: docWith(base, map[string]any{"name": 12}), message: "name must be a string"},
		{name: "field set by the service is refused", body: docWith(base, map[string]any{"vault_id": "mine"}),
			message: "vault_id is set by the service and cannot be changed"},
		{name: "unknown field is refused", body: docWith(base, map[string]any{"colour": "blue"}), message: "colour is not a document field"},
		{name: "body that is not an object is refused", body: `["name"]`, message: "Request body must be a JSON object"},
		{name: "body that is not JSON is refused", body: `{"name":`, message: "Request body must be a JSON object"},

		{name: "unknown top account is Container not found", path: docsPath("no-such-top-account"), body: base, status: http.StatusNotFound, message: "Container not found"},
		{name: "blank wid is Bad Request", path: "/v2/top-accounts/%20/documents/", body: base, message: "Bad Request"},
		{name: "empty wid is Bad Request", path: "/v2/top-accounts//documents/", body: base, message: "Bad Request"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := tc.path
			if path == "" {
				path = docsPath(wid)
			}
			before := docList(t, f, wid, "").total(t)
			r := docOn(f, t).v2("POST", path, tc.body)
			after := docList(t, f, wid, "").total(t)
			if tc.message == "" {
				r.wantOK(t)
				if after != before+1 {
					t.Errorf("got %d documents after the upload, want %d", after, before+1)
				}
				got := docGet(t, f, wid, str(t, r.object(t), "vault_id"))
				if body, ok := tc.body.(map[string]any); ok {
					if name, ok := body["name"]; ok {
						docWantField(t, got, "name", name)
					}
					if d, ok := body["description"].(string); ok {
						docWantField(t, got, "description", d)
					}
				}
				return
			}
			status := tc.status
			if status == 0 {
				status = http.StatusBadRequest
			}
			r.wantError(t, status, tc.message)
			if after != before {
				t.Errorf("a refused upload left %d documents, want %d", after, before)
			}
		})
	}
}

func TestUploadDocumentOptionalFieldsAreAbsentUnlessSet(t *testing.T) {
	t.Parallel()
	f := emptySandbox(t)
	wid := f.addTopAccount("OPT", "Optional family")
	for _, tc := range []struct {
		name string
		body map[string]any
	}{
		{"fields not sent", pdfDocument("minimal")},
		{"fields sent as null", docWith(pdfDocument("nulls"), map[string]any{"description": nil, "type": nil, "tags": nil})},
		{"empty tag list", docWith(pdfDocument("no tags"), map[string]any{"tags": []string{}})},
	} {
		t.Run(tc.name, func(t *testing.T) {
			id, _ := docCreate(t, f, wid, tc.body)
			got := docGet(t, f, wid, id)
			for _, key := range []string{"description", "type", "tags"} {
				if v, ok := got[key]; ok {
					t.Errorf("%s is %#v, want it absent", key, v)
				}
			}
		})
	}
}

func TestUploadDocumentTags(t *testing.T) {
	t.Parallel()
	f := newSandbox(t, sandbox.Options{}, true)
	hartwell := docDemoWID(t, f, "HARTWELL-001")
	okafor := docDemoWID(t, f, "OKAFOR-002")
	fresh := f.addTopAccount("TAGS-NEW", "New family")
	for _, tc := range []struct {
		name    string
		wid     string
		tags    []string
		want    []string // the tags Get Document returns
		message string   // empty: accepted
	}{
		{name: "every built-in tag is accepted", wid: fresh, tags: advisorspec.BuiltinTags, want: advisorspec.BuiltinTags},
		{name: "built-in tags are accepted by a top account with custom tags", wid: hartwell, tags: advisorspec.BuiltinTags, want: advisorspec.BuiltinTags},
		{name: "custom tags of the top account are accepted", wid: hartwell, tags: []string{"trustee-copy", "annual-review"}, want: []string{"trustee-copy", "annual-review"}},
		{name: "custom and built-in tags mix", wid: hartwell, tags: []string{"annual-review", "current"}, want: []string{"annual-review", "current"}},
		{name: "custom tags of another top account are refused", wid: okafor, tags: []string{"current", "trustee-copy"}, message: "Invalid tags: trustee-copy"},
		{name: "a new top account has no custom tags", wid: fresh, tags: []string{"trustee-copy", "annual-review"}, message: "Invalid tags: trustee-copy, annual-review"},
		{name: "tags are matched trimmed and in any case, and kept in their own spelling", wid: hartwell,
			tags: []string{" Needs-Review ", "TRUSTEE-COPY"}, want: []string{"needs-review", "trustee-copy"}},
		{name: "a tag given twice is kept once", wid: fresh, tags: []string{"current", "Current", "current"}, want: []string{"current"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := docOn(f, t).v2("POST", docsPath(tc.wid), pdfDocument("tagged", tc.tags...))
			if tc.message != "" {
				r.wantError(t, http.StatusBadRequest, tc.message)
				return
			}
			got := docGet(t, f, tc.wid, str(t, r.wantOK(t).object(t), "vault_id"))
			docWantField(t, got, "tags", tc.want)
		})
	}
}

func TestUploadDocumentExtensionComesBackWithoutADot(t *testing.T) {
	t.Parallel()
	f := emptySandbox(t)
	wid := f.addTopAccount("EXT", "Extension family")
	for _, tc := range []struct{ sent, want string }{
		{".pdf", "pdf"},
		{"pdf", "pdf"},
		{".PDF", "pdf"},
		{"Jpeg", "jpeg"},
		{".xlsx", "xlsx"},
	} {
		t.Run(fmt.Sprintf("%q is stored as %q", tc.sent, tc.want), func(t *testing.T) {
			id, _ := docCreate(t, f, wid, docWith(pdfDocument("file"), map[string]any{"extension": tc.sent}))
			docWantField(t, docGet(t, f, wid, id), "extension", tc.want)
			for _, d := range docList(t, f, wid, "").Documents {
				if d["vault_id"] == id {
					docWantField(t, d, "extension", tc.want)
				}
			}
			patched := docOn(f, t).v2("PATCH", docPath(wid, id), map[string]any{"extension": tc.sent}).wantOK(t).object(t)
			docWantField(t, patched, "extension", tc.want)
		})
	}
}

func TestGetDocument(t *testing.T) {
	t.Parallel()
	f := emptySandbox(t)
	created := f.clock.Now()
	wid := f.addTopAccount("GET-1", "Get family")
	other := f.addTopAccount("GET-2", "Other family")
	body := docFull()
	id, uri := docCreate(t, f, wid, body)
	otherID, _ := docCreate(t, f, other, pdfDocument("theirs"))

	t.Run("every field, and NoFileUploaded before an upload", func(t *testing.T) {
		got := docGet(t, f, wid, id)
		docWantKeys(t, "Get Document response", got, "wid", "vault_id", "name", "extension", "description", "category",
			"sub_category", "type", "tags", "creation_date", "modification_date", "file_status")
		docWantField(t, got, "wid", wid)
		docWantField(t, got, "vault_id", id)
		docWantField(t, got, "name", body["name"])
		docWantField(t, got, "extension", "pdf")
		for _, key := range []string{"description", "category", "sub_category", "type", "tags"} {
			docWantField(t, got, key, body[key])
		}
		docWantTime(t, got, "creation_date", created)
		docWantTime(t, got, "modification_date", created)
		docWantField(t, got, "file_status", "NoFileUploaded")
	})

	uploaded := created.Add(3 * time.Minute)
	f.clock.Advance(3 * time.Minute)
	docOn(f, t).put(uri, "application/pdf", []byte("%PDF-1.4 test")).wantOK(t)

	t.Run("Uploaded with a download_uri after an upload, never an upload_uri", func(t *testing.T) {
		got := docGet(t, f, wid, id)
		docWantKeys(t, "Get Document response", got, "wid", "vault_id", "name", "extension", "description", "category",
			"sub_category", "type", "tags", "creation_date", "modification_date", "file_status", "download_uri")
		docWantField(t, got, "file_status", "Uploaded")
		if u, err := url.Parse(str(t, got, "download_uri")); err != nil || !u.IsAbs() {
			t.Errorf("download_uri %v is not an absolute address: %v", got["download_uri"], err)
		}
		docWantTime(t, got, "creation_date", created)
		// Receiving the file modifies the document in the vault.
		docWantTime(t, got, "modification_date", uploaded)
	})

	for _, tc := range []struct {
		name, path string
		status     int
		message    string
	}{
		{"unknown vault_id is Vault doesn't exist", docPath(wid, "no-such-document"), http.StatusNotFound, "Vault doesn't exist"},
		{"document of another top account is Vault doesn't exist", docPath(wid, otherID), http.StatusNotFound, "Vault doesn't exist"},
		{"unknown top account is Container not found", docPath("no-such-top-account", id), http.StatusNotFound, "Container not found"},
		{"empty vault_id segment is Bad Request", docsPath(wid) + "/", http.StatusBadRequest, "Bad Request"},
		{"blank vault_id is Bad Request", docPath(wid, "%20"), http.StatusBadRequest, "Bad Request"},
		{"empty wid segment is Bad Request", docPath("", id), http.StatusBadRequest, "Bad Request"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			docOn(f, t).v2("GET", tc.path, nil).wantError(t, tc.status, tc.message)
		})
	}
}

func TestListDocumentsLimit(t *testing.T) {
	t.Parallel()
	f := emptySandbox(t)
	wid := f.addTopAccount("LIMIT", "Limit family")
	const docs = 1001 // one more than the largest page
	for i := range docs {
		f.v2("POST", docsPath(wid), map[string]any{"name": fmt.Sprint("doc ", i), "extension": "csv", "category": "miscellaneous", "sub_category": "uncategorized"}).wantOK(t)
	}
	for _, tc := range []struct {
		name, query string
		want        int    // page size
		message     string // empty: accepted
	}{
		{name: "default limit is 100", query: "", want: 100},
		{name: "limit 1 is the smallest page", query: "?limit=1", want: 1},
		{name: "limit 1000 is the largest page", query: "?limit=1000", want: 1000},
		{name: "limit 250 gives 250", query: "?limit=250", want: 250},
		{name: "limit over 1000 is refused", query: "?limit=1001", message: "Limit can't be more than 1000"},
		{name: "much larger limit is refused", query: "?limit=50000", message: "Limit can't be more than 1000"},
		// The specification gives no message below the range; these are the code's.
		{name: "limit 0 is refused", query: "?limit=0", message: "limit must be an integer from 1 to 1000"},
		{name: "negative limit is refused", query: "?limit=-5", message: "limit must be an integer from 1 to 1000"},
		{name: "non-integer limit is refused", query: "?limit=ten", message: "limit must be an integer from 1 to 1000"},
		{name: "fractional limit is refused", query: "?limit=2.5", message: "limit must be an integer from 1 to 1000"},
		{name: "empty limit is refused", query: "?limit=", message: "limit must be an integer from 1 to 1000"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if tc.message != "" {
				docOn(f, t).v2("GET", docsPath(wid)+tc.query, nil).wantError(t, http.StatusBadRequest, tc.message)
				return
			}
			p := docList(t, f, wid, tc.query)
			if len(p.Documents) != tc.want {
				t.Errorf("got %d documents, want %d", len(p.Documents), tc.want)
			}
			if got := p.total(t); got != docs {
				t.Errorf("total_count is %d, want %d (every document, not the page)", got, docs)
			}
		})
	}
}

func TestListDocumentsPaging(t *testing.T) {
	t.Parallel()
	f := emptySandbox(t)
	wid := f.addTopAccount("PAGE", "Paging family")
	other := f.addTopAccount("PAGE-2", "Other family")
	otherID, _ := docCreate(t, f, other, pdfDocument("theirs"))
	var created []string
	for i := range 10 {
		id, uri := docCreate(t, f, wid, pdfDocument(fmt.Sprint("doc ", i), "current"))
		created = append(created, id)
		if i%3 == 0 {
			docOn(f, t).put(uri, "application/pdf", []byte("%PDF")).wantOK(t)
		}
	}

	t.Run("nextToken pages through every document once, in vault order", func(t *testing.T) {
		for _, limit := range []int{1, 3, 4, 10, 11} {
			if got := docListAll(t, f, wid, "", limit); !slices.Equal(got, created) {
				t.Errorf("limit %d: pages gave %v, want %v", limit, got, created)
			}
		}
	})

	t.Run("every page reports the total, not its size", func(t *testing.T) {
		p := docList(t, f, wid, "?limit=3&nextToken="+created[2])
		if got := p.total(t); got != len(created) {
			t.Errorf("total_count is %d, want %d", got, len(created))
		}
		if got := p.ids(t); !slices.Equal(got, created[3:6]) {
			t.Errorf("page after %s is %v, want %v", created[2], got, created[3:6])
		}
	})

	t.Run("a page after the last document is empty", func(t *testing.T) {
		p := docList(t, f, wid, "?nextToken="+created[len(created)-1])
		if len(p.Documents) != 0 {
			t.Errorf("got %d documents after the last one, want 0", len(p.Documents))
		}
	})

	t.Run("list items carry the document fields but no file_status, download_uri or upload_uri", func(t *testing.T) {
		for _, d := range docList(t, f, wid, "").Documents {
			docWantKeys(t, "list item "+fmt.Sprint(d["name"]), d, "wid", "vault_id", "name", "extension", "category",
				"sub_category", "tags", "creation_date", "modification_date")
		}
	})

	t.Run("unknown nextToken is refused", func(t *testing.T) {
		docOn(f, t).v2("GET", docsPath(wid)+"?nextToken=no-such-document", nil).
			wantError(t, http.StatusBadRequest, "Invalid nextToken: no document no-such-document in this top account")
	})

	t.Run("nextToken of another top account's document is refused", func(t *testing.T) {
		docOn(f, t).v2("GET", docsPath(wid)+"?nextToken="+otherID, nil).
			wantError(t, http.StatusBadRequest, "Invalid nextToken: no document "+otherID+" in this top account")
	})

	t.Run("nextToken naming a since-deleted document still continues", func(t *testing.T) {
		first := docList(t, f, wid, "?limit=4")
		token := first.ids(t)[3]
		docOn(f, t).v2("DELETE", docPath(wid, token), nil).wantOK(t)
		next := docList(t, f, wid, "?limit=4&nextToken="+token)
		if got := next.ids(t); !slices.Equal(got, created[4:8]) {
			t.Errorf("page after deleted %s is %v, want %v", token, got, created[4:8])
		}
		if got := next.total(t); got != len(created)-1 {
			t.Errorf("total_count is %d, want %d", got, len(created)-1)
		}
	})

	t.Run("unknown top account is Container not found", func(t *testing.T) {
		docOn(f, t).v2("GET", docsPath("no-such-top-account"), nil).wantError(t, http.StatusNotFound, "Container not found")
	})
	t.Run("blank wid is Bad Request", func(t *testing.T) {
		docOn(f, t).v2("GET", "/v2/top-accounts/%20/documents/", nil).wantError(t, http.StatusBadRequest, "Bad Request")
	})
	t.Run("top account without documents lists an empty array", func(t *testing.T) {
		empty := f.addTopAccount("PAGE-3", "Empty family")
		p := docList(t, f, empty, "")
		if len(p.Documents) != 0 || p.total(t) != 0 {
			t.Errorf("got %d documents and total_count %d, want 0 and 0", len(p.Documents), p.total(t))
		}
	})
}

func TestListDocumentsByTags(t *testing.T) {
	t.Parallel()
	f := newSandbox(t, sandbox.Options{}, true)
	wid := docDemoWID(t, f, "HARTWELL-001")
	okafor := docDemoWID(t, f, "OKAFOR-002")
	// Documents of our own beside the demo's, so each filter below matches several.
	for i, tags := range [][]string{
		{"current"}, {"trustee-copy", "reviewed"}, nil, {"annual-review"}, {"Superseded"}, {"current", "trustee-copy"},
	} {
		docCreate(t, f, wid, pdfDocument(fmt.Sprint("tagged ", i), tags...))
	}
	all := docList(t, f, wid, "?limit=1000").Documents
	// carrying lists, in vault order, the documents that carry any of the tags.
	carrying := func(tags ...string) []string {
		var out []string
		for _, d := range all {
			ts, _ := d["tags"].([]any)
			if slices.ContainsFunc(ts, func(t any) bool { return slices.Contains(tags, t.(string)) }) {
				out = append(out, d["vault_id"].(string))
			}
		}
		return out
	}

	for _, tc := range []struct {
		name, query string
		want        []string
	}{
		{"one tag", "?tags=current", carrying("current")},
		{"several tags combine with OR", "?tags=current,trustee-copy", carrying("current", "trustee-copy")},
		{"names are trimmed", "?tags=" + url.QueryEscape(" current , reviewed "), carrying("current", "reviewed")},
		{"names match in any case", "?tags=CURRENT,Annual-Review", carrying("current", "annual-review")},
		{"empty names between commas are skipped", "?tags=current,,%20,funded", carrying("current", "funded")},
		{"the tags parameter may repeat", "?tags=current&tags=funded", carrying("current", "funded")},
		{"a known tag no document carries gives an empty list", "?tags=duplicate", nil},
		{"a custom tag of the top account filters", "?tags=trustee-copy", carrying("trustee-copy")},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if tc.name != "a known tag no document carries gives an empty list" && len(tc.want) < 2 {
				t.Fatalf("the data gives %d documents for %s, want several so the filter is tested", len(tc.want), tc.query)
			}
			p := docList(t, f, wid, tc.query)
			if got := p.ids(t); !slices.Equal(got, tc.want) {
				t.Errorf("got %v, want %v", got, tc.want)
			}
			if got := p.total(t); got != len(tc.want) {
				t.Errorf("total_count is %d, want %d", got, len(tc.want))
			}
		})
	}

	t.Run("total_count counts the matching documents, not the page", func(t *testing.T) {
		p := docList(t, f, wid, "?limit=1&tags=current,trustee-copy")
		if want := len(carrying("current", "trustee-copy")); len(p.Documents) != 1 || p.total(t) != want {
			t.Errorf("got %d documents and total_count %d, want 1 and %d", len(p.Documents), p.total(t), want)
		}
	})

	t.Run("tags and nextToken page through the matching documents", func(t *testing.T) {
		want := carrying("current", "trustee-copy", "needs-review")
		for _, limit := range []int{1, 2, 3} {
			if got := docListAll(t, f, wid, "&tags=current,trustee-copy,needs-review", limit); !slices.Equal(got, want) {
				t.Errorf("limit %d: got %v, want %v", limit, got, want)
			}
		}
	})

	for _, tc := range []struct {
		name, wid, query, message string
	}{
		{"empty tags is refused", wid, "?tags=", "tags query parameter must contain at least one non-empty value"},
		{"tags of only commas and spaces is refused", wid, "?tags=" + url.QueryEscape(", ,"), "tags query parameter must contain at least one non-empty value"},
		{"unknown tag is refused by name", wid, "?tags=urgent", "Unknown tags: urgent"},
		{"only the unknown tags are named", wid, "?tags=" + url.QueryEscape("current, urgent,reviewed,Top-Secret"), "Unknown tags: urgent, Top-Secret"},
		{"custom tag of another top account is unknown", okafor, "?tags=trustee-copy", "Unknown tags: trustee-copy"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			docOn(f, t).v2("GET", docsPath(tc.wid)+tc.query, nil).wantError(t, http.StatusBadRequest, tc.message)
		})
	}
}

func TestUpdateDocument(t *testing.T) {
	t.Parallel()
	f := emptySandbox(t)
	wid := f.addTopAccount("PATCH", "Patch family")

	for _, tc := range []struct {
		name  string
		patch map[string]any
		want  map[string]any // fields that change; a docRemove value: the field is gone
	}{
		{"name alone keeps every other field", map[string]any{"name": "ILIT Agreement (restated)"}, map[string]any{"name": "ILIT Agreement (restated)"}},
		{"description alone", map[string]any{"description": "Restated 2026."}, map[string]any{"description": "Restated 2026."}},
		{"tags are replaced, not merged", map[string]any{"tags": []string{"superseded"}}, map[string]any{"tags": []string{"superseded"}}},
		{"type within the sub-category", map[string]any{"type": "grat"}, map[string]any{"type": "grat"}},
		{"extension with a dot comes back without it", map[string]any{"extension": ".docx"}, map[string]any{"extension": "docx"}},
		{"null clears description", map[string]any{"description": nil}, map[string]any{"description": docRemove{}}},
		{"null clears type", map[string]any{"type": nil}, map[string]any{"type": docRemove{}}},
		{"null clears tags", map[string]any{"tags": nil}, map[string]any{"tags": docRemove{}}},
		{"empty tags clear tags", map[string]any{"tags": []string{}}, map[string]any{"tags": docRemove{}}},
		{"category with a sub-category of its own", map[string]any{"category": "taxes", "sub_category": "k1s", "type": nil},
			map[string]any{"category": "taxes", "sub_category": "k1s", "type": docRemove{}}},
		{"sub-category within the category, type cleared with it", map[string]any{"sub_category": "living_will", "type": nil},
			map[string]any{"sub_category": "living_will", "type": docRemove{}}},
		{"an empty patch changes nothing but the modification date", map[string]any{}, map[string]any{}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			created := f.clock.Now()
			id, _ := docCreate(t, f, wid, docFull())
			before := docGet(t, f, wid, id)
			f.clock.Advance(time.Minute)
			patched := f.clock.Now()

			r := docOn(f, t).v2("PATCH", docPath(wid, id), tc.patch).wantOK(t).object(t)
			want := map[string]any{}
			for k, v := range before {
				want[k] = v
			}
			delete(want, "file_status")
			for k, v := range tc.want {
				if _, ok := v.(docRemove); ok {
					delete(want, k)
					continue
				}
				want[k] = v
			}
			keys := []string{"upload_uri"}
			for k, v := range want {
				keys = append(keys, k)
				if k != "creation_date" && k != "modification_date" {
					docWantField(t, r, k, v)
				}
			}
			docWantKeys(t, "Update Document response", r, keys...)
			docWantTime(t, r, "creation_date", created)
			docWantTime(t, r, "modification_date", patched)
			if u, err := url.Parse(str(t, r, "upload_uri")); err != nil || !u.IsAbs() {
				t.Errorf("upload_uri %v is not an absolute address: %v", r["upload_uri"], err)
			}

			// Get Document shows what the update answered.
			got := docGet(t, f, wid, id)
			delete(got, "file_status")
			delete(r, "upload_uri")
			if !reflect.DeepEqual(got, r) {
				t.Errorf("Get Document after the update is %v, want %v", got, r)
			}
		})
	}

	t.Run("every field at once", func(t *testing.T) {
		id, _ := docCreate(t, f, wid, pdfDocument("old"))
		patch := map[string]any{"name": "new", "extension": "xlsx", "description": "d", "category": "estate_planning",
			"sub_category": "revocable_trusts_and_supporting_documents", "type": "pour_over_will", "tags": []string{"reviewed"}}
		r := docOn(f, t).v2("PATCH", docPath(wid, id), patch).wantOK(t).object(t)
		docWantKeys(t, "Update Document response", r, "wid", "vault_id", "name", "extension", "description", "category",
			"sub_category", "type", "tags", "creation_date", "modification_date", "upload_uri")
		for k, v := range patch {
			docWantField(t, r, k, v)
		}
		docWantField(t, r, "wid", wid)
		docWantField(t, r, "vault_id", id)
	})

	t.Run("each update gives a fresh upload_uri", func(t *testing.T) {
		id, first := docCreate(t, f, wid, pdfDocument("doc"))
		second := str(t, docOn(f, t).v2("PATCH", docPath(wid, id), map[string]any{}).wantOK(t).object(t), "upload_uri")
		third := str(t, docOn(f, t).v2("PATCH", docPath(wid, id), map[string]any{}).wantOK(t).object(t), "upload_uri")
		if first == second || second == third {
			t.Errorf("upload_uri repeated across create and updates: %s, %s, %s", first, second, third)
		}
	})

	t.Run("an update keeps the uploaded file", func(t *testing.T) {
		id, uri := docCreate(t, f, wid, pdfDocument("doc"))
		docOn(f, t).put(uri, "application/pdf", []byte("%PDF")).wantOK(t)
		docOn(f, t).v2("PATCH", docPath(wid, id), map[string]any{"name": "renamed"}).wantOK(t)
		docWantField(t, docGet(t, f, wid, id), "file_status", "Uploaded")
	})
}

func TestUpdateDocumentRefusals(t *testing.T) {
	t.Parallel()
	f := emptySandbox(t)
	wid := f.addTopAccount("PATCH-NO", "Refusal family")
	id, _ := docCreate(t, f, wid, docFull())
	otherWID := f.addTopAccount("PATCH-NO-2", "Other family")
	otherID, _ := docCreate(t, f, otherWID, pdfDocument("theirs"))
	f.clock.Advance(time.Minute) // so that a refused update that touched the dates would show

	for _, tc := range []struct {
		name    string
		method  string // default PATCH
		path    string // default the document
		patch   any
		status  int // default 400
		message string
	}{
		{name: "new category needs a sub-category of that category", patch: map[string]any{"category": "taxes"}, message: "Invalid sub-category"},
		{name: "unknown category is refused", patch: map[string]any{"category": "pets", "sub_category": "family_other"}, message: "Invalid category"},
		{name: "unknown sub-category is refused", patch: map[string]any{"sub_category": "family_photos"}, message: "Invalid sub-category"},
		{name: "sub-category of another category is refused", patch: map[string]any{"sub_category": "passport"}, message: "Invalid sub-category"},
		{name: "a type the new sub-category does not allow is refused", patch: map[string]any{"sub_category": "living_will"},
			message: "Invalid type: sub-category living_will has no types"},
		{name: "unknown type is refused", patch: map[string]any{"type": "charitable_lead_trust"},
			message: "Invalid type: sub-category irrevocable_trusts allows dynasty_trust, slat, grat, ilit, crut, qprt, other"},
		{name: "unknown tag is refused by name", patch: map[string]any{"tags": []string{"funded", "urgent"}}, message: "Invalid tags: urgent"},
		{name: "unsupported extension is refused", patch: map[string]any{"extension": "exe"},
			message: "Unsupported extension: exe (supported: pdf, doc, docx, xls, xlsx, ppt, pptx, key, csv, tsv, png, jpg, jpeg, bmp)"},
		{name: "name of 201 characters is refused", patch: map[string]any{"name": strings.Repeat("n", 201)}, message: "name must be at most 200 characters"},
		{name: "description of 2001 characters is refused", patch: map[string]any{"description": strings.Repeat("d", 2001)}, message: "description must be at most 2000 characters"},
		{name: "blank name is refused", patch: map[string]any{"name": " "}, message: "name must not be blank"},
		{name: "name cannot be cleared", patch: map[string]any{"name": nil}, message: "name must be a string"},
		{name: "field set by the service is refused", patch: map[string]any{"creation_date": "2020-01-01T00:00:00Z"},
			message: "creation_date is set by the service and cannot be changed"},
		{name: "file_status cannot be set", patch: map[string]any{"file_status": "Uploaded"}, message: "file_status is set by the service and cannot be changed"},
		{name: "one bad field refuses the whole update", patch: map[string]any{"name": "fine", "tags": []string{"urgent"}}, message: "Invalid tags: urgent"},
		{name: "body that is not an object is refused", patch: `"name"`, message: "Request body must be a JSON object"},

		{name: "unknown vault_id is Vault doesn't exist", path: docPath(wid, "no-such-document"), patch: map[string]any{"name": "x"},
			status: http.StatusNotFound, message: "Vault doesn't exist"},
		{name: "document of another top account is Vault doesn't exist", path: docPath(wid, otherID), patch: map[string]any{"name": "x"},
			status: http.StatusNotFound, message: "Vault doesn't exist"},
		{name: "unknown top account is Container not found", path: docPath("no-such-top-account", id), patch: map[string]any{"name": "x"},
			status: http.StatusNotFound, message: "Container not found"},
		{name: "blank vault_id is Bad Request", path: docPath(wid, "%20"), patch: map[string]any{"name": "x"}, message: "Bad Request"},
		{name: "empty vault_id segment is Bad Request", path: docsPath(wid) + "/", patch: map[string]any{"name": "x"}, message: "Bad Request"},
		{name: "empty wid segment is Bad Request", path: docPath("", id), patch: map[string]any{"name": "x"}, message: "Bad Request"},
		{name: "PATCH on the collection is Bad Request", path: docsPath(wid), patch: map[string]any{"name": "x"}, message: "Bad Request"},
		{name: "DELETE on the collection is Bad Request", method: "DELETE", path: docsPath(wid), message: "Bad Request"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			method, path, status := tc.method, tc.path, tc.status
			if method == "" {
				method = "PATCH"
			}
			if path == "" {
				path = docPath(wid, id)
			}
			if status == 0 {
				status = http.StatusBadRequest
			}
			before := docGet(t, f, wid, id)
			beforeOther := docGet(t, f, otherWID, otherID)
			total := docList(t, f, wid, "").total(t)
			docOn(f, t).v2(method, path, tc.patch).wantError(t, status, tc.message)
			if got := docGet(t, f, wid, id); !reflect.DeepEqual(got, before) {
				t.Errorf("a refused update changed the document: got %v, want %v", got, before)
			}
			if got := docGet(t, f, otherWID, otherID); !reflect.DeepEqual(got, beforeOther) {
				t.Errorf("a refused update changed another top account's document: got %v, want %v", got, beforeOther)
			}
			if got := docList(t, f, wid, "").total(t); got != total {
				t.Errorf("a refused request left %d documents, want %d", got, total)
			}
		})
	}
}

func TestDeleteDocument(t *testing.T) {
	t.Parallel()
	f := emptySandbox(t)
	wid := f.addTopAccount("DEL", "Delete family")
	keep, _ := docCreate(t, f, wid, pdfDocument("keep"))
	gone, uri := docCreate(t, f, wid, pdfDocument("gone"))
	f.put(uri, "application/pdf", []byte("%PDF")).wantOK(t)

	r := f.v2("DELETE", docPath(wid, gone), nil).wantOK(t)
	docWantKeys(t, "Delete Document response", r.object(t))

	for _, tc := range []struct {
		name, method, path string
		body               any
		status             int
		message            string
	}{
		{"get after delete is Vault doesn't exist", "GET", docPath(wid, gone), nil, http.StatusNotFound, "Vault doesn't exist"},
		{"delete again is Vault doesn't exist", "DELETE", docPath(wid, gone), nil, http.StatusNotFound, "Vault doesn't exist"},
		{"update after delete is Vault doesn't exist", "PATCH", docPath(wid, gone), map[string]any{"name": "x"}, http.StatusNotFound, "Vault doesn't exist"},
		{"unknown top account is Container not found", "DELETE", docPath("no-such-top-account", keep), nil, http.StatusNotFound, "Container not found"},
		{"blank vault_id is Bad Request", "DELETE", docPath(wid, "%20"), nil, http.StatusBadRequest, "Bad Request"},
		{"empty vault_id segment is Bad Request", "DELETE", docsPath(wid) + "/", nil, http.StatusBadRequest, "Bad Request"},
		{"empty wid segment is Bad Request", "DELETE", docPath("", keep), nil, http.StatusBadRequest, "Bad Request"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			docOn(f, t).v2(tc.method, tc.path, tc.body).wantError(t, tc.status, tc.message)
		})
	}

	t.Run("the deleted document leaves the list and the others stay", func(t *testing.T) {
		p := docList(t, f, wid, "")
		if got := p.ids(t); !slices.Equal(got, []string{keep}) || p.total(t) != 1 {
			t.Errorf("list is %v with total_count %d, want [%s] with 1", got, p.total(t), keep)
		}
		docWantField(t, docGet(t, f, wid, keep), "name", "keep")
	})
}

func TestDocumentEndpointsNeedTheBearerToken(t *testing.T) {
	t.Parallel()
	f := emptySandbox(t)
	wid := f.addTopAccount("AUTH", "Auth family")
	id, _ := docCreate(t, f, wid, pdfDocument("private"))
	for _, tc := range []struct {
		method, path string
		body         any
	}{
		{"POST", docsPath(wid), pdfDocument("intruder")},
		{"GET", docsPath(wid), nil},
		{"GET", docPath(wid, id), nil},
		{"PATCH", docPath(wid, id), map[string]any{"name": "intruder"}},
		{"DELETE", docPath(wid, id), nil},
	} {
		for _, cred := range []struct {
			name string
			set  func(req *http.Request)
		}{
			{"no credentials", func(*http.Request) {}},
			{"a wrong token", func(req *http.Request) { req.Header.Set("Authorization", "Bearer not-"+testToken) }},
			{"the v1 basic credentials", func(req *http.Request) { req.SetBasicAuth(testUser, testPass) }},
		} {
			t.Run(tc.method+" "+tc.path+" with "+cred.name+" is Access Denied", func(t *testing.T) {
				g := docOn(f, t)
				req := g.request(tc.method, tc.path, tc.body)
				cred.set(req)
				g.do(req).wantError(t, http.StatusForbidden, "Access Denied")
			})
		}
	}
	got := docGet(t, f, wid, id)
	docWantField(t, got, "name", "private")
	if p := docList(t, f, wid, ""); p.total(t) != 1 {
		t.Errorf("got %d documents after refused requests, want 1", p.total(t))
	}
}
