package e2e

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/bete-game/bete/clients/go/bot"
	"github.com/bete-game/bete/clients/go/bot/strategy"
	betev1 "github.com/bete-game/bete/clients/go/gen/bete/v1"
)

// pythonWithBeteBot returns a python that can run `-m bete_bot`: $BETE_PYTHON, else the
// project venv .tools/py-venv. The repository's clients/python goes first on PYTHONPATH so the
// test runs the SDK of this checkout.
func pythonWithBeteBot(t *testing.T) (string, []string) {
	t.Helper()
	py := os.Getenv("BETE_PYTHON")
	if py == "" {
		py = filepath.Join(repoRoot, ".tools", "py-venv", "bin", "python")
		if _, err := os.Stat(py); err != nil {
			t.Fatalf("the mixed-table test needs the Python SDK: set BETE_PYTHON to a python with bete_bot "+
				"and grpcio installed (e.g. `pip install -e clients/python`), or create %s", py)
		}
	}
	env := append(os.Environ(), "PYTHONPATH="+filepath.Join(repoRoot, "clients", "python")+string(os.PathListSeparator)+os.Getenv("PYTHONPATH"))
	env = append(env, "BETE_TOKEN=") // the Python bot registers its own identity
	check := exec.Command(py, "-c", "import bete_bot, grpc")
	check.Env = env
	if out, err := check.CombinedOutput(); err != nil {
		t.Fatalf("the mixed-table test needs a python with bete_bot and grpcio (BETE_PYTHON=%q): %v\n%s", py, err, out)
	}
	return py, env
}

// TestMixedTable: a Go bot, a Python bot (the Python SDK's example bot, run as a subprocess)
// and a Rust house bot play a whole match at one table.
func TestMixedTable(t *testing.T) {
	py, env := pythonWithBeteBot(t)
	ctx := testContext(t, 90*time.Second)
	c := dial(t, ctx, "go-mixed")
	tab, err := c.CreateTable(ctx, &betev1.CreateTableRequest{
		Ruleset: betev1.Ruleset_RULESET_BETE, Seats: 3, Config: shortMatch,
		HouseBots: bot.HouseBots(betev1.HouseBotPolicy_HOUSE_BOT_POLICY_HEURISTIC, 2),
	})
	if err != nil {
		t.Fatal(err)
	}
	id := tab.GetTableId()
	if err := c.JoinSeat(ctx, id, 0); err != nil {
		t.Fatal(err)
	}
	runner := bot.NewRunner(c, strategy.RuleAware{}, bot.RunnerOptions{})
	runner.Track(id, tab.GetLastSeq())
	type played struct {
		results map[string]*betev1.MatchEnded
		err     error
	}
	goDone := make(chan played, 1)
	go func() {
		r, err := runner.Play(ctx, id)
		goDone <- played{r, err}
	}()

	// The Python bot takes the last free seat (1); the match starts.
	var out bytes.Buffer
	cmd := exec.CommandContext(ctx, py, "-m", "bete_bot", "--server", serverAddr, "--join", id,
		"--bot", "random", "--name", "py-mixed", "--token-file", filepath.Join(t.TempDir(), "py.token"))
	cmd.Env, cmd.Stdout, cmd.Stderr = env, &out, &out
	cmd.Dir = t.TempDir()
	if err := cmd.Run(); err != nil {
		t.Fatalf("python bot: %v\n%s", err, out.String())
	}
	g := <-goDone
	if g.err != nil {
		t.Fatalf("Go bot: %v", g.err)
	}
	if !strings.Contains(out.String(), fmt.Sprintf("table %s: seat 1", id)) {
		t.Errorf("python bot output does not report seat 1 of %s:\n%s", id, out.String())
	}
	got, err := c.Tables.GetTable(ctx, &betev1.GetTableRequest{TableId: id})
	if err != nil {
		t.Fatal(err)
	}
	seats := got.GetTable().GetSeats()
	if len(seats) != 3 || seats[0].GetBotId() != c.BotID() || seats[1].GetOccupant() != betev1.OccupantKind_OCCUPANT_KIND_BOT ||
		seats[1].GetBotName() != "py-mixed" || seats[2].GetOccupant() != betev1.OccupantKind_OCCUPANT_KIND_HOUSE_BOT {
		t.Errorf("seats %v: want Go bot, Python bot py-mixed, house bot", seats)
	}
	// Both SDK bots played every one of their turns themselves.
	checkFinished(t, ctx, c, id, g.results[id], 3, 0, 1)
	t.Logf("python bot: %s", strings.TrimSpace(out.String()))
}
