package advisor

import (
	"encoding/json"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/advisorhq/gateway/internal/advisorspec"
)

// The answers decode reads itself, as the specification shapes them: List Contacts' "`contacts`
// array of contact responses", Get Contact's "contact response", and Get Top Account's "wid,
// external_id, name".
var decodeCases = []struct{ name, body string }{
	{"a top account: wid, external_id, name", `{"wid":"W1","external_id":"E1","name":"Ann & Bo"}`},
	{"a top account with a field of a later version", `{"wid":"W1","name":"N","created":{"at":[1,2.5e3,true,null,"x\"y"]},"external_id":"E"}`},
	{"a top account whose name has escapes", `{"wid":"W1","external_id":"E1","name":"Zo\u00eb \"Z\" \ud83d\ude00 \ud800 \/"}`},
	{"a top account whose name is not UTF-8", "{\"wid\":\"W1\",\"name\":\"bad \xff byte\"}"},
	{"a top account keyed in another case", `{"WID":"W1","external_id":"E1","name":"N"}`},
	{"a top account keyed in another case after the exact key", `{"wid":"W1","Wid":"W2"}`},
	{"a top account keyed twice", `{"wid":"W1","wid":"W2"}`},
	{"a top account with a number for a name", `{"wid":"W1","name":5}`},
	{"a top account with null for a name", `{"wid":"W1","name":null}`},
	{"a top account with a Kelvin sign in a key", "{\"wid\":\"W1\",\"\u212aey\":1}"},
	{"a top account, then more", `{"wid":"W1"} {}`},
	{"a top account cut short", `{"wid":"W1"`},
	{"null", `null`},
	{"an array", `[]`},
	{"whitespace around", " \n\t{ \"wid\" : \"W1\" ,\r\n \"name\":\"N\" } \n"},
	{"a raw control character in a string", "{\"wid\":\"W\x01\"}"},
	{"a bad escape", `{"wid":"W\x"}`},
	{"an unknown value with a bad escape", `{"x":"\q","wid":"W"}`},
	{"an unknown value that is no JSON", `{"x":tru,"wid":"W"}`},
	{"a number JSON does not allow", `{"x":01,"wid":"W"}`},
	{"a contact list: `contacts` array of contact responses", `{"contacts":[
		{"id":"1","external_id":"c1","type":"Individual","first_name":"Ann","last_name":"Lee","dob":"1970-01-02"},
		{"id":"2","external_id":"t1","type":"Trust","legal_name":"Lee Trust","trust_type":"Revocable","trust_creator":["c1"],"initial_trustee":[],"governing_state":"CA","trust_creation_date":"2001-02-03"},
		{"id":"3","external_id":"e1","type":"Entity","legal_name":"Lee LLC","incorporation_state":"NY","incorporation_form":"LLC","ownership":[{"percentage":50,"owner_id":"c1"},{"percentage":49.5,"subowners":["c1","t1"]}]},
		{"id":"4","external_id":"h1","type":"Charity","legal_name":"Lee Fund","ein":123456789,"city":"Boston","state":"MA","address_formatted":"1 Main St","notes":"n"},
		{"id":"5","external_id":"w1","type":"Will","legal_name":"Lee Will","will_type":"Simple","will_creation_date":"2010-01-01","governing_state":"CA","testator":["c1"],"executor":["c1","t1"]},
		{"id":"6","external_id":"k1","type":"Class","legal_name":"Kids","notes":"x","current_parties":{"is_distributed_evenly":false,"share_amount":"1/2","parties":[{"contact_id":"c1","distribution_percentage":25},{"contact_id":"t1","fraction":{"numerator":1,"denominator":3}}]}}
	]}`},
	{"an empty contact list", `{"contacts":[]}`},
	{"a contact whose first reference list is empty", `{"contacts":[{"id":"1","testator":[],"executor":["a"]},{"id":"2","testator":["b","c"],"executor":[]}]}`},
	{"a null contact list", `{"contacts":null}`},
	{"a contact list with a null contact", `{"contacts":[null]}`},
	{"a contact list with a contact that is no object", `{"contacts":[1]}`},
	{"a contact with null fields", `{"contacts":[{"id":"1","first_name":null,"trust_creator":null,"ownership":null,"ein":null,"current_parties":null}]}`},
	{"a contact with an ein that is no integer", `{"contacts":[{"id":"1","ein":1.5}]}`},
	{"a contact with an ein out of range", `{"contacts":[{"id":"1","ein":99999999999999999999}]}`},
	{"a contact with a percentage out of range", `{"contacts":[{"id":"1","ownership":[{"percentage":1e400}]}]}`},
	{"a contact with a null in a reference list", `{"contacts":[{"id":"1","testator":[null]}]}`},
	{"a contact with a null percentage and fraction parts", `{"contacts":[{"id":"1","ownership":[{"percentage":null}],"current_parties":{"is_distributed_evenly":null,"parties":[{"contact_id":"a","distribution_percentage":null,"fraction":{"numerator":null,"denominator":2}}]}}]}`},
	{"a contact with current parties keyed twice", `{"contacts":[{"id":"1","current_parties":{"share_amount":"a"},"current_parties":{"parties":[]}}]}`},
	{"a contact with a key in another case", `{"contacts":[{"id":"1","First_Name":"A"}]}`},
	{"a contact with a string for a boolean", `{"contacts":[{"id":"1","current_parties":{"is_distributed_evenly":"yes"}}]}`},
	{"a contact with names beyond ASCII", `{"contacts":[{"id":"1","first_name":"Zoë","last_name":"Åström 李"}]}`},
	{"a contact list with trailing comma", `{"contacts":[{"id":"1"},]}`},
	{"one contact: contact response", `{"id":"1","external_id":"c1","type":"Individual","first_name":"A"}`},
	{"one contact with a number for its id", `{"id":1}`},
}

