package gatewayproc

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// TestStartReadsTheServingLineAndProcFigures starts a stand-in for the gateway, a shell that
// prints a serving line and waits, and checks what the tools read of it: its address, its
// CPU and memory from /proc, the core it is pinned to, and that Stop ends it.
func TestStartReadsTheServingLineAndProcFigures(t *testing.T) {
	dir := t.TempDir()
	bin := filepath.Join(dir, "gateway")
	script := "#!/bin/sh\necho starting\necho 'Advisor GraphQL gateway serving http://127.0.0.1:1234'\nexec sleep 60\n"
	if err := os.WriteFile(bin, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		cpus string
	}{
		{name: "any core"},
		{name: "pinned to core 0", cpus: "0"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p, err := Start(context.Background(), Spec{Binary: bin, CPUs: tc.cpus, Serving: GatewayServing, Log: filepath.Join(dir, "log"), Wait: 10 * time.Second})
			if err != nil {
				t.Fatal(err)
			}
			if p.URL != "http://127.0.0.1:1234" {
				t.Errorf("URL %q, want http://127.0.0.1:1234", p.URL)
			}
			if CPUTicks(p.PID()) < 0 || RSSKB(p.PID()) <= 0 {
				t.Errorf("CPU %d ticks, RSS %d kB: want both read", CPUTicks(p.PID()), RSSKB(p.PID()))
			}
			if tc.cpus != "" {
				status, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(p.PID()), "status"))
				if err != nil || !strings.Contains(string(status), "Cpus_allowed_list:\t"+tc.cpus+"\n") {
					t.Errorf("not pinned to %s: %v\n%s", tc.cpus, err, status)
				}
			}
			p.Stop()
			if CPUTicks(p.PID()) != -1 {
				t.Errorf("the process is still there after Stop")
			}
		})
	}
}
