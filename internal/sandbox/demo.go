package sandbox

import (
	"bytes"
	"encoding/json"
	"fmt"
	"image"
	"image/color"
	"image/png"

	"github.com/advisorhq/gateway/internal/advisorspec"
)

// demoFamily is a top account of the demo data and what it holds. Contacts refer to each other
// by external_id, so they are listed after the contacts they name.
type demoFamily struct {
	externalID string
	name       string
	customTags []string
	contacts   []map[string]any
	documents  []demoDocument
}

type demoDocument struct {
	body map[string]any
	file []byte // nil: no file uploaded yet
}

// demoClient is a client of the v1 contact endpoints, of the firm's default advisor and team.
type demoClient struct {
	externalID string
	contacts   []map[string]any
}

// demoData is one firm's demo data.
type demoData struct {
	families []demoFamily
	clients  []demoClient
}

// demoSets are the demo data of the firms a sandbox serves, by position: the first firm has the
// Hartwell family and its neighbours, the second the Castellano family, under other names and
// external ids, so that a test can tell whose data it was shown. Later firms have none.
var demoSets = []func() demoData{
	func() demoData { return demoData{families: demoFamilies(), clients: demoClients()} },
	secondFirmDemo,
}

func demoFamilies() []demoFamily {
	return []demoFamily{
		{
			externalID: DemoFamilyExternalID,
			name:       "Hartwell Family",
			customTags: []string{"trustee-copy", "annual-review"},
			contacts: []map[string]any{
				{"type": "Individual", "external_id": "hw-eleanor", "first_name": "Eleanor", "middle_name": "Rose", "last_name": "Hartwell"},
				{"type": "Individual", "external_id": "hw-james", "first_name": "James", "middle_name": "Thomas", "last_name": "Hartwell"},
				{"type": "Individual", "external_id": "hw-olivia", "first_name": "Olivia", "last_name": "Hartwell"},
				{"type": "Individual", "external_id": "hw-henry", "first_name": "Henry", "last_name": "Hartwell"},
				{"type": "Individual", "external_id": "hw-grace", "first_name": "Grace", "last_name": "Whitaker"},
				{"type": "Individual", "external_id": "hw-leo", "first_name": "Leo", "last_name": "Hartwell"},
				{
					"type": "Trust", "external_id": "hw-family-trust",
					"legal_name":      "Hartwell Family Joint Revocable Trust",
					"trust_type":      "JointRevocableTrust",
					"trust_creator":   []string{"hw-eleanor", "hw-james"},
					"initial_trustee": []string{"hw-eleanor", "hw-james", "hw-olivia"},
					"governing_state": "CA", "trust_creation_date": "2015-06-12",
				},
				{
					"type": "Trust", "external_id": "hw-ilit",
					"legal_name":      "James Hartwell Irrevocable Life Insurance Trust",
					"trust_type":      "IrrevocableLifeInsuranceTrust",
					"trust_creator":   []string{"hw-james"},
					"initial_trustee": []string{"hw-henry"},
					"governing_state": "NV", "trust_creation_date": "2019-11-04",
				},
				{
					"type": "Entity", "external_id": "hw-holdings",
					"legal_name":          "Hartwell Holdings LLC",
					"incorporation_state": "DE",
					"incorporation_form":  "LimitedLiabilityCompany",
					"ownership": []map[string]any{
						{"percentage": 60, "owner_id": "hw-family-trust"},
						{"percentage": 40, "subowners": []string{"hw-olivia", "hw-henry"}},
					},
				},
				{
					"type": "Charity", "external_id": "hw-foundation",
					"legal_name": "Hartwell Foundation for the Arts", "ein": 871234567,
					"city": "San Francisco", "state": "CA",
					"address_formatted": "500 Market St, San Francisco, CA 94105",
					"notes":             "Annual gift pledged through the family trust.",
				},
				{
					"type": "Will", "external_id": "hw-will-eleanor",
					"legal_name": "Last Will and Testament of Eleanor Hartwell", "will_type": "LastWillAndTestament",
					"governing_state": "CA", "will_creation_date": "2016-03-01",
					"testator": []string{"hw-eleanor"}, "executor": []string{"hw-james", "hw-olivia"},
				},
				{
					"type": "Will", "external_id": "hw-will-james",
					"legal_name": "Pour-Over Will of James Hartwell", "will_type": "PourOverWill",
					"governing_state": "CA", "will_creation_date": "2016-03-01",
					"testator": []string{"hw-james"}, "executor": []string{"hw-eleanor"},
				},
				{
					"type": "Class", "external_id": "hw-grandchildren",
					"legal_name": "Grandchildren of Eleanor and James Hartwell",
					"notes":      "Education gifts; Grace receives three fifths until Leo turns 18.",
					"current_parties": map[string]any{
						"is_distributed_evenly": false,
						"share_amount":          "$250,000",
						"parties": []map[string]any{
							{"contact_id": "hw-grace", "distribution_percentage": 60, "fraction": map[string]any{"numerator": 3, "denominator": 5}},
							{"contact_id": "hw-leo", "fraction": map[string]any{"numerator": 2, "denominator": 5}},
						},
					},
				},
			},
			documents: []demoDocument{
				{body: map[string]any{
					"name": "Hartwell Family Trust Agreement", "extension": ".pdf",
					"description": "Restated trust agreement with the 2021 amendment.",
					"category":    "estate_planning", "sub_category": "revocable_trusts_and_supporting_documents",
					"tags": []string{"current", "reviewed"},
				}, file: demoPDF("Hartwell Family Trust Agreement")},
				{body: map[string]any{
					"name": "Pour-Over Will - James Hartwell", "extension": ".pdf",
					"category": "estate_planning", "sub_category": "revocable_trusts_and_supporting_documents",
					"type": "pour_over_will", "tags": []string{"current", "not-signed"},
				}},
				{body: map[string]any{
					"name": "ILIT Agreement", "extension": ".pdf",
					"category": "estate_planning", "sub_category": "irrevocable_trusts", "type": "ilit",
					"tags": []string{"funded", "trustee-copy"},
				}, file: demoPDF("James Hartwell Irrevocable Life Insurance Trust")},
				{body: map[string]any{
					"name": "2025 Form 1040", "extension": ".pdf",
					"category": "taxes", "sub_category": "tax_return_1040", "tags": []string{"needs-review"},
				}},
				{body: map[string]any{
					"name": "Brokerage positions Q3", "extension": ".csv",
					"category": "assets", "sub_category": "investments",
					"tags": []string{"snapshot-report", "annual-review"},
				}, file: []byte("symbol,quantity,market_value\nVTI,1200,342000.00\nBND,800,58400.00\nAAPL,150,34500.00\n")},
				{body: map[string]any{
					"name": "Eleanor passport", "extension": ".png",
					"description": "Scan of the photo page, renewed 2024.",
					"category":    "personal_information", "sub_category": "passport",
				}, file: demoPNG()},
				{body: map[string]any{
					"name": "Hartwell Holdings operating agreement", "extension": ".docx",
					"category": "estate_planning", "sub_category": "llc_operating_agreement",
					"tags": []string{"trustee-copy"},
				}},
				{body: map[string]any{
					"name": "Family office report 2026", "extension": ".xlsx",
					"category": "estate_planning", "sub_category": "presentation_materials",
					"tags": []string{"family-office-report", "ready-to-publish"},
				}},
			},
		},
		{
			externalID: "OKAFOR-002",
			name:       "Okafor Family",
			contacts: []map[string]any{
				{"type": "Individual", "external_id": "ok-ada", "first_name": "Ada", "last_name": "Okafor"},
				{"type": "Individual", "external_id": "ok-chidi", "first_name": "Chidi", "last_name": "Okafor"},
				{
					"type": "Trust", "external_id": "ok-trust",
					"legal_name": "Ada Okafor Revocable Trust", "trust_type": "IndividualRevocableTrust",
					"trust_creator": []string{"ok-ada"}, "initial_trustee": []string{"ok-ada", "ok-chidi"},
					"governing_state": "NY",
				},
			},
			documents: []demoDocument{
				{body: map[string]any{
					"name": "2025 Form 1099-DIV", "extension": "pdf",
					"category": "taxes", "sub_category": "1099", "tags": []string{"current"},
				}, file: demoPDF("2025 Form 1099-DIV")},
			},
		},
		{
			externalID: "NGUYEN-003",
			name:       "Nguyen Household",
			contacts: []map[string]any{
				{"type": "Individual", "external_id": "ng-linh", "first_name": "Linh", "last_name": "Nguyen"},
			},
		},
	}
}

