package transport

import (
	"errors"
	"io"
	"net/http/httptest"
	"testing"
	"unsafe"
)

// A body a layer in front read whole is taken as it is, not copied, while nothing has read from
// it since; once something has, what is left of it is read as any body is; and its bound holds
// either way.
func TestABodyReadWholeInFrontIsTakenWithoutACopy(t *testing.T) {
	const body = `{"query":"{ __typename }"}`
	cases := []struct {
		name      string
		readFirst int   // bytes read from the body before readBody
		max       int64 // readBody's bound
		want      string
		shared    bool
		tooLarge  bool
	}{
		{name: "untouched", want: body, shared: true},
		{name: "untouched, within its bound", max: int64(len(body)), want: body, shared: true},
		{name: "untouched, past its bound", max: int64(len(body)) - 1, tooLarge: true},
		{name: "partly read", readFirst: 2, want: body[2:]},
		{name: "read to the end", readFirst: len(body), want: ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			b := []byte(body)
			r := httptest.NewRequest("POST", "/graphql", nil)
			r.Body = NewWholeBody(b)
			if _, err := io.ReadFull(r.Body, make([]byte, c.readFirst)); err != nil {
				t.Fatal(err)
			}
			got, err := readBody(r, c.max)
			var tl *tooLargeError
			if c.tooLarge {
				if !errors.As(err, &tl) {
					t.Fatalf("readBody = %q, %v; want it refused as too large", got, err)
				}
				return
			}
			if err != nil || string(got) != c.want {
				t.Fatalf("readBody = %q, %v; want %q", got, err, c.want)
			}
			if shared := len(got) > 0 && unsafe.SliceData(got) == unsafe.SliceData(b); shared != c.shared {
				t.Errorf("the bytes read share the body's: %v, want %v", shared, c.shared)
			}
			if n, _ := r.Body.Read(make([]byte, 1)); n != 0 {
				t.Error("the body still had bytes to read after readBody")
			}
		})
	}
}
