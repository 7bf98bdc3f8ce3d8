package sandbox

import "testing"

func TestParseSizeReadsBytesWithAnOptionalUnit(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want int64
		ok   bool
	}{
		{"1024", 1024, true}, {"100MiB", 100 << 20, true}, {"5GiB", 5 << 30, true}, {"5GB", 5e9, true},
		{"1 KiB", 1024, true}, {" 3 MB ", 3e6, true}, {"12B", 12, true},
		{"0", 0, false}, {"-1", 0, false}, {"lots", 0, false}, {"1.5GiB", 0, false},
		{"9999999999GiB", 0, false}, {"MiB", 0, false},
	} {
		got, err := parseSize(tc.in)
		if (err == nil) != tc.ok || got != tc.want {
			t.Errorf("parseSize(%q) = %d, %v; want %d, ok %v", tc.in, got, err, tc.want, tc.ok)
		}
	}
}

func TestFormatSizeUsesTheLargestExactBinaryUnit(t *testing.T) {
	for n, want := range map[int64]string{
		5 << 30: "5 GiB", 2 << 20: "2 MiB", 3 << 10: "3 KiB", 1 << 30 * 3 / 2: "1536 MiB",
		1536: "1536 bytes", // 1.5 KiB: no unit divides it exactly
		1000: "1000 bytes", 0: "0 bytes",
	} {
		if got := formatSize(n); got != want {
			t.Errorf("formatSize(%d) = %q, want %q", n, got, want)
		}
	}
}
