package gateway_test

import (
	"encoding/json"
	"net/http"
)

// roundTrip is one event type: a webhook body with every field the specification gives, the
// GraphQL selection of its fields, and what GraphQL must answer for them.
type roundTrip struct {
	body      map[string]any
	eventType string
	group     string
	selection string
	want      map[string]any
}

const (
	analysisSelection = `... on AnalysisEvent { externalId correlationId jobId documentWid }`
	ownerSelection    = `isRecommendedDocument documentName documentProgressPercentage userTier
		documentOwnerInfo { firstName lastName legalName contactType isPrimary }`
)

func analysisBody(typ string, payload map[string]any) map[string]any {
	p := map[string]any{"CorrelationId": "corr-1", "JobId": "job-1", "DocumentWid": "vault-1"}
	for k, v := range payload {
		p[k] = v
	}
	return map[string]any{"EventType": typ, "Timestamp": "2026-11-22T10:00:00Z", "ExternalId": "client-ext-1", "Payload": p}
}

func analysisWant(extra map[string]any) map[string]any {
	w := map[string]any{"externalId": "client-ext-1", "correlationId": "corr-1", "jobId": "job-1", "documentWid": "vault-1"}
	for k, v := range extra {
		w[k] = v
	}
	return w
}

func flat(typ string, fields map[string]any) map[string]any {
	b := map[string]any{"EventType": typ, "Timestamp": "2026-11-22T10:00:00Z"}
	for k, v := range fields {
		b[k] = v
	}
	return b
}

