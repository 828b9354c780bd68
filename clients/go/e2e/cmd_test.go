package e2e

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"testing"
	"time"

	"github.com/bete-game/bete/clients/go/bot"
	"github.com/bete-game/bete/clients/go/bot/strategy"
	betev1 "github.com/bete-game/bete/clients/go/gen/bete/v1"
)

// goRun builds a package of this module and runs it with args and extra environment.
func goRun(t *testing.T, ctx context.Context, pkg string, env []string, args ...string) string {
	t.Helper()
	goBin, err := exec.LookPath("go")
	if err != nil {
		goBin = filepath.Join(runtime.GOROOT(), "bin", "go")
	}
	exe := filepath.Join(t.TempDir(), filepath.Base(pkg))
	build := exec.CommandContext(ctx, goBin, "build", "-o", exe, pkg)
	build.Dir = ".."
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build %s: %v\n%s", pkg, err, out)
	}
	cmd := exec.CommandContext(ctx, exe, args...)
	cmd.Env = append(append(os.Environ(), "BETE_TOKEN="), env...)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%s %v: %v\n%s", pkg, args, err, out)
	}
	return string(out)
}

// TestCommandPlaysTables: bete-go-bot registers, creates two tables with search house bots (5 ms
// a decision) and plays both to the end.
func TestCommandPlaysTables(t *testing.T) {
	ctx := testContext(t, 90*time.Second)
	out := goRun(t, ctx, "./cmd/bete-go-bot", nil, "-server", serverAddr, "-ruleset", "lanterlui", "-seats", "3",
		"-tables", "2", "-strategy", "rule-aware", "-config", "rounds=1", "-config", "max_extra_deals=0",
		"-house-bots", "search:5")
	if n := len(regexp.MustCompile(`(?m)^table \S+: seat 0, balance [+-]\d+, balances \[`).FindAllString(out, -1)); n != 2 {
		t.Errorf("want 2 finished tables in the output, got %d:\n%s", n, out)
	}
	if !regexp.MustCompile(`(?m)^\d+ decisions, \d+ submits, 0 retries, 0 refused`).MatchString(out) {
		t.Errorf("summary line missing:\n%s", out)
	}
}

// TestReadmeBot: the README's complete bot (examples/highcard) plays a whole match.
func TestReadmeBot(t *testing.T) {
	ctx := testContext(t, 90*time.Second)
	out := goRun(t, ctx, "./examples/highcard", []string{"BETE_SERVER=" + serverAddr})
	if !regexp.MustCompile(`table \S+: seat 0, final balances \[-?\d+ -?\d+ -?\d+\]`).MatchString(out) {
		t.Errorf("unexpected output:\n%s", out)
	}
}

// TestJoinWhileRunning: a runner already streaming picks up a table joined later (the server
// attaches the open WatchBot stream to it).
func TestJoinWhileRunning(t *testing.T) {
	ctx := testContext(t, 60*time.Second)
	c := dial(t, ctx, "go-late-join")
	runner := bot.NewRunner(c, strategy.NewRandom(3), bot.RunnerOptions{})
	req := bot.HouseTable(betev1.Ruleset_RULESET_BESTER_BUBE, 3, betev1.HouseBotPolicy_HOUSE_BOT_POLICY_HEURISTIC)
	req.Config = shortMatch
	tab, err := c.CreateTable(ctx, req)
	if err != nil {
		t.Fatal(err)
	}
	id := tab.GetTableId()
	done := make(chan error, 1)
	go func() {
		_, err := runner.Play(ctx, id)
		done <- err
	}()
	time.Sleep(200 * time.Millisecond) // let the WatchBot stream open first
	if _, err := c.Join(ctx, id); err != nil {
		t.Fatal(err)
	}
	if err := <-done; err != nil {
		t.Fatalf("Play: %v (stats %+v)", err, runner.Stats())
	}
	res, seat := runner.Result(id)
	checkFinished(t, ctx, c, id, res, 3, seat)
}

// TestIdleStreamIsReopened: a stream that delivers nothing for StreamIdleTimeout is reopened
// (a half-open connection must not stall the bot), and Run ends cleanly on cancellation.
func TestIdleStreamIsReopened(t *testing.T) {
	ctx := testContext(t, 30*time.Second)
	c := dial(t, ctx, "go-idle")
	runner := bot.NewRunner(c, strategy.RuleAware{}, bot.RunnerOptions{StreamIdleTimeout: 150 * time.Millisecond, MinBackoff: 10 * time.Millisecond, MaxBackoff: 20 * time.Millisecond})
	runCtx, cancel := context.WithTimeout(ctx, time.Second)
	defer cancel()
	if err := runner.Run(runCtx); err != nil {
		t.Fatalf("Run: %v", err)
	}
	if st := runner.Stats(); st.Streams < 3 {
		t.Errorf("an idle bot reopened its stream %d times in 1s with a 150ms idle limit", st.Streams)
	}
}

// TestRuleAwareExample: the rule-aware example plays a match and its deal hooks fire from
// deal 0 on (it tracks the table from before its join).
func TestRuleAwareExample(t *testing.T) {
	ctx := testContext(t, 90*time.Second)
	out := goRun(t, ctx, "./examples/ruleaware", nil, "-server", serverAddr, "-ruleset", "bester-bube", "-seats", "4")
	for _, re := range []string{`(?m)^\S+ deal 0: seat 0 holds \[\w\w \w\w \w\w \w\w \w\w\], turn-up \w\w$`, `(?m)^\S+ deal 0 settled: tricks \[`, `(?m)^\S+ final balances \[`} {
		if !regexp.MustCompile(re).MatchString(out) {
			t.Errorf("output lacks %s:\n%s", re, out)
		}
	}
}
