package family_test

import (
	"context"
	"testing"

	"github.com/advisorhq/gateway/internal/advisor"
	"github.com/advisorhq/gateway/internal/advisorspec"
	"github.com/advisorhq/gateway/internal/family"
)

// bodyAPI records each write's body as it would go upstream, with the scope it went to.
type bodyAPI struct {
	fakeAPI
	sent []string
}

func (f *bodyAPI) CreateContact(_ context.Context, _ string, body []byte) (string, error) {
	f.sent = append(f.sent, "v2 "+string(body))
	return "c1", nil
}

func (f *bodyAPI) UpdateContact(_ context.Context, _, id string, body []byte) (string, error) {
	f.sent = append(f.sent, "v2 "+string(body))
	return id, nil
}

func (f *bodyAPI) CreateClientContact(_ context.Context, _ advisor.ClientRef, body []byte) (string, error) {
	f.sent = append(f.sent, "v1 "+string(body))
	return "c1", nil
}

func (f *bodyAPI) UpdateClientContact(_ context.Context, _ advisor.ClientRef, id string, body []byte) (string, error) {
	f.sent = append(f.sent, "v1 "+string(body))
	return id, nil
}

func (f *bodyAPI) ClientContact(ctx context.Context, _ advisor.ClientRef, id string) (advisorspec.Contact, error) {
	return f.fakeAPI.Contact(ctx, "", id)
}

