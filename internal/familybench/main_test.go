package main

import (
	"context"
	"io"
	"strings"
	"testing"
)

// Bad flags are refused before anything is built or started, each with what is wrong.
func TestBadFlagsAreRefusedBeforeAnythingStarts(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"-turn", "-1s"}, "-turn: zero or more"},
		{[]string{"-queries", "100", "-turn", "2s"}, "-turn shares out -duration"},
		{[]string{"-rounds", "0"}, "-rounds: at least 1"},
		{[]string{"-contacts", "20,1"}, "want sizes of 2 or more"},
		{[]string{"-contacts", "many"}, "want sizes of 2 or more"},
	} {
		err := run(context.Background(), tc.args, io.Discard, io.Discard)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%v: error %v, want one saying %q", tc.args, err, tc.want)
		}
	}
}
