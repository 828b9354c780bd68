package e2e

import (
	"context"
	"encoding/json"
	"net"
	"sync"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/bete-game/bete/clients/go/bot"
	"github.com/bete-game/bete/clients/go/bot/strategy"
	betev1 "github.com/bete-game/bete/clients/go/gen/bete/v1"
)

// record is the part of a bete-record/1 the tests check.
type record struct {
	Ruleset string `json:"ruleset"`
	Seats   int    `json:"seats"`
	Deals   []struct {
		Actions []struct {
			Seat   uint32 `json:"seat"`
			Action string `json:"action"`
			Auto   bool   `json:"auto"`
		} `json:"actions"`
	} `json:"deals"`
}

// checkFinished asserts a table's match is over, its final balances sum to zero (everything on
// the table went back, RULES.md 0.4 item 17), and every action of seats is in the record,
// played by the bot itself (never auto-played after a missed deadline). It returns the record.
func checkFinished(t *testing.T, ctx context.Context, c *bot.Client, id string, result *betev1.MatchEnded, seats int, botSeats ...uint32) *record {
	t.Helper()
	if result == nil {
		t.Fatalf("table %s: no result", id)
	}
	if len(result.GetBalances()) != seats || sum(result.GetBalances()) != 0 {
		t.Errorf("table %s: final balances %v (want %d seats summing to 0)", id, result.GetBalances(), seats)
	}
	got, err := c.Tables.GetTable(ctx, &betev1.GetTableRequest{TableId: id})
	if err != nil {
		t.Fatalf("GetTable %s: %v", id, err)
	}
	if got.GetTable().GetState() != betev1.TableState_TABLE_STATE_FINISHED {
		t.Errorf("table %s state %v, want FINISHED", id, got.GetTable().GetState())
	}
	js, err := c.Record(ctx, id)
	if err != nil {
		t.Fatalf("GetGameRecord %s: %v", id, err)
	}
	var rec record
	if err := json.Unmarshal([]byte(js), &rec); err != nil {
		t.Fatalf("record of %s: %v", id, err)
	}
	if len(rec.Deals) == 0 {
		t.Fatalf("record of %s has no deal", id)
	}
	acted := map[uint32]int{}
	for d, deal := range rec.Deals {
		for i, a := range deal.Actions {
			if _, err := bot.ParseAction(a.Action); err != nil {
				t.Errorf("record of %s deal %d action %d: %v", id, d, i, err)
			}
			for _, s := range botSeats {
				if a.Seat == s {
					acted[s]++
					if a.Auto {
						t.Errorf("table %s deal %d: seat %d's %q was auto-played (a decision was missed)", id, d, s, a.Action)
					}
				}
			}
		}
	}
	for _, s := range botSeats {
		if acted[s] == 0 {
			t.Errorf("table %s: seat %d never acted", id, s)
		}
	}
	return &rec
}

// TestFullMatchesEveryRuleset: two Go bots (rule-aware and random) each play five tables at
// once against house bots, covering all ten rulesets, every match to its end.
func TestFullMatchesEveryRuleset(t *testing.T) {
	ctx := testContext(t, 90*time.Second)
	type game struct {
		ruleset string
		seats   uint32
	}
	groups := map[string][]game{
		"rule-aware": {{"bete", 3}, {"beast", 4}, {"lanterlui", 3}, {"mistigri", 4}, {"rams", 3}},
		"random":     {{"bete-ace-high", 4}, {"beste-boer", 4}, {"bester-bube", 3}, {"mouche", 3}, {"loo", 10}},
	}
	var wg sync.WaitGroup
	for name, games := range groups {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c := dial(t, ctx, "go-"+name)
			b, err := strategy.New(name, 7)
			if err != nil {
				t.Error(err)
				return
			}
			runner := bot.NewRunner(c, b, bot.RunnerOptions{})
			var ids []string
			seats := map[string]int{}
			for i, g := range games {
				r, _ := bot.ParseRuleset(g.ruleset)
				policy := betev1.HouseBotPolicy_HOUSE_BOT_POLICY_HEURISTIC
				if i%2 == 1 {
					policy = betev1.HouseBotPolicy_HOUSE_BOT_POLICY_RANDOM
				}
				tab := houseTable(t, ctx, c, r, g.seats, policy)
				ids = append(ids, tab.GetTableId())
				seats[tab.GetTableId()] = int(g.seats)
			}
			results, err := runner.Play(ctx, ids...)
			if err != nil {
				t.Errorf("%s: Play: %v (stats %+v)", name, err, runner.Stats())
				return
			}
			for i, id := range ids {
				rec := checkFinished(t, ctx, c, id, results[id], seats[id], 0)
				if rec.Ruleset != games[i].ruleset {
					t.Errorf("table %s record ruleset %q, want %q", id, rec.Ruleset, games[i].ruleset)
				}
			}
			st := runner.Stats()
			if st.Illegal != 0 || st.Decisions == 0 || st.Submits < st.Decisions-1 {
				t.Errorf("%s: stats %+v", name, st)
			}
			t.Logf("%s: %+v", name, st)
		}()
	}
	wg.Wait()
}

