package sandbox

import (
	"encoding/json"
	"fmt"
	"maps"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/advisorhq/gateway/internal/advisorspec"
)

// Scenarios that POST /sandbox/events can play.
const (
	ScenarioOnboarding = "onboarding"
	defaultInterval    = time.Second
	maxInterval        = time.Minute
)

// postEvents serves POST /sandbox/events.
func (t *Tenant) postEvents(body []byte) (any, *apiError) {
	var list []map[string]any
	trimmed := strings.TrimSpace(string(body))
	if strings.HasPrefix(trimmed, "[") {
		if err := json.Unmarshal(body, &list); err != nil {
			return nil, errorf(http.StatusBadRequest, "The body must be an event object, an array of event objects, or {\"scenario\": \"onboarding\"}")
		}
	} else {
		var one map[string]any
		if err := json.Unmarshal(body, &one); err != nil {
			return nil, errorf(http.StatusBadRequest, "The body must be an event object, an array of event objects, or {\"scenario\": \"onboarding\"}")
		}
		if sc, ok := one["scenario"]; ok {
			return t.playScenario(sc, one)
		}
		list = []map[string]any{one}
	}
	if len(list) == 0 {
		return nil, errorf(http.StatusBadRequest, "Send at least one event")
	}
	now := t.opts.Now()
	at := make([]time.Time, len(list))
	for i, ev := range list {
		filled, err := t.withDefaults(ev, now)
		if err != nil {
			return nil, err
		}
		list[i], at[i] = filled, now
	}
	sent, err := t.emit(list, at)
	if err != nil {
		return nil, err
	}
	return map[string]any{"events": sent}, nil
}

// playScenario queues a realistic sequence, one event per interval: a client accepts the
// invitation, picks a plan, and works through a will to completion.
func (t *Tenant) playScenario(name any, req map[string]any) (any, *apiError) {
	if name != ScenarioOnboarding {
		return nil, errorf(http.StatusBadRequest, fmt.Sprintf("Unknown scenario %v: the scenarios are %q", name, ScenarioOnboarding))
	}
	interval := defaultInterval
	if v, ok := req["interval"]; ok {
		str, _ := v.(string)
		d, err := time.ParseDuration(str)
		if err != nil || d < 0 || d > maxInterval {
			return nil, errorf(http.StatusBadRequest, "interval must be a duration from 0s to 1m, such as \"500ms\"")
		}
		interval = d
	}
	wid, hasWid := req["Wid"]
	will := "Last Will and Testament"
	steps := []map[string]any{
		{"EventType": "ClientAcceptedInvitation"},
		{"EventType": "UserSubscriptionCreated", "NewPlan": "individual_will"},
		{"EventType": "ClientProgressChanged", "EstateStatus": "InProgress", "CompletionPercentage": 10},
		{"EventType": "DocumentStarted", "DocumentName": will, "DocumentProgressPercentage": 0},
		{"EventType": "ClientProgressChanged", "EstateStatus": "InProgress", "CompletionPercentage": 45},
		{"EventType": "DocumentPendingValidation", "DocumentName": will, "DocumentProgressPercentage": 99},
		{"EventType": "ClientProgressChanged", "EstateStatus": "PendingValidation", "CompletionPercentage": 90},
		{"EventType": "DocumentCompleted", "DocumentName": will, "DocumentProgressPercentage": 100},
		{"EventType": "ClientProgressChanged", "EstateStatus": "Completed", "CompletionPercentage": 100},
	}
	now := t.opts.Now()
	at := make([]time.Time, len(steps))
	for i, step := range steps {
		if hasWid {
			step["Wid"] = wid
		}
		when := now.Add(time.Duration(i) * interval)
		filled, err := t.withDefaults(step, when)
		if err != nil {
			return nil, err
		}
		// The sender waits on the wall clock; the stamps follow the sandbox's clock.
		steps[i], at[i] = filled, time.Now().Add(time.Duration(i)*interval)
	}
	sent, err := t.emit(steps, at)
	if err != nil {
		return nil, err
	}
	return map[string]any{"scenario": ScenarioOnboarding, "interval": interval.String(), "events": sent}, nil
}

