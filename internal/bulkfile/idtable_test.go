package bulkfile

import (
	"math/rand/v2"
	"testing"
)

// The table must find every key it was given, including the hash 0 that marks an empty slot,
// across the growths a million-row file goes through, and none it was not given.
func TestIDTableFindsEveryKeyAcrossGrowth(t *testing.T) {
	var tab idTable
	r := rand.New(rand.NewPCG(1, 2))
	keys := make([]uint64, 200_000)
	for i := range keys {
		keys[i] = r.Uint64()
	}
	keys[7] = 0
	for i, k := range keys {
		tab.set(k, uint64(i))
	}
	tab.set(keys[3], 42) // an update keeps one entry
	if tab.len() != len(keys) {
		t.Fatalf("got %d entries, want %d", tab.len(), len(keys))
	}
	for i, k := range keys {
		want := uint64(i)
		if i == 3 {
			want = 42
		}
		if got, ok := tab.get(k); !ok || got != want {
			t.Fatalf("key %d: got %d, %v; want %d, true", i, got, ok, want)
		}
	}
	for range 1000 {
		if _, ok := tab.get(r.Uint64()); ok {
			t.Fatal("got a key that was never set")
		}
	}
	for i, sh := range tab.shards {
		if load := float64(sh.n) / float64(len(sh.slots)); load > 0.8 {
			t.Errorf("shard %d: got load %.2f, want at most 0.80", i, load)
		}
	}
}
