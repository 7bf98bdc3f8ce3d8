package bulk_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/advisorhq/gateway/internal/advisorspec"
	"github.com/advisorhq/gateway/internal/bulk"
	"github.com/advisorhq/gateway/internal/bulkfile"
)

// existing is the service's records as a test sets them, counting the questions that cost the
// service a request: a card is answered from its owner's lookup.
type existing struct {
	ids   map[string]bool // "client:C-9", "card:C-9/P-7" (a card of client C-9), ...
	asked int
	fail  error
	// refusal is why the service would refuse a Clients file whole ("" when it would not).
	refusal string
}

func (e *existing) Card(_ context.Context, owner advisorspec.RowRef, id string) (advisorspec.ContactType, bool, error) {
	if e.fail != nil {
		return "", false, e.fail
	}
	if e.ids[advisorspec.RefCard.String()+":"+owner.ID+"/"+id] {
		return advisorspec.Individual, true, nil
	}
	return "", false, nil
}

func (e *existing) ClientsRefusal(context.Context) (string, error) {
	return e.refusal, e.fail
}

func (e *existing) Exists(_ context.Context, kind advisorspec.RefKind, id string) (bool, error) {
	e.asked++
	if e.fail != nil {
		return false, e.fail
	}
	return e.ids[kind.String()+":"+id], nil
}

func sample(t *testing.T, name string) []byte {
	t.Helper()
	data, err := os.ReadFile("../../docs/examples/bulk/" + name)
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// trustNaming is a People row: trust T-9 of client, created by the card id.
func trustNaming(client, id string) string {
	return fmt.Sprintf(`{"type":"Trust","id":"T-9","client_id":%q,"legal_name":"T","trust_type":"DynastyTrust","trust_creator":%q}`, client, id)
}

func TestValidateChecksBothFilesAndTheirReferences(t *testing.T) {
	t.Parallel()
	clients, people := sample(t, "clients.jsonl"), sample(t, "people.jsonl")
	clientKind, cardKind := advisorspec.RefClient.String(), advisorspec.RefCard.String()
	for _, tc := range []struct {
		name            string
		clients, people string
		existing        map[string]bool
		valid           bool
		want            string // in the People file's errors or file error
	}{
		{"the README's sample files", string(clients), string(people), nil, true, ""},
		{"people of an existing client", "", `{"type":"Individual","id":"P-9","client_id":"C-9","first_name":"A","last_name":"B"}`,
			map[string]bool{clientKind + ":C-9": true}, true, ""},
		{"people of an unknown client", "", `{"type":"Individual","id":"P-9","client_id":"C-404","first_name":"A","last_name":"B"}`,
			nil, false, "C-404"},
		{"an empty People file", string(clients), "\n\n", nil, false, bulkfile.ErrEmpty.Error()},
		{"a card of the row's own client", "", trustNaming("C-9", "P-7"),
			map[string]bool{clientKind + ":C-9": true, cardKind + ":C-9/P-7": true}, true, ""},
		{"a card of another client", "", trustNaming("C-8", "P-7"),
			map[string]bool{clientKind + ":C-8": true, clientKind + ":C-9": true, cardKind + ":C-9/P-7": true}, false,
			`trust_creator "P-7" names no row of this file and no existing card`},
		{"a row that would make an existing person a trust", "", strings.Replace(trustNaming("C-9", "P-6"), `"id":"T-9"`, `"id":"P-7"`, 1),
			map[string]bool{clientKind + ":C-9": true, cardKind + ":C-9/P-6": true, cardKind + ":C-9/P-7": true}, false,
			`id "P-7" names a Individual card; a row cannot change a card's type`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			in := bulk.Input{Model: advisorspec.ClientModel}
			if tc.clients != "" {
				in.Clients = strings.NewReader(tc.clients)
			}
			in.People = strings.NewReader(tc.people)
			rep, err := bulk.Validate(context.Background(), in, &existing{ids: tc.existing}, bulk.Options{})
			if err != nil {
				t.Fatal(err)
			}
			if rep.Valid() != tc.valid {
				t.Fatalf("valid %v, want %v: %+v", rep.Valid(), tc.valid, rep.People)
			}
			if tc.want != "" && !strings.Contains(fmt.Sprint(rep.People.Errors, rep.People.FileError), tc.want) {
				t.Fatalf("the People file's report %+v does not mention %q", rep.People, tc.want)
			}
		})
	}
}

