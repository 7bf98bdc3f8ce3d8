// Package gatewayproc runs a built gateway (or its sandbox) as a process of its own, for the
// tools that measure it from outside: it builds the module's binary, starts it (pinned to
// chosen cores if asked) and reads the address it serves at from its stdout, stops it, and
// reads its CPU time and memory from /proc, so that what a tool reports is the process's alone.
package gatewayproc

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// Module is the package the gateway's binary is built from.
const Module = "github.com/advisorhq/gateway"

// GatewayServing and SandboxServing find the base URL in the line a gateway, and `gateway
// sandbox`, print once they serve; both have read the same since the layout before
// internal/command, so a tool can start an older commit's binary too.
var (
	GatewayServing = regexp.MustCompile(`Advisor GraphQL gateway serving (http://\S+)`)
	SandboxServing = regexp.MustCompile(`Advisor sandbox serving (http://\S+)`)
)

// Build builds the module's gateway into out.
func Build(ctx context.Context, out string, stderr io.Writer) error {
	build := exec.CommandContext(ctx, "go", "build", "-o", out, Module)
	build.Stdout, build.Stderr = stderr, stderr
	if err := build.Run(); err != nil {
		return fmt.Errorf("build the gateway: %w", err)
	}
	return nil
}

// Spec says how to start a process.
type Spec struct {
	Binary string
	Args   []string
	// Env is added to this process's environment; a later NAME=VALUE wins over an earlier,
	// and NAME= leaves NAME empty, which the gateway reads as unset.
	Env []string
	// CPUs, when set, is the cores the process may run on, as taskset -c takes them ("0",
	// "1-3"); taskset execs the binary, so the process id is the binary's.
	CPUs string
	// Serving finds the base URL in a line of the process's stdout.
	Serving *regexp.Regexp
	// Log is the file the process's stderr goes to.
	Log string
	// Wait is how long the process may take to serve; 30 s if zero.
	Wait time.Duration
}

// Process is a started process that serves.
type Process struct {
	Cmd  *exec.Cmd
	URL  string
	Log  string
	done chan struct{}
}

// PID is the process's id, whose /proc figures CPUTicks and RSSKB read.
func (p *Process) PID() int { return p.Cmd.Process.Pid }

// Start starts the process and returns once it prints the line spec.Serving matches.
func Start(ctx context.Context, spec Spec) (*Process, error) {
	if spec.Serving == nil {
		return nil, errors.New("gatewayproc: Spec.Serving is required")
	}
	logFile, err := os.Create(spec.Log)
	if err != nil {
		return nil, err
	}
	name, args := spec.Binary, spec.Args
	if spec.CPUs != "" {
		name, args = "taskset", append([]string{"-c", spec.CPUs, spec.Binary}, spec.Args...)
	}
	cmd := exec.Command(name, args...)
	cmd.Env = append(os.Environ(), spec.Env...)
	cmd.Stderr = logFile
	out, err := cmd.StdoutPipe()
	if err != nil {
		logFile.Close()
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		logFile.Close()
		return nil, fmt.Errorf("start %s: %w", spec.Binary, err)
	}
	p := &Process{Cmd: cmd, Log: spec.Log, done: make(chan struct{})}
	found := make(chan string, 1)
	go func() {
		defer close(p.done)
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			if m := spec.Serving.FindStringSubmatch(sc.Text()); m != nil {
				select {
				case found <- m[1]:
				default:
				}
			}
		}
		_ = cmd.Wait()
		logFile.Close()
	}()
	wait := spec.Wait
	if wait == 0 {
		wait = 30 * time.Second
	}
	select {
	case p.URL = <-found:
		return p, nil
	case <-p.done:
		return nil, fmt.Errorf("%s stopped before serving; see %s", spec.Binary, spec.Log)
	case <-time.After(wait):
		p.Stop()
		return nil, fmt.Errorf("%s did not serve within %s; see %s", spec.Binary, wait, spec.Log)
	case <-ctx.Done():
		p.Stop()
		return nil, ctx.Err()
	}
}

// Stop asks the process to shut down and kills it after 10 s.
func (p *Process) Stop() {
	_ = p.Cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-p.done:
	case <-time.After(10 * time.Second):
		_ = p.Cmd.Process.Kill()
		<-p.done
	}
}

// ClockTicks is USER_HZ, the unit of /proc/<pid>/stat's times: 100 on every Linux Go runs on.
const ClockTicks = 100

// CPUTicks is the process's user+system time from /proc/<pid>/stat, -1 when unknown.
func CPUTicks(pid int) int64 {
	if pid == 0 {
		return -1
	}
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return -1
	}
	// The command name, in parentheses, may hold spaces: count fields after its end.
	i := strings.LastIndexByte(string(data), ')')
	f := strings.Fields(string(data[i+1:]))
	if len(f) < 13 {
		return -1
	}
	u, _ := strconv.ParseInt(f[11], 10, 64) // utime, field 14
	s, _ := strconv.ParseInt(f[12], 10, 64) // stime, field 15
	return u + s
}

// RSSKB is the process's resident memory from /proc/<pid>/status, 0 when unknown.
func RSSKB(pid int) int64 {
	if pid == 0 {
		return 0
	}
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0
	}
	for line := range strings.Lines(string(data)) {
		if rest, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			n, _ := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 10, 64)
			return n
		}
	}
	return 0
}