// decodeDiff decodes body into each of the three answers with decode and with encoding/json,
// and reports the first difference.
func decodeDiff(body []byte) string {
	for _, pair := range [][2]any{
		{new(advisorspec.TopAccount), new(advisorspec.TopAccount)},
		{new(advisorspec.ContactList), new(advisorspec.ContactList)},
		{new(advisorspec.Contact), new(advisorspec.Contact)},
	} {
		got, want := pair[0], pair[1]
		gotErr, wantErr := decode(body, got), json.Unmarshal(body, want)
		if fmt.Sprint(gotErr) != fmt.Sprint(wantErr) {
			return fmt.Sprintf("%T: error %v, want %v", got, gotErr, wantErr)
		}
		if !reflect.DeepEqual(got, want) {
			g, _ := json.Marshal(got)
			w, _ := json.Marshal(want)
			return fmt.Sprintf("%T: got %s, want %s", got, g, w)
		}
	}
	// A lent list is the list decode reads, handed to use, with the same error.
	var want advisorspec.ContactList
	wantErr := json.Unmarshal(body, &want)
	lent, err := lentCopy(body)
	if fmt.Sprint(err) != fmt.Sprint(wantErr) {
		return fmt.Sprintf("a lent contact list: error %v, want %v", err, wantErr)
	}
	if wantErr == nil && !reflect.DeepEqual(lent, want.Contacts) {
		g, _ := json.Marshal(lent)
		w, _ := json.Marshal(want.Contacts)
		return fmt.Sprintf("a lent contact list: got %s, want %s", g, w)
	}
	return ""
}

// lentCopy is what use keeps of a contact list lent to it: a copy of the list, pointing at
// what its contacts hold.
func lentCopy(body []byte) ([]advisorspec.Contact, error) {
	var kept []advisorspec.Contact
	loan := contactLoan{use: func(list []advisorspec.Contact) error {
		kept = slices.Clone(list)
		return nil
	}}
	err := decode(body, &loan)
	return kept, err
}

func TestDecodeReadsAnswersAsEncodingJSONDoes(t *testing.T) {
	for _, tc := range decodeCases {
		t.Run(tc.name, func(t *testing.T) {
			if diff := decodeDiff([]byte(tc.body)); diff != "" {
				t.Error(diff)
			}
		})
	}
}

func FuzzDecodeReadsAnswersAsEncodingJSONDoes(f *testing.F) {
	for _, tc := range decodeCases {
		f.Add([]byte(tc.body))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		if diff := decodeDiff(body); diff != "" {
			t.Error(diff)
		}
	})
}

