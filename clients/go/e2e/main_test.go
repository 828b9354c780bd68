// Package e2e tests the Go SDK against the real bete server: TestMain starts
// $BETE_SERVER_BIN (default <repo>/target/debug/bete-server) on a free loopback port with a
// temporary data folder, waits until its health service is SERVING, and stops it afterwards.
package e2e

import (
	"bytes"
	"context"
	"fmt"
	"math/rand"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"syscall"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/credentials/insecure"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"

	"github.com/bete-game/bete/clients/go/bot"
	betev1 "github.com/bete-game/bete/clients/go/gen/bete/v1"
)

// serverAddr is the address of the server TestMain started.
var serverAddr string

// repoRoot is the repository's top folder (the one with the workspace Cargo.toml).
var repoRoot = func() string {
	dir, _ := os.Getwd()
	for d := dir; ; d = filepath.Dir(d) {
		if _, err := os.Stat(filepath.Join(d, "proto", "bete", "v1")); err == nil {
			return d
		}
		if filepath.Dir(d) == d {
			return filepath.Join(dir, "..", "..", "..")
		}
	}
}()

func TestMain(m *testing.M) {
	os.Exit(runWithServer(m))
}

// lockedBuffer collects the server's output for a failure report.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.b.Len() > 1<<20 {
		l.b.Reset() // keep the tail only
	}
	return l.b.Write(p)
}

func (l *lockedBuffer) tail(n int) string {
	l.mu.Lock()
	defer l.mu.Unlock()
	s := l.b.String()
	if len(s) > n {
		s = s[len(s)-n:]
	}
	return s
}

// serverProc is a running bete-server.
type serverProc struct {
	addr   string
	cmd    *exec.Cmd
	out    *lockedBuffer
	exited chan error
}

// serverBin is the server binary the tests run.
func serverBin() string {
	if bin := os.Getenv("BETE_SERVER_BIN"); bin != "" {
		return bin
	}
	return filepath.Join(repoRoot, "target", "debug", "bete-server")
}

// startServer runs the server on addr with its SQLite file in dataDir and waits until it is
// SERVING.
func startServer(addr, dataDir string) (*serverProc, error) {
	return startServerWith(addr, dataDir, insecure.NewCredentials())
}

// startServerWith is startServer with extra flags, checking health over creds (TLS: the
// server's CA).
func startServerWith(addr, dataDir string, creds credentials.TransportCredentials, extra ...string) (*serverProc, error) {
	bin := serverBin()
	if _, err := os.Stat(bin); err != nil {
		return nil, fmt.Errorf("no server binary at %s (build it with `cargo build -p bete-server` or set BETE_SERVER_BIN): %v", bin, err)
	}
	p := &serverProc{addr: addr, out: &lockedBuffer{}, exited: make(chan error, 1)}
	args := append([]string{"--listen", addr, "--data-dir", dataDir, "--metrics-listen", "127.0.0.1:0"}, extra...)
	p.cmd = exec.Command(bin, args...)
	p.cmd.Stdout, p.cmd.Stderr = p.out, p.out
	p.cmd.Env = append(os.Environ(), "RUST_LOG=warn")
	if err := p.cmd.Start(); err != nil {
		return nil, fmt.Errorf("start %s: %v", bin, err)
	}
	go func() { p.exited <- p.cmd.Wait() }()
	if err := waitServing(addr, creds, p.exited, 30*time.Second); err != nil {
		p.stop()
		return nil, fmt.Errorf("server at %s not serving: %v\nserver output:\n%s", addr, err, p.out.tail(4000))
	}
	return p, nil
}

// stop asks the server to shut down (SIGTERM) and kills it if it has not exited after 5s.
func (p *serverProc) stop() {
	_ = p.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-p.exited:
	case <-time.After(5 * time.Second):
		_ = p.cmd.Process.Kill()
		<-p.exited
	}
}

