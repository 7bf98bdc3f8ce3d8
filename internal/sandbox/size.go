package sandbox

import (
	"fmt"
	"strconv"
	"strings"
)

// The sandbox writes and reads its own byte sizes rather than borrow the gateway's helper: it
// stands for a remote service and imports nothing of the gateway (deps_test.go).

// sizeUnits are the units a size may be written in, binary ones first so that formatSize
// prefers them; a suffix that ends another ("B" of "KiB") comes after it, for parseSize.
var sizeUnits = []struct {
	name  string
	bytes int64
}{
	{"GiB", 1 << 30}, {"MiB", 1 << 20}, {"KiB", 1 << 10},
	{"GB", 1e9}, {"MB", 1e6}, {"KB", 1e3}, {"B", 1},
}

// formatSize writes n in the largest binary unit that divides it exactly, such as "5 GiB",
// else as bytes ("1536 bytes"), so that a limit reads as it was set.
func formatSize(n int64) string {
	for _, u := range sizeUnits[:3] {
		if n >= u.bytes && n%u.bytes == 0 {
			return strconv.FormatInt(n/u.bytes, 10) + " " + u.name
		}
	}
	return strconv.FormatInt(n, 10) + " bytes"
}

// parseSize reads a positive whole number of bytes with an optional unit, such as "2MiB",
// "5 GB" or "1024".
func parseSize(v string) (int64, error) {
	num, scale := strings.TrimSpace(v), int64(1)
	for _, u := range sizeUnits {
		if rest, ok := strings.CutSuffix(num, u.name); ok {
			num, scale = strings.TrimSpace(rest), u.bytes
			break
		}
	}
	n, err := strconv.ParseInt(num, 10, 64)
	if err != nil || n <= 0 || n > (1<<62)/scale {
		return 0, fmt.Errorf("%q is not a size: write a positive number of bytes, optionally with KiB, MiB, GiB, KB, MB or GB", v)
	}
	return n * scale, nil
}