// A family query's contact list is read with allocations per answer, not per string or per
// contact: the names and ids of the "`contacts` array of contact responses" share the bytes of
// the answer, and the shares, parties, percentages, fractions and EINs a few arrays.
func TestDecodeOfAContactListAllocatesPerAnswerNotPerString(t *testing.T) {
	const n = 200
	for _, tc := range []struct{ name, contact string }{
		{"individuals", `{"id":"%d","external_id":"c%[1]d","type":"Individual","first_name":"First %[1]d","middle_name":"M","last_name":"Last %[1]d"}`},
		{"entities, classes and charities", `{"id":"%d","type":"Entity","legal_name":"E","ownership":[{"percentage":50,"owner_id":"a"},{"percentage":50,"subowners":["a","b"]}]},` +
			`{"id":"k%[1]d","type":"Class","current_parties":{"is_distributed_evenly":true,"parties":[{"contact_id":"a","distribution_percentage":50},{"contact_id":"b","fraction":{"numerator":1,"denominator":2}}]}},` +
			`{"id":"h%[1]d","type":"Charity","legal_name":"C","ein":%[1]d}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var b strings.Builder
			b.WriteString(`{"contacts":[`)
			for i := range n {
				if i > 0 {
					b.WriteByte(',')
				}
				fmt.Fprintf(&b, tc.contact, i)
			}
			b.WriteString(`]}`)
			body := []byte(b.String())
			contacts := 0
			allocs := testing.AllocsPerRun(20, func() {
				var l advisorspec.ContactList
				if err := decode(body, &l); err != nil || len(l.Contacts) < n {
					t.Fatalf("decode: %v, %d contacts", err, len(l.Contacts))
				}
				contacts = len(l.Contacts)
			})
			// The answer's copy, the list at its expected size, and the rest in chunks that
			// double; encoding/json made 6 allocations an individual and 10 an entity, and
			// this decoder, before its chunks, 3 a contact of the three kinds.
			if max := float64(contacts) / 8; allocs > max {
				t.Errorf("decoding %d contacts made %.0f allocations, want at most %.0f", contacts, allocs, max)
			}
		})
	}
}

// The contacts of a list are read into a scratch the next list reuses: what a list holds once
// read is its own, and lists of every length, those the scratch grows for too, read whole.
func TestAContactListReadIsNotChangedByTheNextOneRead(t *testing.T) {
	list := func(n int, name string) []byte {
		var b strings.Builder
		b.WriteString(`{"contacts":[`)
		for i := range n {
			if i > 0 {
				b.WriteByte(',')
			}
			fmt.Fprintf(&b, `{"id":"%s%d","type":"Individual","first_name":%q}`, name, i, name)
		}
		b.WriteString(`]}`)
		return []byte(b.String())
	}
	// Read in turn, copied and lent: a lent list's array is the next one's, and what its
	// contacts hold is not.
	var read []advisorspec.ContactList
	for i, tc := range []struct {
		n    int
		name string
	}{{3, "a"}, {0, "b"}, {maxScratchContacts + 1, "c"}, {5, "d"}, {1, "e"}, {4, "f"}, {2, "g"}} {
		var l advisorspec.ContactList
		var err error
		if i%2 == 0 {
			err = decode(list(tc.n, tc.name), &l)
		} else {
			l.Contacts, err = lentCopy(list(tc.n, tc.name))
		}
		if err != nil {
			t.Fatalf("%d contacts: %v", tc.n, err)
		}
		read = append(read, l)
	}
	for k, l := range read {
		name := string(rune('a' + k))
		for i, c := range l.Contacts {
			if c.ID != fmt.Sprintf("%s%d", name, i) || c.FirstName == nil || *c.FirstName != name {
				t.Fatalf("list %s, contact %d: %+v, once the lists after it were read", name, i, c)
			}
		}
	}
}

// A list lent from a scratch the pool has just made, which holds no array yet, is still the
// empty list the answer's [] is, not null (under -race the pool makes one at random).
func TestAnEmptyListLentFromANewScratchIsEmptyNotNull(t *testing.T) {
	for range 1000 { // take what the pool holds, until it makes a new one
		if s := contactScratch.Get().(*[]advisorspec.Contact); *s == nil {
			contactScratch.Put(s)
			break
		}
	}
	lent, err := lentCopy([]byte(`{"contacts":[]}`))
	if err != nil || lent == nil || len(lent) != 0 {
		t.Errorf("got %#v, %v; want an empty list, not null", lent, err)
	}
}
