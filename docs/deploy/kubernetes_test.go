package deploy

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	"k8s.io/apimachinery/pkg/util/intstr"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
)

// manifest is one object of the Kubernetes manifests, decoded into its API type.
type manifest struct {
	where string // file and document number
	obj   runtime.Object
}

// strictDecoder decodes the kinds the manifests may hold as the API server does with strict
// field validation: an unknown field (a misspelling, a field in the wrong place, a field of
// another case) or a repeated one is an error, not something quietly dropped.
func strictDecoder() runtime.Decoder {
	scheme := runtime.NewScheme()
	for _, add := range []func(*runtime.Scheme) error{corev1.AddToScheme, appsv1.AddToScheme, policyv1.AddToScheme, autoscalingv2.AddToScheme} {
		if err := add(scheme); err != nil {
			panic(err)
		}
	}
	return serializer.NewCodecFactory(scheme, serializer.EnableStrict).UniversalDeserializer()
}

// decodeManifests decodes every document of r, the file name, strictly.
func decodeManifests(name string, r io.Reader) ([]manifest, error) {
	dec := strictDecoder()
	docs := utilyaml.NewYAMLReader(bufio.NewReader(r))
	var out []manifest
	var errs []error
	for n := 1; ; n++ {
		doc, err := docs.Read()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("%s: %w", name, err)
		}
		if len(bytes.TrimSpace(stripComments(doc))) == 0 {
			continue
		}
		where := fmt.Sprintf("%s (document %d)", name, n)
		obj, _, err := dec.Decode(doc, nil, nil)
		if err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", where, err))
			continue
		}
		out = append(out, manifest{where: where, obj: obj})
	}
	return out, errors.Join(errs...)
}

func stripComments(doc []byte) []byte {
	var b bytes.Buffer
	for line := range bytes.Lines(doc) {
		if !bytes.HasPrefix(bytes.TrimSpace(line), []byte("#")) {
			b.Write(line)
		}
	}
	return b.Bytes()
}

// objects are the manifests' objects by kind: exactly one of each the deployment needs.
type objects struct {
	deployment *appsv1.Deployment
	service    *corev1.Service
	configMap  *corev1.ConfigMap
	secret     *corev1.Secret
	pdb        *policyv1.PodDisruptionBudget
	hpa        *autoscalingv2.HorizontalPodAutoscaler
}

// readManifests decodes every YAML file under docs/deploy/kubernetes strictly and sorts the
// objects by kind, failing on a kind the deployment does not use or one it has twice.
func readManifests(t *testing.T) objects {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(kubernetesDir, "*.y*ml"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no manifests in %s (%v)", kubernetesDir, err)
	}
	var o objects
	for _, file := range files {
		f, err := os.Open(file)
		if err != nil {
			t.Fatal(err)
		}
		ms, err := decodeManifests(file, f)
		f.Close()
		if err != nil {
			t.Error(err)
		}
		for _, m := range ms {
			switch obj := m.obj.(type) {
			case *appsv1.Deployment:
				setOnce(t, m.where, &o.deployment, obj)
			case *corev1.Service:
				setOnce(t, m.where, &o.service, obj)
			case *corev1.ConfigMap:
				setOnce(t, m.where, &o.configMap, obj)
			case *corev1.Secret:
				setOnce(t, m.where, &o.secret, obj)
			case *policyv1.PodDisruptionBudget:
				setOnce(t, m.where, &o.pdb, obj)
			case *autoscalingv2.HorizontalPodAutoscaler:
				setOnce(t, m.where, &o.hpa, obj)
			default:
				t.Errorf("%s: a %T, which the deployment does not use", m.where, obj)
			}
		}
	}
	if t.Failed() {
		t.FailNow()
	}
	// "a Deployment ..., a PodDisruptionBudget, a HorizontalPodAutoscaler, a Service, settings
	// from a ConfigMap and secrets from a Secret"
	for kind, missing := range map[string]bool{"Deployment": o.deployment == nil, "Service": o.service == nil, "ConfigMap": o.configMap == nil,
		"Secret": o.secret == nil, "PodDisruptionBudget": o.pdb == nil, "HorizontalPodAutoscaler": o.hpa == nil} {
		if missing {
			t.Errorf("%s has no %s", kubernetesDir, kind)
		}
	}
	if t.Failed() {
		t.FailNow()
	}
	return o
}

