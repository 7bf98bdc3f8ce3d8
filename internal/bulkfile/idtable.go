package bulkfile

import "math/bits"

// idTable maps 64-bit id hashes to a 64-bit entry. A Go map of the same would cost about 40
// bytes an id at a million ids (16-byte slots, load factor and doubling); this costs 16 bytes a
// slot and holds no pointers for the collector to scan: a million ids take about 27 MiB. A
// slot holds its key and its entry side by side, so that a lookup touches one cache line. It is
// split in shards, by the hash's low bits, that grow one at a time, because growing one table
// of a million ids would keep the old and the new array alive together (40 MiB) and the
// collector would then let the heap grow to twice that.
type idTable struct {
	shards [idTableShards]idShard
}

const (
	idTableShards  = 64
	idTableMinSize = 64
)

func (t *idTable) shard(h uint64) *idShard { return &t.shards[h%idTableShards] }

func (t *idTable) get(h uint64) (uint64, bool) { return t.shard(h).get(h) }
func (t *idTable) set(h uint64, v uint64)      { t.shard(h).set(h, v) }

// len returns the number of entries.
func (t *idTable) len() int {
	n := 0
	for i := range t.shards {
		n += t.shards[i].n
	}
	return n
}

// idShard is one shard: a flat array with open addressing and linear probing.
type idShard struct {
	slots []idSlot
	n     int
}

type idSlot struct {
	key uint64 // 0 is an empty slot; a hash of 0 is stored as 1
	val uint64
}

func (t *idShard) slot(h uint64) int {
	// Fast range reduction: the high half of h × len maps h onto [0, len) without a division,
	// so the size need not be a power of two.
	hi, _ := bits.Mul64(h, uint64(len(t.slots)))
	return int(hi)
}

func fixKey(h uint64) uint64 {
	if h == 0 {
		return 1
	}
	return h
}

func (t *idShard) get(h uint64) (uint64, bool) {
	if t.n == 0 {
		return 0, false
	}
	h = fixKey(h)
	for i := t.slot(h); ; {
		switch s := &t.slots[i]; s.key {
		case h:
			return s.val, true
		case 0:
			return 0, false
		}
		if i++; i == len(t.slots) {
			i = 0
		}
	}
}

func (t *idShard) set(h uint64, v uint64) {
	// Kept at most 80% full, where linear probing still finds a key in a few steps.
	if (t.n+1)*5 > len(t.slots)*4 {
		t.grow()
	}
	h = fixKey(h)
	for i := t.slot(h); ; {
		switch s := &t.slots[i]; s.key {
		case h:
			s.val = v
			return
		case 0:
			s.key, s.val = h, v
			t.n++
			return
		}
		if i++; i == len(t.slots) {
			i = 0
		}
	}
}

func (t *idShard) grow() {
	old := t.slots
	t.slots, t.n = make([]idSlot, max(idTableMinSize, len(old)+len(old)/2)), 0
	for _, s := range old {
		if s.key != 0 {
			t.set(s.key, s.val)
		}
	}
}
