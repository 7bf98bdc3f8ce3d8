package event_test

import (
	"bytes"
	"strings"
	"testing"

	"github.com/advisorhq/gateway/internal/advisorspec"
	"github.com/advisorhq/gateway/internal/event"
)

// record is what the receiver stores for body.
func record(t testing.TB, body string) []byte {
	t.Helper()
	w, err := advisorspec.ParseWebhook([]byte(body))
	if err != nil {
		t.Fatalf("got %v, want %s accepted", err, body)
	}
	return event.Record(w)
}

// A stored record decodes to the event its delivery parses to, for every type, and so does a
// delivery stored as it arrived (what gateways stored before records were canonical).
func TestDecodeReadsWhatParseReads(t *testing.T) {
	for _, typ := range event.Types {
		t.Run(string(typ), func(t *testing.T) {
			want := mustParse(t, bodies[typ])
			for _, tc := range []struct {
				name string
				rec  []byte
			}{
				{"a record", record(t, bodies[typ])},
				{"a delivery stored as it arrived", []byte(bodies[typ])},
			} {
				got, err := event.Decode(tc.rec)
				if err != nil {
					t.Fatalf("%s: got %v, want it decoded", tc.name, err)
				}
				if !sameEvent(got, want) {
					t.Errorf("%s:\n got  %s\n want %s", tc.name, dump(got), dump(want))
				}
			}
		})
	}
}

// A delivery stored as it arrived may spell things in ways a plain decoding would misread; it is
// checked as a delivery, so it reads as it did when it was stored.
func TestDecodeChecksADeliveryStoredAsItArrived(t *testing.T) {
	for _, tc := range []struct {
		name, stored, want string
	}{
		{"a field that differs only in case",
			`{"Wid": "w1", "EventType": "TaxJobFailed", "Timestamp": "2026-11-22T09:30:00Z", "Payload": {"CorrelationId": "c", "JobId": "j", "DocumentWid": "d", "Reason": "TimedOut", "reason": "Bogus"}}`,
			`{"Wid": "w1", "EventType": "TaxJobFailed", "Timestamp": "2026-11-22T09:30:00Z", "Payload": {"CorrelationId": "c", "JobId": "j", "DocumentWid": "d", "Reason": "TimedOut"}}`},
		{"owners under OwnerAdded",
			`{"Wid": "w1", "EventType": "AssetOwnershipAdded", "Timestamp": "2026-11-22T09:30:00Z", "AssetName": "Boat", "OwnerAdded": [{"Name": "Jane"}]}`,
			`{"Wid": "w1", "EventType": "AssetOwnershipAdded", "Timestamp": "2026-11-22T09:30:00Z", "AssetName": "Boat", "OwnershipAdded": [{"Name": "Jane"}]}`},
		{"a date-time without an offset",
			`{"Wid": "w1", "EventType": "AssetDeleted", "Timestamp": "2026-11-22T09:30:00", "AssetName": "Boat"}`,
			`{"Wid": "w1", "EventType": "AssetDeleted", "Timestamp": "2026-11-22T09:30:00Z", "AssetName": "Boat"}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := event.Decode([]byte(tc.stored))
			if err != nil {
				t.Fatalf("got %v, want it decoded", err)
			}
			if want := mustParse(t, tc.want); !sameEvent(got, want) {
				t.Errorf("got  %s\nwant %s", dump(got), dump(want))
			}
		})
	}
}

// A record is a delivery too, whose canonical form is the one it holds: a gateway from before
// records were canonical (during a rolling upgrade) reads it as any delivery.
func TestARecordIsADelivery(t *testing.T) {
	for _, typ := range event.Types {
		w, err := advisorspec.ParseWebhook([]byte(bodies[typ]))
		if err != nil {
			t.Fatalf("%s: got %v, want the sample accepted", typ, err)
		}
		rec := event.Record(w)
		again, err := advisorspec.ParseWebhook(rec)
		if err != nil {
			t.Fatalf("%s: got %v, want the record %s accepted as a delivery", typ, err, rec)
		}
		if !bytes.Equal(again.Canonical, w.Canonical) {
			t.Errorf("%s: got canonical form %s, want %s", typ, again.Canonical, w.Canonical)
		}
	}
}

// Decode trusts a record: it was checked when it arrived, and checking it again on every read
// (each replica, each resuming subscriber, each recentEvents) is the cost records remove.
func TestDecodeDoesNotCheckARecordAgain(t *testing.T) {
	rec := record(t, bodies[event.TypeClientProgressChanged])
	// A value the checks refuse, written into the record behind them.
	tampered := bytes.Replace(rec, []byte(`"CompletionPercentage":40`), []byte(`"CompletionPercentage":101`), 1)
	ev, err := event.Decode(tampered)
	if err != nil {
		t.Fatalf("got %v, want the record decoded as it is", err)
	}
	if got := ev.(*event.ClientProgressChanged).CompletionPercentage; got != 101 {
		t.Errorf("got CompletionPercentage %d, want 101 as stored", got)
	}
	if _, err := event.Decode(tampered[len(`{"GatewayRecord":1,`):]); err == nil {
		t.Error("got the same bytes without the mark decoded, want them checked and refused")
	}
}

func TestDecodeRefusesWhatItCannotRead(t *testing.T) {
	for _, tc := range []struct{ name, rec, want string }{
		{"a record that is not JSON", `{"GatewayRecord":1,"EventType":`, "decode an event"},
		{"a record whose type is not its first field", `{"GatewayRecord":1,"Wid":"w1","EventType":"AssetDeleted","Timestamp":"2026-11-22T09:30:00Z","AssetName":"Boat"}`, "does not start with its EventType"},
		{"a record whose field has the wrong type", `{"GatewayRecord":1,"EventType":"AssetAdded","Wid":"w1","Timestamp":"2026-11-22T09:30:00Z","AssetName":7}`, "decode the AssetAdded event"},
		{"a delivery stored as it arrived that breaks a rule", `{"EventType":"AssetAdded","Wid":"w1","Timestamp":"2026-11-22T09:30:00Z"}`, "AssetName: is required"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ev, err := event.Decode([]byte(tc.rec))
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("got %v, %v; want an error mentioning %q", ev, err, tc.want)
			}
		})
	}
}

// What a reader pays per stored event: a record (of an analysis event, whose fields are in its
// Payload, and of a client event, whose fields are beside the envelope), against a delivery that
// must be checked.
func BenchmarkDecode(b *testing.B) {
	body := bodies[event.TypeAssistantJobCompleted]
	for _, bc := range []struct {
		name string
		rec  []byte
	}{
		{"record", record(b, body)},
		{"record of a client event", record(b, bodies[event.TypeClientProgressChanged])},
		{"delivery as it arrived", []byte(body)},
	} {
		b.Run(bc.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := event.Decode(bc.rec); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
