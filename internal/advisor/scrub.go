package advisor

import (
	"encoding/base64"
	"net/url"
	"regexp"
	"sort"
	"strings"

	"github.com/advisorhq/gateway/internal/apperr"
)

// minSecret is the shortest configured secret scrubbed by its exact value. Shorter ones (a
// sandbox's "tok", a password "p") would match inside ordinary words of every message, and are
// no secret worth that; header-form credentials are redacted whatever their length.
const minSecret = 8

// serviceName stands in for the service's address in what callers read.
const serviceName = "the Advisor service"

// scrubber removes from the service's words what the gateway's callers must not learn. The
// service's messages can echo what it was sent: the gateway's credentials (with or without
// their "Bearer"/"Basic" prefix), presigned addresses with their signatures, and its own
// address, which tells a caller where the gateway's upstream lives.
type scrubber struct {
	exact   []string       // configured secrets in every form they travel in, longest first
	address *regexp.Regexp // the service's address, with or without a scheme
}

func newScrubber(base *url.URL, token, basic string) scrubber {
	var exact []string
	add := func(s string) {
		if len(s) < minSecret {
			return
		}
		exact = append(exact, s)
		if escaped := url.QueryEscape(s); escaped != s { // as echoed from a query or form
			exact = append(exact, escaped)
		}
	}
	add(token)
	if basic != "" {
		add(basic)
		add(base64.StdEncoding.EncodeToString([]byte(basic)))
		add(base64.RawStdEncoding.EncodeToString([]byte(basic)))
		if _, password, ok := strings.Cut(basic, ":"); ok {
			add(password)
		}
	}
	// Longest first, so "user:password" goes whole before "password" breaks it up.
	sort.Slice(exact, func(i, j int) bool { return len(exact[i]) > len(exact[j]) })
	return scrubber{exact: exact, address: addressPattern(base)}
}

// addressPattern matches the service's scheme://host[:port] (any scheme, any userinfo) and its
// bare host:port. The bare host name alone is matched only when it has a dot or a colon: a
// one-label name such as "advisor" is also a word the service's messages use.
func addressPattern(base *url.URL) *regexp.Regexp {
	hosts := []string{regexp.QuoteMeta(base.Host)}
	if name := base.Hostname(); name != base.Host {
		hosts = append(hosts, regexp.QuoteMeta(name))
	}
	var bare []string
	for _, h := range []string{base.Host, base.Hostname()} {
		if strings.ContainsAny(h, ".:") {
			bare = append(bare, regexp.QuoteMeta(h))
		}
	}
	alternatives := `[a-z][a-z0-9+.-]*://(?:[^\s/@"']*@)?(?:` + strings.Join(hosts, "|") + `)`
	if len(bare) > 0 {
		alternatives += "|" + strings.Join(bare, "|")
	}
	// The edges stand in for look-arounds, which RE2 lacks: the address must not be part of a
	// longer name.
	return regexp.MustCompile(`(?i)(^|[^A-Za-z0-9_.+-])(?:` + alternatives + `)($|[^A-Za-z0-9_-])`)
}

// secrets removes credentials and signatures, for what goes to the log.
func (s scrubber) secrets(text string) string {
	for _, secret := range s.exact {
		text = strings.ReplaceAll(text, secret, "REDACTED")
	}
	return apperr.Redact(text)
}

// forCaller removes credentials, signatures and the service's address, for what a caller reads.
func (s scrubber) forCaller(text string) string {
	text = s.secrets(text)
	// An edge character that ends one match may begin the next, which one pass skips.
	for range 4 {
		next := s.address.ReplaceAllString(text, "${1}"+serviceName+"${2}")
		if next == text {
			break
		}
		text = next
	}
	return text
}
