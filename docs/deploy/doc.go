// Package deploy holds the gateway's deployment files (a Compose file and Kubernetes manifests)
// and the test that decodes them strictly. It is a module of its own so that the Kubernetes API
// modules it decodes with stay out of the gateway's go.mod.
package deploy
