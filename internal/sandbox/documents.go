package sandbox

import (
	"cmp"
	"net/http"
	"net/url"
	"slices"
	"strings"

	"github.com/advisorhq/gateway/internal/advisorspec"
)

// timeFormat is how the service writes creation_date and modification_date: ISO 8601 in UTC.
const timeFormat = "2006-01-02T15:04:05.000Z"

// documentJSON is a document as the API returns it.
type documentJSON = advisorspec.Document

func (d *document) json() documentJSON {
	return documentJSON{
		WID:              d.WID,
		VaultID:          d.VaultID,
		Name:             d.Name,
		Extension:        d.Extension,
		Description:      d.Description,
		Category:         d.Category,
		SubCategory:      d.SubCategory,
		Type:             d.Type,
		Tags:             d.Tags,
		CreationDate:     d.CreationDate.UTC().Format(timeFormat),
		ModificationDate: d.ModificationDate.UTC().Format(timeFormat),
	}
}

// tags is the tag set of a top account. The caller holds the lock.
func (ta *topAccount) tags() advisorspec.Tags { return advisorspec.NewTags(ta.customTags...) }

// document finds a document for a request. The caller holds the lock.
func (t *Tenant) document(wid, vaultID string) (*topAccount, *document, *apiError) {
	if missing(wid) || missing(vaultID) {
		return nil, nil, errorf(http.StatusBadRequest, "Bad Request")
	}
	ta, err := t.topAccount(wid, "Bad Request")
	if err != nil {
		return nil, nil, err
	}
	d, ok := ta.documents[vaultID]
	if !ok {
		return nil, nil, errorf(http.StatusNotFound, "Vault doesn't exist")
	}
	return ta, d, nil
}

func (t *Tenant) listDocuments(wid string, query url.Values) (advisorspec.DocumentList, *apiError) {
	t.store.mu.RLock()
	defer t.store.mu.RUnlock()
	ta, err := t.topAccount(wid, "Bad Request")
	if err != nil {
		return advisorspec.DocumentList{}, err
	}
	q, verr := advisorspec.ParseDocumentQuery(query)
	if verr != nil {
		return advisorspec.DocumentList{}, errorf(http.StatusBadRequest, verr.Message)
	}
	tags := ta.tags()
	if unknown := tags.Unknown(q.Tags); len(unknown) > 0 {
		return advisorspec.DocumentList{}, errorf(http.StatusBadRequest, "Unknown tags: "+strings.Join(unknown, ", "))
	}
	after := -1
	if q.NextToken != "" {
		seq, ok := ta.docSeq[q.NextToken]
		if !ok {
			return advisorspec.DocumentList{}, errorf(http.StatusBadRequest, "Invalid nextToken: no document "+q.NextToken+" in this top account")
		}
		after = seq
	}
	matching := documentsTagged(ta, tags, q.Tags)
	out := advisorspec.DocumentList{Documents: []documentJSON{}}
	out.Pagination.TotalCount = len(matching)
	for _, d := range matching {
		if len(out.Documents) == q.Limit {
			break
		}
		if ta.docSeq[d.VaultID] > after {
			out.Documents = append(out.Documents, d.json())
		}
	}
	return out, nil
}

// documentsTagged returns the top account's documents in vault order, those carrying any of
// the filter's tags when there is a filter. The caller holds the lock.
func documentsTagged(ta *topAccount, tags advisorspec.Tags, filter []string) []*document {
	want := make([]string, 0, len(filter))
	for _, name := range filter {
		c, _ := tags.Canonical(name)
		want = append(want, c)
	}
	var out []*document
	for _, d := range ta.documents {
		if len(want) == 0 || slices.ContainsFunc(d.Tags, func(t string) bool { return slices.Contains(want, t) }) {
			out = append(out, d)
		}
	}
	slices.SortFunc(out, func(a, b *document) int { return cmp.Compare(ta.docSeq[a.VaultID], ta.docSeq[b.VaultID]) })
	return out
}

