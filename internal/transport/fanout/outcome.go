package fanout

import (
	"github.com/99designs/gqlgen/graphql"

	"github.com/advisorhq/gateway/internal/apperr"
)

// Outcome is how an operation's stream ended.
type Outcome int

const (
	Done        Outcome = iota // the stream ended (complete)
	Failed                     // an error ended it; it was sent
	Unavailable                // the event store is down; the error was sent
	Gone                       // the client went away
)

// Ending reports whether resp is its stream's last word, and how the stream then ends: a
// response with errors and no data ends it, Unavailable when one of the errors says the event
// store is down, Failed otherwise.
func Ending(resp *graphql.Response) (Outcome, bool) {
	if len(resp.Data) != 0 || len(resp.Errors) == 0 {
		return 0, false
	}
	for _, e := range resp.Errors {
		if e.Extensions["code"] == apperr.EventsUnavailable {
			return Unavailable, true
		}
	}
	return Failed, true
}
