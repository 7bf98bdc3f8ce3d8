package sandbox

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path"
	"path/filepath"
	"slices"
	"sync"

	"github.com/advisorhq/gateway/internal/advisorspec"
	"github.com/advisorhq/gateway/internal/sandbox/sftpd"
)

// ingestQueueLen bounds the bulk files waiting to be ingested. The SFTP server hands a file
// over before it answers the client's close or rename; with the queue full that answer waits
// for room, which slows an uploader down rather than letting the queue grow without bound.
const ingestQueueLen = 16

// maxTrackedErrors bounds the errors kept while a file is checked, and so the memory a file of
// little but errors takes. A file with more is refused whole rather than applied with errors
// that were never kept. The result still lists only the first advisorspec.MaxBulkResultErrors.
const maxTrackedErrors = 100_000

// ingester owns the one goroutine that ingests bulk files, one at a time in the order they
// arrived. One at a time keeps the order of a Clients file and the People file uploaded after
// it: the gateway uploads the Clients file first, so its clients exist when the People file
// naming them is checked.
type ingester struct {
	queue  chan sftpd.File
	quit   chan struct{} // closed by stop: no more files are taken
	cancel context.CancelFunc
	done   chan struct{} // closed when the goroutine has returned
	once   sync.Once
}

// startIngester starts the goroutine that hands each queued file to ingest until stop.
func startIngester(ingest func(context.Context, sftpd.File)) *ingester {
	ctx, cancel := context.WithCancel(context.Background())
	in := &ingester{queue: make(chan sftpd.File, ingestQueueLen), quit: make(chan struct{}), cancel: cancel, done: make(chan struct{})}
	go func() {
		defer close(in.done)
		for {
			select {
			case <-ctx.Done():
				return
			case f := <-in.queue:
				ingest(ctx, f)
			}
		}
	}()
	return in
}

// stop ends the goroutine, cancelling the file it is ingesting, and waits for it. Files still
// queued are dropped: they stay in the directory without a result.
func (in *ingester) stop() {
	in.once.Do(func() {
		close(in.quit)
		in.cancel()
	})
	<-in.done
}

// receiveBulkFile is handed each complete bulk file that arrives over SFTP, before the client's
// close or rename is answered. It only queues the file: checking and applying a large file
// takes seconds, and the client should not wait for that to hear that its file arrived.
func (s *Sandbox) receiveBulkFile(f sftpd.File) {
	s.sftpMu.Lock()
	in := s.ingest
	s.sftpMu.Unlock()
	select {
	case in.queue <- f:
	case <-in.quit:
		s.log("sandbox bulk file dropped: the sandbox is closing", "name", f.Name)
	}
}

func (s *Sandbox) log(msg string, args ...any) {
	if s.opts.Logger != nil {
		s.opts.Logger.Info(msg, args...)
	}
}

func (t *Tenant) log(msg string, args ...any) {
	if t.opts.Logger != nil {
		t.opts.Logger.Info(msg, append(args, "firm", t.firm.ID)...)
	}
}

// ingestFile hands a bulk file to the firm whose SFTP user wrote it. The server only lets the
// firms' users in, so a file of no firm is a bug, logged and left without a result.
func (s *Sandbox) ingestFile(ctx context.Context, f sftpd.File) {
	t := s.sftpFirm(f.User)
	if t == nil {
		s.log("sandbox bulk file of no firm ignored", "name", f.Name, "user", f.User)
		return
	}
	t.ingestFile(ctx, f)
}

// ingestFile checks and applies one bulk file into the firm's store and writes its result
// beside it.
func (t *Tenant) ingestFile(ctx context.Context, f sftpd.File) {
	res := t.processBulkFile(ctx, f)
	if ctx.Err() != nil {
		// Stopped half way: no result, as for a file the sandbox never got to.
		t.log("sandbox bulk file abandoned: the sandbox is closing", "name", f.Name)
		return
	}
	res.ProcessedAt = t.opts.Now().UTC()
	if err := writeResult(f.Path, res); err != nil {
		t.log("sandbox bulk file result not written", "name", f.Name, "error", err)
		return
	}
	t.log("sandbox bulk file ingested", "name", f.Name, "rows", res.Rows, "applied", res.Applied, "invalid", res.Invalid)
}

