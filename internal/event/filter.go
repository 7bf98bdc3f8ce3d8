package event

import "slices"

// Filter selects events; an empty list selects everything on that axis, and the axes combine
// with AND. TypeUnknown and GroupUnknown select the events of every type the specification does
// not have.
type Filter struct {
	Wids   []string     `json:"wids"`
	Types  []EventType  `json:"types"`
	Groups []EventGroup `json:"groups"`
}

// Match reports whether ev passes the filter.
func (f *Filter) Match(ev Event) bool {
	if f == nil {
		return true
	}
	h := ev.Header()
	return (len(f.Wids) == 0 || slices.Contains(f.Wids, h.Wid)) &&
		(len(f.Types) == 0 || slices.Contains(f.Types, h.EventType.Known())) &&
		(len(f.Groups) == 0 || slices.Contains(f.Groups, h.EventType.Group()))
}
