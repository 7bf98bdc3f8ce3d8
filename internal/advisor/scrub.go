package advisor

import (
	"encoding/base64"
	"net"
	"net/url"
	"regexp"
	"sort"
	"strings"

	"github.com/advisorhq/gateway/internal/apperr"
)

// minSecret is the shortest configured secret scrubbed by its value. Shorter ones (a sandbox's
// "tok", a password "p") would match inside ordinary words of every message, and are no secret
// worth that; header-form credentials are redacted whatever their length.
const minSecret = 8

// minPrefix is the shortest run of a secret's leading characters scrubbed on its own: a service
// that cuts what it echoes ("token tok-SECRET-01… is not valid") still shows most of the secret.
// Twelve characters of a random token never occur by chance in a message; fewer might.
const minPrefix = 12

// serviceName stands in for the service's address in what callers read.
const serviceName = "the Advisor service"

// scrubber removes from the service's words what the gateway's callers must not learn. The
// service's messages can echo what it was sent: the gateway's credentials (with or without
// their "Bearer"/"Basic" prefix, in any case, encoded, or cut short), presigned addresses with
// their signatures, and its own address, which tells a caller where the gateway's upstream
// lives.
type scrubber struct {
	forms   []secretForm   // configured secrets in every form they travel in
	address *regexp.Regexp // the service's address, with or without a scheme
}

// secretForm is one spelling of a secret: matched without regard to ASCII case, and from its
// first min characters on, however much more of it follows.
type secretForm struct {
	lower string // ASCII-lower-cased
	min   int
}

// newScrubber returns the scrubber of the service at base, for the given secrets: access
// tokens, and basic credentials as "user:password" (whose password is also a secret alone).
// Empty secrets, and those shorter than minSecret, are ignored.
func newScrubber(base *url.URL, secrets ...string) scrubber {
	seen := map[string]bool{}
	var forms []secretForm
	add := func(s string, prefixes bool) {
		if len(s) < minSecret || seen[asciiLower(s)] {
			return
		}
		seen[asciiLower(s)] = true
		f := secretForm{lower: asciiLower(s), min: len(s)}
		if prefixes {
			f.min = min(len(s), minPrefix)
		}
		forms = append(forms, f)
	}
	for _, secret := range secrets {
		// Basic credentials' user name is no secret and may be an ordinary word: the whole pair
		// is scrubbed only whole, and its password from its first characters on.
		_, password, basic := strings.Cut(secret, ":")
		add(secret, !basic)
		add(url.QueryEscape(secret), !basic) // as echoed from a query or form
		if basic {
			add(password, true)
			add(url.QueryEscape(password), true)
		}
		for _, enc := range base64Forms(secret) {
			add(enc, true)
		}
	}
	// Longest first: where two forms match at one place, the longer is the secret.
	sort.SliceStable(forms, func(i, j int) bool { return len(forms[i].lower) > len(forms[j].lower) })
	return scrubber{forms: forms, address: addressPattern(base)}
}

// base64Forms are the base64 spellings of s (standard and URL alphabets, padded or not), and
// the runs that spell s wherever it sits inside a longer base64 text: there its encoding
// depends on how many bytes precede it, modulo 3, and the groups of four characters it shares
// with its neighbours differ.
func base64Forms(s string) []string {
	var out []string
	for _, enc := range []*base64.Encoding{base64.StdEncoding, base64.URLEncoding} {
		out = append(out, enc.EncodeToString([]byte(s)))
		for lead := range 3 {
			encoded := enc.EncodeToString([]byte(strings.Repeat("\x00", lead) + s))
			from, to := 0, (lead+len(s))/3*4 // the groups wholly of s's bytes, after the first
			if lead > 0 {
				from = 4
			}
			if to > from {
				out = append(out, encoded[from:to])
			}
		}
	}
	return out
}

// addressPattern matches the service's scheme://host[:port] (any scheme, any userinfo) and its
// bare host:port. The bare host name alone is matched only when it has a dot or a colon: a
// one-label name such as "advisor" is also a word the service's messages use. A service on the
// loopback interface is matched under each of its names (localhost, 127.0.0.1, [::1]), as the
// service's own messages name it whichever way it was started.
func addressPattern(base *url.URL) *regexp.Regexp {
	names := []string{base.Hostname()}
	if isLoopback(base.Hostname()) {
		for _, alias := range []string{"localhost", "127.0.0.1", "::1"} {
			if !strings.EqualFold(alias, base.Hostname()) {
				names = append(names, alias)
			}
		}
	}
	var hosts, bare []string
	for _, name := range names {
		withPort := name
		if strings.Contains(name, ":") {
			withPort = "[" + name + "]"
		}
		if base.Port() != "" {
			withPort = net.JoinHostPort(name, base.Port())
		}
		hosts = append(hosts, regexp.QuoteMeta(withPort))
		if withPort != name {
			hosts = append(hosts, regexp.QuoteMeta(name))
		}
		for _, h := range []string{withPort, name} {
			if strings.ContainsAny(h, ".:") {
				bare = append(bare, regexp.QuoteMeta(h))
			}
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

// isLoopback reports whether host names this machine's loopback interface.
func isLoopback(host string) bool {
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// secrets removes credentials and signatures, for what goes to the log.
func (s scrubber) secrets(text string) string {
	return apperr.Redact(s.redact(text))
}

// redact replaces every run of text that is a configured secret's form, or at least its first
// min characters, with REDACTED. The runs are found first and replaced after, so that one
// secret's replacement cannot break up another's.
func (s scrubber) redact(text string) string {
	if len(s.forms) == 0 {
		return text
	}
	lower := asciiLower(text)
	var runs [][2]int
	for _, f := range s.forms {
		head := f.lower[:f.min]
		for at := 0; ; {
			i := strings.Index(lower[at:], head)
			if i < 0 {
				break
			}
			start := at + i
			end := start + f.min
			for end < len(lower) && end-start < len(f.lower) && lower[end] == f.lower[end-start] {
				end++
			}
			runs = append(runs, [2]int{start, end})
			at = end
		}
	}
	if len(runs) == 0 {
		return text
	}
	sort.Slice(runs, func(i, j int) bool { return runs[i][0] < runs[j][0] })
	var b strings.Builder
	last := 0
	for i := 0; i < len(runs); {
		start, end := runs[i][0], runs[i][1]
		for i++; i < len(runs) && runs[i][0] <= end; i++ {
			end = max(end, runs[i][1])
		}
		b.WriteString(text[last:start])
		b.WriteString("REDACTED")
		last = end
	}
	b.WriteString(text[last:])
	return b.String()
}

// asciiLower lower-cases ASCII letters only, so that offsets into the result are offsets into s.
func asciiLower(s string) string {
	b := []byte(s)
	for i, c := range b {
		if 'A' <= c && c <= 'Z' {
			b[i] = c + 'a' - 'A'
		}
	}
	return string(b)
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