// processBulkFile checks the file against the bulk rules as they stand in the store, then
// applies its valid rows in file order. An invalid row does not stop the file: as a service
// does, the sandbox applies what it can and reports the rest (the gateway sends a file with
// invalid rows only when asked to send the valid ones, so this is what such a caller wants).
// A file that fails as a whole (empty, every row invalid, unreadable) applies nothing. Every
// refusal is decided by the check, over the whole file, before anything is applied: a row
// refused only when applied would leave the rows naming it pointing at a card never made.
func (t *Tenant) processBulkFile(ctx context.Context, f sftpd.File) advisorspec.BulkResult {
	res := advisorspec.BulkResult{File: path.Base(f.Name), Kind: string(f.Kind), Errors: []advisorspec.BulkLineError{}}
	fail := func(err error) advisorspec.BulkResult {
		res.FileError = err.Error()
		res.Applied, res.Invalid = 0, res.Rows
		return res
	}
	model := advisorspec.ClientModel
	switch f.Kind {
	case sftpd.Clients, sftpd.TopAccounts:
	case sftpd.People:
		var err error
		if model, err = detectModel(f.Path); err != nil {
			return fail(err)
		}
		res.Model = model.String()
	default:
		return fail(fmt.Errorf("%s is not a bulk file kind", f.Kind))
	}

	file, err := os.Open(f.Path)
	if err != nil {
		return fail(fmt.Errorf("open the file: %w", err))
	}
	defer file.Close()
	check, err := checkBulkFile(ctx, file, string(f.Kind), model, bulkLookup{exists: t.bulkExists, card: t.bulkCard})
	res.Rows = check.rows
	res.ErrorCount = check.errorCount
	res.Errors = append(res.Errors, check.errs[:min(len(check.errs), advisorspec.MaxBulkResultErrors)]...)
	if err != nil {
		return fail(err)
	}

	if f.Kind == sftpd.Clients {
		if err := t.clientsFileRefusal(); err != nil {
			return fail(err)
		}
	}

	if _, err := file.Seek(0, io.SeekStart); err != nil {
		return fail(fmt.Errorf("read the file again to apply it: %w", err))
	}
	apply := func(line []byte) *advisorspec.BulkLineError { return t.applyClientRow(line) }
	switch f.Kind {
	case sftpd.TopAccounts:
		apply = t.applyTopAccountRow
	case sftpd.People:
		apply = func(line []byte) *advisorspec.BulkLineError { return t.applyPeopleRow(line, model, check.owners) }
	}
	var applyErrs []advisorspec.BulkLineError
	err = readBulkLines(ctx, file, func(l bulkLine) {
		if check.invalid[l.no] {
			return
		}
		if e := apply(l.text); e != nil {
			e.Line = l.no
			applyErrs = append(applyErrs, *e)
			return
		}
		res.Applied++
	})
	res.Invalid = res.Rows - res.Applied
	if len(applyErrs) > 0 {
		res.ErrorCount += len(applyErrs)
		all := append(slices.Clone(check.errs), applyErrs...)
		slices.SortStableFunc(all, func(a, b advisorspec.BulkLineError) int { return a.Line - b.Line })
		res.Errors = all[:min(len(all), advisorspec.MaxBulkResultErrors)]
	}
	if err != nil {
		// Rows applied before the failure stay applied: files never undo.
		res.FileError = fmt.Sprintf("apply the file: %v", err)
	}
	// A file of which nothing was applied says so as a whole, not only line by line.
	res.ExplainNoneApplied()
	return res
}

