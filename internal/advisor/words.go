package advisor

import (
	"regexp"
	"strings"
)

// The service's words and the schema's. The service names a field as its JSON does
// (trust_creation_date, ownership[0].owner_id) and calls a top account a "Container" and a
// document a "Vault"; the gateway's callers know the schema's names (trustCreationDate,
// ownership[0].owners, "Top account", "Document"). SchemaMessage and SchemaPath translate, in
// this one place, both the upstream's own messages (statusError) and the messages of the
// specification's rules that family and vault check before they call the upstream.

// schemaFields maps each field of the specification's request bodies and query parameters to
// the GraphQL input field or argument that sets it. Where the two differ by more than case, the
// input is named after the output field that reads the same thing back: a trust's
// trust_creator is set by trustCreators and read as trustCreators.
var schemaFields = map[string]string{
	// Top accounts.
	"external_id": "externalId",
	"name":        "name",
	"wid":         "wid",
	// Contact cards.
	"type":                    "type",
	"id":                      "id",
	"first_name":              "firstName",
	"middle_name":             "middleName",
	"last_name":               "lastName",
	"dob":                     "dob",
	"legal_name":              "legalName",
	"trust_type":              "trustType",
	"trust_creator":           "trustCreators",
	"initial_trustee":         "initialTrustees",
	"governing_state":         "governingState",
	"trust_creation_date":     "trustCreationDate",
	"incorporation_state":     "incorporationState",
	"incorporation_form":      "incorporationForm",
	"ownership":               "ownership",
	"percentage":              "percentage",
	"owner_id":                "owners",
	"subowners":               "owners",
	"ein":                     "ein",
	"city":                    "city",
	"state":                   "state",
	"address_formatted":       "addressFormatted",
	"notes":                   "notes",
	"will_type":               "willType",
	"will_creation_date":      "willCreationDate",
	"testator":                "testators",
	"executor":                "executors",
	"current_parties":         "currentParties",
	"is_distributed_evenly":   "isDistributedEvenly",
	"share_amount":            "shareAmount",
	"parties":                 "parties",
	"contact_id":              "party",
	"distribution_percentage": "distributionPercentage",
	"fraction":                "fraction",
	"numerator":               "numerator",
	"denominator":             "denominator",
	// Clients (a Clients-file row is Add Client's body); city and state are above.
	"primary_id":                "primaryId",
	"email":                     "email",
	"send_invitation_email":     "sendInvitationEmail",
	"subscription_start_date":   "subscriptionStartDate",
	"marital_status":            "maritalStatus",
	"spouse_first_name":         "spouseFirstName",
	"spouse_last_name":          "spouseLastName",
	"spouse_id":                 "spouseId",
	"address":                   "address",
	"line1":                     "line1",
	"line2":                     "line2",
	"zip":                       "zip",
	"has_children":              "hasChildren",
	"has_pets":                  "hasPets",
	"own_property":              "ownProperty",
	"existing_estate_plan":      "existingEstatePlan",
	"selected_primary_document": "selectedPrimaryDocument",
	// Vault documents.
	"vault_id":          "vaultId",
	"extension":         "extension",
	"description":       "description",
	"category":          "category",
	"sub_category":      "subCategory",
	"tags":              "tags",
	"creation_date":     "creationDate",
	"modification_date": "modificationDate",
	"file_status":       "fileStatus",
	"download_uri":      "downloadUri",
	"upload_uri":        "uploadUri",
	// The analysis start endpoint's option, set by startDocumentAnalysis's argument.
	"start_tax_job": "startTaxJob",
	// Query parameters. advisor_id and team_id are the arguments that set them on the v1
	// operations (addClient, client, createClientContact, ...).
	"advisor_id": "advisorId",
	"team_id":    "teamId",
	"page":       "page",
	"limit":      "limit",
	"nextToken":  "after",
	// Plurals the service's prose uses.
	"external_ids": "externalIds",
}

