package persisted

import (
	"bytes"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strings"
)

// Manifest is a list of trusted documents: the operations a front end was built with, by the
// ids its build gave them.
type Manifest struct {
	byID map[string]string
	// bodies are the SHA-256 of every document, so that a document sent in full is known to be
	// trusted whatever id scheme the manifest uses.
	bodies map[[sha256.Size]byte]bool
}

// apolloFormat is the format field of the manifest Apollo's
// @apollo/generate-persisted-query-manifest writes.
const apolloFormat = "apollo-persisted-query-manifest"

// LoadManifest reads a manifest file in either format front-end builds write:
// graphql-codegen's client preset (persisted-documents.json, an object of documents by id) or
// Apollo's persisted query manifest ({"format": "apollo-persisted-query-manifest", "version": 1,
// "operations": [{"id", "name", "type", "body"}]}).
func LoadManifest(path string) (*Manifest, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read the trusted documents: %w", err)
	}
	m, err := ParseManifest(data)
	if err != nil {
		return nil, fmt.Errorf("read the trusted documents in %s: %w", path, err)
	}
	return m, nil
}

// ParseManifest reads a manifest as LoadManifest does.
func ParseManifest(data []byte) (*Manifest, error) {
	var top map[string]json.RawMessage
	if err := json.Unmarshal(data, &top); err != nil {
		return nil, errors.New("not a JSON object: want graphql-codegen's persisted-documents.json or Apollo's persisted query manifest")
	}
	m := &Manifest{byID: make(map[string]string), bodies: make(map[[sha256.Size]byte]bool)}
	var format string
	if raw, ok := top["format"]; ok && json.Unmarshal(raw, &format) == nil {
		if format != apolloFormat {
			return nil, fmt.Errorf("format %q is not one the gateway reads: want %q, or graphql-codegen's persisted-documents.json", format, apolloFormat)
		}
		return m, m.readApollo(data)
	}
	for id, raw := range top {
		var doc string
		if err := json.Unmarshal(raw, &doc); err != nil {
			return nil, fmt.Errorf("the entry %q is not a string: graphql-codegen's persisted-documents.json maps each id to its document", id)
		}
		if err := m.add(id, doc); err != nil {
			return nil, err
		}
	}
	if len(m.byID) == 0 {
		return nil, errors.New("it holds no documents")
	}
	return m, nil
}

func (m *Manifest) readApollo(data []byte) error {
	var manifest struct {
		Version    int `json:"version"`
		Operations []struct {
			ID   string `json:"id"`
			Body string `json:"body"`
		} `json:"operations"`
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	if err := dec.Decode(&manifest); err != nil {
		return fmt.Errorf("not an Apollo persisted query manifest: %w", err)
	}
	if manifest.Version != 1 {
		return fmt.Errorf("version %d of Apollo's persisted query manifest: the gateway reads version 1", manifest.Version)
	}
	for i, op := range manifest.Operations {
		if err := m.add(op.ID, op.Body); err != nil {
			return fmt.Errorf("operations[%d]: %w", i, err)
		}
	}
	if len(m.byID) == 0 {
		return errors.New("it holds no operations")
	}
	return nil
}

func (m *Manifest) add(id, doc string) error {
	if !validID(id) {
		return fmt.Errorf("the id %q is not one a client can send: 1 to %d letters, digits, or : _ -", id, maxIDLength)
	}
	if strings.TrimSpace(doc) == "" {
		return fmt.Errorf("the document of %q is empty", id)
	}
	if prev, ok := m.byID[id]; ok && prev != doc {
		return fmt.Errorf("the id %q names two different documents", id)
	}
	m.byID[id] = doc
	m.bodies[sha256.Sum256([]byte(doc))] = true
	return nil
}

// Document returns the trusted document id names.
func (m *Manifest) Document(id string) (string, bool) {
	doc, ok := m.byID[id]
	return doc, ok
}

// Trusts reports whether doc, sent in full, is one of the trusted documents, character for
// character.
func (m *Manifest) Trusts(doc string) bool {
	return m.bodies[sha256.Sum256([]byte(doc))]
}

// Len is the number of trusted documents.
func (m *Manifest) Len() int { return len(m.byID) }

// maxIDLength bounds a document id: a SHA-256 in hex with a "sha256:" prefix is 71.
const maxIDLength = 128

// validID reports whether id is a document id the gateway accepts: hashes in hex or base64url,
// with an optional algorithm prefix as GraphQL over HTTP's persisted documents write them.
func validID(id string) bool {
	if id == "" || len(id) > maxIDLength {
		return false
	}
	for _, c := range []byte(id) {
		switch {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9', c == ':', c == '_', c == '-':
		default:
			return false
		}
	}
	return true
}
