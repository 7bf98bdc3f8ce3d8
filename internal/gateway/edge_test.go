package gateway_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// The tests of this file check the gateway's edge: which origins browsers let call it, what a
// request no transport takes is told, and that slow or idle clients cannot hold it.

// With CORS_ALLOWED_ORIGINS unset, no answer carries a CORS header: rs/cors reads an empty list
// as "every origin", which let any web page read the gateway's answers with its visitors'
// credentials.
func TestWithoutAllowedOriginsNoAnswerCarriesCORSHeaders(t *testing.T) {
	t.Parallel()
	gw := newGateway(t, newUpstream(t, true), nil)
	for _, tc := range corsProbes(gw.url, "https://evil.example.com") {
		t.Run(tc.name, func(t *testing.T) {
			resp := tc.send(t)
			for k := range resp.Header {
				if strings.HasPrefix(k, "Access-Control-") {
					t.Errorf("%s: %s", k, resp.Header.Get(k))
				}
			}
		})
	}
}

// An explicit "*" lets any page call the gateway, but never with credentials.
func TestAWildcardOriginIsAllowedWithoutCredentials(t *testing.T) {
	t.Parallel()
	gw := newGateway(t, newUpstream(t, true), map[string]string{"CORS_ALLOWED_ORIGINS": "*"})
	for _, tc := range corsProbes(gw.url, "https://any.example.com") {
		t.Run(tc.name, func(t *testing.T) {
			resp := tc.send(t)
			if got := resp.Header.Get("Access-Control-Allow-Origin"); got != "*" {
				t.Errorf("Access-Control-Allow-Origin %q, want *", got)
			}
			if got := resp.Header.Get("Access-Control-Allow-Credentials"); got != "" {
				t.Errorf("Access-Control-Allow-Credentials %q with a wildcard origin, want none", got)
			}
		})
	}
}

type corsProbe struct {
	name string
	send func(t *testing.T) *http.Response
}

// corsProbes are a preflight, a POST and an SSE request from origin.
func corsProbes(base, origin string) []corsProbe {
	do := func(method, accept string, body io.Reader, preflight bool) func(t *testing.T) *http.Response {
		return func(t *testing.T) *http.Response {
			req, _ := http.NewRequest(method, base+"/graphql", body)
			req.Header.Set("Origin", origin)
			if preflight {
				req.Header.Set("Access-Control-Request-Method", "POST")
				req.Header.Set("Access-Control-Request-Headers", "content-type")
			} else {
				req.Header.Set("Content-Type", "application/json")
				req.Header.Set("Accept", accept)
			}
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			return resp
		}
	}
	query := `{"query":"{ version }"}`
	return []corsProbe{
		{"preflight", do(http.MethodOptions, "", nil, true)},
		{"POST", do(http.MethodPost, "application/json", strings.NewReader(query), false)},
		{"SSE", do(http.MethodPost, "text/event-stream", strings.NewReader(`{"query":"subscription { events { id } }"}`), false)},
	}
}

// A request no transport serves is told what to send instead, with a code like every other
// error: gqlgen's own answer was a bare 400 "transport not supported".
func TestRequestsNoTransportServesGetACodedAnswer(t *testing.T) {
	t.Parallel()
	gw := newGateway(t, newUpstream(t, true), nil)
	for _, tc := range []struct {
		name, method, contentType, body string
		status                          int
		message                         string
	}{
		{"text/plain", "POST", "text/plain", `{"query":"{ version }"}`, 415, "Content-Type text/plain is not served: send application/json (or multipart/form-data for uploads)"},
		{"application/graphql", "POST", "application/graphql", `{ version }`, 415, "Content-Type application/graphql is not served: send application/json (or multipart/form-data for uploads)"},
		{"form", "POST", "application/x-www-form-urlencoded", `query=%7B+version+%7D`, 415, "Content-Type application/x-www-form-urlencoded is not served: send application/json (or multipart/form-data for uploads)"},
		{"no Content-Type", "POST", "", `{"query":"{ version }"}`, 415, "The request has no Content-Type: send application/json (or multipart/form-data for uploads)"},
		{"PUT", "PUT", "application/json", `{"query":"{ version }"}`, 405, "Send GraphQL requests with GET or POST"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			req, _ := http.NewRequest(tc.method, gw.url+"/graphql", strings.NewReader(tc.body))
			if tc.contentType != "" {
				req.Header.Set("Content-Type", tc.contentType)
			}
			r := gw.do(t, req)
			if r.status != tc.status {
				t.Errorf("status %d, want %d", r.status, tc.status)
			}
			r.wantError(t, "BAD_USER_INPUT", tc.message)
		})
	}
}

