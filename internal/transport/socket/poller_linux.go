package socket

import (
	"errors"
	"syscall"
)

// canWatch says whether idle connections can be watched here by one goroutine: with an epoll
// instance of the watcher's own (a socket may be in it and in the runtime's at once).
const canWatch = true

// poller is the watcher's epoll instance and the pipe that wakes its goroutine, while it runs.
type poller struct {
	running bool
	epfd    int
	// wakeR and wakeW are the pipe's ends; the read end is in the epoll set under id 0.
	wakeR, wakeW int
	// ended is closed when the goroutine has ended and closed the descriptors.
	ended chan struct{}
}

// watchEvents are what a waiting connection is woken for: something to read, the peer's end of
// the stream, and (always reported) errors and hang-ups; once, until it is armed again.
const watchEvents = syscall.EPOLLIN | syscall.EPOLLRDHUP | syscall.EPOLLONESHOT

// openPoller makes the epoll set and its wake pipe.
func openPoller() (poller, error) {
	epfd, err := syscall.EpollCreate1(syscall.EPOLL_CLOEXEC)
	if err != nil {
		return poller{}, err
	}
	var p [2]int
	if err := syscall.Pipe2(p[:], syscall.O_NONBLOCK|syscall.O_CLOEXEC); err != nil {
		_ = syscall.Close(epfd)
		return poller{}, err
	}
	pl := poller{running: true, epfd: epfd, wakeR: p[0], wakeW: p[1], ended: make(chan struct{})}
	ev := syscall.EpollEvent{Events: syscall.EPOLLIN}
	if err := syscall.EpollCtl(epfd, syscall.EPOLL_CTL_ADD, p[0], &ev); err != nil {
		pl.close()
		return poller{}, err
	}
	return pl, nil
}

// close closes the descriptors, once nothing waits on them.
func (p *poller) close() {
	_ = syscall.Close(p.epfd)
	_ = syscall.Close(p.wakeR)
	_ = syscall.Close(p.wakeW)
}

// event is an epoll event for id: the 64 bits of its data, which Fd and Pad lay out.
func event(events uint32, id uint64) syscall.EpollEvent {
	return syscall.EpollEvent{Events: events, Fd: int32(uint32(id)), Pad: int32(uint32(id >> 32))}
}

// add, rearm and remove change the epoll set; called with the watcher's mu held, while it runs.
func (p *poller) add(fd int, id uint64) error {
	ev := event(watchEvents, id)
	return syscall.EpollCtl(p.epfd, syscall.EPOLL_CTL_ADD, fd, &ev)
}

func (p *poller) rearm(fd int, id uint64) error {
	ev := event(watchEvents, id)
	return syscall.EpollCtl(p.epfd, syscall.EPOLL_CTL_MOD, fd, &ev)
}

func (p *poller) remove(fd int) {
	_ = syscall.EpollCtl(p.epfd, syscall.EPOLL_CTL_DEL, fd, nil)
}

// nudge wakes the goroutine to look again at whether it has anything left to do, and returns
// the channel closed when it ends; nil when it does not run.
func (p *poller) nudge() <-chan struct{} {
	if !p.running {
		return nil
	}
	_, _ = syscall.Write(p.wakeW, []byte{0}) // a full pipe wakes it as well
	return p.ended
}

// wait waits until some connections are ready, or the goroutine is nudged, and puts the ids of
// those ready in ids.
func (p *poller) wait(events []syscall.EpollEvent, ids []uint64) (int, error) {
	for {
		n, err := syscall.EpollWait(p.epfd, events[:min(len(events), len(ids))], -1)
		if errors.Is(err, syscall.EINTR) {
			continue
		}
		if err != nil {
			return 0, err
		}
		k := 0
		for _, ev := range events[:n] {
			id := uint64(uint32(ev.Fd)) | uint64(uint32(ev.Pad))<<32
			if id == 0 {
				drain(p.wakeR)
				continue
			}
			ids[k] = id
			k++
		}
		return k, nil
	}
}

// drain empties the wake pipe.
func drain(fd int) {
	var b [64]byte
	for {
		if n, err := syscall.Read(fd, b[:]); n <= 0 || err != nil {
			return
		}
	}
}

// pollEvents are the events one wait takes at most.
type pollEvents [128]syscall.EpollEvent
