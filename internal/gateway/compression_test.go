package gateway_test

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/klauspost/compress/gzip"
	"github.com/klauspost/compress/zstd"
)

// The README's family query over the wire, as a mobile client sends it: the same answer
// whatever the encoding, and its bytes, which the README reports. A deferred answer is
// compressed too, part by part, and still reads as incremental delivery.
func TestTheFamilyQueryIsCompressedOnTheWire(t *testing.T) {
	t.Parallel()
	up := newUpstream(t, true)
	big := up.family(t, "Two hundred", 200)
	gw := newGateway(t, up, nil)
	send := func(query, accept, encoding string) (*http.Response, []byte, int) {
		body, _ := json.Marshal(map[string]any{"query": query, "variables": map[string]any{"wid": big}})
		req, _ := http.NewRequest(http.MethodPost, gw.url+"/graphql", bytes.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", accept)
		if encoding != "" {
			req.Header.Set("Accept-Encoding", encoding)
		}
		resp, err := (&http.Transport{DisableCompression: true}).RoundTrip(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		raw, _ := io.ReadAll(resp.Body)
		var r io.Reader = bytes.NewReader(raw)
		switch resp.Header.Get("Content-Encoding") {
		case "gzip":
			if r, err = gzip.NewReader(r); err != nil {
				t.Fatal(err)
			}
		case "zstd":
			d, err := zstd.NewReader(r)
			if err != nil {
				t.Fatal(err)
			}
			defer d.Close()
			r = d
		}
		decoded, err := io.ReadAll(r)
		if err != nil {
			t.Fatalf("%s: %v", encoding, err)
		}
		return resp, decoded, len(raw)
	}
	family := readmeExampleQuery(t)
	_, plain, plainBytes := send(family, "application/json", "")
	sizes := map[string]int{}
	for _, enc := range []string{"gzip", "zstd"} {
		resp, decoded, n := send(family, "application/json", enc)
		if resp.Header.Get("Content-Encoding") != enc || !bytes.Equal(decoded, plain) {
			t.Errorf("%s: Content-Encoding %q, and the answer decoded is the same: %v", enc, resp.Header.Get("Content-Encoding"), bytes.Equal(decoded, plain))
		}
		sizes[enc] = n
	}
	if sizes["gzip"] >= plainBytes/3 || sizes["zstd"] >= plainBytes/3 {
		t.Errorf("the family query: %d bytes, %d gzip, %d zstd; want a third or less compressed", plainBytes, sizes["gzip"], sizes["zstd"])
	}
	t.Logf("the README's family query on the wire: %d bytes, %d with gzip, %d with zstd", plainBytes, sizes["gzip"], sizes["zstd"])
	_, _, bigPlain := send(familyQuery, "application/json", "")
	_, _, bigGzip := send(familyQuery, "application/json", "gzip")
	_, _, bigZstd := send(familyQuery, "application/json", "zstd")
	t.Logf("a family of 200 cards, every relationship field: %d bytes, %d with gzip, %d with zstd", bigPlain, bigGzip, bigZstd)

	resp, decoded, _ := send(deferredFamilyQuery, "multipart/mixed;deferSpec=20220824", "gzip")
	if resp.Header.Get("Content-Encoding") != "gzip" || !strings.HasPrefix(resp.Header.Get("Content-Type"), "multipart/mixed") ||
		!strings.Contains(string(decoded), `"incremental":[{"data":{"documents":`) || !strings.HasSuffix(string(decoded), "-----\r\n") {
		t.Errorf("a deferred answer with gzip: %q %q\n%s", resp.Header.Get("Content-Encoding"), resp.Header.Get("Content-Type"), decoded)
	}
}
