package sandbox

import (
	"fmt"
	"net/http"
	"slices"
	"time"

	"github.com/advisorhq/gateway/internal/advisorspec"
)

// The advisor and team a client of the first firm added over HTTP belongs to when the request
// names none and the firm reaches none yet: the demo client's, so that an empty sandbox and the
// demo agree. Each firm has its own (Firm.AdvisorID and TeamID).
const (
	DefaultAdvisorID = "adv-001"
	DefaultTeamID    = "team-west"
)

// created marks an operation's answer as a record it made, written with 201 instead of 200.
type created struct{ v any }

// reachable lists the advisors and teams the API user can act for: those of every client,
// deleted ones included, since deleting a client revokes access to it, not to its advisor. The
// caller holds the lock.
func (t *Tenant) reachable() (advisors, teams []string) {
	for _, c := range t.store.clients {
		if !slices.Contains(advisors, c.AdvisorID) {
			advisors = append(advisors, c.AdvisorID)
		}
		if !slices.Contains(teams, c.TeamID) {
			teams = append(teams, c.TeamID)
		}
	}
	return advisors, teams
}

// actingFor is the advisor and team an Add Client request acts for: those its advisor_id and
// team_id name, else the only one the API user reaches, else the firm's defaults; naming none while
// several are reachable is the same 400 as on the contact paths. The sandbox keeps no directory
// of advisors, so naming a new one is how a second advisor comes to exist. The caller holds the
// lock.
func (t *Tenant) actingFor(sc contactScope) (advisorID, teamID string, err *apiError) {
	advisors, teams := t.reachable()
	pick := func(name, value string, reachable []string, what, def string) (string, *apiError) {
		switch {
		case value != "":
			return value, nil
		case len(reachable) == 0:
			return def, nil
		case len(reachable) == 1:
			return reachable[0], nil
		}
		return "", errorf(http.StatusBadRequest, fmt.Sprintf("%s is required when the API user can access multiple %s", name, what))
	}
	if advisorID, err = pick("advisor_id", sc.advisorID, advisors, "advisors", t.firm.AdvisorID); err != nil {
		return "", "", err
	}
	if teamID, err = pick("team_id", sc.teamID, teams, "advisor teams", t.firm.TeamID); err != nil {
		return "", "", err
	}
	return advisorID, teamID, nil
}

// putClient answers Add Client: the body is one Clients-file row, added when its id is new (or
// was deleted: adding it again gives access back, cards intact) and otherwise merged into the
// client, the file's add-or-update meaning.
func (t *Tenant) putClient(sc contactScope, body []byte) (any, *apiError) {
	row, verr := advisorspec.ParseClientRow(body)
	if verr != nil {
		return nil, errorf(http.StatusBadRequest, verr.Message)
	}
	t.store.mu.Lock()
	defer t.store.mu.Unlock()
	advisorID, teamID, err := t.actingFor(sc)
	if err != nil {
		return nil, err
	}
	c := t.store.clientByExternalID(row.ID)
	isNew := c == nil || c.revoked
	if c != nil && (c.AdvisorID != advisorID || c.TeamID != teamID) {
		// Moving a client between advisors is not something the row can say; refusing keeps an
		// add for one advisor from taking over another's client.
		return nil, errorf(http.StatusConflict, "Client with this id belongs to another advisor or team")
	}
	if c == nil {
		c = &client{Client: Client{ExternalID: row.ID, AdvisorID: advisorID, TeamID: teamID}}
	} else if err := c.checkLinks(row); err != nil {
		return nil, err
	}
	if c.WID == "" {
		c.WID = t.store.ids.newID()
		t.store.clients = append(t.store.clients, c)
	}
	c.apply(row, t.opts.Now(), t.store.ids.newID)
	c.revoked = false
	if isNew {
		return created{c.answer()}, nil
	}
	return c.answer(), nil
}

// checkLinks refuses a primary_id or spouse_id that already names another card of the client:
// a People row must update one card, not whichever the lookup happens to find first.
func (c *client) checkLinks(row advisorspec.ClientRow) *apiError {
	for _, l := range []struct {
		field string
		id    *string
		own   string // the card the link is for
		link  string // its current link
	}{
		{"primary_id", row.PrimaryID, c.primaryCard, c.primaryLink},
		{"spouse_id", row.SpouseID, c.spouseCard, c.spouseLink},
	} {
		if l.id == nil || *l.id == l.link {
			continue
		}
		if card, ok := c.linkedCard(*l.id); ok && card.ID != l.own {
			return errorf(http.StatusConflict, fmt.Sprintf("%s %q already links another contact card of this client", l.field, *l.id))
		}
	}
	return nil
}

