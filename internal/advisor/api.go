package advisor

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/advisorhq/gateway/internal/advisorspec"
	"github.com/advisorhq/gateway/internal/apperr"
)

// TopAccount gets one top account.
func (c *Client) TopAccount(ctx context.Context, wid string) (advisorspec.TopAccount, error) {
	var out advisorspec.TopAccount
	if err := checkWID(wid); err != nil {
		return out, err
	}
	err := c.do(ctx, call{op: "get_top_account", method: http.MethodGet, path: path("v2", "top-accounts", wid)}, &out)
	if err != nil {
		return out, fmt.Errorf("get top account %s: %w", wid, err)
	}
	return out, nil
}

// TopAccounts lists one page of top accounts.
func (c *Client) TopAccounts(ctx context.Context, page, limit int) (advisorspec.TopAccountPage, error) {
	var out advisorspec.TopAccountPage
	q := url.Values{"page": {strconv.Itoa(page)}, "limit": {strconv.Itoa(limit)}}
	err := c.do(ctx, call{op: "list_top_accounts", method: http.MethodGet, path: path("v2", "top-accounts", ""), query: q}, &out)
	if err != nil {
		return out, fmt.Errorf("list top accounts, page %d of %d: %w", page, limit, err)
	}
	return out, nil
}

// CreateTopAccount adds a top account.
func (c *Client) CreateTopAccount(ctx context.Context, externalID, name string) (advisorspec.TopAccount, error) {
	var out advisorspec.TopAccount
	body := map[string]string{"external_id": externalID, "name": name}
	err := c.do(ctx, call{op: "add_top_account", method: http.MethodPost, path: path("v2", "top-accounts", ""), body: body}, &out)
	if err != nil {
		return out, fmt.Errorf("add top account %s: %w", externalID, err)
	}
	return out, nil
}

// UpdateTopAccount changes a top account's external_id or name; nil leaves one as it is.
func (c *Client) UpdateTopAccount(ctx context.Context, wid string, externalID, name *string) (advisorspec.TopAccount, error) {
	var out advisorspec.TopAccount
	if err := checkWID(wid); err != nil {
		return out, err
	}
	body := map[string]string{}
	if externalID != nil {
		body["external_id"] = *externalID
	}
	if name != nil {
		body["name"] = *name
	}
	err := c.do(ctx, call{op: "update_top_account", method: http.MethodPut, path: path("v2", "top-accounts", wid), body: body}, &out)
	if err != nil {
		return out, fmt.Errorf("update top account %s: %w", wid, err)
	}
	return out, nil
}

// ClientRef addresses a client of the v1 contact endpoints: its wid or the caller's
// external_id, and the advisor and team to act for when the API user can reach several.
type ClientRef struct {
	Ref       string
	AdvisorID string
	TeamID    string
}

func (r ClientRef) query() url.Values {
	q := url.Values{}
	if r.AdvisorID != "" {
		q.Set("advisor_id", r.AdvisorID)
	}
	if r.TeamID != "" {
		q.Set("team_id", r.TeamID)
	}
	return q
}

// contactCalls builds the calls of the contact operations of either scope: by top account
// (v2), or by client (v1) when ref is not nil.
type contactCalls struct {
	ref   *ClientRef
	owner string // a top account's wid
}

func (cc contactCalls) call(op, method string, id *string, body []byte) call {
	cl := call{op: op, method: method, body: body}
	if cc.ref != nil {
		cl.op, cl.v1, cl.query = "client_"+op, true, cc.ref.query()
		cl.path = path("v1", "clients", cc.ref.Ref, "contacts")
	} else {
		cl.path = path("v2", "top-accounts", cc.owner, "contacts", "")
	}
	if id != nil {
		cl.path = strings.TrimSuffix(cl.path, "/") + path(*id)
	}
	if body == nil {
		cl.body = nil // a nil []byte in an interface is not a nil body
	}
	return cl
}

