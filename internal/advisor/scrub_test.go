package advisor

import (
	"encoding/base64"
	"net/url"
	"strings"
	"testing"
)

func TestScrubberRemovesSecretsInEveryForm(t *testing.T) {
	const (
		token  = "tok-SECRET-0123456789abcdef"
		token2 = "second-firm-token-7f3a9c2e"
		basic  = "api-user:pw-SECRET-987654"
	)
	std := base64.StdEncoding.EncodeToString
	raw := base64.RawStdEncoding.EncodeToString
	urlEnc := base64.URLEncoding.EncodeToString
	rawURL := base64.RawURLEncoding.EncodeToString
	s := newScrubber(&url.URL{Scheme: "http", Host: "127.0.0.1:8089"}, token, token2, basic, "", "short")
	// Inside a longer base64 text, the groups of four characters the secret shares with its
	// neighbours stay: they hold at most two of its bytes.
	for _, tc := range []struct {
		name, text, want string
	}{
		{"the token", "token " + token + " is bad", "token REDACTED is bad"},
		{"another firm's token", "token " + token2 + " is bad", "token REDACTED is bad"},
		{"the token upper-cased", "TOKEN " + strings.ToUpper(token) + " IS BAD", "TOKEN REDACTED IS BAD"},
		{"the token lower-cased", strings.ToLower(token) + ".", "REDACTED."},
		{"the token cut to its first 12 characters", "token " + token[:12] + "… is bad", "token REDACTED… is bad"},
		{"the token cut to 20 characters, then other text", "got " + token[:20] + "XYZ", "got REDACTEDXYZ"},
		{"the token's first 11 characters are not enough", "got " + token[:11] + " only", "got " + token[:11] + " only"},
		{"the token in standard base64", "saw " + std([]byte(token)) + " there", "saw REDACTED there"},
		{"the token in raw base64", "saw " + raw([]byte(token)) + " there", "saw REDACTED there"},
		{"the token in URL base64", "saw " + urlEnc([]byte(token+"\xff")) + " there", "saw REDACTED_w== there"},
		{"the token in raw URL base64", "saw " + rawURL([]byte(token)) + " there", "saw REDACTED there"},
		{"the token base64-encoded inside a longer value", "saw " + std([]byte(`{"t":"`+token+`"}`)) + " there", "saw eyJ0IjoiREDACTEDIn0= there"},
		{"the token base64-encoded after one byte", "x" + std([]byte("a"+token)), "xYXRvREDACTEDZg=="},
		{"the token base64-encoded after two bytes", "x" + std([]byte("ab"+token)), "xYWJ0REDACTEDZWY="},
		{"the token query-escaped", "q=" + url.QueryEscape(token+" "), "q=REDACTED+"},
		{"basic credentials whole", "login " + basic + " refused", "login REDACTED refused"},
		{"basic credentials in base64", "Basic: " + std([]byte(basic)), "Basic: REDACTED"},
		{"basic credentials' password alone, upper-cased", "password PW-SECRET-987654 wrong", "password REDACTED wrong"},
		{"basic credentials' user name alone is no secret", "user api-user", "user api-user"},
		{"a header-form credential of any length", "Authorization: bearer abc", "Authorization: bearer REDACTED"},
		{"secrets shorter than the minimum are left", "a short word", "a short word"},
		{"two secrets side by side", token + token2, "REDACTED"},
		{"text without secrets", "Container not found", "Container not found"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := s.secrets(tc.text); got != tc.want {
				t.Errorf("secrets(%q)\n got %q\nwant %q", tc.text, got, tc.want)
			}
		})
	}
}

func TestScrubberRemovesTheServicesAddressUnderEveryLoopbackName(t *testing.T) {
	for _, tc := range []struct {
		name, base, text, want string
	}{
		{"127.0.0.1 as localhost", "http://127.0.0.1:8089", "no localhost:8089 here", "no the Advisor service here"},
		{"127.0.0.1 as LOCALHOST with a scheme", "http://127.0.0.1:8089", "see HTTP://LOCALHOST:8089/v2", "see the Advisor service/v2"},
		{"127.0.0.1 as [::1]", "http://127.0.0.1:8089", "dial [::1]:8089 failed", "dial the Advisor service failed"},
		{"localhost as 127.0.0.1", "http://localhost:8089", "dial tcp 127.0.0.1:8089: refused", "dial tcp the Advisor service: refused"},
		{"localhost as itself", "http://localhost:8089", "at localhost:8089.", "at the Advisor service."},
		{"[::1] as localhost", "http://[::1]:8089", "at http://localhost:8089/x", "at the Advisor service/x"},
		{"another port is not the service", "http://127.0.0.1:8089", "at localhost:9999", "at localhost:9999"},
		{"localhost alone is a word", "http://127.0.0.1:8089", "runs on localhost", "runs on localhost"},
		{"a remote service's loopback is not it", "https://advisor.example", "at localhost:443", "at localhost:443"},
		{"a remote service by name", "https://advisor.example", "at https://advisor.example/v2", "at the Advisor service/v2"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			base, err := url.Parse(tc.base)
			if err != nil {
				t.Fatal(err)
			}
			if got := newScrubber(base).forCaller(tc.text); got != tc.want {
				t.Errorf("forCaller(%q)\n got %q\nwant %q", tc.text, got, tc.want)
			}
		})
	}
}
