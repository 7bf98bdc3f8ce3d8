package gqlrun

import (
	"testing"

	"github.com/vektah/gqlparser/v2/ast"
)

// A memo gives back what was put for a selection set, and nothing for another, however many
// it holds: the same set seen on another type, or its first selections only, is another.
func TestAMemoFindsWhatWasPutForASelectionAndNothingElse(t *testing.T) {
	for _, n := range []int{1, 4, 5, 40, 1000} {
		sets := make([]ast.SelectionSet, n)
		for i := range sets {
			sets[i] = ast.SelectionSet{&ast.Field{Name: "a"}, &ast.Field{Name: "b"}}
		}
		var m memo[int]
		for i, sel := range sets {
			m.put(key(sel, "Person"), i)
			m.put(key(sel, "Trust"), -i)
		}
		m.put(key(sets[0], "Person"), 7) // put again: replaced, not added
		if m.n != 2*n {
			t.Errorf("%d sets: holds %d entries, want %d", n, m.n, 2*n)
		}
		for i, sel := range sets {
			want := i
			if i == 0 {
				want = 7
			}
			if v, ok := m.get(key(sel, "Person")); !ok || v != want {
				t.Errorf("%d sets: set %d on Person is %d, %v; want %d", n, i, v, ok, want)
			}
			if v, ok := m.get(key(sel, "Trust")); !ok || v != -i {
				t.Errorf("%d sets: set %d on Trust is %d, %v; want %d", n, i, v, ok, -i)
			}
			if v, ok := m.get(key(sel[:1], "Person")); ok {
				t.Errorf("%d sets: the first selection of set %d alone found %d", n, i, v)
			}
			if v, ok := m.get(key(sel, "Entity")); ok {
				t.Errorf("%d sets: set %d on a type never put found %d", n, i, v)
			}
		}
	}
	var empty memo[bool]
	if _, ok := empty.get(key(ast.SelectionSet{&ast.Field{}}, "Person")); ok {
		t.Error("an empty memo found something")
	}
}

// A memo reserved for n entries takes them without growing its table.
func TestAReservedMemoHoldsItsEntriesWithoutGrowing(t *testing.T) {
	for _, n := range []int{1, 4, 5, 17, 100} {
		var m memo[bool]
		m.reserve(n)
		slots := &m.slots[0]
		for range n {
			m.put(key(ast.SelectionSet{&ast.Field{}}, "Person"), true)
		}
		if &m.slots[0] != slots {
			t.Errorf("reserved for %d, the table grew to %d slots", n, len(m.slots))
		}
	}
}
