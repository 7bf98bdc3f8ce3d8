package gateway_test

import (
	"bytes"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/advisorhq/gateway/internal/advisorspec"
	"github.com/advisorhq/gateway/internal/sandbox"
)

// The vault through the gateway: paging, tag filters, enumerations, file status loaded only when
// asked for, the upload address, and the document mutations with their errors.

// docFields selects every field of a Document.
const docFields = `wid vaultId name extension description category subCategory type tags creationDate modificationDate fileStatus downloadUri`

// docNode is a Document as the gateway answers it.
type docNode struct {
	WID              string
	VaultID          string
	Name             string
	Extension        string
	Description      *string
	Category         string
	SubCategory      string
	Type             *string
	Tags             []string
	CreationDate     string
	ModificationDate string
	FileStatus       string
	DownloadURI      *string
}

// docConnection is a DocumentConnection as the gateway answers it.
type docConnection struct {
	Nodes []docNode
	Edges []struct {
		Cursor string
		Node   struct{ VaultID string }
	}
	TotalCount int
	PageInfo   struct {
		EndCursor, StartCursor       *string
		HasNextPage, HasPreviousPage bool
	}
}

// docPage is the answer of a query for one page of a top account's documents.
type docPage struct {
	TopAccount struct{ Documents docConnection }
}

// docTopAccount adds an empty top account through the REST API and returns its wid.
func docTopAccount(t testing.TB, up *upstream, name string) string {
	t.Helper()
	return up.rest(t, "POST", "/v2/top-accounts/", map[string]any{"external_id": name, "name": name})["wid"].(string)
}

// docDemoWID returns the wid of the demo top account with this external id.
func docDemoWID(t testing.TB, up *upstream, externalID string) string {
	t.Helper()
	list := up.rest(t, "GET", "/v2/top-accounts/?limit=100", nil)
	for _, ta := range list["top_accounts"].([]any) {
		if m := ta.(map[string]any); m["external_id"] == externalID {
			return m["wid"].(string)
		}
	}
	t.Fatalf("no demo top account %s", externalID)
	return ""
}

// docAdd adds a document through the REST API and returns its vault_id and upload address.
func docAdd(t testing.TB, up *upstream, wid string, body map[string]any) (vaultID, uploadURI string) {
	t.Helper()
	out := up.rest(t, "POST", "/v2/top-accounts/"+wid+"/documents/", body)
	return out["vault_id"].(string), out["upload_uri"].(string)
}

// docREST calls the sandbox directly and returns the status and decoded body, whatever the
// status: the way to learn what the upstream itself answers to a request.
func docREST(t testing.TB, up *upstream, method, path string, body any) (int, map[string]any) {
	t.Helper()
	req := jsonRequest(method, up.URL+path, body)
	req.Header.Set("Authorization", "Bearer "+upstreamToken)
	return doJSON(t, req)
}

// docPut sends data to a presigned upload address, as a client of uploadUri does.
func docPut(t testing.TB, uri, contentType string, data []byte) int {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPut, uri, bytes.NewReader(data))
	req.Header.Set("Content-Type", contentType)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	_, _ = io.Copy(io.Discard, resp.Body)
	return resp.StatusCode
}

// docDownload fetches a download address and returns its Content-Type and bytes.
func docDownload(t testing.TB, uri string) (string, []byte) {
	t.Helper()
	resp, err := http.Get(uri)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET the download address: status %d: %s", resp.StatusCode, body)
	}
	return resp.Header.Get("Content-Type"), body
}

// docGet reads one document through Query.document; nil when the gateway answers null.
func docGet(t testing.TB, gw *testGateway, wid, vaultID string) *docNode {
	t.Helper()
	var got struct{ Document *docNode }
	gw.post(t, `query($wid: ID!, $id: ID!) { document(wid: $wid, vaultId: $id) { `+docFields+` } }`,
		map[string]any{"wid": wid, "id": vaultID}).ok(t, &got)
	return got.Document
}

// docDetailCalls counts the Get Document requests among the recorded ones.
func docDetailCalls(recorded []string, wid string) int {
	prefix := "GET /v2/top-accounts/" + wid + "/documents/"
	n := 0
	for _, r := range recorded {
		if strings.HasPrefix(r, prefix) && len(r) > len(prefix) {
			n++
		}
	}
	return n
}

// docListCalls counts the List Documents requests among the recorded ones.
func docListCalls(recorded []string, wid string) int {
	n := 0
	for _, r := range recorded {
		if r == "GET /v2/top-accounts/"+wid+"/documents/" || r == "GET /v2/top-accounts/"+wid+"/documents" {
			n++
		}
	}
	return n
}

// docPageQuery reads one page of a top account's documents.
const docPageQuery = `query($wid: ID!, $first: Int, $after: String, $tags: [String!]) {
  topAccount(wid: $wid) {
    documents(first: $first, after: $after, tags: $tags) {
      totalCount
      pageInfo { endCursor hasNextPage startCursor hasPreviousPage }
      nodes { vaultId name tags }
      edges { cursor node { vaultId } }
    }
  }
}`

