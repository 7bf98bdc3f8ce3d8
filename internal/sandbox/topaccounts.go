package sandbox

import (
	"net/http"
	"net/url"

	"github.com/advisorhq/gateway/internal/advisorspec"
)

func (t *Tenant) listTopAccounts(q url.Values) (advisorspec.TopAccountPage, *apiError) {
	page, limit, verr := advisorspec.ParseTopAccountPage(q)
	if verr != nil {
		return advisorspec.TopAccountPage{}, errorf(http.StatusBadRequest, verr.Message)
	}
	t.store.mu.RLock()
	defer t.store.mu.RUnlock()
	total := len(t.store.topAccounts)
	out := advisorspec.TopAccountPage{
		TopAccounts: []accountInfo{},
		Pagination:  advisorspec.Pagination{Page: page, Limit: limit, TotalCount: total, TotalPages: (total + limit - 1) / limit},
	}
	// A page past the end is empty; checking that first keeps (page-1)*limit from overflowing.
	if page <= out.Pagination.TotalPages {
		from := (page - 1) * limit
		for _, ta := range t.store.topAccounts[from:min(from+limit, total)] {
			out.TopAccounts = append(out.TopAccounts, ta.info)
		}
	}
	return out, nil
}

func (t *Tenant) getTopAccount(wid string) (accountInfo, *apiError) {
	t.store.mu.RLock()
	defer t.store.mu.RUnlock()
	ta, err := t.topAccount(wid, "Missing wid parameter")
	if err != nil {
		return accountInfo{}, err
	}
	return ta.info, nil
}

// topAccount finds a top account for a request. The caller holds the lock. missingMsg is the
// message of the endpoint for an absent wid.
func (t *Tenant) topAccount(wid, missingMsg string) (*topAccount, *apiError) {
	if missing(wid) {
		return nil, errorf(http.StatusBadRequest, missingMsg)
	}
	ta, ok := t.store.byWID[wid]
	if !ok {
		return nil, errorf(http.StatusNotFound, "Container not found")
	}
	return ta, nil
}

// createTopAccount adds a top account from an Add Top Account body.
func (t *Tenant) createTopAccount(body []byte) (accountInfo, *apiError) {
	externalID, name, verr := advisorspec.CheckNewTopAccount(body)
	if verr != nil {
		return accountInfo{}, errorf(http.StatusBadRequest, verr.Message)
	}
	t.store.mu.Lock()
	defer t.store.mu.Unlock()
	if existing := t.store.topAccountByExternalID(externalID); existing != nil {
		return accountInfo{}, externalIDConflict(existing)
	}
	return t.store.addTopAccount(externalID, name).info, nil
}

// addTopAccount adds a top account whose external_id no other has. The caller holds the lock.
func (st *store) addTopAccount(externalID, name string) *topAccount {
	ta := &topAccount{
		info:      accountInfo{WID: st.ids.newID(), ExternalID: externalID, Name: name},
		documents: map[string]*document{},
		docSeq:    map[string]int{},
	}
	st.topAccounts = append(st.topAccounts, ta)
	st.byWID[ta.info.WID] = ta
	return ta
}

func externalIDConflict(existing *topAccount) *apiError {
	err := errorf(http.StatusConflict, "Container with this externalId already exists")
	err.WID = existing.info.WID
	return err
}

func (t *Tenant) updateTopAccount(wid string, body []byte) (accountInfo, *apiError) {
	t.store.mu.Lock()
	defer t.store.mu.Unlock()
	// Update's errors list no "Missing wid parameter"; Get's do.
	ta, err := t.topAccount(wid, "Missing required parameters")
	if err != nil {
		return accountInfo{}, err
	}
	u, verr := advisorspec.CheckTopAccountUpdate(body)
	if verr != nil {
		return accountInfo{}, errorf(http.StatusBadRequest, verr.Message)
	}
	info := ta.info
	if u.ExternalID != nil {
		if other := t.store.topAccountByExternalID(*u.ExternalID); other != nil && other != ta {
			return accountInfo{}, externalIDConflict(other)
		}
		info.ExternalID = *u.ExternalID
	}
	if u.Name != nil {
		info.Name = *u.Name
	}
	ta.info = info
	return info, nil
}
