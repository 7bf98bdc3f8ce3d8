package sandbox_test

import (
	"bytes"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/advisorhq/gateway/internal/sandbox"
)

// Issue 26: "the gateway can serve what a newcomer needs of the sandbox on its own origin". Below
// MountPath the sandbox answers as at its root, and asks for the same credentials: the mount is
// a second address of each endpoint, never a way around one.
func TestBelowTheMountPathEveryEndpointAnswersAsAtTheRoot(t *testing.T) {
	t.Parallel()
	f := newSandbox(t, sandbox.Options{}, true)
	wid, ok := f.sb.TopAccountWID(sandbox.DemoFamilyExternalID)
	if !ok {
		t.Fatal("the demo family has no wid")
	}
	for _, tc := range []struct {
		name, method, path string
		auth               func(*http.Request)
		status             int
	}{
		{"v2 without the token", "GET", "/v2/top-accounts/", nil, 403},
		{"v2 with the token", "GET", "/v2/top-accounts/" + wid, bearer, 200},
		{"v2 with another token", "GET", "/v2/top-accounts/", func(r *http.Request) { r.Header.Set("Authorization", "Bearer nope") }, 403},
		{"v1 without Basic credentials", "GET", "/v1/clients/" + wid + "/contacts", nil, 403},
		{"v1 with them, for a client there is not", "GET", "/v1/clients/" + wid + "/contacts", func(r *http.Request) { r.SetBasicAuth(testUser, testPass) }, 404},
		{"v1 with the bearer token instead", "GET", "/v1/clients/" + wid + "/contacts", bearer, 403},
		{"an upload address with no signature", "PUT", "/uploads/" + wid + "/x", nil, 403},
		{"a download address with no signature", "GET", "/downloads/" + wid + "/x", nil, 403},
		{"the chat API without a session token", "GET", "/v1/chat/history", nil, 401},
		{"the chat API with the access token", "GET", "/v1/chat/history", bearer, 401},
		{"referrals without their key", "POST", "/v1/refer/acme", nil, 401},
		{"health", "GET", "/healthz", nil, 200},
		{"an unknown path", "GET", "/v3/anything", nil, 404},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for _, prefix := range []string{"", sandbox.MountPath} {
				req := f.request(tc.method, prefix+tc.path, nil)
				if tc.auth != nil {
					tc.auth(req)
				}
				if r := docOn(f, t).do(req); r.status != tc.status {
					t.Errorf("%s %s = %d, want %d as at the root; body %s", tc.method, prefix+tc.path, r.status, tc.status, r.body)
				}
			}
		})
	}
	// The sandbox's own endpoints keep their paths, which are below MountPath already.
	for _, tc := range []struct {
		method, path string
		auth         func(*http.Request)
		status       int
	}{
		{"POST", "/sandbox/token", nil, 403},
		{"POST", "/sandbox/events", nil, 403},
		{"GET", "/sandbox/jwks.json", nil, 200},
	} {
		req := f.request(tc.method, tc.path, nil)
		if r := f.do(req); r.status != tc.status {
			t.Errorf("%s %s = %d, want %d", tc.method, tc.path, r.status, tc.status)
		}
	}
	r := f.do(f.request("GET", sandbox.MountPath, nil)).wantOK(t)
	if !strings.Contains(string(r.body), "Served below /sandbox on this origin") {
		t.Errorf("the index below the mount does not say where it is served:\n%s", r.body)
	}
}

func bearer(r *http.Request) { r.Header.Set("Authorization", "Bearer "+testToken) }

// Issue 26: "Every address a browser is given must be on the gateway's origin". An address the
// sandbox gives below MountPath leads back below it, on the host the request came to; at the
// root, to the root.
func TestPresignedAddressesLeadBackTheWayTheRequestCame(t *testing.T) {
	t.Parallel()
	f := newSandbox(t, sandbox.Options{}, true)
	wid, _ := f.sb.TopAccountWID(sandbox.DemoFamilyExternalID)
	for _, prefix := range []string{"", sandbox.MountPath} {
		t.Run("below "+prefix+"/", func(t *testing.T) {
			g := docOn(f, t)
			created := g.v2("POST", prefix+docsPath(wid), docFull()).wantOK(t).object(t)
			vaultID, upload := str(t, created, "vault_id"), str(t, created, "upload_uri")
			if want := f.srv.URL + prefix + "/uploads/"; !strings.HasPrefix(upload, want) {
				t.Fatalf("upload_uri %s, want it below %s", upload, want)
			}
			put, err := http.NewRequest(http.MethodPut, upload, strings.NewReader("%PDF-1.7 notes"))
			if err != nil {
				t.Fatal(err)
			}
			put.Header.Set("Content-Type", "application/pdf")
			g.do(put).wantOK(t)
			got := g.v2("GET", prefix+docPath(wid, vaultID), nil).wantOK(t).object(t)
			download := str(t, got, "download_uri")
			if want := f.srv.URL + prefix + "/downloads/"; !strings.HasPrefix(download, want) {
				t.Fatalf("download_uri %s, want it below %s", download, want)
			}
			resp, err := http.Get(download)
			if err != nil {
				t.Fatal(err)
			}
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode != 200 || !bytes.Equal(body, []byte("%PDF-1.7 notes")) {
				t.Errorf("GET download_uri = %d %q, want the uploaded bytes", resp.StatusCode, body)
			}
		})
	}
}

// The chat page below MountPath loads its files and calls its API there, and with
// EmbedSameOrigin a page of the sandbox's own origin (the gateway's pop-out, whatever host
// the browser calls it by) may frame it.
func TestTheChatPageBelowTheMountPathStaysBelowIt(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name      string
		same      bool
		path      string
		contains  []string
		ancestors string
	}{
		{"at the root", false, "/v1/chat", []string{`href="/v1/chat/chat.css"`, `src="/v1/chat/chat.js"`, `data-base=""`}, "frame-ancestors https://crm.example.com"},
		{"below the mount", false, "/sandbox/v1/chat", []string{`href="/sandbox/v1/chat/chat.css"`, `src="/sandbox/v1/chat/chat.js"`, `data-base="/sandbox"`}, "frame-ancestors https://crm.example.com"},
		{"embeddable by its own origin", true, "/sandbox/v1/chat", []string{`data-embed-origins="https://crm.example.com &#39;self&#39;"`}, "frame-ancestors https://crm.example.com 'self'"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			f := newSandbox(t, sandbox.Options{EmbedOrigins: []string{"https://crm.example.com"}, EmbedSameOrigin: tc.same}, false)
			r := f.do(f.request("GET", tc.path, nil)).wantOK(t)
			for _, want := range tc.contains {
				if !strings.Contains(string(r.body), want) {
					t.Errorf("the chat page holds no %s:\n%s", want, r.body)
				}
			}
			if csp := r.header.Get("Content-Security-Policy"); !strings.HasSuffix(csp, tc.ancestors) {
				t.Errorf("its policy is %q, want it to end %q", csp, tc.ancestors)
			}
			for _, file := range []string{"/sandbox/v1/chat/chat.js", "/sandbox/v1/sdk/assistant-sdk.js"} {
				f.do(f.request("GET", file, nil)).wantOK(t)
			}
		})
	}
}
