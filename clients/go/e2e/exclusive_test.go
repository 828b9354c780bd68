package e2e

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"google.golang.org/grpc/codes"

	"github.com/bete-game/bete/clients/go/bot"
	betev1 "github.com/bete-game/bete/clients/go/gen/bete/v1"
)

// firstSign plays the first legal action and closes seen at its first decision or event: the
// runner has then had something on its WatchBot stream, so the server holds that stream.
type firstSign struct {
	once sync.Once
	seen chan struct{}
}

func (f *firstSign) sign() { f.once.Do(func() { close(f.seen) }) }

func (f *firstSign) Decide(v *betev1.SeatView) *betev1.Action {
	f.sign()
	return v.GetLegalActions()[0]
}

func (f *firstSign) Event(string, uint32, *betev1.Event) { f.sign() }

// TestExclusiveRunnerReplacesTheOlder: two processes of one bot (two clients on one token). The
// older runner plays the bot's table; a newer runner with Exclusive takes over: the older's
// stream ends with ABORTED / STREAM_REPLACED and its Run returns that error without
// reconnecting, and the newer plays the table to its end on its one stream.
func TestExclusiveRunnerReplacesTheOlder(t *testing.T) {
	ctx := testContext(t, 90*time.Second)
	first := dial(t, ctx, "go-exclusive")
	second, err := bot.Dial(ctx, serverAddr, bot.Options{Token: first.Token()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = second.Close() })
	tab := houseTable(t, ctx, first, betev1.Ruleset_RULESET_BETE, 3, betev1.HouseBotPolicy_HOUSE_BOT_POLICY_RANDOM)
	id := tab.GetTableId()

	sign := &firstSign{seen: make(chan struct{})}
	older := bot.NewRunner(first, sign, bot.RunnerOptions{})
	olderDone := make(chan error, 1)
	go func() { olderDone <- older.Run(ctx) }()
	select {
	case <-sign.seen:
	case err := <-olderDone:
		t.Fatalf("the older runner stopped before playing: %v", err)
	case <-ctx.Done():
		t.Fatal("the older runner never heard from its table")
	}

	newer := bot.NewRunner(second, &firstSign{seen: make(chan struct{})}, bot.RunnerOptions{Exclusive: true})
	newerDone := make(chan error, 1)
	var results map[string]*betev1.MatchEnded
	go func() {
		var err error
		results, err = newer.Play(ctx, id)
		newerDone <- err
	}()

	select {
	case err := <-olderDone:
		e := bot.AsError(err)
		if e == nil || e.Code != codes.Aborted || e.Reason != bot.ReasonStreamReplaced {
			t.Fatalf("the older runner ended with %v, want ABORTED STREAM_REPLACED", err)
		}
	case <-ctx.Done():
		t.Fatal("the older runner's stream was never replaced")
	}
	if n := older.Stats().Streams; n != 1 {
		t.Errorf("the replaced runner opened %d streams; it must not reconnect", n)
	}

	if err := <-newerDone; err != nil {
		if errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("the newer runner did not finish the table (stats %+v)", newer.Stats())
		}
		t.Fatalf("newer Play: %v", err)
	}
	res, seat := newer.Result(id)
	if results[id] == nil || res == nil {
		t.Fatalf("no result for %s", id)
	}
	checkFinished(t, ctx, second, id, res, 3, seat)
	if n := newer.Stats().Streams; n != 1 {
		t.Errorf("the exclusive runner opened %d streams, want 1", n)
	}
}
