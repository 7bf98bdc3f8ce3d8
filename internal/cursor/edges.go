package cursor

// Edges makes n edges in one piece, each filled by fill, for a connection whose edges are
// asked for: one allocation for the page rather than one an edge.
func Edges[E any](n int, fill func(i int, e *E)) []*E {
	edges, out := make([]E, n), make([]*E, n)
	for i := range edges {
		fill(i, &edges[i])
		out[i] = &edges[i]
	}
	return out
}