// setOnce sets *dst to obj, reporting a second object of its kind.
func setOnce[T any](t *testing.T, where string, dst **T, obj *T) {
	t.Helper()
	if *dst != nil {
		t.Errorf("%s: a second %T; the deployment has one", where, obj)
	}
	*dst = obj
}

// gatewayContainer is the Deployment's one container, the gateway's.
func (o objects) gatewayContainer(t *testing.T) corev1.Container {
	t.Helper()
	cs := o.deployment.Spec.Template.Spec.Containers
	if len(cs) != 1 {
		t.Fatalf("the Deployment has %d containers, want the gateway's alone", len(cs))
	}
	return cs[0]
}

// secretNames are the settings that hold a credential, or may (REDIS_URL's password): they come
// from the Secret, never from the ConfigMap or the manifest itself.
var secretNames = []string{"ADVISOR_ACCESS_TOKEN", "ADVISOR_BASIC_CREDENTIALS", "WEBHOOK_API_KEY", "REDIS_URL",
	"REFERRAL_API_KEY", "REFERRAL_SIGNING_SECRET", "BULK_SFTP_PASSWORD", "OTEL_EXPORTER_OTLP_HEADERS"}

// environment is what the gateway's container gets: the ConfigMap's and Secret's keys it takes
// whole (envFrom) and its own env, with where each came from; a later source wins, as in
// Kubernetes.
func (o objects) environment(t *testing.T) (env map[string]string, from map[string]string) {
	t.Helper()
	c := o.gatewayContainer(t)
	env, from = map[string]string{}, map[string]string{}
	for _, src := range c.EnvFrom {
		switch {
		case src.ConfigMapRef != nil:
			if src.ConfigMapRef.Name != o.configMap.Name {
				t.Errorf("the gateway's envFrom names the ConfigMap %q; the manifests hold %q", src.ConfigMapRef.Name, o.configMap.Name)
			}
			for k, v := range o.configMap.Data {
				env[src.Prefix+k], from[src.Prefix+k] = v, "the ConfigMap"
			}
		case src.SecretRef != nil:
			if src.SecretRef.Name != o.secret.Name {
				t.Errorf("the gateway's envFrom names the Secret %q; the manifests hold %q", src.SecretRef.Name, o.secret.Name)
			}
			for k, v := range o.secret.StringData {
				env[src.Prefix+k], from[src.Prefix+k] = v, "the Secret"
			}
			for k, v := range o.secret.Data {
				env[src.Prefix+k], from[src.Prefix+k] = string(v), "the Secret"
			}
		}
	}
	for _, e := range c.Env {
		switch {
		case e.ValueFrom == nil:
			env[e.Name], from[e.Name] = e.Value, "the Deployment's env"
		case e.ValueFrom.SecretKeyRef != nil:
			ref := e.ValueFrom.SecretKeyRef
			v, ok := o.secret.StringData[ref.Key]
			if ref.Name != o.secret.Name || !ok {
				t.Errorf("the gateway's env %s takes key %q of the Secret %q, which the manifests do not hold", e.Name, ref.Key, ref.Name)
			}
			env[e.Name], from[e.Name] = v, "the Secret"
		case e.ValueFrom.ConfigMapKeyRef != nil:
			ref := e.ValueFrom.ConfigMapKeyRef
			v, ok := o.configMap.Data[ref.Key]
			if ref.Name != o.configMap.Name || !ok {
				t.Errorf("the gateway's env %s takes key %q of the ConfigMap %q, which the manifests do not hold", e.Name, ref.Key, ref.Name)
			}
			env[e.Name], from[e.Name] = v, "the ConfigMap"
		default:
			t.Errorf("the gateway's env %s comes from neither a value, the ConfigMap nor the Secret", e.Name)
		}
	}
	return env, from
}

