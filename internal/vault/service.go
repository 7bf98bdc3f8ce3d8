package vault

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"regexp"
	"strings"

	"github.com/99designs/gqlgen/graphql"

	"github.com/advisorhq/gateway/internal/advisor"
	"github.com/advisorhq/gateway/internal/advisorspec"
	"github.com/advisorhq/gateway/internal/apperr"
	"github.com/advisorhq/gateway/internal/cursor"
	"github.com/advisorhq/gateway/internal/enumcase"
)

// API is what the vault needs of the Advisor service.
type API interface {
	Documents(ctx context.Context, wid string, q advisorspec.DocumentQuery) (advisorspec.DocumentList, error)
	Document(ctx context.Context, wid, vaultID string) (advisorspec.Document, error)
	CreateDocument(ctx context.Context, wid string, body []byte) (advisorspec.NewDocument, error)
	UpdateDocument(ctx context.Context, wid, vaultID string, body []byte) (advisorspec.Document, error)
	DeleteDocument(ctx context.Context, wid, vaultID string) error
	UploadFile(ctx context.Context, uploadURI, contentType string, file io.Reader, size int64) error
}

// DefaultDetailConcurrency bounds how many Get Document calls one request makes at once to
// learn the file status of listed documents; pass it to NewService unless you mean another.
const DefaultDetailConcurrency = 8

// Service answers the vault's queries and mutations.
type Service struct {
	api         API
	concurrency int
}

// NewService returns the vault over api. detailConcurrency bounds the Get Document calls one
// request makes at once for the file status of listed documents: DefaultDetailConcurrency, or
// another positive number (one that is not positive also means the default).
func NewService(api API, detailConcurrency int) *Service {
	if detailConcurrency <= 0 {
		detailConcurrency = DefaultDetailConcurrency
	}
	return &Service{api: api, concurrency: detailConcurrency}
}

// fileKey is a listed document's file status in the request's cache (advisor.Cache).
type fileKey struct{ wid, vaultID string }

// slotsKey is the request's bound on its Get Document calls for listed documents' file status,
// kept in the request's cache so that it is the request's, not the process's.
type slotsKey struct{ svc *Service }

// fileOf asks the service for a listed document's file status, once per document and request,
// with at most s.concurrency such calls of the request in flight.
func (s *Service) fileOf(ctx context.Context, wid, vaultID string) (*fileInfo, error) {
	return advisor.Memo(ctx, fileKey{wid, vaultID}, func() (*fileInfo, error) {
		slots, err := advisor.Memo(ctx, slotsKey{s}, func() (chan struct{}, error) {
			return make(chan struct{}, s.concurrency), nil
		})
		if err != nil {
			return nil, err
		}
		select {
		case slots <- struct{}{}:
		case <-ctx.Done():
			return nil, apperr.Wrap(apperr.UpstreamUnavailable, "The request was cancelled", ctx.Err())
		}
		defer func() { <-slots }()
		doc, err := s.Get(ctx, wid, vaultID)
		switch {
		case err != nil:
			return nil, err
		case doc == nil:
			return nil, apperr.New(apperr.NotFound, documentNotFound)
		}
		return doc.file, nil
	})
}

// FileStatus is whether the document's file has arrived, asked of the service if the document
// came from a list.
func (s *Service) FileStatus(ctx context.Context, d *Document) (FileStatus, error) {
	f, err := s.file(ctx, d)
	if err != nil {
		return "", err
	}
	return f.status, nil
}

// DownloadURI is the address that serves the document's file, when there is one.
func (s *Service) DownloadURI(ctx context.Context, d *Document) (*string, error) {
	f, err := s.file(ctx, d)
	if err != nil {
		return nil, err
	}
	return f.downloadURI, nil
}

func (s *Service) file(ctx context.Context, d *Document) (*fileInfo, error) {
	if d.file != nil {
		return d.file, nil
	}
	return s.fileOf(ctx, d.WID, d.VaultID)
}