// A body that drips (a byte every few hundred milliseconds, to hold a connection) is cut once
// it falls behind REQUEST_BODY_TIMEOUT plus what its bytes bought, on every endpoint that reads
// a body; the connection is then closed, not held for the body's whole length.
func TestADrippingBodyIsCutByTheBodyDeadline(t *testing.T) {
	t.Parallel()
	gw := newGateway(t, newUpstream(t, true), map[string]string{"REQUEST_BODY_TIMEOUT": "1s"})
	host := strings.TrimPrefix(gw.url, "http://")
	for _, tc := range []struct{ name, head string }{
		{"GraphQL JSON", "POST /graphql HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"},
		{"multipart upload", "POST /graphql HTTP/1.1\r\nHost: x\r\nGraphQL-Require-Preflight: 1\r\nContent-Type: multipart/form-data; boundary=b\r\n"},
		{"webhook", "POST /webhooks HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nservice-api-key: " + webhookKey + "\r\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			conn, err := net.Dial("tcp", host)
			if err != nil {
				t.Fatal(err)
			}
			defer conn.Close()
			// 1,000 bytes at a byte every 200 ms would take 200 s.
			fmt.Fprintf(conn, "%sContent-Length: 1000\r\n\r\n", tc.head)
			start := time.Now()
			answered := make(chan string, 1)
			go func() {
				status, _ := bufio.NewReader(conn).ReadString('\n')
				answered <- status
			}()
			tick := time.NewTicker(200 * time.Millisecond)
			defer tick.Stop()
			for {
				select {
				case status := <-answered:
					if status != "" && !strings.Contains(status, " 408 ") && !strings.Contains(status, " 400 ") {
						t.Errorf("the dripping body was answered %q, want 408 (or 400) or a closed connection", strings.TrimSpace(status))
					}
					t.Logf("ended after %v: %q", time.Since(start).Round(time.Millisecond), strings.TrimSpace(status))
					return
				case <-tick.C:
					if time.Since(start) > 30*time.Second {
						t.Fatal("the dripping body still held its connection after 30 s")
					}
					_, _ = conn.Write([]byte("{"))
				}
			}
		})
	}
}

// Beyond MAX_CONNECTIONS new connections wait in the listen queue instead of taking a file each
// until the process runs out (when accept fails for everyone, health checks included); they
// are served as soon as one closes.
func TestConnectionsBeyondTheLimitWaitTheirTurn(t *testing.T) {
	t.Parallel()
	gw := newGateway(t, newUpstream(t, true), map[string]string{"MAX_CONNECTIONS": "3"})
	host := strings.TrimPrefix(gw.url, "http://")
	var idle []net.Conn
	for range 3 {
		c, err := net.Dial("tcp", host)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		// A request answered keeps its connection open, and counted, until the client leaves.
		fmt.Fprint(c, "GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n")
		if _, err := http.ReadResponse(bufio.NewReader(c), nil); err != nil {
			t.Fatal(err)
		}
		idle = append(idle, c)
	}
	client := &http.Client{Timeout: 500 * time.Millisecond}
	if resp, err := client.Get(gw.url + "/healthz"); err == nil {
		resp.Body.Close()
		t.Fatal("a fourth connection was served while three were open with MAX_CONNECTIONS=3")
	}
	idle[0].Close()
	client.Timeout = 10 * time.Second
	resp, err := client.Get(gw.url + "/healthz")
	if err != nil {
		t.Fatalf("once a connection closed, the waiting one was not served: %v", err)
	}
	resp.Body.Close()
}

