package compress_test

import (
	"bufio"
	"bytes"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"

	"github.com/klauspost/compress/gzip"
	"github.com/klauspost/compress/zstd"

	"github.com/advisorhq/gateway/internal/compress"
)

func TestNegotiatePicksWhatTheClientAcceptsBest(t *testing.T) {
	cases := map[string]string{
		"":                             "",
		"identity":                     "",
		"gzip":                         "gzip",
		"zstd":                         "zstd",
		"gzip, deflate, br, zstd":      "gzip", // a tie goes to gzip, which every client decodes
		"zstd;q=1.0, gzip;q=0.5":       "zstd",
		"zstd;q=0.5, gzip":             "gzip",
		"gzip;q=0":                     "",
		"gzip;q=0, zstd":               "zstd",
		"*":                            "gzip",
		"*;q=0.5, zstd":                "zstd",
		"*, gzip;q=0":                  "zstd",
		"GZIP":                         "gzip",
		"x-gzip":                       "gzip",
		"gzip;q=nonsense":              "",
		"br":                           "",
		" gzip ; q=0.8 , zstd ; q=0.9": "zstd",
	}
	for header, want := range cases {
		if got := compress.Negotiate(header); got != want {
			t.Errorf("Accept-Encoding %q: %q, want %q", header, got, want)
		}
	}
}

// get requests path from srv with these headers, without Go's transparent gzip, and returns
// the response and its body decoded as its Content-Encoding says.
func get(t *testing.T, srv *httptest.Server, header http.Header) (*http.Response, []byte) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodGet, srv.URL, nil)
	req.Header = header
	resp, err := (&http.Transport{DisableCompression: true}).RoundTrip(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	return resp, decode(t, resp.Header.Get("Content-Encoding"), resp.Body)
}

func decode(t *testing.T, enc string, r io.Reader) []byte {
	t.Helper()
	var err error
	switch enc {
	case "gzip":
		r, err = gzip.NewReader(r)
	case "zstd":
		var d *zstd.Decoder
		d, err = zstd.NewReader(r)
		if err == nil {
			defer d.Close()
			r = d
		}
	}
	if err != nil {
		t.Fatal(err)
	}
	data, err := io.ReadAll(r)
	if err != nil {
		t.Fatal(err)
	}
	return data
}

func TestResponsesAreCompressedAsAskedWhenLargeAndOfATextType(t *testing.T) {
	large := `{"data":"` + strings.Repeat("family ", 400) + `"}`
	small := `{"data":"small"}`
	cases := []struct {
		name, contentType, body, accept, want string
		header                                http.Header
	}{
		{"large JSON, gzip", "application/json", large, "gzip", "gzip", nil},
		{"large JSON, zstd", "application/graphql-response+json", large, "zstd", "zstd", nil},
		{"large JSON, no Accept-Encoding", "application/json", large, "", "", nil},
		{"large JSON, gzip refused", "application/json", large, "gzip;q=0", "", nil},
		{"small JSON", "application/json", small, "gzip", "", nil},
		{"an image", "image/png", large, "gzip", "", nil},
		{"already encoded", "application/json", large, "gzip", "", http.Header{"Content-Encoding": {"br"}}},
		{"a script", "text/javascript; charset=utf-8", large, "zstd", "zstd", nil},
		{"large JSON as the transports label it", "application/json; charset=utf-8", large, "gzip", "gzip", nil},
		{"large GraphQL response as the transports label it", "application/graphql-response+json; charset=utf-8", large, "gzip", "gzip", nil},
		{"an event stream", "text/event-stream; charset=utf-8", large, "gzip", "", nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			srv := httptest.NewServer(compress.Handler(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
				w.Header().Set("Content-Type", c.contentType)
				for k, v := range c.header {
					w.Header()[k] = v
				}
				_, _ = io.WriteString(w, c.body[:len(c.body)/2])
				_, _ = io.WriteString(w, c.body[len(c.body)/2:])
			})))
			defer srv.Close()
			h := http.Header{}
			if c.accept != "" {
				h.Set("Accept-Encoding", c.accept)
			}
			resp, body := get(t, srv, h)
			got := resp.Header.Get("Content-Encoding")
			if c.header != nil {
				got = "" // the handler's own encoding, passed on as it is
				body = []byte(c.body)
			}
			if got != c.want || string(body) != c.body {
				t.Errorf("Content-Encoding %q and %d bytes, want %q and the %d bytes sent", got, len(body), c.want, len(c.body))
			}
			if !strings.Contains(strings.Join(resp.Header.Values("Vary"), ","), "Accept-Encoding") {
				t.Errorf("Vary %v, want Accept-Encoding", resp.Header.Values("Vary"))
			}
			if c.want == "" && c.header == nil && resp.Header.Get("Content-Length") != "" && resp.Header.Get("Content-Length") != strconv.Itoa(len(c.body)) {
				t.Errorf("Content-Length %s for %d bytes", resp.Header.Get("Content-Length"), len(c.body))
			}
		})
	}
}