func runWithServer(m *testing.M) int {
	dataDir, err := os.MkdirTemp("", "bete-go-e2e-")
	if err != nil {
		fmt.Fprintln(os.Stderr, "e2e:", err)
		return 1
	}
	defer os.RemoveAll(dataDir)
	port, err := freePort()
	if err != nil {
		fmt.Fprintln(os.Stderr, "e2e:", err)
		return 1
	}
	serverAddr = fmt.Sprintf("127.0.0.1:%d", port)
	srv, err := startServer(serverAddr, dataDir)
	if err != nil {
		fmt.Fprintln(os.Stderr, "e2e:", err)
		return 1
	}
	code := m.Run()
	srv.stop()
	if code != 0 {
		fmt.Fprintf(os.Stderr, "server output (tail):\n%s\n", srv.out.tail(4000))
	}
	return code
}

// freePort is a loopback port free a moment ago, for the server process started next. It is
// taken below the kernel's ephemeral range (32768 and up): a port from Listen(":0"), once
// closed, may be taken by any outgoing connection of the machine before the server binds it.
func freePort() (int, error) {
	for i := 0; i < 1000; i++ {
		port := 10000 + rand.Intn(20000)
		l, err := net.Listen("tcp", fmt.Sprintf("127.0.0.1:%d", port))
		if err != nil {
			continue
		}
		l.Close()
		return port, nil
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// waitServing polls the gRPC health service until the server reports SERVING.
func waitServing(addr string, creds credentials.TransportCredentials, exited <-chan error, limit time.Duration) error {
	conn, err := grpc.NewClient(addr, grpc.WithTransportCredentials(creds))
	if err != nil {
		return err
	}
	defer conn.Close()
	health := healthpb.NewHealthClient(conn)
	deadline := time.Now().Add(limit)
	var last error
	for time.Now().Before(deadline) {
		select {
		case err := <-exited:
			return fmt.Errorf("server exited: %v", err)
		default:
		}
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		resp, err := health.Check(ctx, &healthpb.HealthCheckRequest{})
		cancel()
		if err == nil && resp.GetStatus() == healthpb.HealthCheckResponse_SERVING {
			return nil
		}
		last = err
		if err == nil {
			last = fmt.Errorf("health status %v", resp.GetStatus())
		}
		time.Sleep(100 * time.Millisecond)
	}
	return fmt.Errorf("timed out after %v: %v", limit, last)
}

// ---- helpers shared by the tests ----

// shortMatch keeps matches to one round without extra deals, so a test plays whole matches fast.
var shortMatch = map[string]string{"rounds": "1", "max_extra_deals": "0"}

func testContext(t *testing.T, d time.Duration) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), d)
	t.Cleanup(cancel)
	return ctx
}

// dial registers a fresh bot and returns its client.
func dial(t *testing.T, ctx context.Context, name string, extra ...grpc.DialOption) *bot.Client {
	t.Helper()
	c, err := bot.Dial(ctx, serverAddr, bot.Options{Name: name, Owner: "go e2e", DialOptions: extra})
	if err != nil {
		t.Fatalf("dial and register %s: %v", name, err)
	}
	t.Cleanup(func() { _ = c.Close() })
	if c.Token() == "" || c.BotID() == "" {
		t.Fatalf("registration gave no token or bot id")
	}
	return c
}

// houseTable creates a table of ruleset where house bots take every seat but 0, joins seat 0
// and returns the table as created (its last_seq is where the bot's history starts).
func houseTable(t *testing.T, ctx context.Context, c *bot.Client, r betev1.Ruleset, seats uint32, policy betev1.HouseBotPolicy) *betev1.Table {
	t.Helper()
	req := bot.HouseTable(r, seats, policy)
	req.Config = shortMatch
	tab, err := c.CreateTable(ctx, req)
	if err != nil {
		t.Fatalf("create %v table: %v", r, err)
	}
	if err := c.JoinSeat(ctx, tab.GetTableId(), 0); err != nil {
		t.Fatalf("join %s: %v", tab.GetTableId(), err)
	}
	return tab
}

func sum(xs []int64) int64 {
	var s int64
	for _, x := range xs {
		s += x
	}
	return s
}
