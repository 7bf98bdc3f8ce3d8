package deploy

import (
	"cmp"
	"fmt"
	"maps"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	kjson "sigs.k8s.io/json"
	"sigs.k8s.io/yaml"
)

// composeProject is the part of the Compose specification that compose.yaml uses. Decoding
// into it strictly refuses anything else, so a misspelled key (`stop_grace_periods`, a
// `replica` under `deploy`) fails here instead of being ignored by Docker Compose, and a
// new key must be added here, with what the test should check of it.
type composeProject struct {
	Name     string                    `json:"name"`
	Services map[string]composeService `json:"services"`
	Volumes  map[string]*struct{}      `json:"volumes"`
}

type composeService struct {
	Build           string               `json:"build"` // the build context, relative to compose.yaml
	Image           string               `json:"image"`
	Command         []string             `json:"command"`
	Deploy          *composeDeploy       `json:"deploy"`
	Ports           []string             `json:"ports"`
	Environment     map[string]string    `json:"environment"`
	StopGracePeriod string               `json:"stop_grace_period"`
	DependsOn       map[string]dependsOn `json:"depends_on"`
	Healthcheck     *healthcheck         `json:"healthcheck"`
	Volumes         []string             `json:"volumes"`
}

type composeDeploy struct {
	Replicas *int `json:"replicas"`
}

type dependsOn struct {
	Condition string `json:"condition"`
}

type healthcheck struct {
	Test     []string `json:"test"`
	Interval string   `json:"interval"`
	Timeout  string   `json:"timeout"`
	Retries  int      `json:"retries"`
}

// decodeCompose decodes a Compose file strictly: repeated keys, unknown keys, keys of another
// case and values of another type are errors.
func decodeCompose(data []byte) (composeProject, error) {
	var p composeProject
	j, err := yaml.YAMLToJSONStrict(data)
	if err != nil {
		return p, err
	}
	strict, err := kjson.UnmarshalStrict(j, &p, kjson.DisallowDuplicateFields, kjson.DisallowUnknownFields)
	if err != nil {
		return p, err
	}
	if len(strict) > 0 {
		return p, fmt.Errorf("%v", strict)
	}
	return p, nil
}

func readCompose(t *testing.T) composeProject {
	t.Helper()
	data, err := os.ReadFile(composeFile)
	if err != nil {
		t.Fatal(err)
	}
	p, err := decodeCompose(data)
	if err != nil {
		t.Fatalf("%s: %v", composeFile, err)
	}
	return p
}

// program is a process one of the deployment files starts from the gateway's image, with the
// arguments and environment it gets: the gateway (no arguments) or the sandbox (`sandbox ...`).
type program struct {
	Where string            `json:"where"`
	Args  []string          `json:"args"`
	Env   map[string]string `json:"env"`
}

// ours reports whether the service runs the gateway's image, built from the repository.
func (s composeService) ours() bool {
	return s.Build != "" && filepath.Clean(s.Build) == filepath.Clean("../..")
}

// composePrograms are the processes compose.yaml starts from the gateway's image.
func composePrograms(t *testing.T, p composeProject) []program {
	t.Helper()
	var out []program
	for _, name := range slices.Sorted(maps.Keys(p.Services)) {
		s := p.Services[name]
		if s.ours() {
			out = append(out, program{Where: composeFile + " service " + name, Args: s.Command, Env: s.Environment})
		}
	}
	return out
}

