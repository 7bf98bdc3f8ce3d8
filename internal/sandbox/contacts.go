package sandbox

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"

	"github.com/advisorhq/gateway/internal/advisorspec"
)

// contactScope is where a contact request is addressed: a top account (v2) or a client (v1).
// The two share every operation and rule; they differ in how the owner is found, in dob, and
// in the status codes of a rejected body.
type contactScope struct {
	spec      advisorspec.Scope
	ref       string // the wid of the top account, or the wid or external_id of the client
	advisorID string // v1 query parameters
	teamID    string
}

func (t *Tenant) topAccountScope(wid string) contactScope {
	return contactScope{spec: advisorspec.TopAccountScope, ref: wid}
}

func (t *Tenant) clientScope(r *http.Request, ref string) contactScope {
	q := r.URL.Query()
	return contactScope{spec: advisorspec.ClientScope, ref: ref, advisorID: q.Get("advisor_id"), teamID: q.Get("team_id")}
}

// contacts finds the contact cards of the scope's owner. The caller holds the lock.
func (t *Tenant) contacts(sc contactScope) (*contactSet, *apiError) {
	if sc.spec == advisorspec.TopAccountScope {
		ta, err := t.topAccount(sc.ref, "Missing wid parameter")
		if err != nil {
			return nil, err
		}
		return &ta.contacts, nil
	}
	if missing(sc.ref) {
		return nil, errorf(http.StatusBadRequest, "Missing wid parameter")
	}
	c, err := t.visibleClient(sc)
	if err != nil {
		return nil, err
	}
	return &c.contacts, nil
}

// visibleClient finds a v1 client as the API user sees it. The user can reach the advisors and
// teams of every client; when that is more than one, it must say which it acts for. The caller
// holds the lock.
func (t *Tenant) visibleClient(sc contactScope) (*client, *apiError) {
	advisors, teams := t.reachable()
	for _, p := range []struct {
		name, value string
		reachable   []string
		what        string
	}{
		{"advisor_id", sc.advisorID, advisors, "advisors"},
		{"team_id", sc.teamID, teams, "advisor teams"},
	} {
		switch {
		case p.value == "" && len(p.reachable) > 1:
			return nil, errorf(http.StatusBadRequest, fmt.Sprintf("%s is required when the API user can access multiple %s", p.name, p.what))
		case p.value != "" && !slices.Contains(p.reachable, p.value):
			return nil, errorf(http.StatusForbidden, "Access Denied")
		}
	}
	c := t.store.clientByRef(sc.ref)
	if c == nil || sc.advisorID != "" && c.AdvisorID != sc.advisorID || sc.teamID != "" && c.TeamID != sc.teamID {
		return nil, errorf(http.StatusNotFound, "Client not found")
	}
	return c, nil
}

// Client is a client of the v1 contact endpoints: an individual or couple served by the
// caller's firm, belonging to one advisor and one advisor team.
type Client struct {
	ExternalID string
	AdvisorID  string
	TeamID     string
}

// AddClient adds a client for the v1 contact endpoints and returns its wid. The API user can
// reach every client's advisor and team; once there are several, v1 requests must name theirs.
func (t *Tenant) AddClient(c Client) (string, error) {
	if missing(c.ExternalID) || missing(c.AdvisorID) || missing(c.TeamID) {
		return "", fmt.Errorf("add client: external id, advisor id and team id are all required")
	}
	t.store.mu.Lock()
	defer t.store.mu.Unlock()
	for _, existing := range t.store.clients {
		if existing.ExternalID == c.ExternalID {
			return "", fmt.Errorf("add client: a client with external id %q exists", c.ExternalID)
		}
	}
	wid := t.store.ids.newID()
	t.store.clients = append(t.store.clients, &client{Client: c, WID: wid})
	return wid, nil
}

// rejected turns a rule the body broke into a response. v2 answers 400 for every broken rule.
// v1 answers 422 for any body it cannot add, and on update 400 for the body's own faults
// (immutable field, empty update, invalid payload), 422 for a reference it cannot resolve and
// 409 for an external_id another contact holds.
func (sc contactScope) rejected(err *advisorspec.Error, isNew bool) *apiError {
	status := http.StatusBadRequest
	switch {
	case err.Kind == advisorspec.Conflict:
		status = http.StatusConflict
	case sc.spec == advisorspec.ClientScope && (isNew || err.Kind == advisorspec.Reference):
		status = http.StatusUnprocessableEntity
	}
	return errorf(status, err.Message)
}