// Get returns a document with its file status, or nil when there is none.
func (s *Service) Get(ctx context.Context, wid, vaultID string) (*Document, error) {
	d, err := s.api.Document(ctx, wid, vaultID)
	if err == nil {
		return documentFrom(d), nil
	}
	e, _ := apperr.As(err)
	switch {
	case e != nil && e.Code == apperr.NotFound && e.Upstream != nil && e.Upstream.Message == advisorspec.MessageFileNotReady:
		return s.processing(ctx, wid, vaultID)
	case apperr.IsNotFound(err):
		return nil, nil
	}
	return nil, err
}

// processing finds a document whose file the service is still processing. Get Document gives
// nothing but the 404 then, so its metadata comes from the list.
func (s *Service) processing(ctx context.Context, wid, vaultID string) (*Document, error) {
	q := advisorspec.DocumentQuery{Limit: advisorspec.MaxDocLimit}
	for {
		page, err := s.api.Documents(ctx, wid, q)
		if err != nil {
			return nil, err
		}
		for _, d := range page.Documents {
			if d.VaultID == vaultID {
				doc := documentFrom(d)
				doc.file = &fileInfo{status: FileStatusProcessing}
				return doc, nil
			}
		}
		if len(page.Documents) < q.Limit {
			return nil, nil
		}
		q.NextToken = page.Documents[len(page.Documents)-1].VaultID
	}
}

// List returns first documents after the cursor after, only those carrying any of tags when
// tags are given.
func (s *Service) List(ctx context.Context, firm, wid string, first int, after *string, tags []string) (*DocumentConnection, error) {
	switch {
	case first > advisorspec.MaxDocLimit:
		return nil, apperr.Input("first", fmt.Sprintf("first can't be more than %d", advisorspec.MaxDocLimit))
	case first < 1:
		return nil, apperr.Input("first", fmt.Sprintf("first must be from 1 to %d", advisorspec.MaxDocLimit))
	}
	scope := firm + "\x00" + wid
	q := advisorspec.DocumentQuery{Limit: first}
	if after != nil {
		// The service's nextToken is the vault id of the last document read.
		token, err := cursor.Decode("after", cursor.Documents, scope, *after)
		if err != nil {
			return nil, err
		}
		q.NextToken = token
	}
	for _, t := range tags {
		switch t = strings.TrimSpace(t); {
		case strings.Contains(t, ","):
			return nil, apperr.Input("tags", fmt.Sprintf("Tag names cannot contain commas: %q", t))
		case t != "":
			q.Tags = append(q.Tags, t)
		}
	}
	if len(tags) > 0 && len(q.Tags) == 0 {
		return nil, apperr.Input("tags", "tags must contain at least one non-empty value")
	}
	// One more than asked for tells whether another page follows, when the service allows it.
	probe := q
	if first < advisorspec.MaxDocLimit {
		probe.Limit = first + 1
	}
	page, err := s.api.Documents(ctx, wid, probe)
	if err != nil {
		return nil, err
	}
	out := &DocumentConnection{Nodes: []*Document{}, TotalCount: page.Pagination.TotalCount, scope: scope}
	for _, d := range page.Documents[:min(first, len(page.Documents))] {
		out.Nodes = append(out.Nodes, documentFrom(d))
	}
	// A page read after a cursor has a document before it: the one the cursor names.
	out.PageInfo.HasPreviousPage = after != nil
	if n := len(out.Nodes); n > 0 {
		start := cursor.Encode(cursor.Documents, scope, out.Nodes[0].VaultID)
		end := cursor.Encode(cursor.Documents, scope, out.Nodes[n-1].VaultID)
		out.PageInfo.StartCursor, out.PageInfo.EndCursor = &start, &end
		out.PageInfo.HasNextPage = len(page.Documents) > first
		if first == advisorspec.MaxDocLimit && n == first {
			more, err := s.api.Documents(ctx, wid, advisorspec.DocumentQuery{Limit: 1, NextToken: out.Nodes[n-1].VaultID, Tags: q.Tags})
			if err != nil {
				return nil, err
			}
			out.PageInfo.HasNextPage = len(more.Documents) > 0
		}
	}
	return out, nil
}

