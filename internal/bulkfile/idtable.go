package bulkfile

import "math/bits"

// idTable maps 64-bit id hashes to a 32-bit entry. A Go map of the same would cost about 32
// bytes an id at a million ids (16-byte slots, load factor and doubling); this costs 12 bytes a
// slot and holds no pointers for the collector to scan: a million ids take about 20 MiB. It is
// split in shards, by the hash's low bits, that grow one at a time, because growing one table
// of a million ids would keep the old and the new array alive together (30 MiB) and the
// collector would then let the heap grow to twice that.
type idTable struct {
	shards [idTableShards]idShard
}

const (
	idTableShards  = 64
	idTableMinSize = 64
)

func (t *idTable) shard(h uint64) *idShard { return &t.shards[h%idTableShards] }

func (t *idTable) get(h uint64) (uint32, bool) { return t.shard(h).get(h) }
func (t *idTable) set(h uint64, v uint32)      { t.shard(h).set(h, v) }

// len returns the number of entries.
func (t *idTable) len() int {
	n := 0
	for i := range t.shards {
		n += t.shards[i].n
	}
	return n
}

// idShard is one shard: two flat arrays with open addressing and linear probing.
type idShard struct {
	keys []uint64 // 0 is an empty slot; a hash of 0 is stored as 1
	vals []uint32
	n    int
}

func (t *idShard) slot(h uint64) int {
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

func (t *idShard) get(h uint64) (uint32, bool) {
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

func (t *idShard) set(h uint64, v uint32) {
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

func (t *idShard) grow() {
	size := max(idTableMinSize, len(t.keys)+len(t.keys)/2)
	old, oldVals := t.keys, t.vals
	t.keys, t.vals, t.n = make([]uint64, size), make([]uint32, size), 0
	for i, k := range old {
		if k != 0 {
			t.set(k, oldVals[i])
		}
	}
}