// clientsFileRefusal refuses a Clients file while the API user reaches several advisors or
// teams. The specification has such a user supply advisor_id and team_id ("An API user with
// access to several advisors or teams supplies advisor_id and team_id on v1 contact requests")
// and the Clients file has no field for either, so no row of it can say whom it is for; Add
// Client, which takes both, is how that user adds or updates a client. The whole file is
// refused, existing clients' rows too, as Add Client refuses a row naming no advisor whoever
// it updates: the file and the endpoint stay one rule.
func (t *Tenant) clientsFileRefusal() error {
	t.store.mu.RLock()
	advisors, teams := t.reachable()
	t.store.mu.RUnlock()
	switch {
	case len(advisors) > 1:
		return errors.New("advisor_id is required when the API user can access multiple advisors, and a Clients file names none: add or update these clients with Add Client and advisor_id")
	case len(teams) > 1:
		return errors.New("team_id is required when the API user can access multiple advisor teams, and a Clients file names none: add or update these clients with Add Client and team_id")
	}
	return nil
}

// detectModel says which model a People file follows. Both arrive as people-<ts>.jsonl, so the
// rows tell: a file whose first row carries top_account_id and no client_id is in the
// deprecated container model, any other in the current one. Rows of the other model are then
// errors on their lines ("top_account_id belongs to the deprecated top-account model").
func detectModel(name string) (advisorspec.BulkModel, error) {
	file, err := os.Open(name)
	if err != nil {
		return 0, fmt.Errorf("open the file: %w", err)
	}
	defer file.Close()
	model := advisorspec.ClientModel
	first := true
	// The first row that can be read decides; it lies within the first few lines, or the file
	// is read in the current model.
	err = readBulkLines(context.Background(), io.LimitReader(file, 4*advisorspec.MaxBulkLineBytes), func(l bulkLine) {
		if !first || l.problem != "" {
			return
		}
		first = false
		var row map[string]json.RawMessage
		if json.Unmarshal(l.text, &row) != nil {
			return
		}
		_, top := row["top_account_id"]
		_, client := row["client_id"]
		if top && !client {
			model = advisorspec.TopAccountModel
		}
	})
	return model, err
}

// bulkExists answers the check's question about a client or top account no row of the upload
// defines: does it exist? Clients are named by the caller's id, deleted ones too (a file may
// update their cards, and adding them again shows them); top accounts by external_id or wid.
func (t *Tenant) bulkExists(kind advisorspec.RefKind, id string) bool {
	t.store.mu.RLock()
	defer t.store.mu.RUnlock()
	switch kind {
	case advisorspec.RefClient:
		return t.store.clientByExternalID(id) != nil
	case advisorspec.RefTopAccount:
		return t.store.bulkTopAccount(id) != nil
	}
	return false
}

// bulkCard answers the check's question about a card: does the client or top account owner
// name have the card id names, and of which type? A client's cards are found by external_id,
// or by the People-row id its primary or spouse card is linked to; a top account's by
// external_id.
func (t *Tenant) bulkCard(owner advisorspec.RowRef, id string) (advisorspec.ContactType, bool) {
	t.store.mu.RLock()
	defer t.store.mu.RUnlock()
	var card *contact
	switch owner.Kind {
	case advisorspec.RefClient:
		if c := t.store.clientByExternalID(owner.ID); c != nil {
			card, _ = c.linkedCard(id)
		}
	case advisorspec.RefTopAccount:
		if ta := t.store.bulkTopAccount(owner.ID); ta != nil {
			if i, ok := ta.contacts.byExternalID[id]; ok {
				card = ta.contacts.list[i]
			}
		}
	}
	if card == nil {
		return "", false
	}
	return advisorspec.ContactType(card.Type), true
}

// bulkTopAccount finds the top account a container-model row's top_account_id names: the
// caller's external_id, as the Add/Update Top Accounts file would define it, or its wid.
func (st *store) bulkTopAccount(id string) *topAccount {
	if ta := st.topAccountByExternalID(id); ta != nil {
		return ta
	}
	return st.byWID[id]
}