func demoClients() []demoClient {
	return []demoClient{{
		externalID: "CL-1001",
		contacts: []map[string]any{
			{"type": "Individual", "external_id": "cl-marcus", "first_name": "Marcus", "last_name": "Bell", "dob": "1968-04-22"},
			{"type": "Individual", "external_id": "cl-dana", "first_name": "Dana", "last_name": "Bell", "dob": "1970-09-13"},
			{
				"type": "Will", "external_id": "cl-will-marcus",
				"legal_name": "Last Will and Testament of Marcus Bell", "will_type": "LastWillAndTestament",
				"testator": []string{"cl-marcus"}, "executor": []string{"cl-dana"},
			},
		},
	}}
}

// secondFirmDemo is the second firm's demo data: one family with a document and its file, and
// one client of the firm's advisor.
func secondFirmDemo() demoData {
	return demoData{
		families: []demoFamily{{
			externalID: SecondFamilyExternalID,
			name:       "Castellano Family",
			customTags: []string{"board-review"},
			contacts: []map[string]any{
				{"type": "Individual", "external_id": "cs-marco", "first_name": "Marco", "last_name": "Castellano"},
				{"type": "Individual", "external_id": "cs-lucia", "first_name": "Lucia", "last_name": "Castellano"},
				{"type": "Individual", "external_id": "cs-sofia", "first_name": "Sofia", "last_name": "Castellano"},
				{
					"type": "Trust", "external_id": "cs-trust",
					"legal_name": "Castellano Family Revocable Trust", "trust_type": "JointRevocableTrust",
					"trust_creator": []string{"cs-marco", "cs-lucia"}, "initial_trustee": []string{"cs-marco", "cs-lucia"},
					"governing_state": "IL", "trust_creation_date": "2018-09-20",
				},
			},
			documents: []demoDocument{{
				body: map[string]any{
					"name": "Castellano Family Trust Agreement", "extension": ".pdf",
					"category": "estate_planning", "sub_category": "revocable_trusts_and_supporting_documents",
					"tags": []string{"current", "board-review"},
				},
				file: demoPDF("Castellano Family Trust Agreement"),
			}},
		}},
		clients: []demoClient{{
			externalID: "CL-2001",
			contacts: []map[string]any{
				{"type": "Individual", "external_id": "cl-ines", "first_name": "Ines", "last_name": "Moreau", "dob": "1975-02-11"},
			},
		}},
	}
}

