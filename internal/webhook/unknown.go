package webhook

import (
	"sync"

	"github.com/advisorhq/gateway/internal/advisorspec"
)

// maxWarnedValues bounds the unknown values the receiver remembers having warned about: the
// service chooses them, and a sender gone wrong could otherwise grow the set without end.
// Past it, new values are still counted (Receiver.ObserveUnknown), no longer logged.
const maxWarnedValues = 1000

// warnedValues is the set of unknown values already logged by this process.
type warnedValues struct {
	mu   sync.Mutex
	seen map[advisorspec.UnknownValue]struct{}
}

// first reports whether v is new, remembering it while there is room.
func (s *warnedValues) first(v advisorspec.UnknownValue) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.seen[v]; ok || len(s.seen) >= maxWarnedValues {
		return false
	}
	if s.seen == nil {
		s.seen = map[advisorspec.UnknownValue]struct{}{}
	}
	s.seen[v] = struct{}{}
	return true
}
