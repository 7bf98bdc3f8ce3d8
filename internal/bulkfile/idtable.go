package bulkfile

import "math/bits"

// idTable maps 64-bit id hashes to a 32-bit entry, in two flat arrays with open addressing.
// A Go map of the same would cost about 32 bytes an id at a million ids (16-byte slots, load
// factor and doubling); this costs 12 bytes a slot, grows by half rather than doubling, and
// holds no pointers for the collector to scan: a million ids take about 18 MiB.
type idTable struct {
	keys []uint64 // 0 is an empty slot; a hash of 0 is stored as 1
	vals []uint32
	n    int
}

const idTableMinSize = 1 << 10

func (t *idTable) slot(h uint64) int {
	// Fast range reduction: the high half of h × len maps h onto [0, len) without a division,
	// so the size need not be a power of two.
	hi, _ := bits.Mul64(h, uint64(len(t.keys)))
	return int(hi)
}

func fixKey(h uint64) uint64 {
	if h == 0 {
		return 1
	}
	return h
}

func (t *idTable) get(h uint64) (uint32, bool) {
	if t.n == 0 {
		return 0, false
	}
	h = fixKey(h)
	for i := t.slot(h); ; {
		switch t.keys[i] {
		case h:
			return t.vals[i], true
		case 0:
			return 0, false
		}
		if i++; i == len(t.keys) {
			i = 0
		}
	}
}

func (t *idTable) set(h uint64, v uint32) {
	// Kept at most 80% full, where linear probing still finds a key in a few steps.
	if (t.n+1)*5 > len(t.keys)*4 {
		t.grow()
	}
	h = fixKey(h)
	for i := t.slot(h); ; {
		switch t.keys[i] {
		case h:
			t.vals[i] = v
			return
		case 0:
			t.keys[i], t.vals[i] = h, v
			t.n++
			return
		}
		if i++; i == len(t.keys) {
			i = 0
		}
	}
}

// getLine returns the entry of h, or 0 when there is none.
func (t *idTable) getLine(h uint64) uint32 {
	v, _ := t.get(h)
	return v
}

func (t *idTable) grow() {
	size := max(idTableMinSize, len(t.keys)+len(t.keys)/2)
	old, oldVals := t.keys, t.vals
	t.keys, t.vals, t.n = make([]uint64, size), make([]uint32, size), 0
	for i, k := range old {
		if k != 0 {
			t.set(k, oldVals[i])
		}
	}
}