// docWalk reads every page of a top account's documents, first at a time, and returns the
// vault ids in order and the size of each page. It checks what holds on every page.
func docWalk(t *testing.T, gw *testGateway, wid string, first int, tags []string, wantTotal int) (ids []string, sizes []int) {
	t.Helper()
	vars := map[string]any{"wid": wid, "first": first}
	if tags != nil {
		vars["tags"] = tags
	}
	for page := 0; ; page++ {
		if page > wantTotal+1 {
			t.Fatalf("still paging after %d pages of %d documents", page, wantTotal)
		}
		var got docPage
		gw.post(t, docPageQuery, vars).ok(t, &got)
		c := got.TopAccount.Documents
		if c.TotalCount != wantTotal {
			t.Errorf("page %d: totalCount %d, want %d", page, c.TotalCount, wantTotal)
		}
		if len(c.Nodes) > first {
			t.Errorf("page %d: %d documents, want at most %d", page, len(c.Nodes), first)
		}
		sizes = append(sizes, len(c.Nodes))
		for _, n := range c.Nodes {
			ids = append(ids, n.VaultID)
		}
		// The cursor connections specification: "Edges must have a field named cursor", and
		// endCursor/startCursor "must be the cursors corresponding to the last and first nodes
		// in edges".
		if len(c.Edges) != len(c.Nodes) {
			t.Fatalf("page %d: %d edges, %d nodes, want as many", page, len(c.Edges), len(c.Nodes))
		}
		for i, e := range c.Edges {
			if e.Node.VaultID != c.Nodes[i].VaultID || e.Cursor == "" || e.Cursor == e.Node.VaultID {
				t.Errorf("page %d: edge %d is %q with cursor %q, want node %q with an opaque cursor", page, i, e.Node.VaultID, e.Cursor, c.Nodes[i].VaultID)
			}
		}
		switch {
		case len(c.Nodes) == 0 && (c.PageInfo.EndCursor != nil || c.PageInfo.StartCursor != nil):
			t.Errorf("page %d: empty, but cursors %v and %v, want null", page, c.PageInfo.StartCursor, c.PageInfo.EndCursor)
		case len(c.Nodes) > 0 && (c.PageInfo.EndCursor == nil || *c.PageInfo.EndCursor != c.Edges[len(c.Edges)-1].Cursor):
			t.Errorf("page %d: endCursor %v, want the last edge's cursor %q", page, c.PageInfo.EndCursor, c.Edges[len(c.Edges)-1].Cursor)
		case len(c.Nodes) > 0 && (c.PageInfo.StartCursor == nil || *c.PageInfo.StartCursor != c.Edges[0].Cursor):
			t.Errorf("page %d: startCursor %v, want the first edge's cursor %q", page, c.PageInfo.StartCursor, c.Edges[0].Cursor)
		}
		if c.PageInfo.HasPreviousPage != (page > 0) {
			t.Errorf("page %d: hasPreviousPage %v, want %v", page, c.PageInfo.HasPreviousPage, page > 0)
		}
		if !c.PageInfo.HasNextPage {
			return ids, sizes
		}
		if c.PageInfo.EndCursor == nil {
			t.Fatalf("page %d: hasNextPage with no endCursor", page)
		}
		vars["after"] = *c.PageInfo.EndCursor
	}
}

func TestDocumentsPageThroughEveryDocumentOnceWithCursors(t *testing.T) {
	t.Parallel()
	up := newUpstream(t, false)
	gw := newGateway(t, up, nil)
	wid := docTopAccount(t, up, "PAGING")
	var all []string
	for i := range 7 {
		id, _ := docAdd(t, up, wid, map[string]any{"name": fmt.Sprintf("Doc %d", i), "extension": "pdf", "category": "miscellaneous", "sub_category": "uncategorized"})
		all = append(all, id)
	}
	for _, tc := range []struct {
		first int
		sizes []int
	}{
		{1, []int{1, 1, 1, 1, 1, 1, 1}},
		{2, []int{2, 2, 2, 1}},
		{3, []int{3, 3, 1}},
		{6, []int{6, 1}},
		{7, []int{7}}, // the last page is full, and still the last
		{100, []int{7}},
		{1000, []int{7}},
	} {
		t.Run(fmt.Sprintf("first %d", tc.first), func(t *testing.T) {
			t.Parallel()
			ids, sizes := docWalk(t, gw, wid, tc.first, nil, len(all))
			if !slices.Equal(sizes, tc.sizes) {
				t.Errorf("page sizes %v, want %v", sizes, tc.sizes)
			}
			if !slices.Equal(ids, all) {
				t.Errorf("documents over all pages %v, want each of %v once, in vault order", ids, all)
			}
		})
	}
	t.Run("an empty vault", func(t *testing.T) {
		t.Parallel()
		empty := docTopAccount(t, up, "PAGING-EMPTY")
		var got docPage
		gw.post(t, docPageQuery, map[string]any{"wid": empty, "first": 5}).ok(t, &got)
		c := got.TopAccount.Documents
		if len(c.Nodes) != 0 || c.TotalCount != 0 || c.PageInfo.EndCursor != nil || c.PageInfo.HasNextPage {
			t.Errorf("got %+v, want no nodes, totalCount 0, endCursor null, hasNextPage false", c)
		}
	})
}

func TestDocumentsCursorStillPagesOnAfterItsDocumentIsDeleted(t *testing.T) {
	t.Parallel()
	up := newUpstream(t, false)
	gw := newGateway(t, up, nil)
	wid := docTopAccount(t, up, "CURSOR")
	var all []string
	for i := range 4 {
		id, _ := docAdd(t, up, wid, map[string]any{"name": fmt.Sprintf("Doc %d", i), "extension": "pdf", "category": "miscellaneous", "sub_category": "uncategorized"})
		all = append(all, id)
	}
	var first docPage
	gw.post(t, docPageQuery, map[string]any{"wid": wid, "first": 2}).ok(t, &first)
	cursor := first.TopAccount.Documents.PageInfo.EndCursor
	if cursor == nil || len(first.TopAccount.Documents.Nodes) != 2 || first.TopAccount.Documents.Nodes[1].VaultID != all[1] {
		t.Fatalf("endCursor %v after %+v, want a cursor after %q", cursor, first.TopAccount.Documents.Nodes, all[1])
	}
	gw.post(t, `mutation($wid: ID!, $id: ID!) { deleteDocument(wid: $wid, vaultId: $id) { vaultId } }`,
		map[string]any{"wid": wid, "id": all[1]}).ok(t, nil)
	var next docPage
	gw.post(t, docPageQuery, map[string]any{"wid": wid, "first": 2, "after": *cursor}).ok(t, &next)
	var ids []string
	for _, n := range next.TopAccount.Documents.Nodes {
		ids = append(ids, n.VaultID)
	}
	if !slices.Equal(ids, all[2:]) || next.TopAccount.Documents.PageInfo.HasNextPage || next.TopAccount.Documents.TotalCount != 3 {
		t.Errorf("after the deleted cursor: ids %v, hasNextPage %v, totalCount %d; want %v, false, 3",
			ids, next.TopAccount.Documents.PageInfo.HasNextPage, next.TopAccount.Documents.TotalCount, all[2:])
	}
}