// An incremental answer is compressed part by part: each part reaches the client, decoded,
// when it is flushed, before the next is written.
func TestAStreamedResponseIsCompressedAsItIsFlushed(t *testing.T) {
	next := make(chan struct{})
	srv := httptest.NewServer(compress.Handler(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", `multipart/mixed; boundary="-"`)
		_, _ = io.WriteString(w, "---\r\npart one\r\n")
		w.(http.Flusher).Flush()
		<-next
		_, _ = io.WriteString(w, "---\r\npart two\r\n-----\r\n")
	})))
	defer srv.Close()
	req, _ := http.NewRequest(http.MethodGet, srv.URL, nil)
	req.Header.Set("Accept-Encoding", "gzip")
	resp, err := (&http.Transport{DisableCompression: true}).RoundTrip(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.Header.Get("Content-Encoding") != "gzip" {
		t.Fatalf("Content-Encoding %q, want gzip", resp.Header.Get("Content-Encoding"))
	}
	zr, err := gzip.NewReader(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	lines := bufio.NewReader(zr)
	for _, want := range []string{"---\r\n", "part one\r\n"} {
		if line, err := lines.ReadString('\n'); err != nil || line != want {
			t.Fatalf("before the second part was written: %q, %v; want %q", line, err, want)
		}
	}
	close(next)
	rest, _ := io.ReadAll(lines)
	if string(rest) != "---\r\npart two\r\n-----\r\n" {
		t.Errorf("the rest: %q", rest)
	}
}

// Event streams, WebSocket upgrades and ranges pass untouched.
func TestStreamsUpgradesAndRangesAreNotCompressed(t *testing.T) {
	large := strings.Repeat("x", 4096)
	srv := httptest.NewServer(compress.Handler(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/plain")
		_, _ = io.WriteString(w, large)
	})))
	defer srv.Close()
	for _, h := range []http.Header{
		{"Accept-Encoding": {"gzip"}, "Accept": {"text/event-stream"}},
		{"Accept-Encoding": {"gzip"}, "Range": {"bytes=0-10"}},
	} {
		if resp, body := get(t, srv, h); resp.Header.Get("Content-Encoding") != "" || !bytes.Equal(body, []byte(large)) {
			t.Errorf("%v: Content-Encoding %q", h, resp.Header.Get("Content-Encoding"))
		}
	}
}

// BenchmarkCompressedJSON is one 64 KB JSON answer compressed: the encoders are pooled, so a
// response allocates a few hundred bytes, not an encoder's megabytes.
func BenchmarkCompressedJSON(b *testing.B) {
	body := []byte(`{"data":{"contacts":[` + strings.Repeat(`{"__typename":"Individual","displayName":"Eleanor Rose Hartwell"},`, 900) + `{}]}}`)
	h := compress.Handler(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write(body)
	}))
	for _, enc := range []string{"gzip", "zstd"} {
		b.Run(enc, func(b *testing.B) {
			req := httptest.NewRequest(http.MethodPost, "/graphql", nil)
			req.Header.Set("Accept-Encoding", enc)
			b.ReportAllocs()
			b.SetBytes(int64(len(body)))
			for b.Loop() {
				w := &discard{header: http.Header{}}
				h.ServeHTTP(w, req)
			}
		})
	}
}

type discard struct{ header http.Header }

func (d *discard) Header() http.Header         { return d.header }
func (d *discard) Write(p []byte) (int, error) { return len(p), nil }
func (d *discard) WriteHeader(int)             {}