// "checks that every environment name they set is a setting the gateway reads": the
// Deployment's env, and every key of the ConfigMap and Secret it takes whole, which become
// environment variables of the same names.
func TestTheKubernetesManifestsSetOnlySettingsTheGatewayReads(t *testing.T) {
	ref := readReference(t)
	o := readManifests(t)
	c := o.gatewayContainer(t)
	for _, e := range c.Env {
		ref.check(t, "the Deployment's env", e.Name, readByGateway)
	}
	for _, src := range c.EnvFrom {
		if src.Prefix != "" {
			t.Errorf("the gateway's envFrom adds the prefix %q: the gateway reads its settings by their own names", src.Prefix)
		}
	}
	for k := range o.configMap.Data {
		ref.check(t, "the ConfigMap", k, readByGateway)
	}
	for k := range o.configMap.BinaryData {
		t.Errorf("the ConfigMap has binaryData %s: every setting is text", k)
	}
	for k := range o.secret.StringData {
		ref.check(t, "the Secret", k, readByGateway)
	}
	for k := range o.secret.Data {
		ref.check(t, "the Secret", k, readByGateway)
	}
	env, from := o.environment(t)
	for _, name := range secretNames {
		if _, ok := env[name]; ok && from[name] != "the Secret" {
			t.Errorf("%s comes from %s; a credential comes from the Secret", name, from[name])
		}
	}
	// "Redis Cluster named as the event store"
	if env["REDIS_CLUSTER"] != "true" || env["REDIS_URL"] == "" {
		t.Errorf("REDIS_CLUSTER is %q and REDIS_URL %q: the event store is a Redis Cluster, named by its configuration endpoint",
			env["REDIS_CLUSTER"], env["REDIS_URL"])
	}
	// Production switches off what helps a developer explore ("switch off in production").
	for _, name := range []string{"GRAPHQL_INTROSPECTION", "GRAPHQL_IDE"} {
		if env[name] != "false" {
			t.Errorf("%s is %q; production switches it off (%s: %s)", name, env[name], configurationMD, ref[name].meaning)
		}
	}
}

// "a Deployment of three replicas with readiness and liveness on /readyz and /healthz, ...
// graceful termination longer than the drain"
func TestTheDeploymentRunsThreeReplicasProbedAndGivenLongerThanTheDrainToStop(t *testing.T) {
	o := readManifests(t)
	d := o.deployment
	c := o.gatewayContainer(t)
	env, _ := o.environment(t)
	if d.Spec.Replicas == nil || *d.Spec.Replicas != 3 {
		t.Errorf("the Deployment runs %v replicas, want 3", d.Spec.Replicas)
	}
	sel, err := metav1.LabelSelectorAsSelector(d.Spec.Selector)
	if err != nil || !sel.Matches(labels.Set(d.Spec.Template.Labels)) {
		t.Errorf("the Deployment's selector %v does not select its own pods %v (%v)", d.Spec.Selector, d.Spec.Template.Labels, err)
	}

	// The probes reach the port the gateway listens on (ADDR), by the container port's name.
	_, port, err := net.SplitHostPort(env["ADDR"])
	if err != nil || port == "" {
		t.Fatalf("ADDR is %q: in a pod the gateway listens on every interface, such as :8080", env["ADDR"])
	}
	var listening *corev1.ContainerPort
	for i, p := range c.Ports {
		if fmt.Sprint(p.ContainerPort) == port {
			listening = &c.Ports[i]
		}
	}
	if listening == nil || listening.Name == "" {
		t.Fatalf("the container declares no named port %s, where ADDR (%s) listens", port, env["ADDR"])
	}
	for _, p := range []struct {
		kind  string
		probe *corev1.Probe
		path  string
	}{{"readiness", c.ReadinessProbe, "/readyz"}, {"liveness", c.LivenessProbe, "/healthz"}} {
		switch {
		case p.probe == nil || p.probe.HTTPGet == nil:
			t.Errorf("the gateway has no HTTP %s probe; want GET %s", p.kind, p.path)
		case p.probe.HTTPGet.Path != p.path:
			t.Errorf("the %s probe asks %s, want %s", p.kind, p.probe.HTTPGet.Path, p.path)
		case p.probe.HTTPGet.Port != intstr.FromString(listening.Name) && p.probe.HTTPGet.Port != intstr.FromInt32(listening.ContainerPort):
			t.Errorf("the %s probe asks port %s, want %s (ADDR's)", p.kind, p.probe.HTTPGet.Port.String(), listening.Name)
		}
	}

	// The kubelet's grace period covers the preStop pause and everything the gateway does
	// after SIGTERM; a shorter one kills it while it still answers.
	stop := readStopTimes(t)
	var preStop time.Duration
	if h := c.Lifecycle; h != nil && h.PreStop != nil {
		if h.PreStop.Sleep == nil {
			t.Errorf("the preStop hook is not the kubelet's sleep: the image has no shell to run a command in")
		} else {
			preStop = time.Duration(h.PreStop.Sleep.Seconds) * time.Second
		}
	}
	grace := 30 * time.Second // Kubernetes' default
	if g := d.Spec.Template.Spec.TerminationGracePeriodSeconds; g != nil {
		grace = time.Duration(*g) * time.Second
	}
	if grace <= preStop+stop.total() {
		t.Errorf("terminationGracePeriodSeconds is %s; the preStop pause (%s) and the gateway's stop (%s) need more", grace, preStop, stop)
	}
	if s := d.Spec.Strategy.RollingUpdate; s == nil || s.MaxUnavailable == nil || s.MaxUnavailable.IntValue() != 0 {
		t.Errorf("the rolling update may take replicas away before new ones are ready (%+v); want maxUnavailable 0", s)
	}
}