func (t *Tenant) getDocument(r *http.Request, wid, vaultID string) (documentJSON, *apiError) {
	t.store.mu.RLock()
	defer t.store.mu.RUnlock()
	_, d, err := t.document(wid, vaultID)
	if err != nil {
		return documentJSON{}, err
	}
	now := t.opts.Now()
	if d.Uploaded && now.Before(d.ReadyAt) {
		return documentJSON{}, errorf(http.StatusNotFound, advisorspec.MessageFileNotReady)
	}
	out := d.json()
	out.FileStatus = advisorspec.FileStatusNoFileUploaded
	if d.Uploaded {
		out.FileStatus = advisorspec.FileStatusUploaded
		out.DownloadURI = t.presign(r, http.MethodGet, d, "", now.Add(t.opts.DownloadTTL))
	}
	return out, nil
}

func (t *Tenant) uploadDocument(r *http.Request, wid string, body []byte) (advisorspec.NewDocument, *apiError) {
	d, err := t.createDocument(wid, body)
	if err != nil {
		return advisorspec.NewDocument{}, err
	}
	return advisorspec.NewDocument{WID: d.WID, VaultID: d.VaultID, UploadURI: t.uploadAddress(r, d)}, nil
}

// createDocument adds a document, with no file yet, from an Upload Document body.
func (t *Tenant) createDocument(wid string, body []byte) (*document, *apiError) {
	t.store.mu.Lock()
	defer t.store.mu.Unlock()
	ta, err := t.topAccount(wid, "Bad Request")
	if err != nil {
		return nil, err
	}
	fields, verr := advisorspec.CheckNewDocument(body, ta.tags())
	if verr != nil {
		return nil, errorf(http.StatusBadRequest, verr.Message)
	}
	now := t.opts.Now()
	d := &document{DocumentFields: fields, WID: ta.info.WID, VaultID: t.store.ids.newID(), CreationDate: now, ModificationDate: now}
	ta.documents[d.VaultID] = d
	ta.docSeq[d.VaultID] = ta.nextSeq
	ta.nextSeq++
	return d, nil
}

func (t *Tenant) updateDocument(r *http.Request, wid, vaultID string, body []byte) (documentJSON, *apiError) {
	t.store.mu.Lock()
	defer t.store.mu.Unlock()
	ta, d, err := t.document(wid, vaultID)
	if err != nil {
		return documentJSON{}, err
	}
	fields, verr := advisorspec.CheckDocumentPatch(body, d.DocumentFields, ta.tags())
	if verr != nil {
		return documentJSON{}, errorf(http.StatusBadRequest, verr.Message)
	}
	updated := *d
	updated.DocumentFields = fields
	updated.ModificationDate = t.opts.Now()
	ta.documents[vaultID] = &updated
	out := updated.json()
	out.UploadURI = t.uploadAddress(r, &updated)
	return out, nil
}

func (t *Tenant) deleteDocument(wid, vaultID string) (struct{}, *apiError) {
	t.store.mu.Lock()
	defer t.store.mu.Unlock()
	ta, _, err := t.document(wid, vaultID)
	if err != nil {
		return struct{}{}, err
	}
	// The file goes first: if that fails the document is still whole and the delete can be retried.
	if err := t.files.remove(vaultID); err != nil {
		return struct{}{}, errorf(http.StatusInternalServerError, "Internal server error")
	}
	delete(ta.documents, vaultID) // docSeq keeps its place, so a nextToken naming it still pages on
	return struct{}{}, nil
}

// uploadAddress issues a new presigned upload address for d. Each carries its own nonce, so
// that each takes one upload.
func (t *Tenant) uploadAddress(r *http.Request, d *document) string {
	return t.presign(r, http.MethodPut, d, t.store.ids.hex(16), t.opts.Now().Add(t.opts.UploadTTL))
}
