package gateway_test

import (
	"os/exec"
	"syscall"
)

// dieWithParent has a replica killed when the test binary dies, whatever kills it: a test
// that times out would otherwise leave gateways running.
func dieWithParent(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
}
