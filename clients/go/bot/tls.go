package bot

import (
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"os"
	"strings"
)

// The environment variables TLSFromEnv reads (the names the bete CLI and the Python SDK use).
const (
	TLSEnv        = "BETE_TLS"         // "1": connect over TLS with the system's roots
	CACertEnv     = "BETE_CA_CERT"     // PEM CA to trust instead of the system's roots
	ClientCertEnv = "BETE_CLIENT_CERT" // PEM client certificate (a trusted bot farm's)
	ClientKeyEnv  = "BETE_CLIENT_KEY"  // its PEM key
	TLSDomainEnv  = "BETE_TLS_DOMAIN"  // the name the server's certificate must carry
)

// TLSFiles is a TLS config for a bete server: trusting the CA in caFile (empty: the system's
// roots), presenting the client certificate certFile with keyFile when both are given, and
// verifying the server's certificate against serverName when it is not empty (a server dialled
// by its IP address).
func TLSFiles(caFile, certFile, keyFile, serverName string) (*tls.Config, error) {
	cfg := &tls.Config{MinVersion: tls.VersionTLS12, ServerName: serverName}
	if caFile != "" {
		pem, err := os.ReadFile(caFile)
		if err != nil {
			return nil, fmt.Errorf("bete: CA certificate: %w", err)
		}
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(pem) {
			return nil, fmt.Errorf("bete: no PEM certificate in %s", caFile)
		}
		cfg.RootCAs = pool
	}
	if (certFile == "") != (keyFile == "") {
		return nil, fmt.Errorf("bete: a client certificate needs its key, and a key its certificate")
	}
	if certFile != "" {
		pair, err := tls.LoadX509KeyPair(certFile, keyFile)
		if err != nil {
			return nil, fmt.Errorf("bete: client certificate: %w", err)
		}
		cfg.Certificates = []tls.Certificate{pair}
	}
	return cfg, nil
}

// TLSFromEnv is the TLS config the environment asks for ($BETE_TLS, $BETE_CA_CERT,
// $BETE_CLIENT_CERT, $BETE_CLIENT_KEY, $BETE_TLS_DOMAIN), or nil when none of them is set.
func TLSFromEnv() (*tls.Config, error) {
	on := strings.ToLower(os.Getenv(TLSEnv))
	if on != "1" && on != "true" && on != "yes" && os.Getenv(CACertEnv) == "" &&
		os.Getenv(ClientCertEnv) == "" && os.Getenv(TLSDomainEnv) == "" {
		return nil, nil
	}
	return TLSFiles(os.Getenv(CACertEnv), os.Getenv(ClientCertEnv), os.Getenv(ClientKeyEnv), os.Getenv(TLSDomainEnv))
}

// splitScheme takes an "https://" or "http://" prefix off addr and says whether it asked for TLS.
func splitScheme(addr string) (string, bool) {
	if rest, ok := strings.CutPrefix(addr, "https://"); ok {
		return strings.TrimSuffix(rest, "/"), true
	}
	if rest, ok := strings.CutPrefix(addr, "http://"); ok {
		return strings.TrimSuffix(rest, "/"), false
	}
	return addr, false
}