// "the Compose file's services and settings agree with the configuration reference": every
// service built from the repository is the gateway or the sandbox; each sets only settings
// its program reads, and the sandbox only flags it has; and what the gateway is told of the
// sandbox (its address, credentials, the tokens' issuer, the webhook key) is what the sandbox
// is, by the sandbox's page and its defaults in the reference.
func TestTheComposeFilesServicesAndSettingsAgreeWithTheReference(t *testing.T) {
	ref := readReference(t)
	sb := readSandboxDoc(t)
	p := readCompose(t)

	var gatewayName, sandboxName, redisName string
	for _, name := range slices.Sorted(maps.Keys(p.Services)) {
		s := p.Services[name]
		where := composeFile + " service " + name
		switch {
		case s.ours() && len(s.Command) == 0:
			if gatewayName != "" {
				t.Errorf("%s runs the gateway as %s does: run more of one with deploy.replicas", where, gatewayName)
			}
			gatewayName = name
			for k := range s.Environment {
				ref.check(t, where, k, readByGateway)
			}
		case s.ours() && s.Command[0] == "sandbox":
			sandboxName = name
			for k := range s.Environment {
				ref.check(t, where, k, readBySandbox)
			}
			for _, arg := range s.Command[1:] {
				if flag, _, _ := strings.Cut(arg, "="); strings.HasPrefix(flag, "-") && !sb.flags[flag] {
					t.Errorf("%s passes %s, which is none of the sandbox's flags (%s)", where, flag, sandboxMD)
				}
			}
		case s.ours():
			t.Errorf("%s runs the gateway's image as %q, which is neither the gateway nor the sandbox", where, s.Command)
		case strings.HasPrefix(s.Image, "redis:"):
			redisName = name
			if len(s.Environment) > 0 {
				t.Errorf("%s sets %v; Redis takes no environment here", where, slices.Sorted(maps.Keys(s.Environment)))
			}
		default:
			t.Errorf("%s runs %q, which the deployment does not use", where, s.Image)
		}
	}
	if gatewayName == "" || sandboxName == "" || redisName == "" {
		t.Fatalf("%s runs the gateway as %q, the sandbox as %q and Redis as %q; want all three", composeFile, gatewayName, sandboxName, redisName)
	}
	gw, sandbox := p.Services[gatewayName], p.Services[sandboxName]
	env := gw.Environment
	flags := commandFlags(sandbox.Command[1:])

	// "gateway replicas": several, each published on a port of its own.
	if gw.Deploy == nil || gw.Deploy.Replicas == nil || *gw.Deploy.Replicas < 2 {
		t.Errorf("%s runs one gateway; want replicas (deploy.replicas of 2 or more)", gatewayName)
	}
	_, gwPort, err := net.SplitHostPort(env["ADDR"])
	if err != nil || gwPort == "" {
		t.Fatalf("%s's ADDR is %q: in a container the gateway listens on every interface, such as :8080", gatewayName, env["ADDR"])
	}
	for _, ports := range gw.Ports {
		hostPorts, container, err := publishedPorts(ports)
		switch {
		case err != nil:
			t.Errorf("%s publishes %q: %v", gatewayName, ports, err)
		case container != gwPort:
			t.Errorf("%s publishes container port %s; ADDR listens on %s", gatewayName, container, gwPort)
		case gw.Deploy != nil && gw.Deploy.Replicas != nil && hostPorts != *gw.Deploy.Replicas:
			t.Errorf("%s publishes %q, %d host ports for %d replicas: each replica takes one", gatewayName, ports, hostPorts, *gw.Deploy.Replicas)
		}
	}

	// The sandbox listens where the others reach it, and the gateway is told that address.
	sbHost, sbPort, err := net.SplitHostPort(flags["-addr"])
	if err != nil || (sbHost != "0.0.0.0" && sbHost != "") {
		t.Errorf("%s's -addr is %q: its default, loopback, is out of the other containers' reach; want 0.0.0.0:port", sandboxName, flags["-addr"])
	}
	sandboxBase := "http://" + net.JoinHostPort(sandboxName, sbPort)
	want := map[string]string{
		"ADVISOR_BASE_URL": sandboxBase,
		"AUTH_JWKS_URL":    sandboxBase + "/sandbox/jwks.json",
		"ADVISOR_FIRM":     sb.firm,
		"AUTH_ISSUER":      sb.issuer,
		"AUTH_AUDIENCE":    sb.audience,
		// The sandbox's credentials: what its environment sets, else the defaults.
		"ADVISOR_ACCESS_TOKEN":      cmp.Or(sandbox.Environment["SANDBOX_ACCESS_TOKEN"], ref["SANDBOX_ACCESS_TOKEN"].def),
		"ADVISOR_BASIC_CREDENTIALS": cmp.Or(sandbox.Environment["SANDBOX_BASIC_CREDENTIALS"], ref["SANDBOX_BASIC_CREDENTIALS"].def),
		"WEBHOOK_API_KEY":           sandbox.Environment["SANDBOX_WEBHOOK_KEY"],
	}
	for _, name := range slices.Sorted(maps.Keys(want)) {
		if env[name] != want[name] || want[name] == "" {
			t.Errorf("%s's %s is %q; the sandbox (%s) wants %q", gatewayName, name, env[name], sandboxName, want[name])
		}
	}
	// The sandbox's webhooks reach a gateway replica, on the path the gateway receives them at.
	if hook := flags["-webhook-url"]; hook != "http://"+net.JoinHostPort(gatewayName, gwPort)+"/webhooks" {
		t.Errorf("%s's -webhook-url is %q; want the gateway's receiver, http://%s/webhooks", sandboxName, hook, net.JoinHostPort(gatewayName, gwPort))
	}
	// The event store is the Compose Redis, shared by the replicas.
	if u, err := url.Parse(env["REDIS_URL"]); err != nil || u.Hostname() != redisName {
		t.Errorf("%s's REDIS_URL is %q; want the Redis of %s (redis://%s:6379/0)", gatewayName, env["REDIS_URL"], redisName, redisName)
	}
	if gw.DependsOn[redisName].Condition != "service_healthy" || p.Services[redisName].Healthcheck == nil {
		t.Errorf("%s does not wait for %s to be healthy: a replica started before Redis answers is unready", gatewayName, redisName)
	}

	// Stopping a replica gives it longer than its drain (Compose's default is 10 s).
	stop := readStopTimes(t)
	if grace, err := time.ParseDuration(gw.StopGracePeriod); err != nil || grace <= stop.total() {
		t.Errorf("%s's stop_grace_period is %q; the gateway's stop takes up to %s", gatewayName, gw.StopGracePeriod, stop)
	}
}

