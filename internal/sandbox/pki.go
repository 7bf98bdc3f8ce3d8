package sandbox

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"fmt"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"slices"
	"time"
)

// The environments of the session host. Each has its own certificate authority: a client
// certificate of one does not authenticate against the other, as the spec says of production
// and UAT.
const (
	EnvUAT        = "uat"
	EnvProduction = "production"
)

// Environments are the environments a session host can serve.
var Environments = []string{EnvUAT, EnvProduction}

// DefaultClientCertTTL is how long an enrolled client certificate is valid.
const DefaultClientCertTTL = 365 * 24 * time.Hour

// authority is one environment's certificate authority.
type authority struct {
	env  string
	cert *x509.Certificate
	key  *ecdsa.PrivateKey
	pem  []byte // cert, PEM-encoded
}

// loadAuthority reads env's CA from dir, making it the first time: ca-<env>.crt and
// ca-<env>.key (0600). Keeping it on disk lets `sandbox enroll` issue certificates that a
// running sandbox with the same directory accepts.
func loadAuthority(dir, env string) (*authority, error) {
	if !slices.Contains(Environments, env) {
		return nil, fmt.Errorf("environment %q: want %s or %s", env, EnvUAT, EnvProduction)
	}
	certPath, keyPath := filepath.Join(dir, "ca-"+env+".crt"), filepath.Join(dir, "ca-"+env+".key")
	certPEM, certErr := os.ReadFile(certPath)
	keyPEM, keyErr := os.ReadFile(keyPath)
	if errors.Is(certErr, os.ErrNotExist) && errors.Is(keyErr, os.ErrNotExist) {
		return createAuthority(env, certPath, keyPath)
	}
	if certErr != nil {
		return nil, fmt.Errorf("read the %s CA: %w", env, certErr)
	}
	if keyErr != nil {
		return nil, fmt.Errorf("read the %s CA's key: %w", env, keyErr)
	}
	pair, err := tls.X509KeyPair(certPEM, keyPEM)
	if err != nil {
		return nil, fmt.Errorf("the %s CA in %s: %w", env, dir, err)
	}
	key, ok := pair.PrivateKey.(*ecdsa.PrivateKey)
	if !ok {
		return nil, fmt.Errorf("the %s CA in %s: its key is not ECDSA", env, dir)
	}
	cert, err := x509.ParseCertificate(pair.Certificate[0])
	if err != nil {
		return nil, fmt.Errorf("the %s CA in %s: %w", env, dir, err)
	}
	return &authority{env: env, cert: cert, key: key, pem: certPEM}, nil
}

func createAuthority(env, certPath, keyPath string) (*authority, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, fmt.Errorf("make the %s CA's key: %w", env, err)
	}
	now := time.Now()
	tmpl := &x509.Certificate{
		SerialNumber:          serialNumber(),
		Subject:               pkix.Name{Organization: []string{"Advisor sandbox"}, CommonName: "Advisor sandbox " + env + " CA"},
		NotBefore:             now.Add(-time.Hour),
		NotAfter:              now.Add(10 * 365 * 24 * time.Hour),
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageCRLSign,
		BasicConstraintsValid: true,
		IsCA:                  true,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		return nil, fmt.Errorf("make the %s CA: %w", env, err)
	}
	cert, _ := x509.ParseCertificate(der)
	certPEM := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})
	keyDER, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		return nil, err
	}
	keyPEM := pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: keyDER})
	// The key first, with O_EXCL: two sandboxes starting on one directory must not each make a
	// CA and leave one's certificate beside the other's key.
	if err := writeNew(keyPath, keyPEM, 0o600); err != nil {
		return nil, fmt.Errorf("keep the %s CA: %w", env, err)
	}
	if err := writeNew(certPath, certPEM, 0o644); err != nil {
		return nil, fmt.Errorf("keep the %s CA: %w", env, err)
	}
	return &authority{env: env, cert: cert, key: key, pem: certPEM}, nil
}

// writeNew writes a file that must not exist yet.
func writeNew(path string, data []byte, perm os.FileMode) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, perm)
	if err != nil {
		return err
	}
	if _, err := f.Write(data); err != nil {
		_ = f.Close()
		return err
	}
	return f.Close()
}

