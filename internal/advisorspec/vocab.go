// Package advisorspec holds what the Advisor REST API specification says about request bodies:
// its enumerations, limits, the vault's document taxonomy, and the validation rules with the
// messages the service answers with. The sandbox enforces these rules and the gateway checks
// them before it calls the upstream, so both give the same message for the same mistake.
package advisorspec

import (
	"slices"
	"strings"
)

// ContactType is the immutable kind of a contact card.
type ContactType string

// The contact card types, in the order the specification lists them.
const (
	Individual ContactType = "Individual"
	Trust      ContactType = "Trust"
	Entity     ContactType = "Entity"
	Charity    ContactType = "Charity"
	Will       ContactType = "Will"
	Class      ContactType = "Class"
)

// ContactTypes lists every contact type in specification order.
var ContactTypes = []ContactType{Individual, Trust, Entity, Charity, Will, Class}

// TrustTypes are the values of a Trust's trust_type.
var TrustTypes = []string{
	"IndividualRevocableTrust", "JointRevocableTrust", "IrrevocableLifeInsuranceTrust",
	"GrantorRetainedAnnuityTrust", "CharitableRemainderUnitTrust", "CharitableRemainderAnnuityTrust",
	"SpousalLifetimeAccessTrust", "DynastyTrust", "QualifiedPersonalResidenceTrust", "OtherIrrevocableTrust",
}

// IncorporationForms are the values of an Entity's incorporation_form.
var IncorporationForms = []string{
	"CCorporation", "SCorporation", "DonorAdvisorFund", "LimitedLiabilityCompany",
	"LimitedPartnership", "PrivateFoundation", "SoleProprietorship", "Other",
}

// WillTypes are the values of a Will's will_type.
var WillTypes = []string{"LastWillAndTestament", "PourOverWill"}

// StateCodes are the two-letter abbreviations accepted wherever the specification asks for a
// US state: the fifty states, the District of Columbia and the five inhabited territories, as
// the US Postal Service lists them. Only the upper-case spelling is an abbreviation.
var StateCodes = []string{
	"AK", "AL", "AR", "AS", "AZ", "CA", "CO", "CT", "DC", "DE", "FL", "GA", "GU", "HI", "IA", "ID",
	"IL", "IN", "KS", "KY", "LA", "MA", "MD", "ME", "MI", "MN", "MO", "MP", "MS", "MT", "NC", "ND",
	"NE", "NH", "NJ", "NM", "NV", "NY", "OH", "OK", "OR", "PA", "PR", "RI", "SC", "SD", "TN", "TX",
	"UT", "VA", "VI", "VT", "WA", "WI", "WV", "WY",
}

// IsStateCode reports whether s is one of StateCodes.
func IsStateCode(s string) bool {
	_, found := slices.BinarySearch(StateCodes, s)
	return found
}

// File statuses of a vault document.
const (
	FileStatusNoFileUploaded = "NoFileUploaded"
	FileStatusUploaded       = "Uploaded"
)

// BuiltinTags are the document tags every top account has; teams may add custom ones.
var BuiltinTags = []string{
	"current", "duplicate", "family-office-report", "funded", "needs-review", "not-signed",
	"ready-to-publish", "reviewed", "snapshot-report", "superseded", "unfunded",
}

// SubCategory is one sub_category of a document category and the document types it allows.
type SubCategory struct {
	Name  string
	Types []string
}

// Category is one document category and its sub-categories, in specification order.
type Category struct {
	Name          string
	SubCategories []SubCategory
}

func subs(names ...string) []SubCategory {
	out := make([]SubCategory, len(names))
	for i, n := range names {
		out[i] = SubCategory{Name: n}
	}
	return out
}