// The Service, the PodDisruptionBudget and the HorizontalPodAutoscaler act on the Deployment's
// pods, and leave enough of them: the budget lets one go at a time, the autoscaler never goes
// below the Deployment's three, and scales on a resource the pods request.
func TestTheServiceBudgetAndAutoscalerActOnTheDeploymentsPods(t *testing.T) {
	o := readManifests(t)
	pods := labels.Set(o.deployment.Spec.Template.Labels)
	c := o.gatewayContainer(t)

	if len(o.service.Spec.Selector) == 0 || !labels.SelectorFromSet(o.service.Spec.Selector).Matches(pods) {
		t.Errorf("the Service selects %v, not the gateway's pods %v", o.service.Spec.Selector, pods)
	}
	named := map[string]bool{}
	for _, p := range c.Ports {
		named[p.Name], named[fmt.Sprint(p.ContainerPort)] = true, true
	}
	for _, p := range o.service.Spec.Ports {
		if !named[p.TargetPort.String()] {
			t.Errorf("the Service's port %s targets %s, which the gateway's container does not declare", p.Name, p.TargetPort.String())
		}
	}

	sel, err := metav1.LabelSelectorAsSelector(o.pdb.Spec.Selector)
	if err != nil || sel.Empty() || !sel.Matches(pods) {
		t.Errorf("the PodDisruptionBudget selects %v, not the gateway's pods %v (%v)", o.pdb.Spec.Selector, pods, err)
	}
	replicas := int(*o.deployment.Spec.Replicas)
	var mayGo int
	switch b := o.pdb.Spec; {
	case b.MaxUnavailable != nil && b.MinAvailable == nil:
		mayGo, err = intstr.GetScaledValueFromIntOrPercent(b.MaxUnavailable, replicas, false)
	case b.MinAvailable != nil && b.MaxUnavailable == nil:
		var keep int
		keep, err = intstr.GetScaledValueFromIntOrPercent(b.MinAvailable, replicas, true)
		mayGo = replicas - keep
	default:
		t.Errorf("the PodDisruptionBudget sets both or neither of minAvailable and maxUnavailable")
	}
	if err != nil || mayGo < 1 || mayGo > replicas/2 {
		t.Errorf("of %d replicas the PodDisruptionBudget lets %d go at once (%v); want at least one (or nodes never drain) and fewer than half", replicas, mayGo, err)
	}

	h := o.hpa.Spec
	if h.ScaleTargetRef.APIVersion != "apps/v1" || h.ScaleTargetRef.Kind != "Deployment" || h.ScaleTargetRef.Name != o.deployment.Name {
		t.Errorf("the HorizontalPodAutoscaler scales %+v, not the Deployment %q", h.ScaleTargetRef, o.deployment.Name)
	}
	if h.MinReplicas == nil || int(*h.MinReplicas) < replicas || h.MaxReplicas <= *h.MinReplicas {
		t.Errorf("the HorizontalPodAutoscaler scales from %v to %d; want from at least the Deployment's %d, and up", h.MinReplicas, h.MaxReplicas, replicas)
	}
	if len(h.Metrics) == 0 {
		t.Errorf("the HorizontalPodAutoscaler has no metric to scale on")
	}
	for _, m := range h.Metrics {
		if m.Resource == nil || m.Resource.Target.Type != autoscalingv2.UtilizationMetricType {
			continue
		}
		if _, ok := c.Resources.Requests[m.Resource.Name]; !ok {
			t.Errorf("the HorizontalPodAutoscaler scales on %s utilisation, which the gateway's container does not request", m.Resource.Name)
		}
	}
}

