package sandboxtest_test

import (
	"net/http"
	"slices"
	"testing"

	"github.com/advisorhq/gateway/internal/sandbox"
	"github.com/advisorhq/gateway/internal/sandbox/sandboxtest"
)

func TestStartServesTheSandboxAndRecordsRequests(t *testing.T) {
	s := sandboxtest.Start(t, sandbox.Options{AccessToken: "tok", BasicCredentials: "u:p", Empty: true})
	if s.Sandbox == nil {
		t.Fatal("got no Sandbox, want the one started")
	}
	get := func(path string) int {
		t.Helper()
		req, err := http.NewRequest("GET", s.URL+path, nil)
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Authorization", "Bearer tok")
		resp, err := s.Client().Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	if status := get("/v2/top-accounts/"); status != http.StatusOK {
		t.Errorf("GET /v2/top-accounts/: got status %d, want 200", status)
	}
	get("/v2/top-accounts/none")
	if got, want := s.Requests(), []string{"GET /v2/top-accounts/", "GET /v2/top-accounts/none"}; !slices.Equal(got, want) {
		t.Errorf("got requests %v, want %v", got, want)
	}
	s.ResetRequests()
	if got := s.Requests(); len(got) != 0 {
		t.Errorf("after ResetRequests, got requests %v, want none", got)
	}
}

func TestServeRecordsRequestsToAnyHandler(t *testing.T) {
	s := sandboxtest.Serve(t, http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.WriteHeader(http.StatusTeapot)
	}))
	resp, err := s.Client().Post(s.URL+"/x", "application/json", nil)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusTeapot {
		t.Errorf("got status %d, want 418", resp.StatusCode)
	}
	if got, want := s.Requests(), []string{"POST /x"}; !slices.Equal(got, want) {
		t.Errorf("got requests %v, want %v", got, want)
	}
	if s.Sandbox != nil {
		t.Errorf("got a Sandbox from Serve, want none")
	}
}