// Categories is the vault's document taxonomy: which sub_category belongs to which category, and
// which sub-categories allow a type.
var Categories = []Category{
	{Name: "personal_information", SubCategories: subs(
		"birth_certificate", "driver_license", "passport", "visa", "tsa_pre_global_entry",
		"airline_frequent_flyers", "name_change_orders", "medical_identification_cards",
		"military_discharge_papers", "personal_information_other")},
	{Name: "family", SubCategories: subs(
		"marriage_certificate", "marital_agreement", "divorce_decree", "domestic_partnership_certificate",
		"adoption_decree", "death_certificate", "family_other")},
	{Name: "estate_planning", SubCategories: []SubCategory{
		{Name: "last_will_and_testament"},
		{Name: "revocable_trusts_and_supporting_documents", Types: []string{"pour_over_will"}},
		{Name: "irrevocable_trusts", Types: []string{"dynasty_trust", "slat", "grat", "ilit", "crut", "qprt", "other"}},
		{Name: "living_will"},
		{Name: "durable_power_of_attorney"},
		{Name: "nomination_of_guardianship"},
		{Name: "letters_of_intent"},
		{Name: "personal_inventory_list"},
		{Name: "beneficiary_designations"},
		{Name: "insurance_policies"},
		{Name: "charitable_giving"},
		{Name: "estate_planning_other"},
		{Name: "presentation_materials"},
		{Name: "llc_operating_agreement"},
	}},
	{Name: "assets", SubCategories: subs(
		"real_estate_leases_deeds", "investments", "storage_units", "safe_deposit_boxes",
		"gun_permits", "assets_other")},
	{Name: "taxes", SubCategories: subs(
		"1099", "tax_return_1040", "w2", "k1s", "form_8949_crypto", "form_709_gift_tax_returns",
		"form_1098s_debt", "taxes_other")},
	{Name: "business", SubCategories: subs(
		"employment_contract", "options_agreements", "ndas", "partnership_agreements", "corporations",
		"employee_benefits", "performance_reviews", "business_other")},
	{Name: "miscellaneous", SubCategories: subs("uncategorized", "miscellaneous_other")},
}

// FindCategory returns the category with that name.
func FindCategory(name string) (Category, bool) {
	for _, c := range Categories {
		if c.Name == name {
			return c, true
		}
	}
	return Category{}, false
}

// FindSubCategory returns the sub-category of category with that name.
func (c Category) FindSubCategory(name string) (SubCategory, bool) {
	for _, s := range c.SubCategories {
		if s.Name == name {
			return s, true
		}
	}
	return SubCategory{}, false
}

// Extension is a supported file extension and the Content-Type its upload must carry.
type Extension struct {
	Name        string // without the leading dot, lower case
	ContentType string
}

// Extensions lists the supported file extensions in specification order.
var Extensions = []Extension{
	{"pdf", "application/pdf"},
	{"doc", "application/msword"},
	{"docx", "application/vnd.openxmlformats-officedocument.wordprocessingml.document"},
	{"xls", "application/vnd.ms-excel"},
	{"xlsx", "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet"},
	{"ppt", "application/vnd.ms-powerpoint"},
	{"pptx", "application/vnd.openxmlformats-officedocument.presentationml.presentation"},
	{"key", "application/vnd.apple.keynote"},
	{"csv", "text/csv"},
	{"tsv", "text/tab-separated-values"},
	{"png", "image/png"},
	{"jpg", "image/jpeg"},
	{"jpeg", "image/jpeg"},
	{"bmp", "image/bmp"},
}

// NormalizeExtension strips one leading dot and lower-cases an extension as a caller sent it,
// giving the spelling responses carry.
func NormalizeExtension(ext string) string {
	return strings.ToLower(strings.TrimPrefix(ext, "."))
}

// ContentTypeFor returns the Content-Type an upload of a file with this extension must carry.
// The extension may carry a leading dot and any case.
func ContentTypeFor(ext string) (string, bool) {
	n := NormalizeExtension(ext)
	for _, e := range Extensions {
		if e.Name == n {
			return e.ContentType, true
		}
	}
	return "", false
}

func extensionNames() []string {
	out := make([]string, len(Extensions))
	for i, e := range Extensions {
		out[i] = e.Name
	}
	return out
}

// Field limits from the specification, in characters.
const (
	MaxWID              = 64
	MaxVaultID          = 64
	MaxExternalID       = 50
	MaxTopAccountName   = 255
	MaxDocumentName     = 200
	MaxExtension        = 32
	MaxDescription      = 2000
	MaxUploadURI        = 2000
	MaxShareAmount      = 50
	DefaultTopPageLimit = 20
	MaxTopPageLimit     = 100
	DefaultDocLimit     = 100
	MaxDocLimit         = 1000
)

// MaxFileSize is the largest file the vault accepts: 5 GB, read as 5 GiB like the object stores
// that impose the limit.
const MaxFileSize int64 = 5 << 30

// MessageFileNotReady is Get Document's 404 message for a document whose file is uploaded but
// not ready yet; a client tells it from the other 404s by this text.
const MessageFileNotReady = "Vault file not ready"
