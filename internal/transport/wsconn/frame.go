package wsconn

import (
	"encoding/binary"
	"errors"
	"fmt"

	"github.com/gobwas/ws"
)

// Errors of reading.
var (
	ErrMessageTooBig = errors.New("message too big")
	ErrNotText       = errors.New("binary message")
)

// ProtocolViolation is a frame the protocol forbids; the connection closes with 1002.
type ProtocolViolation string

func (p ProtocolViolation) Error() string { return string(p) }

// PeerClosed is the peer's close frame.
type PeerClosed struct{ Code ws.StatusCode }

func (p PeerClosed) Error() string { return fmt.Sprintf("closed by the peer (%d)", p.Code) }

// AppendFrame appends one unfragmented, unmasked frame of op carrying the parts.
func AppendFrame(b []byte, op ws.OpCode, parts ...[]byte) []byte {
	n := 0
	for _, p := range parts {
		n += len(p)
	}
	b = AppendHeader(b, op, n)
	for _, p := range parts {
		b = append(b, p...)
	}
	return b
}

// AppendHeader appends the header of an unfragmented, unmasked frame of op with n bytes.
func AppendHeader(b []byte, op ws.OpCode, n int) []byte {
	b = append(b, 0x80|byte(op))
	switch {
	case n < 126:
		return append(b, byte(n))
	case n <= 0xffff:
		return binary.BigEndian.AppendUint16(append(b, 126), uint16(n))
	default:
		return binary.BigEndian.AppendUint64(append(b, 127), uint64(n))
	}
}

// headerLen is the length of an unmasked frame header for a payload of n bytes.
func headerLen(n int) int {
	switch {
	case n < 126:
		return 2
	case n <= 0xffff:
		return 4
	}
	return 10
}
