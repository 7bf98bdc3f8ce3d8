package transport

import (
	"bytes"
	"reflect"
	"strings"
	"testing"
)

// paramsBodies are bodies of every kind a client may send, and of every kind the decoder must
// leave to encoding/json. fast says the decoder reads the body itself.
var paramsBodies = []struct {
	name string
	body string
	fast bool
}{
	{"ordinary", `{"query":"query Q($wid: ID!) { family(wid: $wid) { id } }","variables":{"wid":"W-1"},"operationName":"Q"}`, true},
	{"escapes", `{"query":"query {\n\tfamily(wid: \"x\\\\y\/z\") {\r\n id }\b\f\n}"}`, true},
	{"a quote escaped at the end", `{"query":"{ a }\""}`, true},
	{"unicode as UTF-8", `{"query":"{ é ☃ 😀 }","variables":{"ü":"€"}}`, true},
	{"unicode escaped", `{"query":"\u00e9\u2603\u0000\u001f\uFFFF"}`, true},
	{"a surrogate pair escaped", `{"query":"\ud83d\ude00 \uD83D\uDE00","variables":{"\ud83d\ude00":"\ud800\udc00"}}`, true},
	{"a lone surrogate escaped", `{"query":"\ud83d x"}`, false},
	{"a lone low surrogate escaped", `{"query":"\ude00\ud83d"}`, false},
	{"two high surrogates escaped", `{"query":"\ud83d\ud83d"}`, false},
	{"a high surrogate escaped at the end", `{"query":"x\ud83d"}`, false},
	{"a high surrogate and a short escape", `{"query":"\ud83d\ude0"}`, false},
	{"a high surrogate and a plain escape", `{"query":"\ud83d\n"}`, false},
	{"a short escape", `{"query":"\u12"}`, false},
	{"an unknown escape", `{"query":"\x"}`, false},
	{"a control character", "{\"query\":\"a\tb\"}", false},
	{"invalid UTF-8", "{\"query\":\"a\xffb\"}", false},
	{"an encoded surrogate", "{\"query\":\"a\xed\xa0\x80b\"}", false},
	{"invalid UTF-8 in variables", "{\"query\":\"q\",\"variables\":{\"a\":\"\xc3\"}}", false},
	{"invalid UTF-8 in an unknown member", "{\"query\":\"q\",\"x\":\"\xc3\"}", true},
	{"a replacement character", "{\"query\":\"\xef\xbf\xbd\"}", true},
	{"nested variables", `{"query":"q","variables":{"a":{"b":[1,-2.5e+3,"c",true,false,null,{},[]],"d":{"e":{"f":0}}},"g":[]}}`, true},
	{"numbers", `{"query":"q","variables":{"a":[0,-0,1.0,1e5,1E-5,-12.34e+56,123456789012345678901234567890]}}`, true},
	{"a huge number", `{"query":"q","variables":{"n":` + strings.Repeat("9", 400) + `e999999}}`, true},
	{"a leading zero", `{"query":"q","variables":{"n":01}}`, false},
	{"a bare minus", `{"query":"q","variables":{"n":-}}`, false},
	{"a bare point", `{"query":"q","variables":{"n":1.}}`, false},
	{"a bare exponent", `{"query":"q","variables":{"n":1e}}`, false},
	{"a plus sign", `{"query":"q","variables":{"n":+1}}`, false},
	{"nulls", `{"query":null,"operationName":null,"documentId":null,"variables":null,"extensions":null}`, true},
	{"empty objects", `{"query":"q","variables":{},"extensions":{}}`, true},
	{"an empty body object", `{}`, true},
	{"whitespace everywhere", " \t\r\n{ \"query\" : \"q\" , \"variables\" : { \"a\" : [ 1 , 2 ] } } \n", true},
	{"a document id", `{"documentId":"sha256:abc","extensions":{"persistedQuery":{"version":1,"sha256Hash":"x"}}}`, true},
	{"a number for the query", `{"query":5}`, false},
	{"an object for the query", `{"query":{}}`, false},
	{"a string for the variables", `{"query":"q","variables":"{}"}`, false},
	{"an array for the variables", `{"query":"q","variables":[]}`, false},
	{"true for the operation name", `{"query":"q","operationName":true}`, false},
	{"a key in another case", `{"Query":"q"}`, false},
	{"a key in capitals", `{"query":"q","VARIABLES":{"a":1}}`, false},
	{"a key with a long s", `{"query":"q","extenſions":{"a":1}}`, false},
	{"an escaped key", `{"\u0071uery":"q"}`, false},
	{"a duplicated key", `{"query":"a","query":"b"}`, false},
	{"duplicated variables", `{"query":"q","variables":{"a":1},"variables":{"b":2}}`, false},
	{"a duplicated variable", `{"query":"q","variables":{"a":1,"a":2}}`, true},
	{"unknown members", `{"query":"q","id":"x","extra":{"a":[1,{"b":null}],"c":"\u00e9\ud800"},"n":-1.5e3,"t":true}`, true},
	{"an unknown member twice", `{"query":"q","x":1,"x":2}`, true},
	{"an invalid unknown member", `{"query":"q","x":01}`, false},
	{"an unknown member with a bad escape", `{"query":"q","x":"\q"}`, false},
	{"trailing garbage", `{"query":"q"}x`, false},
	{"a trailing bracket", `{"query":"q"}]`, false},
	{"a trailing brace", `{"query":"q"}}`, false},
	{"two objects", `{"query":"a"}{"query":"b"}`, false},
	{"truncated", `{"query":"q","variables":{"a":`, false},
	{"an unterminated string", `{"query":"q`, false},
	{"a missing colon", `{"query" "q"}`, false},
	{"a trailing comma", `{"query":"q",}`, false},
	{"a trailing comma in variables", `{"query":"q","variables":{"a":[1,]}}`, false},
	{"a misspelt literal", `{"query":"q","variables":{"a":nul}}`, false},
	{"a literal run on", `{"query":"q","variables":{"a":truex}}`, false},
	{"an array", `[{"query":"q"}]`, false},
	{"null", `null`, false},
	{"a string", `"q"`, false},
	{"empty", ``, false},
	{"deep nesting", `{"query":"q","variables":{"a":` + strings.Repeat("[", 900) + strings.Repeat("]", 900) + `}}`, true},
	{"nesting past the decoder's depth", `{"query":"q","variables":{"a":` + strings.Repeat("[", 1200) + strings.Repeat("]", 1200) + `}}`, false},
	{"nesting past encoding/json's depth", `{"query":"q","variables":{"a":` + strings.Repeat("[", 10001) + strings.Repeat("]", 10001) + `}}`, false},
	{"a long query", `{"query":"` + strings.Repeat(`{ field(arg: \"v\") }\n`, 200) + `"}`, true},
	{"a byte order mark", "\xef\xbb\xbf{\"query\":\"q\"}", false},
}