func TestDocumentsFilterByAnyOfTheTagsCaseInsensitively(t *testing.T) {
	t.Parallel()
	up := newUpstream(t, true)
	gw := newGateway(t, up, nil)
	wid := docDemoWID(t, up, "HARTWELL-001")
	for _, tc := range []struct {
		name  string
		tags  []string
		first int
		want  []string // document names, in vault order
	}{
		{"a built-in tag", []string{"current"}, 100, []string{"Hartwell Family Trust Agreement", "Pour-Over Will - James Hartwell"}},
		{"a custom tag in another case", []string{"Trustee-COPY"}, 100, []string{"ILIT Agreement", "Hartwell Holdings operating agreement"}},
		{"several tags combine with OR", []string{"funded", "NEEDS-REVIEW"}, 100, []string{"ILIT Agreement", "2025 Form 1040"}},
		{"names are trimmed", []string{"  reviewed "}, 100, []string{"Hartwell Family Trust Agreement"}},
		{"a tag no document carries", []string{"superseded"}, 100, nil},
		{"a filter over several pages", []string{"current", "trustee-copy"}, 1, []string{
			"Hartwell Family Trust Agreement", "Pour-Over Will - James Hartwell", "ILIT Agreement", "Hartwell Holdings operating agreement"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			ids, _ := docWalk(t, gw, wid, tc.first, tc.tags, len(tc.want))
			var names []string
			for _, id := range ids {
				d := docGet(t, gw, wid, id)
				names = append(names, d.Name)
				if !slices.ContainsFunc(tc.tags, func(tag string) bool {
					return slices.ContainsFunc(d.Tags, func(have string) bool { return strings.EqualFold(have, strings.TrimSpace(tag)) })
				}) {
					t.Errorf("%s has tags %v, none of %v", d.Name, d.Tags, tc.tags)
				}
			}
			if !slices.Equal(names, tc.want) {
				t.Errorf("documents %q, want %q", names, tc.want)
			}
		})
	}
	t.Run("tags come back in their own spelling", func(t *testing.T) {
		t.Parallel()
		var got docPage
		gw.post(t, docPageQuery, map[string]any{"wid": wid, "tags": []string{"FUNDED"}}).ok(t, &got)
		if n := got.TopAccount.Documents.Nodes; len(n) != 1 || !slices.Equal(n[0].Tags, []string{"funded", "trustee-copy"}) {
			t.Errorf("got %+v, want the ILIT agreement tagged [funded trustee-copy]", n)
		}
	})
}

func TestDocumentsArgumentErrors(t *testing.T) {
	t.Parallel()
	up := newUpstream(t, true)
	gw := newGateway(t, up, nil)
	wid := docDemoWID(t, up, "HARTWELL-001")
	for _, tc := range []struct {
		name     string
		vars     map[string]any
		message  string
		field    string // the argument at fault, for the gateway's own checks
		upstream bool   // whether only the upstream can tell
	}{
		{"first of zero", map[string]any{"first": 0}, "first must be from 1 to 1000", "first", false},
		{"first over the limit", map[string]any{"first": 1001}, "first can't be more than 1000", "first", false},
		{"only blank tags", map[string]any{"tags": []string{" ", ""}}, "tags must contain at least one non-empty value", "tags", false},
		{"a tag with a comma", map[string]any{"tags": []string{"current,reviewed"}}, `Tag names cannot contain commas: "current,reviewed"`, "tags", false},
		{"an unknown tag", map[string]any{"tags": []string{"current", "no-such-tag"}}, "Unknown tags: no-such-tag", "", true},
		// "Cursors are opaque": a vault id is no cursor, and the gateway says so before the service sees it.
		{"a vault id as the cursor", map[string]any{"after": "no-such-document"}, "after is not a cursor the gateway made, or it was changed: pass a cursor of TopAccount.documents's edges or pageInfo as it was given", "after", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tc.vars["wid"] = wid
			up.ResetRequests()
			r := gw.post(t, docPageQuery, tc.vars)
			e := r.wantError(t, "BAD_USER_INPUT", tc.message)
			if tc.field != "" && e.Extensions["field"] != tc.field {
				t.Errorf("extensions.field %v, want %q", e.Extensions["field"], tc.field)
			}
			if !slices.Equal(e.Path, []any{"topAccount", "documents"}) {
				t.Errorf("path %v, want [topAccount documents]", e.Path)
			}
			if lists := docListCalls(up.Requests(), wid); tc.upstream != (lists > 0) {
				t.Errorf("%d List Documents calls; want them only when the upstream must judge", lists)
			}
		})
	}
}