func (t *Tenant) listContacts(sc contactScope) (advisorspec.ContactList, *apiError) {
	t.store.mu.RLock()
	defer t.store.mu.RUnlock()
	set, err := t.contacts(sc)
	if err != nil {
		return advisorspec.ContactList{}, err
	}
	out := advisorspec.ContactList{Contacts: make([]contact, len(set.list))}
	for i, c := range set.list {
		out.Contacts[i] = *c
	}
	return out, nil
}

func (t *Tenant) getContact(sc contactScope, id string) (*contact, *apiError) {
	t.store.mu.RLock()
	defer t.store.mu.RUnlock()
	_, c, err := t.contact(sc, id)
	return c, err
}

// contact finds one contact card and the set it belongs to. The caller holds the lock.
func (t *Tenant) contact(sc contactScope, id string) (*contactSet, *contact, *apiError) {
	set, err := t.contacts(sc)
	if err != nil {
		return nil, nil, err
	}
	if missing(id) {
		return nil, nil, errorf(http.StatusBadRequest, "Missing id parameter")
	}
	c, ok := set.get(id)
	if !ok {
		return nil, nil, errorf(http.StatusNotFound, "Contact card not found")
	}
	return set, c, nil
}

func (t *Tenant) addContact(sc contactScope, body []byte) (advisorspec.ContactID, *apiError) {
	c, err := t.createContact(sc, body)
	if err != nil {
		return advisorspec.ContactID{}, err
	}
	return advisorspec.ContactID{ID: c.ID}, nil
}

// createContact adds a contact card from an Add Contact body.
func (t *Tenant) createContact(sc contactScope, body []byte) (*contact, *apiError) {
	t.store.mu.Lock()
	defer t.store.mu.Unlock()
	set, err := t.contacts(sc)
	if err != nil {
		return nil, err
	}
	_, externalID, verr := advisorspec.CheckNewContact(body, sc.spec, set.hasExternalID)
	if verr != nil {
		return nil, sc.rejected(verr, true)
	}
	if set.hasExternalID(externalID) {
		return nil, errorf(http.StatusConflict, advisorspec.ContactExternalIDTaken)
	}
	decoded := &contact{}
	if err := decodeChecked(body, decoded); err != nil {
		return nil, err
	}
	// Merging into a bare card drops the empty arrays a body may carry, as absent fields are.
	c := merged(&contact{ID: t.store.ids.newID(), ExternalID: decoded.ExternalID, Type: decoded.Type}, decoded)
	set.put(c)
	return c, nil
}

func (t *Tenant) updateContact(sc contactScope, id string, body []byte) (advisorspec.ContactID, *apiError) {
	t.store.mu.Lock()
	defer t.store.mu.Unlock()
	set, current, err := t.contact(sc, id)
	if err != nil {
		return advisorspec.ContactID{}, err
	}
	typ, _ := advisorspec.ParseContactType(current.Type)
	if verr := advisorspec.CheckContactUpdate(body, sc.spec, typ, current.ExternalID, set.hasExternalID); verr != nil {
		return advisorspec.ContactID{}, sc.rejected(verr, false)
	}
	patch := &contact{}
	if err := decodeChecked(body, patch); err != nil {
		return advisorspec.ContactID{}, err
	}
	set.put(merged(current, patch))
	return advisorspec.ContactID{ID: current.ID}, nil
}

// decodeChecked decodes a body that advisorspec has accepted, so every field already has the
// type the record expects; failing here is a bug in the sandbox, answered as the service
// answers an unexpected failure.
func decodeChecked(body []byte, v any) *apiError {
	if len(bytes.TrimSpace(body)) == 0 {
		return nil
	}
	if err := json.Unmarshal(body, v); err != nil {
		return errorf(http.StatusInternalServerError, "Internal server error")
	}
	return nil
}