// SecondFamilyExternalID is the external id of the second default firm's demo family.
const SecondFamilyExternalID = "CASTELLANO-201"

// loadDemo fills the firm's empty store with demo data, through the same checks as requests.
func (t *Tenant) loadDemo(demo demoData) error {
	for _, fam := range demo.families {
		info, err := t.createTopAccount(mustJSON(map[string]any{"external_id": fam.externalID, "name": fam.name}))
		if err != nil {
			return fmt.Errorf("top account %s: %s", fam.externalID, err.Message)
		}
		t.store.byWID[info.WID].customTags = fam.customTags
		scope := t.topAccountScope(info.WID)
		for _, c := range fam.contacts {
			if _, err := t.createContact(scope, mustJSON(c)); err != nil {
				return fmt.Errorf("contact %s of %s: %s", c["external_id"], fam.externalID, err.Message)
			}
		}
		for _, doc := range fam.documents {
			d, err := t.createDocument(info.WID, mustJSON(doc.body))
			if err != nil {
				return fmt.Errorf("document %s of %s: %s", doc.body["name"], fam.externalID, err.Message)
			}
			if doc.file != nil {
				if err := t.putDemoFile(d, doc.file); err != nil {
					return err
				}
			}
		}
	}
	for _, dc := range demo.clients {
		wid, err := t.AddClient(Client{ExternalID: dc.externalID, AdvisorID: t.firm.AdvisorID, TeamID: t.firm.TeamID})
		if err != nil {
			return err
		}
		scope := contactScope{spec: advisorspec.ClientScope, ref: wid}
		for _, c := range dc.contacts {
			if _, err := t.createContact(scope, mustJSON(c)); err != nil {
				return fmt.Errorf("contact %s of client %s: %s", c["external_id"], dc.externalID, err.Message)
			}
		}
	}
	return nil
}