func TestDocumentEnumerationsAreScreamingSnakeCase(t *testing.T) {
	t.Parallel()
	up := newUpstream(t, false)
	gw := newGateway(t, up, nil)
	wid := docTopAccount(t, up, "ENUMS")
	for _, tc := range []struct {
		category, subCategory, typ   string // the specification's spelling
		gqlCategory, gqlSub, gqlType string
	}{
		{"taxes", "1099", "", "TAXES", "FORM_1099", ""},
		{"taxes", "form_8949_crypto", "", "TAXES", "FORM_8949_CRYPTO", ""},
		{"taxes", "w2", "", "TAXES", "W2", ""},
		{"taxes", "form_1098s_debt", "", "TAXES", "FORM_1098S_DEBT", ""},
		{"estate_planning", "irrevocable_trusts", "slat", "ESTATE_PLANNING", "IRREVOCABLE_TRUSTS", "SLAT"},
		{"estate_planning", "revocable_trusts_and_supporting_documents", "pour_over_will", "ESTATE_PLANNING", "REVOCABLE_TRUSTS_AND_SUPPORTING_DOCUMENTS", "POUR_OVER_WILL"},
		{"personal_information", "tsa_pre_global_entry", "", "PERSONAL_INFORMATION", "TSA_PRE_GLOBAL_ENTRY", ""},
		{"miscellaneous", "uncategorized", "", "MISCELLANEOUS", "UNCATEGORIZED", ""},
	} {
		t.Run(tc.subCategory, func(t *testing.T) {
			t.Parallel()
			// From the service to GraphQL.
			body := map[string]any{"name": "From REST", "extension": "pdf", "category": tc.category, "sub_category": tc.subCategory}
			if tc.typ != "" {
				body["type"] = tc.typ
			}
			id, _ := docAdd(t, up, wid, body)
			d := docGet(t, gw, wid, id)
			if d == nil {
				t.Fatal("document is null")
			}
			gotType := ""
			if d.Type != nil {
				gotType = *d.Type
			}
			if d.Category != tc.gqlCategory || d.SubCategory != tc.gqlSub || gotType != tc.gqlType || d.FileStatus != "NO_FILE_UPLOADED" {
				t.Errorf("got %s / %s / %q / %s, want %s / %s / %q / NO_FILE_UPLOADED",
					d.Category, d.SubCategory, gotType, d.FileStatus, tc.gqlCategory, tc.gqlSub, tc.gqlType)
			}

			// From GraphQL to the service.
			input := map[string]any{"name": "From GraphQL", "extension": "pdf", "category": tc.gqlCategory, "subCategory": tc.gqlSub}
			if tc.gqlType != "" {
				input["type"] = tc.gqlType
			}
			var created struct{ CreateDocument struct{ Document docNode } }
			gw.post(t, `mutation($wid: ID!, $in: CreateDocumentInput!) { createDocument(wid: $wid, input: $in) { document { vaultId category subCategory type } } }`,
				map[string]any{"wid": wid, "in": input}).ok(t, &created)
			stored := up.rest(t, "GET", "/v2/top-accounts/"+wid+"/documents/"+created.CreateDocument.Document.VaultID, nil)
			storedType, _ := stored["type"].(string)
			if stored["category"] != tc.category || stored["sub_category"] != tc.subCategory || storedType != tc.typ {
				t.Errorf("the service holds %v / %v / %q, want %s / %s / %q", stored["category"], stored["sub_category"], storedType, tc.category, tc.subCategory, tc.typ)
			}
		})
	}
}

func TestFileStatusAndDownloadURIAreFetchedOnlyWhenSelected(t *testing.T) {
	t.Parallel()
	const demoDocuments = 8
	for _, tc := range []struct {
		name      string
		selection string
		details   int // Get Document calls
	}{
		{"neither", "vaultId name", 0},
		{"fileStatus", "vaultId fileStatus", demoDocuments},
		{"downloadUri", "vaultId downloadUri", demoDocuments},
		{"both, one call per document", "vaultId fileStatus downloadUri", demoDocuments},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			up := newUpstream(t, true)
			gw := newGateway(t, up, nil)
			wid := docDemoWID(t, up, "HARTWELL-001")
			up.ResetRequests()
			var got docPage
			gw.post(t, `query($wid: ID!) { topAccount(wid: $wid) { documents { totalCount nodes { `+tc.selection+` } } } }`,
				map[string]any{"wid": wid}).ok(t, &got)
			rec := up.Requests()
			if n := docDetailCalls(rec, wid); n != tc.details {
				t.Errorf("%d Get Document calls, want %d: %v", n, tc.details, rec)
			}
			if n := docListCalls(rec, wid); n != 1 {
				t.Errorf("%d List Documents calls, want 1: %v", n, rec)
			}
			if len(got.TopAccount.Documents.Nodes) != demoDocuments {
				t.Fatalf("%d documents, want %d", len(got.TopAccount.Documents.Nodes), demoDocuments)
			}
			// The demo family has files for four of its documents; those have an address.
			uploaded, addresses := 0, 0
			for _, n := range got.TopAccount.Documents.Nodes {
				if n.FileStatus == "UPLOADED" {
					uploaded++
				}
				if n.DownloadURI != nil {
					addresses++
				}
			}
			if strings.Contains(tc.selection, "fileStatus") && uploaded != 4 {
				t.Errorf("%d documents UPLOADED, want 4", uploaded)
			}
			if strings.Contains(tc.selection, "downloadUri") && addresses != 4 {
				t.Errorf("%d documents with a downloadUri, want 4", addresses)
			}
		})
	}
	t.Run("Query.document asks once, whatever is selected", func(t *testing.T) {
		t.Parallel()
		up := newUpstream(t, true)
		gw := newGateway(t, up, nil)
		wid := docDemoWID(t, up, "HARTWELL-001")
		id := up.rest(t, "GET", "/v2/top-accounts/"+wid+"/documents/?limit=1", nil)["documents"].([]any)[0].(map[string]any)["vault_id"].(string)
		for _, selection := range []string{"name", "name fileStatus downloadUri"} {
			up.ResetRequests()
			gw.post(t, `query($wid: ID!, $id: ID!) { document(wid: $wid, vaultId: $id) { `+selection+` } }`,
				map[string]any{"wid": wid, "id": id}).ok(t, nil)
			if rec := up.Requests(); len(rec) != 1 || docDetailCalls(rec, wid) != 1 {
				t.Errorf("selecting %q: upstream requests %v, want one Get Document", selection, rec)
			}
		}
	})
}

// docProcessingUpstream is a recorded sandbox whose uploaded files stay "not ready" for an hour.
func docProcessingUpstream(t testing.TB) *upstream {
	t.Helper()
	return startUpstream(t, sandbox.Options{Seed: 12, Empty: true, ProcessingDelay: time.Hour})
}