// connKiller remembers every connection the client opens so a test can cut them all.
type connKiller struct {
	mu    sync.Mutex
	conns []net.Conn
	kills int
}

func (k *connKiller) dialer() grpc.DialOption {
	return grpc.WithContextDialer(func(ctx context.Context, addr string) (net.Conn, error) {
		c, err := (&net.Dialer{}).DialContext(ctx, "tcp", addr)
		if err == nil {
			k.mu.Lock()
			k.conns = append(k.conns, c)
			k.mu.Unlock()
		}
		return c, err
	})
}

func (k *connKiller) killAll() {
	k.mu.Lock()
	defer k.mu.Unlock()
	for _, c := range k.conns {
		_ = c.Close()
	}
	k.conns = nil
	k.kills++
}

// seqRecorder is a bot that records the sequence numbers of the events it is given and cuts
// the connection now and then: inside Decide (so the submit that follows meets a dead link and
// must be retried with the same request_id) and right after some events (so the stream resumes).
type seqRecorder struct {
	strategy.RuleAware
	killer *connKiller

	mu        sync.Mutex
	seqs      []uint64
	decisions int
	ended     bool
}

func (b *seqRecorder) Decide(v *betev1.SeatView) *betev1.Action {
	b.mu.Lock()
	b.decisions++
	n := b.decisions
	b.mu.Unlock()
	if n%4 == 2 {
		b.killer.killAll()
	}
	return b.RuleAware.Decide(v)
}

func (b *seqRecorder) Event(_ string, _ uint32, ev *betev1.Event) {
	b.mu.Lock()
	b.seqs = append(b.seqs, ev.GetSeq())
	n := len(b.seqs)
	if ev.GetMatchEnded() != nil {
		b.ended = true
	}
	b.mu.Unlock()
	if n%9 == 5 {
		b.killer.killAll()
	}
}

// lossySubmits forwards every SubmitAction but reports every fifth one as UNAVAILABLE, as if
// the reply were lost after the server applied it; it records what the retries got back.
type lossySubmits struct {
	mu       sync.Mutex
	calls    int
	lost     map[string]bool // request ids whose reply was "lost"
	replayed map[string]bool // lost request ids whose retry came back replayed
	reused   int             // retries that reused a lost request id
}

func (l *lossySubmits) interceptor() grpc.DialOption {
	l.lost, l.replayed = map[string]bool{}, map[string]bool{}
	return grpc.WithChainUnaryInterceptor(func(ctx context.Context, method string, req, reply any, cc *grpc.ClientConn, invoker grpc.UnaryInvoker, opts ...grpc.CallOption) error {
		err := invoker(ctx, method, req, reply, cc, opts...)
		sub, ok := req.(*betev1.SubmitActionRequest)
		if !ok || err != nil {
			return err
		}
		l.mu.Lock()
		defer l.mu.Unlock()
		id := sub.GetRequestId()
		if l.lost[id] {
			l.reused++
			if reply.(*betev1.SubmitActionResponse).GetReplayed() {
				l.replayed[id] = true
			}
			return nil
		}
		l.calls++
		if l.calls%5 == 3 {
			l.lost[id] = true
			return status.Error(codes.Unavailable, "test: reply lost")
		}
		return nil
	})
}