func roundTrips() []roundTrip {
	source := map[string]any{"vault_id": "vault-1", "name": "Trust.pdf", "extension": "pdf", "uploaded_at": "2026-11-20T08:00:00Z"}
	sourceWant := map[string]any{"vaultId": "vault-1", "name": "Trust.pdf", "extension": "pdf", "uploadedAt": "2026-11-20T08:00:00Z"}
	owner := map[string]any{"FirstName": "Ada", "LastName": "Rivera", "LegalName": "Ada L. Rivera", "ContactType": "Individual", "IsPrimary": true}
	ownerWant := map[string]any{"firstName": "Ada", "lastName": "Rivera", "legalName": "Ada L. Rivera", "contactType": "INDIVIDUAL", "isPrimary": true}
	names := []any{map[string]any{"Name": "Sam"}, map[string]any{"Name": "Kim"}}
	namesWant := []any{map[string]any{"name": "Sam"}, map[string]any{"name": "Kim"}}
	invitation := map[string]any{"AdvisorWid": "adv-1", "TeamId": "team-1", "CompanyId": "co-1", "RegistrationEmail": "ada@example.com"}
	invitationWant := map[string]any{"advisorWid": "adv-1", "teamId": "team-1", "companyId": "co-1", "registrationEmail": "ada@example.com"}
	const invitationSel = `advisorWid teamId companyId registrationEmail`
	progressDoc := func(typ string, pct int, extra map[string]any) map[string]any {
		b := flat(typ, map[string]any{"IsRecommendedDocument": true, "DocumentName": "Last Will and Testament",
			"DocumentProgressPercentage": pct, "UserTier": "individual_will", "DocumentOwnerInfo": owner})
		for k, v := range extra {
			b[k] = v
		}
		return b
	}
	progressWant := func(pct int, extra map[string]any) map[string]any {
		w := map[string]any{"isRecommendedDocument": true, "documentName": "LAST_WILL_AND_TESTAMENT",
			"documentProgressPercentage": pct, "userTier": "individual_will", "documentOwnerInfo": ownerWant}
		for k, v := range extra {
			w[k] = v
		}
		return w
	}
	return []roundTrip{
		{analysisBody("AssistantJobCompleted", map[string]any{"source_document": source, "category": "estate",
			"Documents": []any{map[string]any{"DocumentType": "StandardExecSummary", "VaultId": "gen-1", "Extension": "pdf"}}}),
			"ASSISTANT_JOB_COMPLETED", "ANALYSIS",
			`... on AssistantJobCompleted { ` + analysisSelection + ` sourceDocument { vaultId name extension uploadedAt } category documents { documentType vaultId extension } }`,
			analysisWant(map[string]any{"sourceDocument": sourceWant, "category": "estate",
				"documents": []any{map[string]any{"documentType": "STANDARD_EXEC_SUMMARY", "vaultId": "gen-1", "extension": "pdf"}}})},
		{analysisBody("AssistantJobFailed", map[string]any{"Reason": "FileTooLarge"}), "ASSISTANT_JOB_FAILED", "ANALYSIS",
			`... on AssistantJobFailed { ` + analysisSelection + ` reason }`, analysisWant(map[string]any{"reason": "FILE_TOO_LARGE"})},
		{analysisBody("AssistantMultiDocumentRequiresReview", map[string]any{"VaultLink": "/vault/vault-1", "DetectedDocumentCount": 3}),
			"ASSISTANT_MULTI_DOCUMENT_REQUIRES_REVIEW", "ANALYSIS",
			`... on AssistantMultiDocumentRequiresReview { ` + analysisSelection + ` vaultLink detectedDocumentCount }`,
			analysisWant(map[string]any{"vaultLink": "/vault/vault-1", "detectedDocumentCount": 3})},
		{analysisBody("TaxJobCompleted", map[string]any{"source_document": source, "category": "tax", "PresentationStatus": "insightsUnavailable"}),
			"TAX_JOB_COMPLETED", "ANALYSIS",
			`... on TaxJobCompleted { ` + analysisSelection + ` sourceDocument { vaultId name extension uploadedAt } category presentationStatus }`,
			analysisWant(map[string]any{"sourceDocument": sourceWant, "category": "tax", "presentationStatus": "INSIGHTS_UNAVAILABLE"})},
		{analysisBody("TaxJobFailed", map[string]any{"Reason": "NoTaxReturnFound"}), "TAX_JOB_FAILED", "ANALYSIS",
			`... on TaxJobFailed { ` + analysisSelection + ` reason }`, analysisWant(map[string]any{"reason": "NO_TAX_RETURN_FOUND"})},

		{flat("ClientAcceptedInvitation", invitation), "CLIENT_ACCEPTED_INVITATION", "CLIENT",
			`... on ClientAcceptedInvitation { ` + invitationSel + ` }`, invitationWant},
		{flat("ClientDeclinedInvitation", invitation), "CLIENT_DECLINED_INVITATION", "CLIENT",
			`... on ClientDeclinedInvitation { ` + invitationSel + ` }`, invitationWant},
		{flat("UserSubscriptionCreated", map[string]any{"NewPlan": "joint_will"}), "USER_SUBSCRIPTION_CREATED", "CLIENT",
			`... on UserSubscriptionCreated { newPlan }`, map[string]any{"newPlan": "joint_will"}},
		{flat("UserSubscriptionCanceled", map[string]any{"OldPlan": "joint_will"}), "USER_SUBSCRIPTION_CANCELED", "CLIENT",
			`... on UserSubscriptionCanceled { oldPlan }`, map[string]any{"oldPlan": "joint_will"}},
		{flat("UserSubscriptionChanged", map[string]any{"OldPlan": "joint_will", "NewPlan": "couples_trust"}), "USER_SUBSCRIPTION_CHANGED", "CLIENT",
			`... on UserSubscriptionChanged { oldPlan newPlan }`, map[string]any{"oldPlan": "joint_will", "newPlan": "couples_trust"}},
		{flat("UserSubscriptionReactivated", map[string]any{"OldPlan": "couples_trust"}), "USER_SUBSCRIPTION_REACTIVATED", "CLIENT",
			`... on UserSubscriptionReactivated { oldPlan }`, map[string]any{"oldPlan": "couples_trust"}},
		{flat("ClientProgressChanged", map[string]any{"EstateStatus": "PendingValidation", "CompletionPercentage": 95}), "CLIENT_PROGRESS_CHANGED", "CLIENT",
			`... on ClientProgressChanged { estateStatus completionPercentage }`, map[string]any{"estateStatus": "PENDING_VALIDATION", "completionPercentage": 95}},

		{flat("AssetAdded", map[string]any{"AssetName": "House", "DollarAmount": 750000}), "ASSET_ADDED", "ASSET",
			`... on AssetAdded { assetName dollarAmount }`, map[string]any{"assetName": "House", "dollarAmount": 750000}},
		{flat("AssetDeleted", map[string]any{"AssetName": "Boat"}), "ASSET_DELETED", "ASSET",
			`... on AssetDeleted { assetName }`, map[string]any{"assetName": "Boat"}},
		{flat("AssetBeneficiaryAdded", map[string]any{"AssetName": "House", "BeneficiaryAdded": names}), "ASSET_BENEFICIARY_ADDED", "ASSET",
			`... on AssetBeneficiaryAdded { assetName beneficiaryAdded { name } }`, map[string]any{"assetName": "House", "beneficiaryAdded": namesWant}},
		{flat("AssetBeneficiaryDeleted", map[string]any{"AssetName": "House", "BeneficiaryDeleted": names}), "ASSET_BENEFICIARY_DELETED", "ASSET",
			`... on AssetBeneficiaryDeleted { assetName beneficiaryDeleted { name } }`, map[string]any{"assetName": "House", "beneficiaryDeleted": namesWant}},
		{flat("AssetOwnershipAdded", map[string]any{"AssetName": "House", "OwnerAdded": names}), "ASSET_OWNERSHIP_ADDED", "ASSET",
			`... on AssetOwnershipAdded { assetName ownershipAdded { name } ownerAdded { name } }`,
			map[string]any{"assetName": "House", "ownershipAdded": namesWant, "ownerAdded": namesWant}},
		{flat("AssetOwnershipDeleted", map[string]any{"AssetName": "House", "OwnerDeleted": names}), "ASSET_OWNERSHIP_DELETED", "ASSET",
			`... on AssetOwnershipDeleted { assetName ownerDeleted { name } }`, map[string]any{"assetName": "House", "ownerDeleted": namesWant}},

		{progressDoc("DocumentStarted", 0, map[string]any{"WasCompletedBefore": true}), "DOCUMENT_STARTED", "DOCUMENT",
			`... on DocumentStarted { ` + ownerSelection + ` wasCompletedBefore }`, progressWant(0, map[string]any{"wasCompletedBefore": true})},
		{progressDoc("DocumentPendingValidation", 99, nil), "DOCUMENT_PENDING_VALIDATION", "DOCUMENT",
			`... on DocumentPendingValidation { ` + ownerSelection + ` }`, progressWant(99, nil)},
		{progressDoc("DocumentCompleted", 100, nil), "DOCUMENT_COMPLETED", "DOCUMENT",
			`... on DocumentCompleted { ` + ownerSelection + ` }`, progressWant(100, nil)},
	}
}

// mustMarshal is v's JSON with object keys sorted, for comparing decoded values.
func mustMarshal(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	var generic any
	_ = json.Unmarshal(b, &generic)
	b, _ = json.Marshal(generic)
	return string(b)
}

func httpGet(url string) (*http.Response, error) { return http.Get(url) }
