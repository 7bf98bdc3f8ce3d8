package bytesize_test

import (
	"testing"

	"github.com/advisorhq/gateway/internal/bytesize"
)

func TestParse(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want int64
		ok   bool
	}{
		{"1024", 1024, true}, {"100MiB", 100 << 20, true}, {"5GiB", 5 << 30, true}, {"5GB", 5e9, true},
		{"1 KiB", 1024, true}, {"12B", 12, true}, {"0", 0, false}, {"-1", 0, false}, {"lots", 0, false},
		{"1.5GiB", 0, false}, {"9999999999GiB", 0, false},
	} {
		got, err := bytesize.Parse(tc.in)
		if (err == nil) != tc.ok || got != tc.want {
			t.Errorf("Parse(%q) = %d, %v; want %d, ok %v", tc.in, got, err, tc.want, tc.ok)
		}
	}
}

func TestFormatUsesTheLargestExactUnit(t *testing.T) {
	for n, want := range map[int64]string{
		5 << 30: "5 GiB", 2 << 20: "2 MiB", 3 << 10: "3 KiB",
		1536: "1536 bytes", // 1.5 KiB: no unit divides it exactly
		1000: "1000 bytes",
	} {
		if got := bytesize.Format(n); got != want {
			t.Errorf("Format(%d) = %q, want %q", n, got, want)
		}
	}
}