// check refuses a client ref, top account wid or contact id that is no id the service's paths
// can hold.
func (cc contactCalls) check(id *string) error {
	if cc.ref != nil {
		if err := checkID("ref", cc.ref.Ref, maxIDLen); err != nil {
			return err
		}
	} else if err := checkWID(cc.owner); err != nil {
		return err
	}
	if id != nil {
		return checkID("id", *id, maxContactIDLen)
	}
	return nil
}

func (cc contactCalls) String() string {
	if cc.ref != nil {
		return "client " + cc.ref.Ref
	}
	return "top account " + cc.owner
}

func (c *Client) listContacts(ctx context.Context, cc contactCalls) ([]advisorspec.Contact, error) {
	var out advisorspec.ContactList
	if err := cc.check(nil); err != nil {
		return nil, err
	}
	if err := c.do(ctx, cc.call("list_contacts", http.MethodGet, nil, nil), &out); err != nil {
		return nil, fmt.Errorf("list contacts of %s: %w", cc, err)
	}
	return out.Contacts, nil
}

// lendContacts lists an owner's contact cards into the pooled scratch and lends them to use
// (contactLoan): valid until use returns.
func (c *Client) lendContacts(ctx context.Context, cc contactCalls, use func([]advisorspec.Contact) error) error {
	if err := cc.check(nil); err != nil {
		return err
	}
	loan := contactLoan{use: use}
	if err := c.do(ctx, cc.call("list_contacts", http.MethodGet, nil, nil), &loan); err != nil {
		return fmt.Errorf("list contacts of %s: %w", cc, err)
	}
	return loan.err
}

func (c *Client) getContact(ctx context.Context, cc contactCalls, id string) (advisorspec.Contact, error) {
	var out advisorspec.Contact
	if err := cc.check(&id); err != nil {
		return out, err
	}
	if err := c.do(ctx, cc.call("get_contact", http.MethodGet, &id, nil), &out); err != nil {
		return out, fmt.Errorf("get contact %s of %s: %w", id, cc, err)
	}
	return out, nil
}

func (c *Client) writeContact(ctx context.Context, cc contactCalls, id *string, body []byte) (string, error) {
	var out advisorspec.ContactID
	if err := cc.check(id); err != nil {
		return "", err
	}
	op, method, what := "add_contact", http.MethodPost, "add a contact to "+cc.String()
	if id != nil {
		op, method, what = "update_contact", http.MethodPut, "update contact "+*id+" of "+cc.String()
	}
	if err := c.do(ctx, cc.call(op, method, id, body), &out); err != nil {
		return "", fmt.Errorf("%s: %w", what, err)
	}
	return out.ID, nil
}

// Contacts lists the contact cards of a top account.
func (c *Client) Contacts(ctx context.Context, wid string) ([]advisorspec.Contact, error) {
	return c.listContacts(ctx, contactCalls{owner: wid})
}

// LendContacts lists the contact cards of a top account, as Contacts, and lends the list to
// use rather than returning it: the list's array is the decoder's, and is reused once use
// returns, so use must not keep the list itself. What its contacts hold (strings, lists,
// pointers) stays valid. A caller that maps the list into something of its own at once (the
// family graph's cards) so spares the list's copy, 300 bytes a contact. use's error is
// returned as it is.
func (c *Client) LendContacts(ctx context.Context, wid string, use func([]advisorspec.Contact) error) error {
	return c.lendContacts(ctx, contactCalls{owner: wid}, use)
}

// Contact gets one contact card of a top account.
func (c *Client) Contact(ctx context.Context, wid, id string) (advisorspec.Contact, error) {
	return c.getContact(ctx, contactCalls{owner: wid}, id)
}

// CreateContact adds a contact card to a top account from an Add Contact body and returns its id.
func (c *Client) CreateContact(ctx context.Context, wid string, body []byte) (string, error) {
	return c.writeContact(ctx, contactCalls{owner: wid}, nil, body)
}