// applyClientRow applies a valid Clients row through Add Client's own add-or-update, so that
// the file and the endpoint cannot drift apart. The client acts for the advisor and team Add
// Client would pick with no advisor_id or team_id: the only one the API user reaches, or the
// firm's (clientsFileRefusal has refused the file when it reaches several).
func (t *Tenant) applyClientRow(line []byte) *advisorspec.BulkLineError {
	_, err := t.putClient(contactScope{spec: advisorspec.ClientScope}, line)
	if err == nil {
		return nil
	}
	row, _ := advisorspec.CheckClientRow(line)
	return &advisorspec.BulkLineError{ID: row.ID, Message: err.Message}
}

// applyTopAccountRow applies a valid row of the Add/Update Top Accounts file: the top account
// whose external_id is the row's id gets the row's name, or is added with both, as Add Top
// Account would add it. A top account is never removed, and its wid never changes.
func (t *Tenant) applyTopAccountRow(line []byte) *advisorspec.BulkLineError {
	row, errs := advisorspec.CheckTopAccountRow(line)
	if len(errs) > 0 { // the check passed it; the store cannot have made it invalid
		return &advisorspec.BulkLineError{ID: row.ID, Field: errs[0].Field, Message: errs[0].Message}
	}
	t.store.mu.Lock()
	defer t.store.mu.Unlock()
	if ta := t.store.topAccountByExternalID(row.ID); ta != nil {
		ta.info.Name = row.Name
		return nil
	}
	t.store.addTopAccount(row.ID, row.Name)
	return nil
}

// cardOwner is the contact cards a People row goes to, and how a row id finds a card there.
type cardOwner struct {
	set  *contactSet
	find func(peopleID string) (*contact, bool)
}

// applyPeopleRow applies a valid People row as a card of its client (or top account): the card
// its id names is updated in place, including a primary or spouse card linked to it by
// primary_id or spouse_id; otherwise a new card is made whose external_id is the row's id.
// Fields the row leaves out stay as they are. owners maps the file's valid row ids to their
// client or top account, for references to rows further down. The check has already refused
// what this refuses, and the rows naming it; it is refused again here only when the store has
// changed since (a client deleted over REST, say), which the check could not see.
func (t *Tenant) applyPeopleRow(line []byte, model advisorspec.BulkModel, owners map[string]string) *advisorspec.BulkLineError {
	row, errs := advisorspec.DecodePeopleRow(line, model)
	lineErr := func(field, format string, args ...any) *advisorspec.BulkLineError {
		return &advisorspec.BulkLineError{ID: row.ID, Field: field, Message: fmt.Sprintf(format, args...)}
	}
	if len(errs) > 0 { // the check passed it; the store cannot have made it invalid
		return lineErr(errs[0].Field, "%s", errs[0].Message)
	}
	t.store.mu.Lock()
	defer t.store.mu.Unlock()
	var owner cardOwner
	ownerField, ownerID := "client_id", row.ClientID
	if model == advisorspec.TopAccountModel {
		ownerField, ownerID = "top_account_id", row.TopAccountID
		ta := t.store.bulkTopAccount(ownerID)
		if ta == nil {
			return lineErr(ownerField, "top_account_id %q names no top account", ownerID)
		}
		owner = cardOwner{set: &ta.contacts, find: func(id string) (*contact, bool) {
			i, ok := ta.contacts.byExternalID[id]
			if !ok {
				return nil, false
			}
			return ta.contacts.list[i], true
		}}
	} else {
		c := t.store.clientByExternalID(ownerID)
		if c == nil {
			return lineErr(ownerField, "client_id %q names no client", ownerID)
		}
		owner = cardOwner{set: &c.contacts, find: c.linkedCard}
	}

	// References become the external_ids the REST API's cards reference each other by. A
	// reference must name a card of the same client: one already there, or a row of this file
	// for that client further down.
	var refErr *advisorspec.BulkLineError
	ref := func(field, id string) string {
		if card, ok := owner.find(id); ok {
			return t.store.answerTo(owner.set, card, id).ExternalID
		}
		if owners[id] != ownerID && refErr == nil {
			refErr = lineErr(field, "%s %q names no person, trust or entity of %s %q", field, id, ownerField, ownerID)
		}
		return id
	}
	patch := cardPatch(row, ref)
	if refErr != nil {
		return refErr
	}
	if current, ok := owner.find(row.ID); ok {
		if current.Type != string(row.Type) {
			return lineErr("type", "id %q names a %s card; a row cannot change a card's type", row.ID, current.Type)
		}
		owner.set.put(merged(t.store.answerTo(owner.set, current, row.ID), patch))
		return nil
	}
	owner.set.put(merged(&contact{ID: t.store.ids.newID(), ExternalID: row.ID, Type: string(row.Type)}, patch))
	return nil
}