// putDemoFile stores a demo document's file as if it had been uploaded.
func (t *Tenant) putDemoFile(d *document, data []byte) error {
	if err := t.files.write(d.VaultID, data); err != nil {
		return fmt.Errorf("file of demo document %s: %w", d.Name, err)
	}
	updated := *d
	updated.Uploaded, updated.Size, updated.ReadyAt = true, int64(len(data)), t.opts.Now()
	t.store.byWID[d.WID].documents[d.VaultID] = &updated
	return nil
}

func mustJSON(v any) []byte {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err) // the demo data is literal maps of strings and numbers
	}
	return b
}

// demoPDF returns a one-page PDF that shows title.
func demoPDF(title string) []byte {
	content := fmt.Sprintf("BT /F1 18 Tf 72 720 Td (%s) Tj ET", title)
	objects := []string{
		"<< /Type /Catalog /Pages 2 0 R >>",
		"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
		"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents 4 0 R /Resources << /Font << /F1 5 0 R >> >> >>",
		fmt.Sprintf("<< /Length %d >>\nstream\n%s\nendstream", len(content), content),
		"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>",
	}
	var b bytes.Buffer
	b.WriteString("%PDF-1.4\n")
	offsets := make([]int, len(objects))
	for i, obj := range objects {
		offsets[i] = b.Len()
		fmt.Fprintf(&b, "%d 0 obj\n%s\nendobj\n", i+1, obj)
	}
	xref := b.Len()
	fmt.Fprintf(&b, "xref\n0 %d\n0000000000 65535 f \n", len(objects)+1)
	for _, off := range offsets {
		fmt.Fprintf(&b, "%010d 00000 n \n", off)
	}
	fmt.Fprintf(&b, "trailer\n<< /Size %d /Root 1 0 R >>\nstartxref\n%d\n%%%%EOF\n", len(objects)+1, xref)
	return b.Bytes()
}

// demoPNG returns a small placeholder image.
func demoPNG() []byte {
	img := image.NewRGBA(image.Rect(0, 0, 64, 40))
	for y := range 40 {
		for x := range 64 {
			img.Set(x, y, color.RGBA{R: 30, G: uint8(60 + 2*y), B: uint8(120 + x), A: 255})
		}
	}
	var b bytes.Buffer
	_ = png.Encode(&b, img) // writing to memory cannot fail
	return b.Bytes()
}

// DemoFamilyExternalID is the external id of the demo family the gateway's start-up links to.
const DemoFamilyExternalID = "HARTWELL-001"

// TopAccountWID is the wid of the firm's top account with externalID, if there is one.
func (t *Tenant) TopAccountWID(externalID string) (string, bool) {
	t.store.mu.RLock()
	defer t.store.mu.RUnlock()
	for _, ta := range t.store.topAccounts {
		if ta.info.ExternalID == externalID {
			return ta.info.WID, true
		}
	}
	return "", false
}
