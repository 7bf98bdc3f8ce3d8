// Package vault is a top account's documents: their metadata, paging through them, their file
// status and download address (fetched only when asked for), and uploads, which the gateway
// streams to the service's presigned address so clients never handle one unless they want to.
package vault

import (
	"io"
	"time"

	"github.com/99designs/gqlgen/graphql"

	"github.com/advisorhq/gateway/internal/advisorspec"
	"github.com/advisorhq/gateway/internal/apperr"
	"github.com/advisorhq/gateway/internal/cursor"
	"github.com/advisorhq/gateway/internal/enumcase"
	"github.com/advisorhq/gateway/internal/nodeid"
)

// Enumerations hold the specification's spelling and convert at the GraphQL boundary.
var (
	categories    = enumcase.NewTable("DocumentCategory", categoryNames()...)
	subCategories = enumcase.NewTable("DocumentSubCategory", subCategoryNames()...)
	docTypes      = enumcase.NewTable("DocumentType", typeNames()...)
	fileStatuses  = enumcase.NewTable("FileStatus", advisorspec.FileStatusNoFileUploaded, advisorspec.FileStatusUploaded, FileStatusProcessing)
)

func categoryNames() (out []string) {
	for _, c := range advisorspec.Categories {
		out = append(out, c.Name)
	}
	return out
}

func subCategoryNames() (out []string) {
	for _, c := range advisorspec.Categories {
		for _, s := range c.SubCategories {
			out = append(out, s.Name)
		}
	}
	return out
}

func typeNames() (out []string) {
	seen := map[string]bool{}
	for _, c := range advisorspec.Categories {
		for _, s := range c.SubCategories {
			for _, t := range s.Types {
				if !seen[t] {
					seen[t] = true
					out = append(out, t)
				}
			}
		}
	}
	return out
}

// EnumTables lists the GraphQL names of each enumeration this package converts, by schema type
// name, so a test can hold the schema to the specification.
func EnumTables() map[string][]string {
	return map[string][]string{
		"DocumentCategory":    categories.GraphQLNames(),
		"DocumentSubCategory": subCategories.GraphQLNames(),
		"DocumentType":        docTypes.GraphQLNames(),
		"FileStatus":          fileStatuses.GraphQLNames(),
	}
}

// DocumentCategory is a document's category, such as estate_planning.
type DocumentCategory string

func (c DocumentCategory) MarshalGQL(w io.Writer) { categories.Marshal(w, string(c)) }

func (c *DocumentCategory) UnmarshalGQL(v any) error {
	s, err := categories.Unmarshal(v)
	if err != nil {
		return apperr.BadEnumValue("DocumentCategory", v, categories.GraphQLNames())
	}
	*c = DocumentCategory(s)
	return nil
}

// DocumentSubCategory is a document's sub-category, such as 1099.
type DocumentSubCategory string

func (c DocumentSubCategory) MarshalGQL(w io.Writer) { subCategories.Marshal(w, string(c)) }

func (c *DocumentSubCategory) UnmarshalGQL(v any) error {
	s, err := subCategories.Unmarshal(v)
	if err != nil {
		return apperr.BadEnumValue("DocumentSubCategory", v, subCategories.GraphQLNames())
	}
	*c = DocumentSubCategory(s)
	return nil
}

// DocumentType is the type some sub-categories give a document, such as pour_over_will.
type DocumentType string

func (t DocumentType) MarshalGQL(w io.Writer) { docTypes.Marshal(w, string(t)) }

func (t *DocumentType) UnmarshalGQL(v any) error {
	s, err := docTypes.Unmarshal(v)
	if err != nil {
		return apperr.BadEnumValue("DocumentType", v, docTypes.GraphQLNames())
	}
	*t = DocumentType(s)
	return nil
}

// FileStatusProcessing is the gateway's name for a file the service has but is not ready to
// serve (Get Document answers "Vault file not ready").
const FileStatusProcessing = "Processing"

// FileStatus is whether a document's file has arrived.
type FileStatus string

func (f FileStatus) MarshalGQL(w io.Writer) { fileStatuses.Marshal(w, string(f)) }

func (f *FileStatus) UnmarshalGQL(v any) error {
	s, err := fileStatuses.Unmarshal(v)
	if err != nil {
		return apperr.BadEnumValue("FileStatus", v, fileStatuses.GraphQLNames())
	}
	*f = FileStatus(s)
	return nil
}

// Document is a vault document.
type Document struct {
	WID              string
	VaultID          string
	Name             string
	Extension        string
	Description      *string
	Category         DocumentCategory
	SubCategory      DocumentSubCategory
	Type             *DocumentType
	Tags             []string
	CreationDate     time.Time
	ModificationDate time.Time
	// file is the file's status and address when the document came from Get Document; from a
	// list they are fetched when asked for.
	file *fileInfo
}

// NodeDocument is the GraphQL type of a document's global id.
const NodeDocument = "Document"

// ID is the document's global id (nodeid), made from its wid and vault id when a query selects
// it.
func (d *Document) ID() string { return d.NodeID().String() }