// Strict decoding is what catches a manifest the API server would refuse or silently
// misread: a misspelled probe, a field of another case, a field twice, a kind not deployed.
func TestStrictDecodingRefusesWhatTheAPIServerWouldNotTakeAsWritten(t *testing.T) {
	deployment, err := os.ReadFile(filepath.Join(kubernetesDir, "deployment.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := decodeManifests("deployment.yaml", bytes.NewReader(deployment)); err != nil {
		t.Fatalf("the Deployment as written: %v", err)
	}
	for _, c := range []struct {
		name, old, new, want string
	}{
		{"a misspelled field", "readinessProbe:", "readinesProbe:", `unknown field "spec.template.spec.containers[0].readinesProbe"`},
		{"a field of another case", "livenessProbe:", "LivenessProbe:", `unknown field "spec.template.spec.containers[0].LivenessProbe"`},
		{"a field in the wrong place", "  replicas: 3\n", "  replicas: 3\n  terminationGracePeriodSeconds: 30\n", `unknown field "spec.terminationGracePeriodSeconds"`},
		{"a field twice", "  replicas: 3\n", "  replicas: 3\n  replicas: 2\n", `"replicas"`},
		{"a value of the wrong type", "  replicas: 3\n", "  replicas: three\n", "replicas"},
		{"a kind not registered", "kind: Deployment", "kind: StatefulSett", "StatefulSett"},
	} {
		t.Run(c.name, func(t *testing.T) {
			changed := strings.Replace(string(deployment), c.old, c.new, 1)
			if changed == string(deployment) {
				t.Fatalf("deployment.yaml has no %q to change", c.old)
			}
			_, err := decodeManifests("deployment.yaml", strings.NewReader(changed))
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("decoding with %s: got %v, want an error naming %s", c.name, err, c.want)
			}
		})
	}
}

// The Kubernetes documents each hold one of the kinds above; a second document in one file is
// decoded too.
func TestEveryDocumentOfAManifestFileIsDecoded(t *testing.T) {
	two := "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\n---\n# the second\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: b\ndata:\n  ADDR: \":8080\"\n  extra: {}\n"
	ms, err := decodeManifests("two.yaml", strings.NewReader(two))
	if err == nil || !strings.Contains(err.Error(), "document 2") {
		t.Errorf("a second document with a map where a string belongs: got %v, want an error naming document 2", err)
	}
	if len(ms) != 1 || ms[0].obj.(*corev1.ConfigMap).Name != "a" {
		t.Errorf("decoded %d objects, want the first ConfigMap", len(ms))
	}
	if !slices.ContainsFunc(ms, func(m manifest) bool { return strings.Contains(m.where, "document 1") }) {
		t.Errorf("the first document is not named as such: %v", ms)
	}
}