// commandFlags reads -flag value and -flag=value pairs.
func commandFlags(args []string) map[string]string {
	flags := map[string]string{}
	for i := 0; i < len(args); i++ {
		name, value, ok := strings.Cut(args[i], "=")
		if !ok && i+1 < len(args) {
			i++
			value = args[i]
		}
		flags[name] = value
	}
	return flags
}

// publishedPorts reads a Compose port mapping, [ip:]host[-host]:container, and says how many
// host ports it publishes.
func publishedPorts(mapping string) (hostPorts int, container string, err error) {
	parts := strings.Split(mapping, ":")
	if len(parts) < 2 || len(parts) > 3 {
		return 0, "", fmt.Errorf("want [ip:]host[-host]:container")
	}
	host, container := parts[len(parts)-2], parts[len(parts)-1]
	first, last, isRange := strings.Cut(host, "-")
	a, errA := strconv.Atoi(first)
	b := a
	var errB error
	if isRange {
		b, errB = strconv.Atoi(last)
	}
	if errA != nil || errB != nil || b < a {
		return 0, "", fmt.Errorf("%q is not a host port or range", host)
	}
	return b - a + 1, container, nil
}

// The Compose decoding is strict: what Docker Compose would ignore or read differently is an
// error here.
func TestTheComposeDecodingRefusesWhatItDoesNotKnow(t *testing.T) {
	data, err := os.ReadFile(composeFile)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := decodeCompose(data); err != nil {
		t.Fatalf("%s as written: %v", composeFile, err)
	}
	for _, c := range []struct{ name, old, new, want string }{
		{"a misspelled key", "stop_grace_period:", "stop_grace_periods:", `unknown field "services.gateway.stop_grace_periods"`},
		{"a key of another case", "replicas: 2", "Replicas: 2", `unknown field "services.gateway.deploy.Replicas"`},
		{"a key twice", "    image: advisor-gateway:local\n", "    image: advisor-gateway:local\n    image: other\n", `"image"`},
		{"a setting that is not a string", `GRAPHQL_IDE: "true"`, `GRAPHQL_IDE: true`, "environment of type string"},
	} {
		t.Run(c.name, func(t *testing.T) {
			changed := strings.Replace(string(data), c.old, c.new, 1)
			if changed == string(data) {
				t.Fatalf("%s has no %q to change", composeFile, c.old)
			}
			if _, err := decodeCompose([]byte(changed)); err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("got %v, want an error naming %s", err, c.want)
			}
		})
	}
}
