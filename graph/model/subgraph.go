package model

// Subgraph is what the federation's `_service` answers: the schema a federation's router
// composes the gateway's into its own with.
type Subgraph struct {
	SDL string
}