// Create adds a document and, when file is given, streams the file to it.
func (s *Service) Create(ctx context.Context, wid string, in CreateDocumentInput, file *graphql.Upload) (*DocumentPayload, error) {
	body, err := json.Marshal(in)
	if err != nil {
		return nil, fmt.Errorf("encode the document: %w", err)
	}
	if _, verr := advisorspec.CheckNewDocument(body, advisorspec.OpenTags()); verr != nil {
		return nil, inputError(verr, string(in.Category), string(in.SubCategory), typeName(in.Type))
	}
	created, err := s.api.CreateDocument(ctx, wid, body)
	if err != nil {
		return nil, upstreamInputError(err, string(in.Category), string(in.SubCategory), typeName(in.Type))
	}
	return s.finish(ctx, wid, created.VaultID, created.UploadURI, in.Extension, file)
}

// Update changes a document's metadata and, when file is given, replaces its file.
func (s *Service) Update(ctx context.Context, wid, vaultID string, in UpdateDocumentInput, file *graphql.Upload) (*DocumentPayload, error) {
	body, err := json.Marshal(in)
	if err != nil {
		return nil, fmt.Errorf("encode the document change: %w", err)
	}
	var category, subCategory string
	if in.Category != nil {
		category = string(*in.Category)
	}
	if in.SubCategory != nil {
		subCategory = string(*in.SubCategory)
	}
	if verr := advisorspec.CheckDocumentPatchAlone(body, advisorspec.OpenTags()); verr != nil {
		return nil, inputError(verr, category, subCategory, typeName(in.Type.Value()))
	}
	updated, err := s.api.UpdateDocument(ctx, wid, vaultID, body)
	if err != nil {
		// The service compares with what the document has, which the input may not say.
		return nil, upstreamInputError(err, category, subCategory, typeName(in.Type.Value()))
	}
	return s.finish(ctx, wid, vaultID, updated.UploadURI, updated.Extension, file)
}

// finish uploads the file when there is one and reads the document back. Without a file the
// caller gets the upload address to use itself.
func (s *Service) finish(ctx context.Context, wid, vaultID, uploadURI, extension string, file *graphql.Upload) (*DocumentPayload, error) {
	out := &DocumentPayload{}
	if file == nil {
		out.UploadURI = &uploadURI
	} else {
		contentType, ok := advisorspec.ContentTypeFor(extension)
		if !ok {
			return nil, apperr.InputAt("input.extension", "", "Unsupported extension: "+extension)
		}
		if err := s.api.UploadFile(ctx, uploadURI, contentType, file.File, file.Size); err != nil {
			e, _ := apperr.As(err)
			return nil, &apperr.Error{Code: apperr.CodeOf(err), Field: "file", Err: err,
				Message: fmt.Sprintf("Document %s is saved, but its file was not: %s. Send the file again with updateDocument.", vaultID, messageOf(e))}
		}
	}
	doc, err := s.Get(ctx, wid, vaultID)
	if err == nil && doc == nil {
		err = apperr.New(apperr.NotFound, documentNotFound)
	}
	if err != nil {
		return nil, err
	}
	out.Document = doc
	return out, nil
}

// Delete removes a document for good.
func (s *Service) Delete(ctx context.Context, wid, vaultID string) (*DeleteDocumentPayload, error) {
	if err := s.api.DeleteDocument(ctx, wid, vaultID); err != nil {
		return nil, err
	}
	return &DeleteDocumentPayload{WID: wid, VaultID: vaultID}, nil
}

func messageOf(e *apperr.Error) string {
	if e == nil {
		return "internal error"
	}
	return strings.TrimSuffix(e.Message, ".")
}

// documentNotFound is the service's "Vault doesn't exist" in the schema's words.
const documentNotFound = "Document not found"

// Taxonomy is the document taxonomy, for forms that offer only valid choices.
func (s *Service) Taxonomy() []*DocumentCategoryOption { return Taxonomy() }

func typeName(t *DocumentType) string {
	if t == nil {
		return ""
	}
	return string(*t)
}