func TestAFileTheServiceIsStillProcessingIsPROCESSING(t *testing.T) {
	t.Parallel()
	up := docProcessingUpstream(t)
	gw := newGateway(t, up, nil)
	wid := docTopAccount(t, up, "PROCESSING")
	id, uri := docAdd(t, up, wid, map[string]any{"name": "Scan", "extension": "png", "category": "personal_information", "sub_category": "passport", "tags": []string{"current"}})
	if status := docPut(t, uri, "image/png", []byte("\x89PNG not really")); status != http.StatusOK {
		t.Fatalf("PUT the file: status %d", status)
	}
	for _, tc := range []struct {
		name  string
		query string
	}{
		{"Query.document", `query($wid: ID!, $id: ID!) { document(wid: $wid, vaultId: $id) { vaultId name tags fileStatus downloadUri } }`},
		{"TopAccount.document", `query($wid: ID!, $id: ID!) { topAccount(wid: $wid) { document(vaultId: $id) { vaultId name tags fileStatus downloadUri } } }`},
		{"TopAccount.documents", `query($wid: ID!) { topAccount(wid: $wid) { documents { nodes { vaultId name tags fileStatus downloadUri } } } }`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			r := gw.post(t, tc.query, map[string]any{"wid": wid, "id": id})
			r.ok(t, nil)
			for _, want := range []string{`"vaultId":"` + id + `"`, `"name":"Scan"`, `"tags":["current"]`, `"fileStatus":"PROCESSING"`, `"downloadUri":null`} {
				if !strings.Contains(string(r.Data), want) {
					t.Errorf("data %s lacks %s", r.Data, want)
				}
			}
		})
	}
}