// withDefaults fills what an event leaves out: the firm's first top account as the client, the
// time, and plausible values for every field of its type. Only the firm's own store is read, so
// an event naming another firm's wid learns nothing of it.
func (t *Tenant) withDefaults(ev map[string]any, now time.Time) (map[string]any, *apiError) {
	typ, _ := ev["EventType"].(string)
	if advisorspec.EventType(typ).Group() == "" {
		return nil, errorf(http.StatusBadRequest, fmt.Sprintf("EventType %q is not one of the specification's: %s", typ, strings.Join(eventTypeNames(), ", ")))
	}
	out := maps.Clone(ev)
	t.store.mu.RLock()
	defer t.store.mu.RUnlock()
	// Only a Wid left out gets the default: one provided, even of the wrong type, is checked.
	if _, ok := out["Wid"]; !ok {
		if len(t.store.topAccounts) == 0 {
			return nil, errorf(http.StatusBadRequest, "Wid is required: the sandbox has no top accounts to default to")
		}
		out["Wid"] = t.store.topAccounts[0].info.WID
	}
	wid, _ := out["Wid"].(string)
	setDefault(out, "Timestamp", now.UTC().Format(timeFormat))
	ta := t.store.byWID[wid]
	fields := out
	if advisorspec.EventType(typ).Group() == advisorspec.GroupAnalysis {
		if ta != nil {
			setDefault(out, "ExternalId", ta.info.ExternalID)
		} else {
			setDefault(out, "ExternalId", nil)
		}
		raw, provided := out["Payload"]
		payload, isObject := raw.(map[string]any)
		if provided && !isObject {
			return out, nil // not an object: left for the check to refuse
		}
		payload = maps.Clone(payload)
		if payload == nil {
			payload = map[string]any{}
		}
		out["Payload"] = payload
		fields = payload
		var doc *document
		if ta != nil {
			doc = firstDocument(ta)
		}
		vaultID := t.store.ids.newID()
		if doc != nil {
			vaultID = doc.VaultID
		}
		setDefault(fields, "CorrelationId", "")
		setDefault(fields, "JobId", t.store.ids.newID())
		setDefault(fields, "DocumentWid", vaultID)
		source := map[string]any{"vault_id": vaultID, "name": "Estate plan.pdf", "extension": "pdf", "uploaded_at": now.UTC().Format(timeFormat)}
		if doc != nil {
			source = sourceDocument(doc)
		}
		switch advisorspec.EventType(typ) {
		case advisorspec.AssistantJobCompleted:
			setDefault(fields, "source_document", source)
			setDefault(fields, "category", "estate")
			setDefault(fields, "Documents", []any{})
		case advisorspec.AssistantJobFailed:
			setDefault(fields, "Reason", "ProcessingFailed")
		case advisorspec.AssistantMultiDocumentRequiresReview:
			setDefault(fields, "VaultLink", "/vault/"+vaultID)
			setDefault(fields, "DetectedDocumentCount", 2)
		case advisorspec.TaxJobCompleted:
			setDefault(fields, "source_document", source)
			setDefault(fields, "category", "tax")
			setDefault(fields, "PresentationStatus", "filed")
		case advisorspec.TaxJobFailed:
			setDefault(fields, "Reason", "NoTaxReturnFound")
		}
		return out, nil
	}
	owner := map[string]any{"FirstName": "Jordan", "LastName": "Rivera", "LegalName": "Jordan A. Rivera", "ContactType": "Individual", "IsPrimary": true}
	switch advisorspec.EventType(typ) {
	case advisorspec.ClientAcceptedInvitation, advisorspec.ClientDeclinedInvitation:
		// The firm's own advisor, team and company, so that an event reads as one of its clients'.
		setDefault(fields, "AdvisorWid", t.firm.AdvisorID)
		setDefault(fields, "TeamId", t.firm.TeamID)
		setDefault(fields, "CompanyId", t.firm.ID)
		setDefault(fields, "RegistrationEmail", "jordan.rivera@example.com")
	case advisorspec.UserSubscriptionCreated:
		setDefault(fields, "NewPlan", "individual_will")
	case advisorspec.UserSubscriptionCanceled:
		setDefault(fields, "OldPlan", "individual_will")
	case advisorspec.UserSubscriptionChanged:
		setDefault(fields, "OldPlan", "individual_will")
		setDefault(fields, "NewPlan", "couples_trust")
	case advisorspec.UserSubscriptionReactivated:
		setDefault(fields, "OldPlan", "couples_trust")
	case advisorspec.ClientProgressChanged:
		setDefault(fields, "EstateStatus", "InProgress")
		setDefault(fields, "CompletionPercentage", 40)
	case advisorspec.AssetAdded:
		setDefault(fields, "AssetName", "Brokerage account")
		setDefault(fields, "DollarAmount", 250000)
	case advisorspec.AssetDeleted:
		setDefault(fields, "AssetName", "Brokerage account")
	case advisorspec.AssetBeneficiaryAdded:
		setDefault(fields, "AssetName", "Brokerage account")
		setDefault(fields, "BeneficiaryAdded", []any{map[string]any{"Name": "Sam Rivera"}})
	case advisorspec.AssetBeneficiaryDeleted:
		setDefault(fields, "AssetName", "Brokerage account")
		setDefault(fields, "BeneficiaryDeleted", []any{map[string]any{"Name": "Sam Rivera"}})
	case advisorspec.AssetOwnershipAdded:
		setDefault(fields, "AssetName", "Family home")
		if _, ok := fields["OwnerAdded"]; !ok {
			setDefault(fields, "OwnershipAdded", []any{map[string]any{"Name": "Jordan Rivera"}, map[string]any{"Name": "Alex Rivera"}})
		}
	case advisorspec.AssetOwnershipDeleted:
		setDefault(fields, "AssetName", "Family home")
		setDefault(fields, "OwnerDeleted", []any{map[string]any{"Name": "Alex Rivera"}})
	case advisorspec.DocumentStarted, advisorspec.DocumentPendingValidation, advisorspec.DocumentCompleted:
		progress := map[advisorspec.EventType]int{advisorspec.DocumentStarted: 0, advisorspec.DocumentPendingValidation: 99, advisorspec.DocumentCompleted: 100}
		setDefault(fields, "IsRecommendedDocument", true)
		setDefault(fields, "DocumentName", "Last Will and Testament")
		setDefault(fields, "DocumentProgressPercentage", progress[advisorspec.EventType(typ)])
		setDefault(fields, "UserTier", "individual_will")
		setDefault(fields, "DocumentOwnerInfo", owner)
		if advisorspec.EventType(typ) == advisorspec.DocumentStarted {
			setDefault(fields, "WasCompletedBefore", false)
		}
	}
	return out, nil
}

