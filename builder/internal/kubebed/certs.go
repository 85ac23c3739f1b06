package kubebed

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"time"

	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
)

// certs are the files of the API server's serving certificate, the CA that
// signed it and the service-account signing key.
type certs struct {
	ca, cert, key, saKey string
}

// writeCerts makes a CA, a serving certificate for 127.0.0.1 signed by it,
// and an RSA service-account key, under dir.
func writeCerts(dir string) (*certs, error) {
	caKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, err
	}
	now := time.Now()
	caTmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "kubebed-ca"},
		NotBefore: now.Add(-time.Hour), NotAfter: now.Add(24 * time.Hour), IsCA: true, BasicConstraintsValid: true,
		KeyUsage: x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature}
	caDER, err := x509.CreateCertificate(rand.Reader, caTmpl, caTmpl, &caKey.PublicKey, caKey)
	if err != nil {
		return nil, err
	}
	caCert, err := x509.ParseCertificate(caDER)
	if err != nil {
		return nil, err
	}
	srvKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, err
	}
	srvTmpl := &x509.Certificate{SerialNumber: big.NewInt(2), Subject: pkix.Name{CommonName: "kube-apiserver"},
		NotBefore: now.Add(-time.Hour), NotAfter: now.Add(24 * time.Hour), KeyUsage: x509.KeyUsageDigitalSignature,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}, IPAddresses: []net.IP{net.IPv4(127, 0, 0, 1), net.IPv4(10, 96, 0, 1)},
		DNSNames: []string{"localhost", "kubernetes", "kubernetes.default", "kubernetes.default.svc"}}
	srvDER, err := x509.CreateCertificate(rand.Reader, srvTmpl, caCert, &srvKey.PublicKey, caKey)
	if err != nil {
		return nil, err
	}
	saKey, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		return nil, err
	}
	c := &certs{ca: filepath.Join(dir, "ca.crt"), cert: filepath.Join(dir, "apiserver.crt"),
		key: filepath.Join(dir, "apiserver.key"), saKey: filepath.Join(dir, "sa.key")}
	srvKeyDER, err := x509.MarshalECPrivateKey(srvKey)
	if err != nil {
		return nil, err
	}
	for _, f := range []struct {
		path, kind string
		der        []byte
	}{
		{c.ca, "CERTIFICATE", caDER}, {c.cert, "CERTIFICATE", srvDER},
		{c.key, "EC PRIVATE KEY", srvKeyDER}, {c.saKey, "RSA PRIVATE KEY", x509.MarshalPKCS1PrivateKey(saKey)},
	} {
		if err := os.WriteFile(f.path, pem.EncodeToMemory(&pem.Block{Type: f.kind, Bytes: f.der}), 0o600); err != nil {
			return nil, err
		}
	}
	return c, nil
}

// kubeconfig writes a kubeconfig for the admin to the server, for the
// controller manager and the scheduler.
func (c *certs) kubeconfig(dir, server string) (string, error) {
	cfg := clientcmdapi.NewConfig()
	cfg.Clusters["kubebed"] = &clientcmdapi.Cluster{Server: server, CertificateAuthority: c.ca}
	cfg.AuthInfos["admin"] = &clientcmdapi.AuthInfo{Token: adminToken}
	cfg.Contexts["kubebed"] = &clientcmdapi.Context{Cluster: "kubebed", AuthInfo: "admin"}
	cfg.CurrentContext = "kubebed"
	path := filepath.Join(dir, "admin.kubeconfig")
	return path, clientcmd.WriteToFile(*cfg, path)
}
