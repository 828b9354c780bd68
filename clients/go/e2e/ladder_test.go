package e2e

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/bete-game/bete/clients/go/bot"
	"github.com/bete-game/bete/clients/go/bot/strategy"
	betev1 "github.com/bete-game/bete/clients/go/gen/bete/v1"
)

// TestLadderCallsAndRefusals: the ladder and account calls against the real server, with the
// documented reasons for an unknown ladder, entering twice, leaving when not entered and a
// version registered twice.
func TestLadderCallsAndRefusals(t *testing.T) {
	ctx := testContext(t, 30*time.Second)
	c := dial(t, ctx, "go-ladder-calls")
	ladders, err := c.ListLadders(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, l := range ladders {
		ids = append(ids, l.GetLadderId())
	}
	want := []string{"bete-4", "bete-ace-high-4", "beast-4", "beste-boer-4", "lanterlui-4", "bester-bube-4", "mouche-4", "mistigri-4", "loo-4", "rams-4"}
	if fmt.Sprint(ids) != fmt.Sprint(want) {
		t.Fatalf("ladders %v, want %v", ids, want)
	}
	if _, err := c.EnterLadder(ctx, "no-such-ladder", 1); bot.ReasonOf(err) != bot.ReasonLadderNotFound {
		t.Fatalf("unknown ladder: %v", err)
	}
	if _, err := c.LeaveLadder(ctx, "bete-4"); bot.ReasonOf(err) != bot.ReasonLadderNotEntered {
		t.Fatalf("leave before entering: %v", err)
	}
	entry, err := c.EnterLadder(ctx, "bete-4", 2)
	if err != nil || entry.GetCapacity() != 2 || !entry.GetActive() || entry.GetBotId() != c.BotID() {
		t.Fatalf("enter: %v %v", entry, err)
	}
	if _, err := c.EnterLadder(ctx, "bete-4", 1); bot.ReasonOf(err) != bot.ReasonLadderAlreadyEntered {
		t.Fatalf("enter twice: %v", err)
	}
	if l, e, err := c.GetLadder(ctx, "bete-4"); err != nil || l.GetSeatCount() != 4 || e.GetBotId() != c.BotID() {
		t.Fatalf("get ladder: %v %v %v", l, e, err)
	}
	if left, err := c.LeaveLadder(ctx, "bete-4"); err != nil || left.GetActive() {
		t.Fatalf("leave: %v %v", left, err)
	}

	acct, err := c.CreateAccount(ctx, "go-team")
	if err != nil {
		t.Fatal(err)
	}
	var botIDs []string
	for _, version := range []string{"", "2"} {
		b, err := bot.Dial(ctx, serverAddr, bot.Options{Name: "go-owned", AccountToken: acct.GetToken(), Version: version})
		if err != nil {
			t.Fatalf("register version %q: %v", version, err)
		}
		botIDs = append(botIDs, b.BotID())
		_ = b.Close()
	}
	if _, err := bot.Dial(ctx, serverAddr, bot.Options{Name: "go-owned", AccountToken: acct.GetToken(), Version: "2"}); bot.ReasonOf(err) != bot.ReasonBotVersionExists {
		t.Fatalf("a version twice: %v", err)
	}
	owner, err := bot.Dial(ctx, serverAddr, bot.Options{Token: acct.GetToken()})
	if err != nil {
		t.Fatal(err)
	}
	defer owner.Close()
	listed, err := owner.AccountBots(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, b := range listed.GetBots() {
		got = append(got, b.GetBotId()+"/"+b.GetName()+"/"+b.GetVersion())
	}
	if fmt.Sprint(got) != fmt.Sprint([]string{botIDs[0] + "/go-owned/1", botIDs[1] + "/go-owned/2"}) || listed.GetAccountId() != acct.GetAccountId() {
		t.Fatalf("account bots %v (account %s), want versions 1 and 2 of %v", got, listed.GetAccountId(), botIDs)
	}
}

// TestPlayLadder: two Go bots (two owners) and the two house entrants fill a default ladder's
// four seats; PlayLadder plays one duplicate set (four tables) through the ordinary runner,
// leaves, and both bots are rated on the leaderboard.
func TestPlayLadder(t *testing.T) {
	ctx := testContext(t, 150*time.Second)
	const ladder = "beast-4"
	names := []string{"go-ladder-heuristic", "go-ladder-random"}
	bots := []bot.Bot{strategy.RuleAware{}, strategy.NewRandom(7)}
	clients := make([]*bot.Client, len(names))
	for i, name := range names {
		clients[i] = dial(t, ctx, name)
	}
	var wg sync.WaitGroup
	runners := make([]*bot.Runner, len(names))
	played := make([][]string, len(names))
	errs := make([]error, len(names))
	for i := range names {
		wg.Add(1)
		go func() {
			defer wg.Done()
			runners[i] = bot.NewRunner(clients[i], bots[i], bot.RunnerOptions{})
			played[i], errs[i] = runners[i].PlayLadder(ctx, ladder, bot.LadderOptions{Capacity: 1, Matches: 4})
		}()
	}
	wg.Wait()
	for i, name := range names {
		if errs[i] != nil || len(played[i]) != 4 {
			t.Fatalf("%s played %v: %v", name, played[i], errs[i])
		}
		_, entry, err := clients[i].GetLadder(ctx, ladder)
		if err != nil || entry.GetActive() {
			t.Fatalf("%s still entered after PlayLadder: %v %v", name, entry, err)
		}
	}
	// Each bot played one duplicate set: the four rotations (r0..r3) of one match. (With the
	// house's three entrants a bot alone fills a table, so the two need not meet.)
	for i, name := range names {
		sort.Strings(played[i])
		match := strings.TrimSuffix(played[i][0], "r0")
		for r, id := range played[i] {
			if id != fmt.Sprintf("%sr%d", match, r) {
				t.Fatalf("%s did not play one set's four rotations: %v", name, played[i])
			}
		}
	}

	var lines []*betev1.Standing
	for deadline := time.Now().Add(20 * time.Second); time.Now().Before(deadline); time.Sleep(200 * time.Millisecond) {
		var err error
		if lines, err = clients[0].Standings(ctx, ladder); err != nil {
			t.Fatal(err)
		}
		rated := 0
		for _, s := range lines {
			if (s.GetBotId() == clients[0].BotID() || s.GetBotId() == clients[1].BotID()) && s.GetMatches() == 1 {
				rated++
			}
		}
		if rated == 2 {
			break
		}
	}
	rated := map[string]bool{}
	for i, s := range lines {
		if i > 0 && s.GetRating() > lines[i-1].GetRating() {
			t.Errorf("standings not best first at %d: %v", i, lines)
		}
		rated[s.GetBotId()] = s.GetMatches() == 1
	}
	if !rated[clients[0].BotID()] || !rated[clients[1].BotID()] {
		t.Fatalf("both bots rated once on %s: %v", ladder, lines)
	}
	// Rated, so the records are served: every decision of the bots was theirs, none timed out.
	for i := range names {
		for _, id := range played[i] {
			result, seat := runners[i].Result(id)
			checkFinished(t, ctx, clients[i], id, result, 4, seat)
		}
	}
	matches, _, err := clients[0].LadderMatches(ctx, ladder, clients[0].BotID(), 0, "")
	if err != nil || len(matches) != 1 || len(matches[0].GetTables()) != 4 || matches[0].GetState() != betev1.LadderMatchState_LADDER_MATCH_STATE_RATED {
		t.Fatalf("the bot's matches: %v %v", matches, err)
	}
}

// TestCommandPlaysALadder: two bete-go-bot processes with -ladder -matches 4 fill a default
// ladder's four seats with the two house entrants, play one duplicate set and leave.
func TestCommandPlaysALadder(t *testing.T) {
	ctx := testContext(t, 150*time.Second)
	goBin, err := exec.LookPath("go")
	if err != nil {
		goBin = filepath.Join(runtime.GOROOT(), "bin", "go")
	}
	exe := filepath.Join(t.TempDir(), "bete-go-bot")
	build := exec.CommandContext(ctx, goBin, "build", "-o", exe, "./cmd/bete-go-bot")
	build.Dir = ".."
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	outs := make([][]byte, 2)
	errs := make([]error, 2)
	var wg sync.WaitGroup
	for i, strat := range []string{"rule-aware", "random"} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			cmd := exec.CommandContext(ctx, exe, "-server", serverAddr, "-ladder", "lanterlui-4", "-matches", "4",
				"-strategy", strat, "-name", "go-cmd-"+strat)
			cmd.Env = append(os.Environ(), "BETE_TOKEN=")
			outs[i], errs[i] = cmd.CombinedOutput()
		}()
	}
	wg.Wait()
	for i := range outs {
		out := string(outs[i])
		if errs[i] != nil {
			t.Fatalf("bete-go-bot -ladder: %v\n%s", errs[i], out)
		}
		if n := len(regexp.MustCompile(`(?m)^table \S+: seat \d, balance [+-]\d+, balances \[`).FindAllString(out, -1)); n != 4 {
			t.Errorf("want 4 finished ladder tables, got %d:\n%s", n, out)
		}
		if !strings.Contains(out, "4 ladder tables; left ladder lanterlui-4") {
			t.Errorf("summary line missing:\n%s", out)
		}
	}
}