// UpdateContact updates a contact card of a top account from an Update Contact body.
func (c *Client) UpdateContact(ctx context.Context, wid, id string, body []byte) (string, error) {
	return c.writeContact(ctx, contactCalls{owner: wid}, &id, body)
}

// ClientContacts lists the contact cards of a v1 client.
func (c *Client) ClientContacts(ctx context.Context, ref ClientRef) ([]advisorspec.Contact, error) {
	return c.listContacts(ctx, contactCalls{ref: &ref})
}

// LendClientContacts lists the contact cards of a v1 client and lends them to use, as
// LendContacts does.
func (c *Client) LendClientContacts(ctx context.Context, ref ClientRef, use func([]advisorspec.Contact) error) error {
	return c.lendContacts(ctx, contactCalls{ref: &ref}, use)
}

// ClientContact gets one contact card of a v1 client.
func (c *Client) ClientContact(ctx context.Context, ref ClientRef, id string) (advisorspec.Contact, error) {
	return c.getContact(ctx, contactCalls{ref: &ref}, id)
}

// CreateClientContact adds a contact card to a v1 client and returns its id.
func (c *Client) CreateClientContact(ctx context.Context, ref ClientRef, body []byte) (string, error) {
	return c.writeContact(ctx, contactCalls{ref: &ref}, nil, body)
}

// UpdateClientContact updates a contact card of a v1 client.
func (c *Client) UpdateClientContact(ctx context.Context, ref ClientRef, id string, body []byte) (string, error) {
	return c.writeContact(ctx, contactCalls{ref: &ref}, &id, body)
}

// Documents lists one page of a top account's documents.
func (c *Client) Documents(ctx context.Context, wid string, q advisorspec.DocumentQuery) (advisorspec.DocumentList, error) {
	var out advisorspec.DocumentList
	if err := checkWID(wid); err != nil {
		return out, err
	}
	query := url.Values{"limit": {strconv.Itoa(q.Limit)}}
	if q.NextToken != "" {
		query.Set("nextToken", q.NextToken)
	}
	if len(q.Tags) > 0 {
		query.Set("tags", strings.Join(q.Tags, ","))
	}
	err := c.do(ctx, call{op: "list_documents", method: http.MethodGet, path: path("v2", "top-accounts", wid, "documents", ""), query: query}, &out)
	if err != nil {
		return out, fmt.Errorf("list documents of %s: %w", wid, err)
	}
	return out, nil
}

// Document gets one document, with its file status and download address.
func (c *Client) Document(ctx context.Context, wid, vaultID string) (advisorspec.Document, error) {
	var out advisorspec.Document
	if err := checkDocument(wid, vaultID); err != nil {
		return out, err
	}
	err := c.do(ctx, call{op: "get_document", method: http.MethodGet, path: path("v2", "top-accounts", wid, "documents", vaultID)}, &out)
	if err != nil {
		return out, fmt.Errorf("get document %s of %s: %w", vaultID, wid, err)
	}
	return out, nil
}

// CreateDocument adds a document from an Upload Document body.
func (c *Client) CreateDocument(ctx context.Context, wid string, body []byte) (advisorspec.NewDocument, error) {
	var out advisorspec.NewDocument
	if err := checkWID(wid); err != nil {
		return out, err
	}
	err := c.do(ctx, call{op: "upload_document", method: http.MethodPost, path: path("v2", "top-accounts", wid, "documents", ""), body: body}, &out)
	if err != nil {
		return out, fmt.Errorf("add a document to %s: %w", wid, err)
	}
	return out, nil
}