// answerTo returns card, giving it the People-row id as its external_id when it has none: a
// card Add Client made before primary_id or spouse_id linked it has no external_id, and other
// cards can only reference it (and the REST API only find it) by one. The caller holds the lock.
func (st *store) answerTo(set *contactSet, card *contact, peopleID string) *contact {
	if card.ExternalID != "" || set.hasExternalID(peopleID) {
		return card
	}
	named := *card
	named.ExternalID = peopleID
	set.put(&named)
	return &named
}

// cardPatch maps a People row's fields to the card fields the REST API uses. ref maps each id
// the row names to the external_id the card stores. Joint ownership ("several ids in one
// owner_id array") is an entry's subowners, as the REST API expresses it; a single owner is its
// owner_id.
func cardPatch(row advisorspec.PeopleRow, ref func(field, id string) string) *contact {
	opt := func(s string) *string {
		if s == "" {
			return nil
		}
		return &s
	}
	refs := func(field string, ids []string) []string {
		if ids == nil {
			return nil
		}
		out := make([]string, len(ids))
		for i, id := range ids {
			out[i] = ref(field, id)
		}
		return out
	}
	p := &contact{}
	switch row.Type {
	case advisorspec.Individual:
		p.FirstName, p.MiddleName, p.LastName = opt(row.FirstName), opt(row.MiddleName), opt(row.LastName)
	case advisorspec.Trust:
		p.LegalName, p.TrustType = opt(row.LegalName), opt(row.TrustType)
		p.TrustCreator = refs("trust_creator", row.TrustCreator)
		p.InitialTrustee = refs("initial_trustee", row.InitialTrustee)
		p.GoverningState, p.TrustCreationDate = opt(row.GoverningState), opt(row.CreationDate)
	case advisorspec.Entity:
		p.LegalName = opt(row.LegalName)
		p.IncorporationState, p.IncorporationForm = opt(row.IncorporationState), opt(row.IncorporationForm)
		for i, o := range row.Ownership {
			field := fmt.Sprintf("ownership[%d].owner_id", i)
			entry := advisorspec.Ownership{Percentage: o.Percentage}
			if o.Joint() {
				entry.Subowners = refs(field, o.OwnerID)
			} else {
				entry.OwnerID = ref(field, o.OwnerID[0])
			}
			p.Ownership = append(p.Ownership, entry)
		}
	}
	return p
}

// writeResult writes the file's result beside it, under a temporary name first and then
// renamed, so that a reader never sees half a result. The temporary name ends in .part, which
// the SFTP server never takes for a bulk file.
func writeResult(bulkPath string, res advisorspec.BulkResult) error {
	data, err := json.MarshalIndent(res, "", "  ")
	if err != nil {
		return fmt.Errorf("encode the result: %w", err)
	}
	dir, name := filepath.Split(bulkPath)
	final := filepath.Join(dir, advisorspec.BulkResultName(name))
	tmp, err := os.CreateTemp(dir, "."+filepath.Base(final)+".*.part")
	if err != nil {
		return fmt.Errorf("create the result: %w", err)
	}
	_, err = tmp.Write(append(data, '\n'))
	if err == nil {
		err = tmp.Sync()
	}
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp.Name(), final)
	}
	if err != nil {
		_ = os.Remove(tmp.Name())
		return fmt.Errorf("write the result %s: %w", final, err)
	}
	return nil
}
