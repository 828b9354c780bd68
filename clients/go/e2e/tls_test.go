package e2e

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"fmt"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"testing"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials"

	"github.com/bete-game/bete/clients/go/bot"
	"github.com/bete-game/bete/clients/go/bot/strategy"
	betev1 "github.com/bete-game/bete/clients/go/gen/bete/v1"
)

// writePEM writes one PEM block to path.
func writePEM(t *testing.T, path, kind string, der []byte) {
	t.Helper()
	if err := os.WriteFile(path, pem.EncodeToMemory(&pem.Block{Type: kind, Bytes: der}), 0o600); err != nil {
		t.Fatal(err)
	}
}

// testCertificates makes a CA and a certificate for localhost/127.0.0.1 signed by it, in dir:
// ca.pem, tls.crt, tls.key.
func testCertificates(t *testing.T, dir string) {
	t.Helper()
	caKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	ca := &x509.Certificate{
		SerialNumber:          big.NewInt(1),
		Subject:               pkix.Name{CommonName: "bete go test CA"},
		NotBefore:             time.Now().Add(-time.Hour),
		NotAfter:              time.Now().Add(24 * time.Hour),
		IsCA:                  true,
		BasicConstraintsValid: true,
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature,
	}
	caDER, err := x509.CreateCertificate(rand.Reader, ca, ca, &caKey.PublicKey, caKey)
	if err != nil {
		t.Fatal(err)
	}
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	leaf := &x509.Certificate{
		SerialNumber: big.NewInt(2),
		Subject:      pkix.Name{CommonName: "localhost"},
		DNSNames:     []string{"localhost"},
		IPAddresses:  []net.IP{net.IPv4(127, 0, 0, 1)},
		NotBefore:    time.Now().Add(-time.Hour),
		NotAfter:     time.Now().Add(24 * time.Hour),
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	leafDER, err := x509.CreateCertificate(rand.Reader, leaf, ca, &key.PublicKey, caKey)
	if err != nil {
		t.Fatal(err)
	}
	keyDER, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	writePEM(t, filepath.Join(dir, "ca.pem"), "CERTIFICATE", caDER)
	writePEM(t, filepath.Join(dir, "tls.crt"), "CERTIFICATE", leafDER)
	writePEM(t, filepath.Join(dir, "tls.key"), "PRIVATE KEY", keyDER)
}

// TestTLS: against the real server over TLS with a test certificate, a bot dialled with
// "https://" and the CA from $BETE_CA_CERT plays a match; a client that does not trust the CA
// fails; a rotated token is revoked at once.
func TestTLS(t *testing.T) {
	ctx := testContext(t, 90*time.Second)
	dir := t.TempDir()
	testCertificates(t, dir)
	port, err := freePort()
	if err != nil {
		t.Fatal(err)
	}
	caFile := filepath.Join(dir, "ca.pem")
	trust, err := bot.TLSFiles(caFile, "", "", "")
	if err != nil {
		t.Fatal(err)
	}
	addr := fmt.Sprintf("localhost:%d", port)
	srv, err := startServerWith(fmt.Sprintf("127.0.0.1:%d", port), filepath.Join(dir, "data"), credentials.NewTLS(trust),
		"--no-web", "--tls-cert", filepath.Join(dir, "tls.crt"), "--tls-key", filepath.Join(dir, "tls.key"))
	if err != nil {
		t.Fatal(err)
	}
	defer srv.stop()

	// A bot's operator: the CA from the environment, the server as https://.
	t.Setenv(bot.CACertEnv, caFile)
	t.Setenv(bot.TokenEnv, "")
	c, err := bot.Dial(ctx, "https://"+addr, bot.Options{Name: "go-tls"})
	if err != nil {
		t.Fatalf("dial over TLS: %v", err)
	}
	defer c.Close()
	b, err := strategy.New("random", 3)
	if err != nil {
		t.Fatal(err)
	}
	req := bot.HouseTable(betev1.Ruleset_RULESET_BETE, 3, betev1.HouseBotPolicy_HOUSE_BOT_POLICY_HEURISTIC)
	req.Config = shortMatch
	tab, err := c.CreateTable(ctx, req)
	if err != nil {
		t.Fatal(err)
	}
	if err := c.JoinSeat(ctx, tab.GetTableId(), 0); err != nil {
		t.Fatal(err)
	}
	results, err := bot.NewRunner(c, b, bot.RunnerOptions{}).Play(ctx, tab.GetTableId())
	if err != nil || results[tab.GetTableId()] == nil {
		t.Fatalf("play over TLS: %v %v", results, err)
	}

	// Without the CA (the system's roots do not know it) the handshake fails.
	t.Setenv(bot.CACertEnv, "")
	if _, err := bot.Dial(ctx, "https://"+addr, bot.Options{Name: "untrusting"}); err == nil {
		t.Fatal("a server of an unknown CA was trusted")
	}

	// Rotation: the old token is refused with TOKEN_REVOKED, the client goes on with the new one.
	old := c.Token()
	fresh, err := c.RotateToken(ctx, c.BotID(), "")
	if err != nil || fresh == old || fresh != c.Token() {
		t.Fatalf("rotate: %q %v", fresh, err)
	}
	if _, err := c.View(ctx, tab.GetTableId()); err != nil {
		t.Fatalf("the new token: %v", err)
	}
	stale, err := bot.Dial(ctx, "https://"+addr, bot.Options{Token: old, TLS: trust})
	if err != nil {
		t.Fatal(err)
	}
	defer stale.Close()
	_, err = stale.View(ctx, tab.GetTableId())
	var e *bot.Error
	if !errors.As(err, &e) || e.Code != codes.Unauthenticated || e.Reason != "TOKEN_REVOKED" {
		t.Fatalf("the old token: want UNAUTHENTICATED TOKEN_REVOKED, got %v", err)
	}
}