// apply merges a checked row into the client: what the row carries replaces what the client
// had, what it leaves out stays (files never delete). The address is one value and is replaced
// whole, so a new city never keeps an old zip. The primary card follows the row's names; a
// spouse card is made the first time spouse names come, then follows them. Cards are never
// removed. The caller holds the lock.
func (c *client) apply(row advisorspec.ClientRow, now time.Time, newID func() string) {
	var f advisorspec.ClientFields
	if c.fields != nil {
		f = *c.fields
	}
	mergeClientFields(&f, row.ClientFields)
	// "if absent or in the future the current date is used": absent on an update keeps the date
	// the client has.
	if row.SubscriptionStartDate != nil || f.SubscriptionStartDate == nil {
		start := row.SubscriptionStart(now)
		f.SubscriptionStartDate = &start
	}
	if f.SendInvitationEmail == nil {
		no := false // "Default false."
		f.SendInvitationEmail = &no
	}
	c.fields = &f // a new record: one read before this call stays whole
	if row.PrimaryID != nil {
		c.primaryLink = *row.PrimaryID
	}
	if row.SpouseID != nil {
		c.spouseLink = *row.SpouseID
	}
	c.primaryCard = c.card(c.primaryCard, c.primaryLink, &row.FirstName, &row.LastName, newID)
	if row.SpouseFirstName != nil || row.SpouseLastName != nil {
		c.spouseCard = c.card(c.spouseCard, c.spouseLink, row.SpouseFirstName, row.SpouseLastName, newID)
	}
	// "Takes effect only the first time the client is invited and only when an email is
	// present."
	if !c.invited && *f.SendInvitationEmail && f.Email != nil {
		c.invited = true
	}
}

// card updates the names of the Individual card with id, or makes one whose external_id is the
// People-row id it is linked to (none when unlinked), and returns its id. A nil name is left as
// it is.
func (c *client) card(id, link string, first, last *string, newID func() string) string {
	patch := &contact{FirstName: first, LastName: last}
	if current, ok := c.contacts.get(id); ok {
		c.contacts.put(merged(current, patch))
		return id
	}
	// A link already taken as another card's external_id keeps that card's; checkLinks has
	// refused a link naming another card, so this is only the card's own link.
	externalID := link
	if c.contacts.hasExternalID(link) {
		externalID = ""
	}
	card := merged(&contact{ID: newID(), ExternalID: externalID, Type: string(advisorspec.Individual)}, patch)
	c.contacts.put(card)
	return card.ID
}

// mergeClientFields sets in dst every field src carries.
func mergeClientFields(dst *advisorspec.ClientFields, src advisorspec.ClientFields) {
	dst.FirstName, dst.LastName = src.FirstName, src.LastName
	for _, p := range []struct{ dst, src **string }{
		{&dst.PrimaryID, &src.PrimaryID}, {&dst.Email, &src.Email}, {&dst.MaritalStatus, &src.MaritalStatus},
		{&dst.SpouseFirstName, &src.SpouseFirstName}, {&dst.SpouseLastName, &src.SpouseLastName},
		{&dst.SpouseID, &src.SpouseID}, {&dst.ExistingEstatePlan, &src.ExistingEstatePlan},
		{&dst.SelectedPrimaryDocument, &src.SelectedPrimaryDocument},
	} {
		if *p.src != nil {
			*p.dst = *p.src
		}
	}
	for _, p := range []struct{ dst, src **bool }{
		{&dst.SendInvitationEmail, &src.SendInvitationEmail}, {&dst.HasChildren, &src.HasChildren},
		{&dst.HasPets, &src.HasPets}, {&dst.OwnProperty, &src.OwnProperty},
	} {
		if *p.src != nil {
			*p.dst = *p.src
		}
	}
	if src.SubscriptionStartDate != nil {
		dst.SubscriptionStartDate = src.SubscriptionStartDate
	}
	if src.Address != nil {
		dst.Address = src.Address
	}
}

// answer is the client as Add Client returns it. The caller holds the lock.
func (c *client) answer() advisorspec.Client {
	out := advisorspec.Client{
		WID: c.WID, ExternalID: c.ExternalID, AdvisorID: c.AdvisorID, TeamID: c.TeamID,
		PrimaryContactID: c.primaryCard, SpouseContactID: c.spouseCard, InvitationSent: c.invited,
	}
	if c.fields != nil {
		out.ClientFields = *c.fields
	}
	return out
}

// deleteClient answers Delete Client: the advisor loses access, the v1 paths answer 404 for the
// client from then on, and nothing is erased. Like the contact paths it takes the client's wid
// as well as its external_id, and the same advisor_id and team_id rules.
func (t *Tenant) deleteClient(sc contactScope) (any, *apiError) {
	if missing(sc.ref) {
		return nil, errorf(http.StatusBadRequest, "Missing external_id parameter")
	}
	t.store.mu.Lock()
	defer t.store.mu.Unlock()
	c, err := t.visibleClient(sc)
	if err != nil {
		return nil, err
	}
	c.revoked = true
	return struct{}{}, nil
}

// LinkedCard is linkedCard for a caller outside the lock; it returns a copy of the card.
func (t *Tenant) LinkedCard(clientID, peopleID string) (advisorspec.Contact, bool) {
	t.store.mu.RLock()
	defer t.store.mu.RUnlock()
	_, card, ok := t.store.linkedCard(clientID, peopleID)
	if !ok {
		return advisorspec.Contact{}, false
	}
	return *card, true
}