// UpdateDocument changes a document's metadata from an Update Document body; the answer
// carries a fresh upload address.
func (c *Client) UpdateDocument(ctx context.Context, wid, vaultID string, body []byte) (advisorspec.Document, error) {
	var out advisorspec.Document
	if err := checkDocument(wid, vaultID); err != nil {
		return out, err
	}
	err := c.do(ctx, call{op: "update_document", method: http.MethodPatch, path: path("v2", "top-accounts", wid, "documents", vaultID), body: body}, &out)
	if err != nil {
		return out, fmt.Errorf("update document %s of %s: %w", vaultID, wid, err)
	}
	return out, nil
}

// DeleteDocument removes a document from the vault for good.
func (c *Client) DeleteDocument(ctx context.Context, wid, vaultID string) error {
	if err := checkDocument(wid, vaultID); err != nil {
		return err
	}
	err := c.do(ctx, call{op: "delete_document", method: http.MethodDelete, path: path("v2", "top-accounts", wid, "documents", vaultID)}, nil)
	if err != nil {
		return fmt.Errorf("delete document %s of %s: %w", vaultID, wid, err)
	}
	return nil
}

// StartAnalysis starts the analysis of a document (the analysis start endpoint the project
// decides: POST .../documents/{vault_id}/analysis): the tax job when tax is set, the estate
// analysis otherwise. The answer's correlation id is what the analysis's events carry. Like
// every write it is made once: a second attempt would start a second analysis.
func (c *Client) StartAnalysis(ctx context.Context, wid, vaultID string, tax bool) (advisorspec.AnalysisStarted, error) {
	var out advisorspec.AnalysisStarted
	if err := checkDocument(wid, vaultID); err != nil {
		return out, err
	}
	cl := call{op: "start_analysis", method: http.MethodPost, path: path("v2", "top-accounts", wid, "documents", vaultID, "analysis")}
	if tax {
		// The option is sent only when set: the decision's body is optional, and absent is
		// the estate analysis.
		cl.body = map[string]bool{"start_tax_job": true}
	}
	if err := c.do(ctx, cl, &out); err != nil {
		return out, fmt.Errorf("start the analysis of document %s of %s: %w", vaultID, wid, err)
	}
	if out.CorrelationID == "" {
		return out, apperr.Wrap(apperr.UpstreamUnavailable, "The Advisor service started the analysis but gave no correlation id",
			fmt.Errorf("start_analysis of %s/%s: the answer has no correlation_id", wid, vaultID))
	}
	return out, nil
}