// Each existing record is asked about once, however many rows name it; a failure to ask ends
// validation with an error that says what was looked up; too many lookups are refused.
func TestValidateAsksTheServiceOncePerRecordAndWithinBounds(t *testing.T) {
	t.Parallel()
	var people bytes.Buffer
	for i := range 50 {
		fmt.Fprintf(&people, `{"type":"Individual","id":"P-%d","client_id":"C-%d","first_name":"A","last_name":"B"}`+"\n", i, i%5)
	}
	ids := map[string]bool{}
	for i := range 5 {
		ids[fmt.Sprintf("%s:C-%d", advisorspec.RefClient, i)] = true
	}
	ex := &existing{ids: ids}
	rep, err := bulk.Validate(context.Background(), bulk.Input{People: bytes.NewReader(people.Bytes())}, ex, bulk.Options{})
	if err != nil || !rep.Valid() || ex.asked != 5 {
		t.Fatalf("valid %v, err %v, asked %d times, want once for each of 5 clients", rep.Valid(), err, ex.asked)
	}

	ex = &existing{fail: errors.New("the service is down")}
	_, err = bulk.Validate(context.Background(), bulk.Input{People: bytes.NewReader(people.Bytes())}, ex, bulk.Options{})
	if err == nil || !strings.Contains(err.Error(), `"C-0"`) || !strings.Contains(err.Error(), "the service is down") {
		t.Fatalf("a failing lookup: %v, want an error naming the id and the cause", err)
	}

	_, err = bulk.Validate(context.Background(), bulk.Input{People: bytes.NewReader(people.Bytes())}, &existing{ids: ids}, bulk.Options{MaxLookups: 3})
	if !errors.Is(err, bulk.ErrTooManyLookups) {
		t.Fatalf("more lookups than allowed: %v, want ErrTooManyLookups", err)
	}
}

func TestValidateWritesTheValidRowsAndReportsProgress(t *testing.T) {
	t.Parallel()
	people := `{"type":"Individual","id":"P-1","client_id":"C-1","first_name":"A","last_name":"B"}
{"type":"Individual","id":"P-2","client_id":"C-1","first_name":"A"}
`
	var valid bytes.Buffer
	var kinds []string
	rep, err := bulk.Validate(context.Background(), bulk.Input{
		Clients: strings.NewReader(`{"id":"C-1","first_name":"A","last_name":"B"}`),
		People:  strings.NewReader(people),
	}, nil, bulk.Options{ValidPeople: &valid, Progress: func(kind string, _ bulkfile.Progress) { kinds = append(kinds, kind) }})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Valid() || rep.People.InvalidRows != 1 || rep.People.Errors[0].Line != 2 {
		t.Fatalf("report %+v, want line 2 invalid", rep.People)
	}
	if strings.Count(valid.String(), "\n") != 1 || !strings.Contains(valid.String(), `"P-1"`) {
		t.Fatalf("valid rows %q, want P-1's alone", valid.String())
	}
	if strings.Join(kinds, ",") != "clients,people" {
		t.Fatalf("progress heard of %v, want clients then people", kinds)
	}
	if _, err := bulk.Validate(context.Background(), bulk.Input{}, nil, bulk.Options{}); err == nil {
		t.Fatal("validating no file succeeded")
	}
}

// "An API user with access to several advisors or teams supplies advisor_id and team_id", and a
// Clients file has no field for either: when the service says its API user reaches several,
// the Clients file is invalid as a whole, saying why and what to do instead, and none of its
// rows is kept to send; the People file is checked as before.
func TestValidateRefusesAClientsFileTheServiceWouldRefuseWhole(t *testing.T) {
	t.Parallel()
	const why = "advisorId is required when the API user can access multiple advisors"
	var valid bytes.Buffer
	rep, err := bulk.Validate(context.Background(), bulk.Input{
		Clients: strings.NewReader(`{"id":"C-1","first_name":"A","last_name":"B"}` + "\n"),
		People:  strings.NewReader(`{"type":"Individual","id":"P-1","client_id":"C-1","first_name":"A","last_name":"B"}` + "\n"),
	}, &existing{refusal: why}, bulk.Options{ValidClients: &valid})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Valid() || !rep.ServiceRefuses() || !rep.Clients.ServiceRefuses {
		t.Fatalf("valid %v, refused %v; want a load the service would refuse", rep.Valid(), rep.ServiceRefuses())
	}
	if !strings.HasPrefix(rep.Clients.FileError, why) || !strings.Contains(rep.Clients.FileError, "addClient") {
		t.Errorf("file error %q, want the service's reason and addClient", rep.Clients.FileError)
	}
	if valid.Len() != 0 {
		t.Errorf("valid Clients rows %q kept to send, want none", valid.String())
	}
	if !rep.People.Valid() {
		t.Errorf("People file %+v, want valid", rep.People)
	}

	// A People file alone is not asked about: its rows name clients, each of one advisor.
	ex := &existing{refusal: why, ids: map[string]bool{advisorspec.RefClient.String() + ":C-1": true}}
	rep, err = bulk.Validate(context.Background(), bulk.Input{
		People: strings.NewReader(`{"type":"Individual","id":"P-1","client_id":"C-1","first_name":"A","last_name":"B"}` + "\n"),
	}, ex, bulk.Options{})
	if err != nil || !rep.Valid() || rep.ServiceRefuses() {
		t.Fatalf("a People file alone: valid %v, err %v; want valid", rep.Valid(), err)
	}
}