// pool is a pool holding only this CA.
func (a *authority) pool() *x509.CertPool {
	p := x509.NewCertPool()
	p.AddCert(a.cert)
	return p
}

// issue signs a certificate for a fresh key: a server's for hosts, or a client's named cn.
func (a *authority) issue(cn string, hosts []string, client bool, notBefore, notAfter time.Time) (tls.Certificate, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return tls.Certificate{}, err
	}
	tmpl := &x509.Certificate{
		SerialNumber: serialNumber(),
		Subject:      pkix.Name{Organization: []string{"Advisor sandbox " + a.env}, CommonName: cn},
		NotBefore:    notBefore,
		NotAfter:     notAfter,
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	if client {
		tmpl.ExtKeyUsage = []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}
	}
	for _, h := range hosts {
		if ip := net.ParseIP(h); ip != nil {
			tmpl.IPAddresses = append(tmpl.IPAddresses, ip)
		} else {
			tmpl.DNSNames = append(tmpl.DNSNames, h)
		}
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, a.cert, &key.PublicKey, a.key)
	if err != nil {
		return tls.Certificate{}, err
	}
	leaf, _ := x509.ParseCertificate(der)
	return tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key, Leaf: leaf}, nil
}

// Enrollment is what enrolling a client gives it: its certificate and key, and the CA that
// signs the session host's certificate, all PEM-encoded.
type Enrollment struct {
	Env                 string
	CertPEM, KeyPEM     []byte
	ServerCAPEM         []byte
	NotBefore, NotAfter time.Time
}

// TLSCertificate is the enrollment's certificate and key, ready for a tls.Config.
func (e Enrollment) TLSCertificate() (tls.Certificate, error) {
	return tls.X509KeyPair(e.CertPEM, e.KeyPEM)
}

// ServerCAs is a pool holding the session host's CA.
func (e Enrollment) ServerCAs() *x509.CertPool {
	p := x509.NewCertPool()
	p.AppendCertsFromPEM(e.ServerCAPEM)
	return p
}

// Enroll issues a client certificate of env's CA in dir, as the service's enrollment host
// does; notBefore and notAfter bound its validity (tests issue expired ones).
func Enroll(dir, env, name string, notBefore, notAfter time.Time) (Enrollment, error) {
	ca, err := loadAuthority(dir, env)
	if err != nil {
		return Enrollment{}, err
	}
	return ca.enroll(name, notBefore, notAfter)
}

func (a *authority) enroll(name string, notBefore, notAfter time.Time) (Enrollment, error) {
	cert, err := a.issue(name, nil, true, notBefore, notAfter)
	if err != nil {
		return Enrollment{}, fmt.Errorf("issue a %s client certificate: %w", a.env, err)
	}
	keyDER, err := x509.MarshalECPrivateKey(cert.PrivateKey.(*ecdsa.PrivateKey))
	if err != nil {
		return Enrollment{}, err
	}
	return Enrollment{
		Env:         a.env,
		CertPEM:     pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: cert.Certificate[0]}),
		KeyPEM:      pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: keyDER}),
		ServerCAPEM: a.pem,
		NotBefore:   notBefore, NotAfter: notAfter,
	}, nil
}

// WriteEnrollment writes client.crt, client.key (0600) and ca.crt to out, made if need be.
func WriteEnrollment(e Enrollment, out string) error {
	if err := os.MkdirAll(out, 0o700); err != nil {
		return fmt.Errorf("make %s: %w", out, err)
	}
	for _, f := range []struct {
		name string
		data []byte
		perm os.FileMode
	}{{"client.key", e.KeyPEM, 0o600}, {"client.crt", e.CertPEM, 0o644}, {"ca.crt", e.ServerCAPEM, 0o644}} {
		path := filepath.Join(out, f.name)
		if err := os.WriteFile(path, f.data, f.perm); err != nil {
			return fmt.Errorf("write %s: %w", path, err)
		}
		if err := os.Chmod(path, f.perm); err != nil { // WriteFile keeps an existing file's mode
			return fmt.Errorf("write %s: %w", path, err)
		}
	}
	return nil
}

func serialNumber() *big.Int {
	n, _ := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 127))
	return n
}
