package gqlrun

import "unsafe"

// memo is what one lane remembers by selection set (Lane.Fields, Lane.ReachesIO): a
// small table addressed by a hash of the selection's address, probed in order. An operation has
// a few dozen selection sets and asks about one per object it writes, so a map's general
// hashing and growth were a twentieth of a 20-contact family query.
type memo[V any] struct {
	slots []memoSlot[V]
	n     int
}

type memoSlot[V any] struct {
	k    selection
	v    V
	used bool
}

// minMemo is a new table's size: a subscription's few selection sets fit, and a query's grow it.
const minMemo = 8

func (k selection) hash() uint64 {
	h := uint64(uintptr(unsafe.Pointer(k.first))) ^ uint64(uintptr(unsafe.Pointer(k.on)))<<7 ^ uint64(k.n)
	return h * 0x9e3779b97f4a7c15 // Fibonacci hashing: the top bits mix every bit of h
}

func (m *memo[V]) get(k selection) (V, bool) {
	if len(m.slots) > 0 {
		mask := uint64(len(m.slots) - 1)
		for i := k.hash() >> 32 & mask; ; i = (i + 1) & mask {
			s := &m.slots[i]
			if !s.used {
				break
			}
			if s.k == k {
				return s.v, true
			}
		}
	}
	var zero V
	return zero, false
}

// reserve makes an empty memo's table big enough for n entries without growing.
func (m *memo[V]) reserve(n int) {
	if m.slots == nil && n > 0 {
		size := minMemo
		for size < 2*n {
			size *= 2
		}
		m.slots = make([]memoSlot[V], size)
	}
}

// put remembers v for k. The table stays at most half full, so a probe soon meets an empty slot.
func (m *memo[V]) put(k selection, v V) {
	if 2*(m.n+1) > len(m.slots) {
		old := m.slots
		m.slots, m.n = make([]memoSlot[V], max(2*len(old), minMemo)), 0 // a power of 2
		for _, s := range old {
			if s.used {
				m.put(s.k, s.v)
			}
		}
	}
	mask := uint64(len(m.slots) - 1)
	for i := k.hash() >> 32 & mask; ; i = (i + 1) & mask {
		s := &m.slots[i]
		if !s.used {
			*s = memoSlot[V]{k: k, v: v, used: true}
			m.n++
			return
		}
		if s.k == k {
			s.v = v
			return
		}
	}
}