// UploadFile streams a file to a presigned upload address with the Content-Type its extension
// requires. size is the file's length, or -1 when unknown. The address is its own credential,
// so no Authorization goes with it; and as it carries a signature, it appears in no error.
// The upload counts against the requests in flight, not against the operation's budget: the
// files a request carries bound it already, and refusing it here would strand the document
// just created for it.
func (c *Client) UploadFile(ctx context.Context, uploadURI, contentType string, file io.Reader, size int64) error {
	const op = "upload_file"
	defer Invalidate(ctx) // a write, like any other: the request's reads after it see the file
	release, err := c.acquire(ctx)
	if err != nil {
		return transportError(ctx, op, true, err)
	}
	defer release()
	upCtx, cancel := context.WithTimeout(ctx, c.opts.UploadTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(upCtx, http.MethodPut, uploadURI, file)
	if err != nil {
		return apperr.Wrap(apperr.UpstreamUnavailable, "The Advisor service gave an upload address the gateway cannot use", err)
	}
	req.ContentLength = size
	req.Header.Set("Content-Type", contentType)
	var trace connectionTrace
	start := time.Now()
	resp, err := c.http.Do(trace.attach(req))
	if err != nil {
		c.opts.Observe(op, "error", time.Since(start))
		return transportError(ctx, op, true, trace.classify(err))
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
	c.opts.Observe(op, strconv.Itoa(resp.StatusCode), time.Since(start))
	switch {
	case resp.StatusCode >= 200 && resp.StatusCode < 300:
		return nil
	case resp.StatusCode == http.StatusRequestEntityTooLarge:
		msg, _ := advisorspec.ReadErrorBody(resp.StatusCode, body)
		return &apperr.Error{Code: apperr.BadUserInput, Message: c.scrub.forCaller(msg), Field: "file"}
	default:
		msg, _ := advisorspec.ReadErrorBody(resp.StatusCode, body)
		cause := fmt.Errorf("%s: status %d: %s", op, resp.StatusCode, c.scrub.secrets(msg))
		if to := resp.Header.Get("Location"); to != "" { // not followed, as no redirect is
			cause = fmt.Errorf("%w, redirected to %q", cause, c.scrub.secrets(to))
		}
		return apperr.Wrap(apperr.UpstreamUnavailable, "The file could not be stored in the vault", cause)
	}
}

// AddClient adds a client or, when one with the row's id exists, updates it (Add Client: the
// body is one Clients-file row); added tells which. ref names only the advisor and team it is
// added for.
func (c *Client) AddClient(ctx context.Context, ref ClientRef, row []byte) (client advisorspec.Client, added bool, err error) {
	err = c.do(ctx, call{op: "add_client", method: http.MethodPost, path: path("v1", "clients"), query: ref.query(), body: row, v1: true, created: &added}, &client)
	if err != nil {
		return client, false, fmt.Errorf("add client: %w", err)
	}
	return client, added, nil
}

// DeleteClient revokes access to a client (Delete Client); its cards are kept.
func (c *Client) DeleteClient(ctx context.Context, ref ClientRef) error {
	if err := checkID("externalId", ref.Ref, maxIDLen); err != nil {
		return err
	}
	err := c.do(ctx, call{op: "delete_client", method: http.MethodDelete, path: path("v1", "clients", ref.Ref), query: ref.query(), v1: true}, nil)
	if err != nil {
		return fmt.Errorf("delete client %s: %w", ref.Ref, err)
	}
	return nil
}

// The longest ids the service's paths take: the specification's wid and vault_id are strings
// of at most 64 characters, and a v1 client is addressed by its wid or by its external_id (at
// most 50). It gives contact ids no maximum; theirs bounds them only against abuse.
const (
	maxIDLen        = 64
	maxContactIDLen = 255
)

func checkWID(wid string) error { return checkID("wid", wid, maxIDLen) }

func checkDocument(wid, vaultID string) error {
	if err := checkWID(wid); err != nil {
		return err
	}
	return checkID("vaultId", vaultID, maxIDLen)
}

// checkID refuses, as the caller's mistake, an id that would not name one resource in the
// service's paths: escaped or not, "." and ".." are dot-segments that a client library, a
// proxy or the service resolves to the parent resource ("documents/.." is the top account);
// "/" and "\" split the segment; "%" lets a layer that decodes twice see either; control and
// format characters (bidi overrides, zero-width spaces) are never part of an id and make logs
// lie. The value is not quoted back: it may be long, or unprintable.
func checkID(arg, id string, maxLen int) error {
	switch {
	case id == "":
		return apperr.Input(arg, arg+" must not be empty")
	case strings.TrimSpace(id) == "":
		// The service reads a blank path parameter as a missing one and says so without naming
		// it ("Missing required parameters", or "Bad Request" for a document's).
		return apperr.Input(arg, arg+" must not be blank")
	case strings.Trim(id, ".") == "" && len(id) <= 2:
		return apperr.Input(arg, arg+` cannot be "." or ".."`)
	case !utf8.ValidString(id):
		return apperr.Input(arg, arg+" must be UTF-8 text")
	case utf8.RuneCountInString(id) > maxLen:
		return apperr.Input(arg, fmt.Sprintf("%s can be at most %d characters, got %d", arg, maxLen, utf8.RuneCountInString(id)))
	}
	for _, r := range id {
		if r == '/' || r == '\\' || r == '%' || unicode.IsControl(r) || unicode.Is(unicode.Cf, r) {
			return apperr.Input(arg, arg+` cannot contain "/", "\", "%", or control or format characters`)
		}
	}
	return nil
}