// NodeID is ID not yet encoded, which the executor writes without a string of its own.
func (d *Document) NodeID() nodeid.ID { return nodeid.New(NodeDocument, d.WID, d.VaultID) }

type fileInfo struct {
	status      FileStatus
	downloadURI *string
}

// DocumentConnection is one page of documents.
type DocumentConnection struct {
	Nodes      []*Document
	TotalCount int
	PageInfo   cursor.PageInfo
	// scope is the list the page's cursors are bound to.
	scope string
}

// Edges are the page's documents with their cursors, made only when a query selects them, in one piece.
func (c *DocumentConnection) Edges() []*DocumentEdge {
	return cursor.Edges(len(c.Nodes), func(i int, e *DocumentEdge) {
		*e = DocumentEdge{Cursor: cursor.Encode(cursor.Documents, c.scope, c.Nodes[i].VaultID), Node: c.Nodes[i]}
	})
}

// DocumentEdge is a document and its cursor.
type DocumentEdge struct {
	Cursor string
	Node   *Document
}

// DocumentPayload is a document after a change and, when the gateway did not upload the file,
// the address to upload it to.
type DocumentPayload struct {
	Document  *Document
	UploadURI *string
}

// DeleteDocumentPayload says what a delete removed.
type DeleteDocumentPayload struct {
	WID     string
	VaultID string
}

// DeletedID is the deleted document's global id, as Document.ID made it, for a client's cache
// to drop the document by.
func (p *DeleteDocumentPayload) DeletedID() string {
	return (&Document{WID: p.WID, VaultID: p.VaultID}).ID()
}

// CreateDocumentInput is the body of Upload Document.
type CreateDocumentInput struct {
	Name        string              `json:"name"`
	Extension   string              `json:"extension"`
	Description *string             `json:"description,omitzero"`
	Category    DocumentCategory    `json:"category"`
	SubCategory DocumentSubCategory `json:"sub_category"`
	Type        *DocumentType       `json:"type,omitzero"`
	Tags        []string            `json:"tags,omitzero"`
}

// UpdateDocumentInput is the body of Update Document. Description, type and tags tell "left
// out" (not encoded, through omitzero) from "null" (encoded as null, which clears them).
type UpdateDocumentInput struct {
	Name        *string                          `json:"name,omitzero"`
	Extension   *string                          `json:"extension,omitzero"`
	Description graphql.Omittable[*string]       `json:"description,omitzero"`
	Category    *DocumentCategory                `json:"category,omitzero"`
	SubCategory *DocumentSubCategory             `json:"sub_category,omitzero"`
	Type        graphql.Omittable[*DocumentType] `json:"type,omitzero"`
	Tags        graphql.Omittable[[]string]      `json:"tags,omitzero"`
}

func documentFrom(d advisorspec.Document) *Document {
	doc := &Document{
		WID: d.WID, VaultID: d.VaultID, Name: d.Name, Extension: d.Extension,
		Category: DocumentCategory(d.Category), SubCategory: DocumentSubCategory(d.SubCategory),
		Tags: d.Tags, CreationDate: parseTime(d.CreationDate), ModificationDate: parseTime(d.ModificationDate),
	}
	if d.Description != "" {
		doc.Description = &d.Description
	}
	if d.Type != "" {
		t := DocumentType(d.Type)
		doc.Type = &t
	}
	if doc.Tags == nil {
		doc.Tags = []string{}
	}
	if d.FileStatus != "" {
		doc.file = &fileInfo{status: FileStatus(d.FileStatus)}
		if d.DownloadURI != "" {
			doc.file.downloadURI = &d.DownloadURI
		}
	}
	return doc
}

// parseTime reads the service's ISO 8601 timestamps; one it cannot read is the zero time
// rather than a failed document.
func parseTime(s string) time.Time {
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		return time.Time{}
	}
	return t.UTC()
}

// DocumentCategoryOption is a category a document can have and the sub-categories it holds.
type DocumentCategoryOption struct {
	Category      DocumentCategory
	SubCategories []*DocumentSubCategoryOption
}

// DocumentSubCategoryOption is a sub-category and the types a document of it can have.
type DocumentSubCategoryOption struct {
	SubCategory DocumentSubCategory
	Types       []DocumentType
}

// Taxonomy is the specification's document taxonomy, in its order: every category, its
// sub-categories, and the types each allows.
func Taxonomy() []*DocumentCategoryOption {
	out := make([]*DocumentCategoryOption, 0, len(advisorspec.Categories))
	for _, c := range advisorspec.Categories {
		cat := &DocumentCategoryOption{Category: DocumentCategory(c.Name), SubCategories: make([]*DocumentSubCategoryOption, 0, len(c.SubCategories))}
		for _, sc := range c.SubCategories {
			sub := &DocumentSubCategoryOption{SubCategory: DocumentSubCategory(sc.Name), Types: make([]DocumentType, 0, len(sc.Types))}
			for _, t := range sc.Types {
				sub.Types = append(sub.Types, DocumentType(t))
			}
			cat.SubCategories = append(cat.SubCategories, sub)
		}
		out = append(out, cat)
	}
	return out
}
