package family

import (
	"regexp"
	"strconv"
	"strings"

	"github.com/advisorhq/gateway/internal/apperr"
)

// An Employer Identification Number is an identifier, not a quantity: nine digits, written
// 12-3456789, that may begin with 0, which the service's integer drops. The schema gives it as
// a String in that form; the service's "integer" has no bound, so a value that is not nine
// digits is given as its decimal digits, and taken as any whole number, rather than lost.

// einWritten is an EIN as it is written: two digits, a hyphen, seven digits.
var einWritten = regexp.MustCompile(`^[0-9]{2}-[0-9]{7}$`)

// formatEIN is the service's ein as the schema gives it: 12-3456789 (zero-padded) for a value
// of nine digits or fewer, its decimal digits for any other.
func formatEIN(ein *int64) *string {
	if ein == nil {
		return nil
	}
	var b [20]byte
	s := string(appendEIN(b[:0], *ein))
	return &s
}

// appendEIN appends v written as formatEIN writes it.
func appendEIN(b []byte, v int64) []byte {
	if v < 0 || v > 999_999_999 {
		return strconv.AppendInt(b, v, 10)
	}
	var d [9]byte
	for i := len(d) - 1; i >= 0; i-- {
		d[i] = byte('0' + v%10)
		v /= 10
	}
	return append(append(append(b, d[:2]...), '-'), d[2:]...)
}

// einLen is the length of v written as formatEIN writes it.
func einLen(v int64) int {
	var b [20]byte
	return len(appendEIN(b[:0], v))
}

// parseEIN is the ein input field at field as the service's integer: 12-3456789, nine digits
// (leading zeros kept in the value's sense: 012345678 is 12345678), or any whole number the
// service's integer holds.
func parseEIN(field string, ein *string) (*int64, error) {
	if ein == nil {
		return nil, nil
	}
	s := *ein
	if einWritten.MatchString(s) {
		s = strings.Replace(s, "-", "", 1)
	}
	v, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		return nil, apperr.Input(field, "ein must be an integer or an EIN written 12-3456789")
	}
	return &v, nil
}