// Headers larger than the limit are refused before any handler runs.
func TestOversizedHeadersAreRefused(t *testing.T) {
	t.Parallel()
	gw := newGateway(t, newUpstream(t, true), nil)
	req, _ := http.NewRequest(http.MethodGet, gw.url+"/healthz", nil)
	req.Header.Set("X-Padding", string(bytes.Repeat([]byte("a"), 128<<10)))
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusRequestHeaderFieldsTooLarge {
		t.Errorf("128 KiB of headers: status %d, want 431", resp.StatusCode)
	}
}

// What a browser makes of the gateway's CORS answers: a page on another origin reads nothing by
// default, reads everything once its origin is listed, and with "*" reads only what it asks
// for without credentials.
func TestBrowsersLetOnlyTheListedOriginsReadAnswers(t *testing.T) {
	t.Parallel()
	browser := chromium(t)
	npmInstall(t, ideDir, "playwright-core")
	page := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		fmt.Fprint(w, "<!doctype html><title>a front end</title>")
	}))
	t.Cleanup(page.Close) // after the parallel subtests
	up := newUpstream(t, true)
	const read = "Hartwell Family"
	for _, tc := range []struct {
		name    string
		origins string
		want    map[string]bool // call -> the page could read the answer
	}{
		{"no origins listed", "", map[string]bool{"post omit": false, "post include": false, "get omit": false, "get include": false}},
		{"the page's origin listed", page.URL, map[string]bool{"post omit": true, "post include": true, "get omit": true, "get include": true}},
		{"another origin listed", "https://app.example.com", map[string]bool{"post omit": false, "post include": false, "get omit": false, "get include": false}},
		{"wildcard", "*", map[string]bool{"post omit": true, "post include": false, "get omit": true, "get include": false}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			gw := newGateway(t, up, map[string]string{"CORS_ALLOWED_ORIGINS": tc.origins})
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			cmd := exec.CommandContext(ctx, "node", filepath.Join(ideDir, "cors.mjs"), page.URL, gw.url)
			cmd.Env = append(os.Environ(), "CHROMIUM="+browser)
			out, err := cmd.Output()
			if ee := (*exec.ExitError)(nil); errors.As(err, &ee) {
				t.Fatalf("drive Chromium: %v\n%s", err, ee.Stderr)
			} else if err != nil {
				t.Fatalf("drive Chromium: %v", err)
			}
			var got map[string]string
			if err := json.Unmarshal(out, &got); err != nil {
				t.Fatalf("cors.mjs printed %q: %v", out, err)
			}
			for call, want := range tc.want {
				if could := strings.Contains(got[call], read); could != want {
					t.Errorf("%s: the page could read the answer: %v, want %v (it got %.120q)", call, could, want, got[call])
				}
			}
		})
	}
}

// The body deadline ends once the body is in: an SSE stream, whose request body is read at
// once, outlives REQUEST_BODY_TIMEOUT and still delivers.
func TestAnSSEStreamOutlivesTheBodyDeadline(t *testing.T) {
	t.Parallel()
	gw := newGateway(t, newUpstream(t, false), map[string]string{"REQUEST_BODY_TIMEOUT": "1s"})
	sse := openSSE(t, gw, progressSubscription, nil)
	waitSubscribers(t, gw, 1)
	time.Sleep(2500 * time.Millisecond) // past the deadline the body would have had
	gw.mustDeliver(t, progress("w-late", 42))
	if ev := sse.next(); ev.name != "next" || !strings.Contains(ev.data, "w-late") {
		t.Errorf("after the body deadline the stream gave %q %s, want the event", ev.name, ev.data)
	}
}