// The bytes of each body the service is sent, exactly: which fields, in which order, which are
// left out and which are sent empty. A change in how inputs are encoded shows here first.
func TestContactBodiesAreSentByteForByte(t *testing.T) {
	t.Parallel()
	s := func(v string) *string { return &v }
	yes, no := true, false
	pct, ein := 12.5, "12-3456789"
	trustType, form, willType := family.TrustType("DynastyTrust"), family.IncorporationForm("CCorporation"), family.WillType("PourOverWill")
	client := family.OfClient(advisor.ClientRef{Ref: "ext-1"})
	top := family.OfTopAccount("w")
	for _, tc := range []struct {
		name  string
		owner family.Owner
		in    *family.ContactInput
		patch *family.ContactPatch
		want  string
	}{
		{"an individual, every field", client, &family.ContactInput{Individual: &family.IndividualInput{ExternalID: "i", FirstName: s("Ann"),
			MiddleName: s("B"), LastName: s("Lee"), Dob: s("1980-01-02")}}, nil,
			`v1 {"type":"Individual","external_id":"i","first_name":"Ann","middle_name":"B","last_name":"Lee","dob":"1980-01-02"}`},
		{"an individual, only its external id", top, &family.ContactInput{Individual: &family.IndividualInput{ExternalID: "i"}}, nil,
			`v2 {"type":"Individual","external_id":"i"}`},
		{"a trust, every field", top, &family.ContactInput{Trust: &family.TrustInput{ExternalID: "t", LegalName: "T", TrustType: &trustType,
			TrustCreators: strs("a", "b"), InitialTrustees: strs("c"), GoverningState: s("CA"), TrustCreationDate: s("2001-02-03")}}, nil,
			`v2 {"type":"Trust","external_id":"t","legal_name":"T","trust_type":"DynastyTrust","trust_creator":["a","b"],"initial_trustee":["c"],"governing_state":"CA","trust_creation_date":"2001-02-03"}`},
		{"a trust whose role lists are empty", top, &family.ContactInput{Trust: &family.TrustInput{ExternalID: "t", LegalName: "T",
			TrustCreators: []string{}, InitialTrustees: []string{}}}, nil,
			`v2 {"type":"Trust","external_id":"t","legal_name":"T","trust_creator":[],"initial_trustee":[]}`},
		{"an entity, every field", top, &family.ContactInput{Entity: &family.EntityInput{ExternalID: "e", LegalName: "E",
			IncorporationState: s("DE"), IncorporationForm: &form, Ownership: []*family.OwnershipInput{
				{Percentage: 60, Owners: strs("a")}, {Percentage: 30, Owners: strs("b", "c")}, {Percentage: 10, Owners: strs("d"), Joint: &yes},
				{Percentage: 0.5, Owners: strs("f"), Joint: &no}}}}, nil,
			`v2 {"type":"Entity","external_id":"e","legal_name":"E","incorporation_state":"DE","incorporation_form":"CCorporation","ownership":[{"percentage":60,"owner_id":"a"},{"percentage":30,"subowners":["b","c"]},{"percentage":10,"subowners":["d"]},{"percentage":0.5,"owner_id":"f"}]}`},
		{"an entity with no shares", top, &family.ContactInput{Entity: &family.EntityInput{ExternalID: "e", LegalName: "E",
			Ownership: []*family.OwnershipInput{}}}, nil,
			`v2 {"type":"Entity","external_id":"e","legal_name":"E","ownership":[]}`},
		{"a charity, every field", top, &family.ContactInput{Charity: &family.CharityInput{ExternalID: "h", LegalName: "H", Ein: &ein,
			City: "Austin", State: "TX", AddressFormatted: s("1 Main St"), Notes: s("n")}}, nil,
			`v2 {"type":"Charity","external_id":"h","legal_name":"H","ein":123456789,"city":"Austin","state":"TX","address_formatted":"1 Main St","notes":"n"}`},
		// The specification: "ein | integer"; the schema takes an EIN as it is written.
		{"a charity whose ein is its nine digits, the first 0", top, &family.ContactInput{Charity: &family.CharityInput{ExternalID: "h",
			LegalName: "H", Ein: s("012345678"), City: "Austin", State: "TX"}}, nil,
			`v2 {"type":"Charity","external_id":"h","legal_name":"H","ein":12345678,"city":"Austin","state":"TX"}`},
		{"a charity whose ein is an integer beyond 32 bits", top, &family.ContactInput{Charity: &family.CharityInput{ExternalID: "h",
			LegalName: "H", Ein: s("12345678901"), City: "Austin", State: "TX"}}, nil,
			`v2 {"type":"Charity","external_id":"h","legal_name":"H","ein":12345678901,"city":"Austin","state":"TX"}`},
		{"a charity, only what is required", top, &family.ContactInput{Charity: &family.CharityInput{ExternalID: "h", LegalName: "H",
			City: "Austin", State: "TX"}}, nil,
			`v2 {"type":"Charity","external_id":"h","legal_name":"H","city":"Austin","state":"TX"}`},
		{"a will, every field", top, &family.ContactInput{Will: &family.WillInput{ExternalID: "w", LegalName: "W", WillType: willType,
			GoverningState: s("NY"), WillCreationDate: s("2010-05-06"), Testators: strs("a"), Executors: strs("b", "c")}}, nil,
			`v2 {"type":"Will","external_id":"w","legal_name":"W","will_type":"PourOverWill","governing_state":"NY","will_creation_date":"2010-05-06","testator":["a"],"executor":["b","c"]}`},
		{"a class, every field", top, &family.ContactInput{Class: &family.ClassInput{ExternalID: "c", LegalName: "C", Notes: s("n"),
			CurrentParties: &family.ClassPartiesInput{IsDistributedEvenly: &no, ShareAmount: s("1/2"), Parties: []*family.ClassPartyInput{
				{Party: "a", DistributionPercentage: &pct}, {Party: "b", Fraction: &family.FractionInput{Numerator: 1, Denominator: 3}}, {Party: "d"},
				{Party: "e", Fraction: &family.FractionInput{Numerator: 5_000_000_000, Denominator: 9_007_199_254_740_993}}}}}}, nil,
			`v2 {"type":"Class","external_id":"c","legal_name":"C","notes":"n","current_parties":{"is_distributed_evenly":false,"share_amount":"1/2","parties":[{"contact_id":"a","distribution_percentage":12.5},{"contact_id":"b","fraction":{"numerator":1,"denominator":3}},{"contact_id":"d"},{"contact_id":"e","fraction":{"numerator":5000000000,"denominator":9007199254740993}}]}}`},
		{"a class with no parties", top, &family.ContactInput{Class: &family.ClassInput{ExternalID: "c", LegalName: "C",
			CurrentParties: &family.ClassPartiesInput{Parties: []*family.ClassPartyInput{}}}}, nil,
			`v2 {"type":"Class","external_id":"c","legal_name":"C","current_parties":{"parties":[]}}`},

		{"an individual's change, every field", client, nil, &family.ContactPatch{Individual: &family.IndividualPatch{FirstName: s("Ann"),
			MiddleName: s("M"), LastName: s("Lee"), Dob: s("1980-01-02")}},
			`v1 {"first_name":"Ann","middle_name":"M","last_name":"Lee","dob":"1980-01-02"}`},
		{"a trust's change, every field", top, nil, &family.ContactPatch{Trust: &family.TrustPatch{LegalName: s("T"), TrustType: &trustType,
			TrustCreators: []string{}, InitialTrustees: strs("c"), GoverningState: s("CA"), TrustCreationDate: s("2001-02-03")}},
			`v2 {"legal_name":"T","trust_type":"DynastyTrust","trust_creator":[],"initial_trustee":["c"],"governing_state":"CA","trust_creation_date":"2001-02-03"}`},
		{"a trust's change of its creators alone", top, nil, &family.ContactPatch{Trust: &family.TrustPatch{TrustCreators: strs("a")}},
			`v2 {"trust_creator":["a"]}`},
		{"an entity's change, every field", top, nil, &family.ContactPatch{Entity: &family.EntityPatch{LegalName: s("E"), IncorporationState: s("DE"),
			IncorporationForm: &form, Ownership: []*family.OwnershipInput{{Percentage: 100, Owners: strs("a", "b")}}}},
			`v2 {"legal_name":"E","incorporation_state":"DE","incorporation_form":"CCorporation","ownership":[{"percentage":100,"subowners":["a","b"]}]}`},
		{"a charity's change, every field", top, nil, &family.ContactPatch{Charity: &family.CharityPatch{LegalName: s("H"), Ein: &ein,
			City: s("Austin"), State: s("TX"), AddressFormatted: s("1 Main St"), Notes: s("m")}},
			`v2 {"legal_name":"H","ein":123456789,"city":"Austin","state":"TX","address_formatted":"1 Main St","notes":"m"}`},
		{"a will's change, every field", top, nil, &family.ContactPatch{Will: &family.WillPatch{LegalName: s("W"), WillType: &willType,
			GoverningState: s("NY"), WillCreationDate: s("2010-05-06"), Testators: strs("a"), Executors: []string{}}},
			`v2 {"legal_name":"W","will_type":"PourOverWill","governing_state":"NY","will_creation_date":"2010-05-06","testator":["a"],"executor":[]}`},
		{"a class's change, every field", top, nil, &family.ContactPatch{Class: &family.ClassPatch{LegalName: s("C"), Notes: s("n"),
			CurrentParties: &family.ClassPartiesInput{IsDistributedEvenly: &yes, Parties: []*family.ClassPartyInput{{Party: "a"}}}}},
			`v2 {"legal_name":"C","notes":"n","current_parties":{"is_distributed_evenly":true,"parties":[{"contact_id":"a"}]}}`},
		{"a class's change of its notes alone", top, nil, &family.ContactPatch{Class: &family.ClassPatch{Notes: s("n")}},
			`v2 {"notes":"n"}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			api := &bodyAPI{}
			svc := family.NewService(api)
			ctx := advisor.WithCache(context.Background())
			var err error
			if tc.in != nil {
				_, err = svc.CreateContact(ctx, tc.owner, *tc.in, false)
			} else {
				_, err = svc.UpdateContact(ctx, tc.owner, "c1", *tc.patch, false)
			}
			if err != nil {
				t.Fatal(err)
			}
			if len(api.sent) != 1 || api.sent[0] != tc.want {
				t.Errorf("sent %q\nwant %q", api.sent, tc.want)
			}
		})
	}
}
