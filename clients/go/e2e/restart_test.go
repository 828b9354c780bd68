package e2e

import (
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/bete-game/bete/clients/go/bot"
	"github.com/bete-game/bete/clients/go/bot/strategy"
	betev1 "github.com/bete-game/bete/clients/go/gen/bete/v1"
)

// restartingBot asks the test to restart the server while it decides (so its submit meets a
// server that is gone and must be retried), and records every event's seq.
type restartingBot struct {
	strategy.RuleAware
	restart chan struct{}

	mu        sync.Mutex
	decisions int
	seqs      []uint64
}

func (b *restartingBot) Decide(v *betev1.SeatView) *betev1.Action {
	b.mu.Lock()
	b.decisions++
	n := b.decisions
	b.mu.Unlock()
	if n == 3 || n == 7 {
		b.restart <- struct{}{} // the test stops the server now and starts it again
	}
	return b.RuleAware.Decide(v)
}

func (b *restartingBot) Event(_ string, _ uint32, ev *betev1.Event) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.seqs = append(b.seqs, ev.GetSeq())
}

// TestServerRestartMidMatch: the server is stopped twice in the middle of a match and started
// again on the same data folder; the runner rides through (UNAVAILABLE retried, the stream
// resumed from its last seq) and the match ends with every event seen exactly once.
func TestServerRestartMidMatch(t *testing.T) {
	port, err := freePort()
	if err != nil {
		t.Fatal(err)
	}
	addr, dataDir := fmt.Sprintf("127.0.0.1:%d", port), t.TempDir()
	srv, err := startServer(addr, dataDir)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { srv.stop() }()

	ctx := testContext(t, 90*time.Second)
	c, err := bot.Dial(ctx, addr, bot.Options{Name: "go-restart"})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	req := bot.HouseTable(betev1.Ruleset_RULESET_BETE, 3, betev1.HouseBotPolicy_HOUSE_BOT_POLICY_HEURISTIC)
	req.Config = shortMatch
	req.DecisionDeadlineMs = 60000 // the restarts must not cost the bot a decision
	tab, err := c.CreateTable(ctx, req)
	if err != nil {
		t.Fatal(err)
	}
	id := tab.GetTableId()
	if err := c.JoinSeat(ctx, id, 0); err != nil {
		t.Fatal(err)
	}
	b := &restartingBot{restart: make(chan struct{})}
	runner := bot.NewRunner(c, b, bot.RunnerOptions{MinBackoff: 20 * time.Millisecond, MaxBackoff: 300 * time.Millisecond})
	runner.Track(id, tab.GetLastSeq())
	type played struct {
		results map[string]*betev1.MatchEnded
		err     error
	}
	done := make(chan played, 1)
	go func() {
		r, err := runner.Play(ctx, id)
		done <- played{r, err}
	}()
	restarts := 0
	var g played
wait:
	for {
		select {
		case <-b.restart:
			srv.stop()
			restarts++
			if srv, err = startServer(addr, dataDir); err != nil {
				t.Fatalf("restart %d: %v", restarts, err)
			}
		case g = <-done:
			break wait
		}
	}
	if g.err != nil {
		t.Fatalf("Play: %v (stats %+v)\nserver output:\n%s", g.err, runner.Stats(), srv.out.tail(3000))
	}
	if restarts == 0 { // two unless the match had fewer than 7 decisions for the bot
		t.Error("the server was never restarted")
	}
	got, err := c.Tables.GetTable(ctx, &betev1.GetTableRequest{TableId: id})
	if err != nil {
		t.Fatal(err)
	}
	b.mu.Lock()
	seqs := append([]uint64(nil), b.seqs...)
	b.mu.Unlock()
	checkContiguous(t, seqs, tab.GetLastSeq()+1, got.GetTable().GetLastSeq())
	checkFinished(t, ctx, c, id, g.results[id], 3, 0)
	st := runner.Stats()
	if st.Streams < restarts+1 {
		t.Errorf("stats %+v: want at least %d streams (%d restarts)", st, restarts+1, restarts)
	}
	t.Logf("%d restarts, stats %+v", restarts, st)
}