func TestAnUnknownDocumentIsNull(t *testing.T) {
	t.Parallel()
	up := newUpstream(t, true)
	gw := newGateway(t, up, nil)
	wid := docDemoWID(t, up, "HARTWELL-001")
	for _, tc := range []struct {
		name  string
		query string
		vars  map[string]any
		want  string
	}{
		{"Query.document", `query($wid: ID!) { document(wid: $wid, vaultId: "no-such-document") { vaultId } }`,
			map[string]any{"wid": wid}, `{"document":null}`},
		{"TopAccount.document", `query($wid: ID!) { topAccount(wid: $wid) { name document(vaultId: "no-such-document") { vaultId } } }`,
			map[string]any{"wid": wid}, `{"topAccount":{"name":"Hartwell Family","document":null}}`},
		{"Query.document of an unknown top account", `{ document(wid: "no-such-top-account", vaultId: "no-such-document") { vaultId } }`,
			nil, `{"document":null}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			r := gw.post(t, tc.query, tc.vars)
			r.ok(t, nil)
			if string(r.Data) != tc.want {
				t.Errorf("data %s, want %s", r.Data, tc.want)
			}
		})
	}
}

func TestCreateDocumentWithoutAFileGivesAnAddressToPUTItTo(t *testing.T) {
	t.Parallel()
	up := newUpstream(t, false)
	gw := newGateway(t, up, nil)
	wid := docTopAccount(t, up, "PUT")
	for _, tc := range []struct {
		extension   string // as sent
		stored      string // as the document has it
		contentType string
		data        []byte
	}{
		{"csv", "csv", "text/csv", []byte("a,b\n1,2\n")},
		{".PDF", "pdf", "application/pdf", []byte("%PDF-1.4 a tiny document")},
		{"jpg", "jpg", "image/jpeg", []byte{0xff, 0xd8, 0xff, 0xe0, 0, 1, 2, 3}},
		{"xlsx", "xlsx", "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet", []byte("PK\x03\x04 zipped sheet")},
	} {
		t.Run(tc.extension, func(t *testing.T) {
			t.Parallel()
			var got struct {
				CreateDocument struct {
					Document  docNode
					UploadURI *string
				}
			}
			gw.post(t, `mutation($wid: ID!, $in: CreateDocumentInput!) { createDocument(wid: $wid, input: $in) { document { `+docFields+` } uploadUri } }`,
				map[string]any{"wid": wid, "in": map[string]any{
					"name": "Report " + tc.extension, "extension": tc.extension, "description": "Quarterly",
					"category": "MISCELLANEOUS", "subCategory": "MISCELLANEOUS_OTHER", "tags": []string{"Current", "reviewed"},
				}}).ok(t, &got)
			p := got.CreateDocument
			d := p.Document
			if p.UploadURI == nil || *p.UploadURI == "" {
				t.Fatal("uploadUri is null, want the address to PUT the file to")
			}
			if d.WID != wid || d.VaultID == "" || d.Name != "Report "+tc.extension || d.Extension != tc.stored ||
				d.Description == nil || *d.Description != "Quarterly" || d.Type != nil || !slices.Equal(d.Tags, []string{"current", "reviewed"}) {
				t.Errorf("document %+v, want what was sent, extension %q and tags [current reviewed]", d, tc.stored)
			}
			if d.FileStatus != "NO_FILE_UPLOADED" || d.DownloadURI != nil {
				t.Errorf("before the PUT: fileStatus %s, downloadUri %v; want NO_FILE_UPLOADED and null", d.FileStatus, d.DownloadURI)
			}
			if _, err := time.Parse(time.RFC3339, d.CreationDate); err != nil {
				t.Errorf("creationDate %q: %v", d.CreationDate, err)
			}

			if status := docPut(t, *p.UploadURI, "application/octet-stream", tc.data); status != http.StatusUnsupportedMediaType {
				t.Errorf("PUT with the wrong Content-Type: status %d, want 415", status)
			}
			if status := docPut(t, *p.UploadURI, tc.contentType, tc.data); status != http.StatusOK {
				t.Fatalf("PUT with Content-Type %s: status %d, want 200", tc.contentType, status)
			}
			after := docGet(t, gw, wid, d.VaultID)
			if after == nil || after.FileStatus != "UPLOADED" || after.DownloadURI == nil {
				t.Fatalf("after the PUT: %+v, want UPLOADED with a downloadUri", after)
			}
			ct, body := docDownload(t, *after.DownloadURI)
			if ct != tc.contentType || !bytes.Equal(body, tc.data) {
				t.Errorf("download: Content-Type %q, %d bytes; want %q and the %d bytes sent", ct, len(body), tc.contentType, len(tc.data))
			}
		})
	}
}

func TestUpdateDocumentSetsLeavesAndClearsFields(t *testing.T) {
	t.Parallel()
	up := newUpstream(t, false)
	gw := newGateway(t, up, nil)
	wid := docTopAccount(t, up, "UPDATE")
	original := func() docNode {
		desc, typ := "Original description", "GRAT"
		return docNode{Name: "Original", Extension: "pdf", Description: &desc, Category: "ESTATE_PLANNING",
			SubCategory: "IRREVOCABLE_TRUSTS", Type: &typ, Tags: []string{"current", "funded"}}
	}
	str := func(s string) *string { return &s }
	for _, tc := range []struct {
		name   string
		input  string // the input object as GraphQL text, so null is literal
		vars   map[string]any
		change func(*docNode)
	}{
		{"name alone leaves the rest", `{name: "Renamed"}`, nil, func(d *docNode) { d.Name = "Renamed" }},
		{"a description is set", `{description: "New description"}`, nil, func(d *docNode) { d.Description = str("New description") }},
		{"a null description clears it", `{description: null}`, nil, func(d *docNode) { d.Description = nil }},
		{"a null type clears it", `{type: null}`, nil, func(d *docNode) { d.Type = nil }},
		{"null tags clear them", `{tags: null}`, nil, func(d *docNode) { d.Tags = []string{} }},
		{"empty tags clear them", `{tags: []}`, nil, func(d *docNode) { d.Tags = []string{} }},
		{"tags are replaced, in their own spelling", `{tags: ["REVIEWED", "reviewed", "Needs-Review"]}`, nil, func(d *docNode) { d.Tags = []string{"reviewed", "needs-review"} }},
		{"another type", `{type: SLAT}`, nil, func(d *docNode) { d.Type = str("SLAT") }},
		{"category and sub-category move together", `{category: TAXES, subCategory: FORM_1099, type: null}`, nil, func(d *docNode) {
			d.Category, d.SubCategory, d.Type = "TAXES", "FORM_1099", nil
		}},
		{"the extension, normalised", `{extension: ".CSV"}`, nil, func(d *docNode) { d.Extension = "csv" }},
		{"null through a variable clears it", `$in`, map[string]any{"in": map[string]any{"description": nil, "name": "Via variables"}}, func(d *docNode) {
			d.Description, d.Name = nil, "Via variables"
		}},
		{"a field left out of a variable stays", `$in`, map[string]any{"in": map[string]any{"tags": []string{"superseded"}}}, func(d *docNode) {
			d.Tags = []string{"superseded"}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			id, _ := docAdd(t, up, wid, map[string]any{"name": "Original", "extension": "pdf", "description": "Original description",
				"category": "estate_planning", "sub_category": "irrevocable_trusts", "type": "grat", "tags": []string{"current", "funded"}})
			vars := map[string]any{"wid": wid, "id": id}
			for k, v := range tc.vars {
				vars[k] = v
			}
			var got struct {
				UpdateDocument struct {
					Document  docNode
					UploadURI *string
				}
			}
			decl := ""
			if tc.input == "$in" {
				decl = ", $in: UpdateDocumentInput!"
			}
			gw.post(t, `mutation($wid: ID!, $id: ID!`+decl+`) {
				updateDocument(wid: $wid, vaultId: $id, input: `+tc.input+`) { document { `+docFields+` } uploadUri } }`,
				vars).ok(t, &got)
			want := original()
			tc.change(&want)
			docSameMetadata(t, "the payload", got.UpdateDocument.Document, want)
			if got.UpdateDocument.UploadURI == nil {
				t.Error("uploadUri is null, want a fresh address for the file")
			}
			stored := docGet(t, gw, wid, id)
			if stored == nil {
				t.Fatal("the document is gone after the update")
			}
			docSameMetadata(t, "read back", *stored, want)
			created, _ := time.Parse(time.RFC3339Nano, stored.CreationDate)
			modified, err := time.Parse(time.RFC3339Nano, stored.ModificationDate)
			if err != nil || modified.Before(created) {
				t.Errorf("modificationDate %s before creationDate %s", stored.ModificationDate, stored.CreationDate)
			}
		})
	}
}

// docSameMetadata compares the caller-settable fields of two documents.
func docSameMetadata(t *testing.T, what string, got, want docNode) {
	t.Helper()
	deref := func(p *string) string {
		if p == nil {
			return "<null>"
		}
		return *p
	}
	if got.Name != want.Name || got.Extension != want.Extension || deref(got.Description) != deref(want.Description) ||
		got.Category != want.Category || got.SubCategory != want.SubCategory || deref(got.Type) != deref(want.Type) ||
		!slices.Equal(got.Tags, want.Tags) || got.Tags == nil {
		t.Errorf("%s: name %q, extension %q, description %s, %s / %s / %s, tags %#v;\nwant name %q, extension %q, description %s, %s / %s / %s, tags %#v",
			what, got.Name, got.Extension, deref(got.Description), got.Category, got.SubCategory, deref(got.Type), got.Tags,
			want.Name, want.Extension, deref(want.Description), want.Category, want.SubCategory, deref(want.Type), want.Tags)
	}
}

func TestDeleteDocumentRemovesItForGood(t *testing.T) {
	t.Parallel()
	up := newUpstream(t, false)
	gw := newGateway(t, up, nil)
	wid := docTopAccount(t, up, "DELETE")
	keep, _ := docAdd(t, up, wid, map[string]any{"name": "Keep", "extension": "pdf", "category": "miscellaneous", "sub_category": "uncategorized"})
	gone, uri := docAdd(t, up, wid, map[string]any{"name": "Gone", "extension": "csv", "category": "miscellaneous", "sub_category": "uncategorized"})
	if status := docPut(t, uri, "text/csv", []byte("x\n")); status != http.StatusOK {
		t.Fatalf("PUT the file: status %d", status)
	}

	var del struct{ DeleteDocument struct{ VaultID string } }
	gw.post(t, `mutation($wid: ID!, $id: ID!) { deleteDocument(wid: $wid, vaultId: $id) { vaultId } }`,
		map[string]any{"wid": wid, "id": gone}).ok(t, &del)
	if del.DeleteDocument.VaultID != gone {
		t.Errorf("deleteDocument answered vaultId %q, want %q", del.DeleteDocument.VaultID, gone)
	}
	if d := docGet(t, gw, wid, gone); d != nil {
		t.Errorf("Query.document after the delete: %+v, want null", d)
	}
	var got struct {
		TopAccount struct {
			Document  *docNode
			Documents docConnection
		}
	}
	gw.post(t, `query($wid: ID!, $id: ID!) { topAccount(wid: $wid) { document(vaultId: $id) { vaultId } documents { totalCount nodes { vaultId } } } }`,
		map[string]any{"wid": wid, "id": gone}).ok(t, &got)
	if got.TopAccount.Document != nil {
		t.Errorf("TopAccount.document after the delete: %+v, want null", got.TopAccount.Document)
	}
	if n := got.TopAccount.Documents.Nodes; got.TopAccount.Documents.TotalCount != 1 || len(n) != 1 || n[0].VaultID != keep {
		t.Errorf("documents after the delete: %+v, want only %s", got.TopAccount.Documents, keep)
	}
	if status, body := docREST(t, up, "GET", "/v2/top-accounts/"+wid+"/documents/"+gone, nil); status != http.StatusNotFound {
		t.Errorf("the service still has the document: %d %v", status, body)
	}

	for _, tc := range []struct {
		name, query string
		vars        map[string]any
		message     string
	}{
		{"deleting it again", `mutation($wid: ID!, $id: ID!) { deleteDocument(wid: $wid, vaultId: $id) { vaultId } }`,
			map[string]any{"wid": wid, "id": gone}, "Vault doesn't exist"},
		{"updating it", `mutation($wid: ID!, $id: ID!) { updateDocument(wid: $wid, vaultId: $id, input: {name: "Back"}) { uploadUri } }`,
			map[string]any{"wid": wid, "id": gone}, "Vault doesn't exist"},
		{"deleting in an unknown top account", `mutation($id: ID!) { deleteDocument(wid: "no-such-top-account", vaultId: $id) { vaultId } }`,
			map[string]any{"id": keep}, "Container not found"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := gw.post(t, tc.query, tc.vars)
			// In the schema's words, with the service's own beside them.
			e := r.wantError(t, "NOT_FOUND", map[string]string{"Vault doesn't exist": "Document not found", "Container not found": "Top account not found"}[tc.message])
			wantUpstream(t, e, 404, tc.message)
			if string(r.Data) != "null" {
				t.Errorf("data %s, want null: the mutation's payload is non-null", r.Data)
			}
		})
	}
}

func TestDocumentMutationErrorsSpeakTheSchemaAndKeepTheUpstreamsWords(t *testing.T) {
	t.Parallel()
	up := newUpstream(t, true)
	gw := newGateway(t, up, nil)
	wid := docDemoWID(t, up, "HARTWELL-001")
	existing, _ := docAdd(t, up, wid, map[string]any{"name": "Existing", "extension": "pdf", "category": "taxes", "sub_category": "w2"})
	const create = `mutation($wid: ID!, $in: CreateDocumentInput!) { createDocument(wid: $wid, input: $in) { document { vaultId } } }`
	const update = `mutation($wid: ID!, $id: ID!, $in: UpdateDocumentInput!) { updateDocument(wid: $wid, vaultId: $id, input: $in) { document { vaultId } } }`
	valid := func(change map[string]any) map[string]any {
		in := map[string]any{"name": "Statement", "extension": "pdf", "category": "TAXES", "subCategory": "W2"}
		for k, v := range change {
			in[k] = v
		}
		return in
	}
	restValid := func(change map[string]any) map[string]any {
		in := map[string]any{"name": "Statement", "extension": "pdf", "category": "taxes", "sub_category": "w2"}
		for k, v := range change {
			in[k] = v
		}
		return in
	}
	const noTypes = "input.type must be left out: subCategory W2 has no types (documentTaxonomy lists the sub-categories that have types)"
	for _, tc := range []struct {
		name     string
		update   bool
		input    map[string]any // GraphQL input
		rest     map[string]any // the same body to the service
		field    string
		message  string // the service's rule in the schema's words
		upstream bool   // whether only the upstream can tell
	}{
		{"an unknown tag", false, valid(map[string]any{"tags": []string{"current", "no-such-tag"}}),
			restValid(map[string]any{"tags": []string{"current", "no-such-tag"}}), "input.tags", "input.tags: Invalid tags: no-such-tag", true},
		{"an unknown tag on update", true, map[string]any{"tags": []string{"No-Such-Tag"}},
			map[string]any{"tags": []string{"No-Such-Tag"}}, "input.tags", "input.tags: Invalid tags: No-Such-Tag", true},
		{"a blank tag", false, valid(map[string]any{"tags": []string{"current", "  "}}),
			restValid(map[string]any{"tags": []string{"current", "  "}}), "input.tags", "input.tags must not contain a blank tag name", false},
		{"an unsupported extension", false, valid(map[string]any{"extension": "exe"}),
			restValid(map[string]any{"extension": "exe"}), "input.extension",
			"input.extension: Unsupported extension: exe (supported: pdf, doc, docx, xls, xlsx, ppt, pptx, key, csv, tsv, png, jpg, jpeg, bmp)", false},
		{"a sub-category of another category", false, valid(map[string]any{"subCategory": "PASSPORT"}),
			restValid(map[string]any{"sub_category": "passport"}), "input.subCategory",
			"input.subCategory PASSPORT is not one of category TAXES's: FORM_1099, TAX_RETURN_1040, W2, K1S, FORM_8949_CRYPTO, FORM_709_GIFT_TAX_RETURNS, FORM_1098S_DEBT, TAXES_OTHER (documentTaxonomy lists them all)", false},
		{"a type the sub-category does not have", false, valid(map[string]any{"type": "SLAT"}),
			restValid(map[string]any{"type": "slat"}), "input.type", noTypes, false},
		{"a name too long", false, valid(map[string]any{"name": strings.Repeat("n", 201)}),
			restValid(map[string]any{"name": strings.Repeat("n", 201)}), "input.name", "input.name must be at most 200 characters", false},
		{"a blank name", false, valid(map[string]any{"name": "   "}),
			restValid(map[string]any{"name": "   "}), "input.name", "input.name must not be blank", false},
		{"a description too long", false, valid(map[string]any{"description": strings.Repeat("d", 2001)}),
			restValid(map[string]any{"description": strings.Repeat("d", 2001)}), "input.description", "input.description must be at most 2000 characters", false},
		{"a type that does not fit on update", true, map[string]any{"type": "ILIT"},
			map[string]any{"type": "ilit"}, "input.type", noTypes, true},
		{"a sub-category of another category on update", true, map[string]any{"category": "FAMILY", "subCategory": "W2"},
			map[string]any{"category": "family", "sub_category": "w2"}, "input.subCategory",
			"input.subCategory W2 is not one of category FAMILY's: MARRIAGE_CERTIFICATE, MARITAL_AGREEMENT, DIVORCE_DECREE, DOMESTIC_PARTNERSHIP_CERTIFICATE, ADOPTION_DECREE, DEATH_CERTIFICATE, FAMILY_OTHER (documentTaxonomy lists them all)", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			// What the service itself answers to the same body.
			method, path := "POST", "/v2/top-accounts/"+wid+"/documents/"
			if tc.update {
				method, path = "PATCH", "/v2/top-accounts/"+wid+"/documents/"+existing
			}
			status, body := docREST(t, up, method, path, tc.rest)
			message, _ := body["message"].(string)
			if status != http.StatusBadRequest || message == "" {
				t.Fatalf("the service answers %d %v, want 400 with a message", status, body)
			}

			up.ResetRequests()
			query, vars := create, map[string]any{"wid": wid, "in": tc.input}
			if tc.update {
				query, vars["id"] = update, existing
			}
			r := gw.post(t, query, vars)
			e := r.wantError(t, "BAD_USER_INPUT", tc.message)
			if e.Extensions["field"] != tc.field {
				t.Errorf("extensions.field %v, want %q", e.Extensions["field"], tc.field)
			}
			// The service's own words come with what only the service could tell.
			if tc.upstream {
				wantUpstream(t, e, http.StatusBadRequest, message)
			} else if u, ok := e.Extensions["upstream"]; ok {
				t.Errorf("a rule the gateway checks itself carries extensions.upstream %v", u)
			}
			writes := 0
			for _, req := range up.Requests() {
				if !strings.HasPrefix(req, "GET ") {
					writes++
				}
			}
			if !tc.upstream && writes > 0 {
				t.Errorf("a rule the gateway can check reached the upstream: %v", up.Requests())
			}
			if stored := up.rest(t, "GET", "/v2/top-accounts/"+wid+"/documents/"+existing, nil); stored["name"] != "Existing" || stored["type"] != nil {
				t.Errorf("the refused change altered the document: %v", stored)
			}
		})
	}
	t.Run("an unknown top account", func(t *testing.T) {
		r := gw.post(t, create, map[string]any{"wid": "no-such-top-account", "in": valid(nil)})
		e := r.wantError(t, "NOT_FOUND", "Top account not found")
		wantUpstream(t, e, http.StatusNotFound, "Container not found")
	})
}

// documentTaxonomy answers the specification's taxonomy from the gateway's memory, so a form
// offers only valid choices; a choice it lists is accepted.
func TestDocumentTaxonomyListsTheValidChoices(t *testing.T) {
	t.Parallel()
	up := newUpstream(t, true)
	gw := newGateway(t, up, nil)
	wid := docDemoWID(t, up, "HARTWELL-001")
	up.ResetRequests()
	var got struct {
		DocumentTaxonomy []struct {
			Category      string
			SubCategories []struct {
				SubCategory string
				Types       []string
			}
		}
	}
	gw.post(t, `{ documentTaxonomy { category subCategories { subCategory types } } }`, nil).ok(t, &got)
	if reqs := up.Requests(); len(reqs) > 0 {
		t.Errorf("documentTaxonomy asked the upstream: %v", reqs)
	}
	tax := got.DocumentTaxonomy
	if len(tax) != len(advisorspec.Categories) || tax[0].Category != "PERSONAL_INFORMATION" || tax[len(tax)-1].Category != "MISCELLANEOUS" {
		t.Fatalf("categories %+v, want the specification's %d from PERSONAL_INFORMATION to MISCELLANEOUS", tax, len(advisorspec.Categories))
	}
	subs := 0
	var typed []string
	for _, c := range tax {
		for _, sc := range c.SubCategories {
			subs++
			if len(sc.Types) > 0 {
				typed = append(typed, c.Category+"/"+sc.SubCategory+": "+strings.Join(sc.Types, " "))
			}
		}
	}
	wantTyped := []string{
		"ESTATE_PLANNING/REVOCABLE_TRUSTS_AND_SUPPORTING_DOCUMENTS: POUR_OVER_WILL",
		"ESTATE_PLANNING/IRREVOCABLE_TRUSTS: DYNASTY_TRUST SLAT GRAT ILIT CRUT QPRT OTHER",
	}
	specSubs := 0
	for _, c := range advisorspec.Categories {
		specSubs += len(c.SubCategories)
	}
	if subs != specSubs || !slices.Equal(typed, wantTyped) {
		t.Errorf("%d sub-categories with types %q, want %d with %q", subs, typed, specSubs, wantTyped)
	}
	// A choice it offers is one the vault takes.
	var made struct {
		CreateDocument struct {
			Document struct{ Category, SubCategory, Type string }
		}
	}
	gw.post(t, `mutation($wid: ID!) { createDocument(wid: $wid, input: {name: "Trust deed", extension: "pdf",
		category: ESTATE_PLANNING, subCategory: IRREVOCABLE_TRUSTS, type: SLAT}) { document { category subCategory type } } }`,
		map[string]any{"wid": wid}).ok(t, &made)
	if d := made.CreateDocument.Document; d.Category != "ESTATE_PLANNING" || d.SubCategory != "IRREVOCABLE_TRUSTS" || d.Type != "SLAT" {
		t.Errorf("created %+v", d)
	}
}
