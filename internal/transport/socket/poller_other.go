//go:build !linux

package socket

import "errors"

// canWatch says whether idle connections can be watched here by one goroutine: not here, where
// each idle connection's reader waits on a goroutine of its own.
const canWatch = false

type poller struct {
	running bool
	ended   chan struct{}
}

type pollEvents [0]struct{}

var errNoPoller = errors.New("connections are not watched here")

func openPoller() (poller, error)                        { return poller{}, errNoPoller }
func (p *poller) close()                                 {}
func (p *poller) add(int, uint64) error                  { return errNoPoller }
func (p *poller) rearm(int, uint64) error                { return errNoPoller }
func (p *poller) remove(int)                             {}
func (p *poller) nudge() <-chan struct{}                 { return nil }
func (p *poller) wait([]struct{}, []uint64) (int, error) { return 0, errNoPoller }