// SchemaFields returns a copy of the translation table, for tests that hold it to the schema.
func SchemaFields() map[string]string {
	out := make(map[string]string, len(schemaFields))
	for k, v := range schemaFields {
		out[k] = v
	}
	return out
}

// schemaPhrases are the service's nouns and turns of phrase that the schema says otherwise, in
// the order they are replaced (longer first where one contains another).
var schemaPhrases = strings.NewReplacer(
	"Container with this externalId already exists", "A top account with this externalId already exists",
	"Contact card with this external id already exists", "A contact card with this externalId already exists",
	"Container not found", "Top account not found",
	"Container", "Top account",
	"Vault doesn't exist", "Document not found",
	"Vault file not ready", "The document's file is not ready yet",
	"must be a valid date in YYYY-MM-DD format", "must be a date (YYYY-MM-DD)",
	"must be an array of contact external_ids", "must be a list of contact card externalIds",
	"must be a contact external_id", "must be a contact card's externalId",
	"is only supported on the client-scoped (v1) contact endpoints", "is only for cards of a client (createClientContact, updateClientContact)",
	"Invalid sub-category", "Invalid subCategory",
	"Invalid nextToken", "Invalid after cursor",
	"sub-category", "subCategory",
)

// missingMessages are the service's messages for a missing field that do not name it. Through
// GraphQL, where the field is non-null, "missing" can only mean blank.
var missingMessages = map[string]bool{
	"Bad Request":                 true,
	"Missing required parameters": true,
	"Missing name parameter":      true,
}

// A word, or a quoted value, which is left as it is.
var wordOrQuote = regexp.MustCompile(`"[^"]*"|[A-Za-z_][A-Za-z0-9_]*`)

// SchemaMessage returns a message of the service in the schema's words: its field names as the
// GraphQL inputs spell them, its nouns as the schema's. field is the specification's path of the
// field the message is about, when known; a bare "Bad Request" or "Missing ... parameter" then
// names it. What follows a colon (the values a message lists) and quoted values are kept.
func SchemaMessage(field, message string) string {
	if field != "" && missingMessages[message] {
		return SchemaPath(field) + " must not be blank"
	}
	head, tail, hasTail := strings.Cut(message, ": ")
	head = schemaPhrases.Replace(head)
	head = wordOrQuote.ReplaceAllStringFunc(head, func(w string) string {
		if name, ok := schemaFields[w]; ok {
			return name
		}
		return w
	})
	if hasTail {
		return head + ": " + tail
	}
	return head
}

// segment is one step of a field path: a name and an optional index.
var segment = regexp.MustCompile(`^([A-Za-z_][A-Za-z0-9_]*)((?:\[\d+\])*)$`)

// SchemaPath returns the GraphQL path of a field the specification names by its path:
// ownership[0].owner_id is ownership[0].owners, current_parties.parties[1].contact_id is
// currentParties.parties[1].party. A name the table lacks is put in camelCase.
func SchemaPath(specPath string) string {
	out, _ := schemaPath(specPath)
	return out
}

// SpecField reports whether text is the path of a field the specification names, such as the
// first word of "ownership[0].owner_id must be ...", and gives its GraphQL path.
func SpecField(text string) (string, bool) {
	return schemaPath(text)
}

func schemaPath(specPath string) (string, bool) {
	if specPath == "" {
		return "", false
	}
	parts := strings.Split(specPath, ".")
	known := true
	for i, p := range parts {
		m := segment.FindStringSubmatch(p)
		if m == nil {
			return specPath, false
		}
		name, ok := schemaFields[m[1]]
		if !ok {
			known = false
			name = camelCase(m[1])
		}
		parts[i] = name + m[2]
	}
	return strings.Join(parts, "."), known
}

var snakeWord = regexp.MustCompile(`_([a-z0-9])`)

func camelCase(name string) string {
	return snakeWord.ReplaceAllStringFunc(name, func(m string) string { return strings.ToUpper(m[1:]) })
}
