package deploy

import (
	"encoding/json"
	"flag"
	"fmt"
	"maps"
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

var programsOut = flag.String("programs", "",
	"write the programs the deployment files start from the gateway's image, with their arguments and environment, as JSON to this `file`: "+
		"the gateway's own test (internal/gateway) loads their settings with the gateway's parsers")

// Every manifest decodes into its Kubernetes API type, strictly ("A test decodes every manifest
// strictly against the Kubernetes API types").
func TestEveryManifestDecodesStrictlyIntoItsKubernetesType(t *testing.T) {
	o := readManifests(t)
	t.Logf("decoded the Deployment %s, Service %s, ConfigMap %s, Secret %s, PodDisruptionBudget %s and HorizontalPodAutoscaler %s",
		o.deployment.Name, o.service.Name, o.configMap.Name, o.secret.Name, o.pdb.Name, o.hpa.Name)
}

// The deployment files start the gateway (the image's entrypoint with no arguments) and, in
// Compose, the sandbox; with -programs the test writes each with its arguments and environment
// for the gateway's own parsers to load.
func TestTheDeploymentFilesStartTheGatewayAndTheSandbox(t *testing.T) {
	progs := composePrograms(t, readCompose(t))
	o := readManifests(t)
	c := o.gatewayContainer(t)
	if len(c.Command) > 0 || len(c.Args) > 0 {
		t.Errorf("the Deployment's container runs %q %q; the gateway is the image's entrypoint with no arguments", c.Command, c.Args)
	}
	env, _ := o.environment(t)
	progs = append(progs, program{Where: "kubernetes/ Deployment " + o.deployment.Name, Env: env})
	gateways := 0
	for _, p := range progs {
		if len(p.Args) == 0 {
			gateways++
		}
	}
	if gateways != 2 || len(progs) != 3 {
		t.Errorf("the deployment files start %d programs, %d of them the gateway; want the Compose gateway and sandbox, and the Deployment's gateway", len(progs), gateways)
	}
	if *programsOut == "" {
		return
	}
	out, err := json.MarshalIndent(progs, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(*programsOut, out, 0o600); err != nil {
		t.Fatal(err)
	}
}

// dockerRun is the docker run command of docs/deployment.md: the names it sets (-e NAME=value,
// or -e NAME passing the shell's value on) and its stop timeout.
type dockerRun struct {
	env         map[string]string // "" when passed from the shell
	stopTimeout time.Duration
	image       string
}

func readDockerRun(t *testing.T) dockerRun {
	t.Helper()
	text, err := os.ReadFile(deploymentMD)
	if err != nil {
		t.Fatal(err)
	}
	block := regexp.MustCompile("(?ms)^```sh\n(docker run .*?)^```").FindSubmatch(text)
	if block == nil {
		t.Fatalf("%s has no sh block starting with docker run", deploymentMD)
	}
	args := strings.Fields(strings.ReplaceAll(string(block[1]), "\\\n", " "))
	run := dockerRun{env: map[string]string{}}
	for i := 2; i < len(args); i++ {
		a := args[i]
		if !strings.HasPrefix(a, "-") {
			run.image = a
			if rest := args[i+1:]; len(rest) > 0 {
				t.Errorf("%s's docker run passes the gateway %q; it takes its settings from the environment", deploymentMD, rest)
			}
			break
		}
		value := ""
		if name, v, ok := strings.Cut(a, "="); ok && strings.HasPrefix(a, "--") {
			a, value = name, v
		} else if i+1 < len(args) && a != "-d" && a != "--rm" {
			i++
			value = args[i]
		}
		switch a {
		case "-e", "--env":
			name, v, _ := strings.Cut(value, "=")
			run.env[name] = v
		case "--stop-timeout":
			n, err := strconv.Atoi(value)
			if err != nil {
				t.Errorf("%s's docker run has --stop-timeout %q, not whole seconds", deploymentMD, value)
			}
			run.stopTimeout = time.Duration(n) * time.Second
		}
	}
	return run
}

// The docker run command of docs/deployment.md ("docker run with the settings it needs") sets
// only the gateway's settings, the ones a gateway against the Advisor service must have, and a
// stop timeout longer than the gateway's drain (docker's default, 10 s, is not).
func TestTheDockerRunCommandSetsOnlySettingsAndWaitsForTheDrain(t *testing.T) {
	ref := readReference(t)
	run := readDockerRun(t)
	for _, name := range slices.Sorted(maps.Keys(run.env)) {
		ref.check(t, deploymentMD+"'s docker run", name, readByGateway)
	}
	// What start-up requires once ADVISOR_BASE_URL is set (configuration.md: "required with
	// `ADVISOR_BASE_URL`"), and the event store replicas share.
	required := []string{"ADVISOR_BASE_URL", "REDIS_URL"}
	for _, name := range slices.Sorted(maps.Keys(ref)) {
		if s := ref[name]; s.readBy == readByGateway && strings.Contains(s.meaning, "required with `ADVISOR_BASE_URL`") {
			required = append(required, name)
		}
	}
	if len(required) < 6 {
		t.Fatalf("%s names %v as required with ADVISOR_BASE_URL; it used to name the firm, its token, the webhook key and the JWKS", configurationMD, required[2:])
	}
	for _, name := range required {
		if _, ok := run.env[name]; !ok {
			t.Errorf("%s's docker run does not set %s (%s: %s)", deploymentMD, name, configurationMD, ref[name].meaning)
		}
	}
	for _, name := range []string{"GRAPHQL_INTROSPECTION", "GRAPHQL_IDE"} {
		if run.env[name] != "false" {
			t.Errorf("%s's docker run sets %s=%q; production switches it off", deploymentMD, name, run.env[name])
		}
	}
	for _, name := range secretNames {
		if v, ok := run.env[name]; ok && v != "" {
			t.Errorf("%s's docker run writes %s's value on the command line; pass it from the environment (-e %s)", deploymentMD, name, name)
		}
	}
	if stop := readStopTimes(t); run.stopTimeout <= stop.total() {
		t.Errorf("%s's docker run waits %s for the gateway to stop; it takes up to %s", deploymentMD, run.stopTimeout, stop)
	}
	if run.image == "" {
		t.Errorf("%s's docker run names no image", deploymentMD)
	}
}

// docs/deployment.md says how long the gateway takes to stop, as the code has it.
func TestTheDeploymentPageStatesTheStopTimesOfTheCode(t *testing.T) {
	text, err := os.ReadFile(deploymentMD)
	if err != nil {
		t.Fatal(err)
	}
	page := strings.Join(strings.Fields(string(text)), " ")
	st := readStopTimes(t)
	secs := func(d time.Duration) int { return int(d / time.Second) }
	for _, want := range []string{
		fmt.Sprintf("gives the requests in flight %d s to finish", secs(st.drain)),
		fmt.Sprintf("waits up to %d s more for the WebSockets to close", secs(st.streams)),
		fmt.Sprintf("up to %d s to flush its last spans: at most %d s in all", secs(st.flush), secs(st.total())),
	} {
		if !strings.Contains(page, want) {
			t.Errorf("%s does not say %q, which is what the code does", deploymentMD, want)
		}
	}
}