// checkContiguous asserts the events went from first to last with no gap and no duplicate.
func checkContiguous(t *testing.T, seqs []uint64, first, last uint64) {
	t.Helper()
	if len(seqs) == 0 {
		t.Fatal("no events delivered")
	}
	for i, s := range seqs {
		if s != first+uint64(i) {
			t.Fatalf("event %d has seq %d, want %d (gap or duplicate) in %v", i, s, first+uint64(i), seqs)
		}
	}
	if seqs[len(seqs)-1] != last {
		t.Errorf("last event seq %d, table's last_seq %d", seqs[len(seqs)-1], last)
	}
}

func testResume(t *testing.T, perTable bool) {
	ctx := testContext(t, 60*time.Second)
	killer := &connKiller{}
	lossy := &lossySubmits{}
	c := dial(t, ctx, "go-resume", killer.dialer(), lossy.interceptor())
	b := &seqRecorder{killer: killer}
	var errs []error
	var mu sync.Mutex
	runner := bot.NewRunner(c, b, bot.RunnerOptions{
		PerTableStreams: perTable,
		MinBackoff:      10 * time.Millisecond, MaxBackoff: 200 * time.Millisecond,
		OnError: func(_ string, err error) {
			mu.Lock()
			errs = append(errs, err)
			mu.Unlock()
			t.Logf("%v recovered: %v", time.Now().Format("15:04:05.000"), err)
		},
	})
	tab := houseTable(t, ctx, c, betev1.Ruleset_RULESET_BESTE_BOER, 3, betev1.HouseBotPolicy_HOUSE_BOT_POLICY_HEURISTIC)
	id := tab.GetTableId()
	runner.Track(id, tab.GetLastSeq()) // every event from creation on, so the check covers all
	results, err := runner.Play(ctx, id)
	if err != nil {
		t.Fatalf("Play: %v (stats %+v)", err, runner.Stats())
	}
	// Check through a second bot's connection: the test may have cut the first one just now.
	checker := dial(t, ctx, "go-resume-check")
	final, err := checker.Tables.GetTable(ctx, &betev1.GetTableRequest{TableId: id})
	if err != nil {
		t.Fatal(err)
	}
	b.mu.Lock()
	seqs := append([]uint64(nil), b.seqs...)
	ended := b.ended
	b.mu.Unlock()
	checkContiguous(t, seqs, tab.GetLastSeq()+1, final.GetTable().GetLastSeq())
	if !ended {
		t.Error("the bot never saw MatchEnded")
	}
	checkFinished(t, ctx, checker, id, results[id], 3, 0)
	st := runner.Stats()
	killer.mu.Lock()
	kills := killer.kills
	killer.mu.Unlock()
	if kills < 2 || st.Streams < 2 {
		t.Errorf("the test cut the link %d times and the runner opened %d streams; want at least 2 of each", kills, st.Streams)
	}
	lossy.mu.Lock()
	if len(lossy.lost) == 0 || len(lossy.replayed) != len(lossy.lost) || st.Retries < len(lossy.lost) {
		t.Errorf("%d replies lost, %d retried with the same request_id and replayed (%d reuses); stats %+v",
			len(lossy.lost), len(lossy.replayed), lossy.reused, st)
	}
	lossy.mu.Unlock()
	if st.Events != len(seqs) || st.Gaps != 0 {
		t.Errorf("stats %+v for %d events", st, len(seqs))
	}
	t.Logf("%d link cuts; stats %+v; %d recovered errors", kills, st, len(errs))
}

// TestResumeAfterDroppedStream: the connection is cut again and again during a match; the
// WatchBot runner resumes from the last seq, the bot sees every event exactly once, in order,
// and never misses a decision (none of its actions is auto-played).
func TestResumeAfterDroppedStream(t *testing.T) { testResume(t, false) }

// TestResumePerTableStreams: the same with one WatchTable stream per table.
func TestResumePerTableStreams(t *testing.T) { testResume(t, true) }