func setDefault(m map[string]any, key string, v any) {
	if _, ok := m[key]; !ok {
		m[key] = v
	}
}

func eventTypeNames() []string {
	out := make([]string, len(advisorspec.EventTypes))
	for i, t := range advisorspec.EventTypes {
		out[i] = string(t)
	}
	return out
}

// firstDocument is the top account's earliest document still in the vault.
func firstDocument(ta *topAccount) *document {
	ids := slices.Collect(maps.Keys(ta.documents))
	slices.SortFunc(ids, func(a, b string) int { return ta.docSeq[a] - ta.docSeq[b] })
	if len(ids) == 0 {
		return nil
	}
	return ta.documents[ids[0]]
}

// sourceDocument is the source_document of an analysis event: its uploaded_at is Get Document's
// creation_date, written the same way, milliseconds and all.
func sourceDocument(d *document) map[string]any {
	return map[string]any{"vault_id": d.VaultID, "name": d.Name, "extension": d.Extension, "uploaded_at": d.CreationDate.UTC().Format(timeFormat)}
}

// analysisRequest is the body of POST .../documents/{vault_id}/analysis.
type analysisRequest struct {
	StartTaxJob *bool `json:"start_tax_job"`
}

// Files larger than this fail estate analysis with FileTooLarge.
const maxAnalysisSize = 50 << 20