// inputError names the GraphQL field of a broken rule and says the rule in the schema's words.
// A rule of the taxonomy names the values the input gave and the ones that would do, as the
// schema spells them; the others are the service's messages, translated.
func inputError(err *advisorspec.Error, category, subCategory, docType string) error {
	msg, ok := taxonomyMessage(err.Field, category, subCategory, docType)
	if !ok {
		msg = advisor.SchemaMessage(err.Field, err.Message)
	}
	if err.Field == "" {
		return apperr.InputAt("input", "", msg)
	}
	short := advisor.SchemaPath(err.Field)
	return apperr.InputAt("input."+short, short, msg)
}

// taxonomyMessage says why a sub-category or a type does not fit, naming what the input gave
// and what would fit. category is "" when the input did not give it (an update); subCategory
// too, when the rule is about the document's own.
func taxonomyMessage(specField, category, subCategory, docType string) (string, bool) {
	gql := enumcase.Screaming
	cat, knownCategory := advisorspec.FindCategory(category)
	subs := func() string {
		names := make([]string, len(cat.SubCategories))
		for i, sc := range cat.SubCategories {
			names[i] = gql(sc.Name)
		}
		return strings.Join(names, ", ")
	}
	switch {
	case specField == "sub_category" && subCategory != "" && knownCategory:
		return fmt.Sprintf("subCategory %s is not one of category %s's: %s (documentTaxonomy lists them all)",
			gql(subCategory), gql(category), subs()), true
	case specField == "sub_category" && subCategory != "":
		return fmt.Sprintf("subCategory %s is not one of the document's category's (documentTaxonomy lists each category's)",
			gql(subCategory)), true
	case specField == "sub_category" && knownCategory:
		return fmt.Sprintf("subCategory must be given with category %s, as the document's is not one of its: give one of %s (documentTaxonomy lists them all)",
			gql(category), subs()), true
	case specField == "type" && docType != "" && subCategory == "":
		return fmt.Sprintf("type %s is not one the document's subCategory allows (documentTaxonomy lists each sub-category's types)",
			gql(docType)), true
	case specField == "type" && docType != "":
		for _, c := range advisorspec.Categories {
			sc, ok := c.FindSubCategory(subCategory)
			if !ok {
				continue
			}
			if len(sc.Types) == 0 {
				return fmt.Sprintf("type must be left out: subCategory %s has no types (documentTaxonomy lists the sub-categories that have types)",
					gql(subCategory)), true
			}
			names := make([]string, len(sc.Types))
			for i, t := range sc.Types {
				names[i] = gql(t)
			}
			return fmt.Sprintf("type %s is not one subCategory %s allows: %s", gql(docType), gql(subCategory), strings.Join(names, ", ")), true
		}
	}
	return "", false
}

// upstreamFields are the openings of the service's document messages that name one field, and
// the specification's name of the field.
var upstreamFields = []struct{ prefix, field string }{
	{"Invalid tags", "tags"},
	{"Invalid type", "type"},
	{"Invalid sub-category", "sub_category"},
	{"Invalid category", "category"},
	{"Invalid extension", "extension"},
}

// upstreamTaxonomy reads which sub-category the service's refusal of a type is about:
// "Invalid type: sub-category w2 has no types", "... irrevocable_trusts allows ...".
var upstreamTaxonomy = regexp.MustCompile(`^Invalid type: sub-category (\S+) `)

// upstreamInputError names the input field the service's BAD_USER_INPUT is about, when its own
// message says which (the tags only the service knows, such as a top account's custom ones),
// and says a rule of the taxonomy in the schema's words, as the gateway's own check does.
func upstreamInputError(err error, category, subCategory, docType string) error {
	e, ok := apperr.As(err)
	if !ok || e.Code != apperr.BadUserInput || e.Field != "" || e.Upstream == nil {
		return err
	}
	said := e.Upstream.Message
	for _, u := range upstreamFields {
		if !strings.HasPrefix(said, u.prefix) {
			continue
		}
		named := *e
		if m := upstreamTaxonomy.FindStringSubmatch(said); m != nil && subCategory == "" {
			subCategory = m[1]
		}
		if msg, ok := taxonomyMessage(u.field, category, subCategory, docType); ok {
			named.Message = msg
		}
		short := advisor.SchemaPath(u.field)
		at := apperr.InputAt("input."+short, short, named.Message)
		named.Field, named.Message = at.Field, at.Message
		return &named
	}
	return err
}
