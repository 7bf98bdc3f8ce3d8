// Package bytesize reads and writes byte counts the way people write them in settings and
// messages: "5GiB", "100MiB", "2MB", "1024".
package bytesize

import (
	"fmt"
	"strconv"
	"strings"
)

var binary = []struct {
	size int64
	name string
}{{1 << 30, "GiB"}, {1 << 20, "MiB"}, {1 << 10, "KiB"}}

// Format writes n in the largest binary unit that divides it exactly ("5 GiB"), or in bytes.
func Format(n int64) string {
	for _, u := range binary {
		if n >= u.size && n%u.size == 0 {
			return fmt.Sprintf("%d %s", n/u.size, u.name)
		}
	}
	return fmt.Sprintf("%d bytes", n)
}

// Parse reads a positive byte count: a whole number with an optional unit, binary (KiB, MiB,
// GiB) or decimal (KB, MB, GB, B), with or without a space before it.
func Parse(v string) (int64, error) {
	units := []struct {
		suffix string
		size   int64
	}{
		{"KiB", 1 << 10}, {"MiB", 1 << 20}, {"GiB", 1 << 30},
		{"KB", 1e3}, {"MB", 1e6}, {"GB", 1e9}, {"B", 1},
	}
	num, mult := strings.TrimSpace(v), int64(1)
	for _, u := range units {
		if strings.HasSuffix(num, u.suffix) {
			num, mult = strings.TrimSpace(strings.TrimSuffix(num, u.suffix)), u.size
			break
		}
	}
	n, err := strconv.ParseInt(num, 10, 64)
	if err != nil || n <= 0 || n > (1<<62)/mult {
		return 0, fmt.Errorf("%q is not a size: write a positive number of bytes, optionally with KiB, MiB, GiB, KB, MB or GB", v)
	}
	return n * mult, nil
}