// The decoder reads each body as encoding/json does, or gives up on it; either way
// decodeParams gives encoding/json's parameters, or fails where it fails.
func TestDecodeParamsDecodesAsEncodingJSON(t *testing.T) {
	for _, tt := range paramsBodies {
		t.Run(tt.name, func(t *testing.T) {
			fast := compareParams(t, []byte(tt.body))
			if fast != tt.fast {
				t.Errorf("the decoder read the body itself: %v, want %v", fast, tt.fast)
			}
		})
	}
}

// What a body decodes to shares none of its bytes: a caller may reuse them.
func TestDecodedParamsShareNoBytesOfTheBody(t *testing.T) {
	body := []byte(`{"query":"query Q { a }","operationName":"Q","variables":{"wid":"W-1","n":12,"l":["x"]},"extensions":{"e":"v"}}`)
	var raw rawParams
	if err := decodeParams(body, &raw); err != nil {
		t.Fatal(err)
	}
	var want rawParams
	if err := decodeJSON(bytes.NewReader(body), &want); err != nil {
		t.Fatal(err)
	}
	for i := range body {
		body[i] = 'X'
	}
	if !reflect.DeepEqual(raw, want) {
		t.Errorf("after the body's bytes changed, the parameters are %+v, want %+v", raw, want)
	}
}

// compareParams checks that decodeParams gives what encoding/json gives for body, and reports
// whether the decoder read the body itself.
func compareParams(t *testing.T, body []byte) (fast bool) {
	t.Helper()
	var want rawParams
	wantErr := decodeJSON(bytes.NewReader(body), &want)

	var own rawParams
	d := paramsDecoder{b: body}
	if fast = d.operation(&own); fast {
		if wantErr != nil {
			t.Fatalf("the decoder read %q, which encoding/json refuses: %v", body, wantErr)
		}
		if !reflect.DeepEqual(own, want) {
			t.Fatalf("the decoder read %q as %#v, encoding/json as %#v", body, own, want)
		}
	}

	var got rawParams
	gotErr := decodeParams(body, &got)
	if (gotErr != nil) != (wantErr != nil) {
		t.Fatalf("decodeParams(%q) = %v, encoding/json %v", body, gotErr, wantErr)
	}
	if gotErr == nil && !reflect.DeepEqual(got, want) {
		t.Fatalf("decodeParams(%q) = %#v, encoding/json %#v", body, got, want)
	}
	return fast
}

func FuzzParamsDecoder(f *testing.F) {
	for _, tt := range paramsBodies {
		f.Add([]byte(tt.body))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		compareParams(t, body)
	})
}