// startAnalysis serves POST /v2/top-accounts/{wid}/documents/{vault_id}/analysis: it answers
// with a correlation id and, after the processing delay, emits the event the document's state
// implies (rules in docs/events.md). Estate analysis that succeeds adds its generated summaries to
// the vault, so the event's documents can be fetched.
func (t *Tenant) startAnalysis(wid, vaultID string, body []byte) (any, *apiError) {
	var req analysisRequest
	if len(strings.TrimSpace(string(body))) > 0 {
		if err := json.Unmarshal(body, &req); err != nil {
			return nil, errorf(http.StatusBadRequest, "start_tax_job must be a boolean")
		}
	}
	tax := req.StartTaxJob != nil && *req.StartTaxJob
	t.store.mu.Lock()
	ta, d, err := t.document(wid, vaultID)
	if err != nil {
		t.store.mu.Unlock()
		return nil, err
	}
	correlation := t.store.ids.newID()
	job := t.store.ids.newID()
	now := t.opts.Now()
	payload := map[string]any{"CorrelationId": correlation, "JobId": job, "DocumentWid": d.VaultID}
	ev := map[string]any{"Wid": ta.info.WID, "ExternalId": ta.info.ExternalID, "Payload": payload}
	ext := strings.ToLower(d.Extension)
	switch {
	case tax && !d.Uploaded:
		ev["EventType"], payload["Reason"], payload["JobId"] = "TaxJobFailed", "UploadTimeout", ""
	case tax && ext != "pdf":
		ev["EventType"], payload["Reason"] = "TaxJobFailed", "NoTaxReturnFound"
	case tax:
		ev["EventType"] = "TaxJobCompleted"
		payload["source_document"], payload["category"], payload["PresentationStatus"] = sourceDocument(d), "tax", "filed"
	case !d.Uploaded:
		ev["EventType"], payload["Reason"], payload["JobId"] = "AssistantJobFailed", "UploadTimeout", ""
	case d.Size > maxAnalysisSize:
		ev["EventType"], payload["Reason"] = "AssistantJobFailed", "FileTooLarge"
	case ext != "pdf" && ext != "docx" && ext != "doc":
		ev["EventType"], payload["Reason"] = "AssistantJobFailed", "DocumentTypeNotSupported"
	case strings.Contains(strings.ToLower(d.Name), "bundle"):
		ev["EventType"] = "AssistantMultiDocumentRequiresReview"
		payload["VaultLink"], payload["DetectedDocumentCount"] = "/vault/"+d.VaultID, 2
	default:
		ev["EventType"] = "AssistantJobCompleted"
		payload["source_document"], payload["category"] = sourceDocument(d), "estate"
		generated, err := t.generateSummaries(ta, d)
		if err != nil {
			t.store.mu.Unlock()
			return nil, errorf(http.StatusInternalServerError, "Internal server error")
		}
		payload["Documents"] = generated
	}
	ev["Timestamp"] = now.Add(t.opts.ProcessingDelay).UTC().Format(timeFormat)
	t.store.mu.Unlock()
	if t.sender != nil {
		if _, err := t.emit([]map[string]any{ev}, []time.Time{time.Now().Add(t.opts.ProcessingDelay)}); err != nil {
			return nil, err
		}
	}
	return advisorspec.AnalysisStarted{CorrelationID: correlation}, nil
}

// generateSummaries stores an executive summary and insights for d in the vault, with their
// files, as estate analysis does; called with the store locked.
func (t *Tenant) generateSummaries(ta *topAccount, d *document) ([]any, error) {
	var out []any
	for _, g := range []struct{ kind, title string }{
		{"StandardExecSummary", "Executive summary"},
		{"Insights", "Insights"},
	} {
		now := t.opts.Now()
		name := fmt.Sprintf("%s - %s", g.title, strings.TrimSuffix(d.Name, "."+d.Extension))
		doc := &document{
			DocumentFields: advisorspec.DocumentFields{Name: name + ".pdf", Extension: "pdf", Category: "estate_planning", SubCategory: "presentation_materials"},
			WID:            ta.info.WID, VaultID: t.store.ids.newID(), CreationDate: now, ModificationDate: now,
		}
		data := demoPDF(name)
		if err := t.files.write(doc.VaultID, data); err != nil {
			return nil, fmt.Errorf("store generated %s: %w", g.kind, err)
		}
		doc.Uploaded, doc.Size, doc.ReadyAt = true, int64(len(data)), now
		ta.documents[doc.VaultID] = doc
		ta.docSeq[doc.VaultID] = ta.nextSeq
		ta.nextSeq++
		out = append(out, map[string]any{"DocumentType": g.kind, "VaultId": doc.VaultID, "Extension": "pdf"})
	}
	return out, nil
}
