package gateway

import (
	"context"
	"net/http"
	"net/url"
	"strings"

	"github.com/advisorhq/gateway/internal/sandbox"
)

// With the embedded sandbox, one address is all a newcomer needs: the gateway serves the
// sandbox below sandbox.MountPath on its own origin, and every address it gives a browser
// (the sandbox's presigned file addresses, the pop-out's chat) is on the host the browser
// used, so a container with one published port works from the host as it does on loopback.

// publicHostKey is the host a request to the gateway came to, as its caller named it.
type publicHostKey struct{}

// publicHost is the host the request being served came to, or "" outside of one (a bulk load
// running on its own).
func publicHost(ctx context.Context) string {
	h, _ := ctx.Value(publicHostKey{}).(string)
	return h
}

// front serves next, and with the embedded sandbox the sandbox too: requests below
// sandbox.MountPath go to it unchanged, credentials and all, so it refuses there whatever it
// refuses at its root; the rest go to next with the host they came to in their context, which
// the calls they make to the sandbox carry (sandboxTransport). Without the embedded sandbox
// (against the Advisor service) nothing is served below the mount path.
func (g *Gateway) front(next http.Handler) http.Handler {
	sb := g.embedded
	if sb == nil {
		return next
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == sandbox.MountPath || strings.HasPrefix(r.URL.Path, sandbox.MountPath+"/") {
			// Uploaded files come back from here on the gateway's origin: never sniffed.
			w.Header().Set("X-Content-Type-Options", "nosniff")
			sb.handler.ServeHTTP(w, r)
			return
		}
		if plainHost(r.Host) {
			r = r.WithContext(context.WithValue(r.Context(), publicHostKey{}, r.Host))
		}
		next.ServeHTTP(w, r)
	})
}

// plainHost reports whether h is a host and optional port and nothing else, fit to build an
// address on.
func plainHost(h string) bool {
	if h == "" {
		return false
	}
	u, err := url.Parse("http://" + h)
	return err == nil && u.Host == h && u.User == nil && u.Path == "" && u.RawQuery == "" && u.Fragment == ""
}

// sandboxTransport carries the gateway's calls to the embedded sandbox to its loopback
// listener, saying they came to the host the caller's request came to (or the gateway's own
// address outside of a request): the sandbox builds the addresses it answers with on that host
// and below the mount path, which is where the gateway serves them. A presigned address it gave
// that way (the upload of a file sent to the gateway) goes back to the listener too, rather than
// out to a host the gateway may not reach: a published port's number, say, or a name only the
// browser's machine knows.
type sandboxTransport struct {
	next http.RoundTripper
	// loopback is the sandbox's listener (host:port), and host the gateway's own address.
	loopback, host string
}

func (t *sandboxTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	host := publicHost(req.Context())
	if host == "" {
		host = t.host
	}
	mounted := req.URL.Path == sandbox.MountPath || strings.HasPrefix(req.URL.Path, sandbox.MountPath+"/")
	if req.URL.Host != t.loopback && !(req.URL.Scheme == "http" && req.URL.Host == host && mounted) {
		return t.next.RoundTrip(req)
	}
	out := req.Clone(req.Context())
	out.URL.Scheme, out.URL.Host, out.Host = "http", t.loopback, host
	return t.next.RoundTrip(out)
}
