package model

import (
	"time"

	"github.com/advisorhq/gateway/internal/nodeid"
)

// NodeBulkUpload is the GraphQL type of a bulk load's global id.
const NodeBulkUpload = "BulkUpload"

// BulkUpload is a bulk load and where it stands. Written by hand, unlike the rest of this
// package, so that its id is a method: made from LoadID when a query selects it.
type BulkUpload struct {
	// The load's own id, as uploadBulkFiles made it.
	LoadID string    `json:"loadId"`
	Phase  BulkPhase `json:"phase"`
	// Rows checked so far; rowsTotal once they all are.
	Rows      int  `json:"rows"`
	RowsTotal *int `json:"rowsTotal,omitempty"`
	// Bytes sent so far, of bytesTotal (whole numbers; Float as GraphQL's Int stops at 2 GiB).
	Bytes      float64  `json:"bytes"`
	BytesTotal *float64 `json:"bytesTotal,omitempty"`
	// Why the load FAILED, in words for its user.
	Error *string `json:"error,omitempty"`
	// What the gateway's checks found, when the load was refused for them.
	Validation *BulkReport `json:"validation,omitempty"`
	// What the service made of each file, once it processed them (DONE).
	Results   []*BulkResult `json:"results,omitempty"`
	UpdatedAt time.Time     `json:"updatedAt"`
}

// ID is the load's global id (nodeid).
func (b *BulkUpload) ID() string { return b.NodeID().String() }

// NodeID is ID not yet encoded, which the executor writes without a string of its own.
func (b *BulkUpload) NodeID() nodeid.ID { return nodeid.New(NodeBulkUpload, b.LoadID) }
