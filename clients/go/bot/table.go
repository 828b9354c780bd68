package bot

import (
	"context"
	"fmt"
	"sync"

	"google.golang.org/grpc/codes"

	betev1 "github.com/bete-game/bete/clients/go/gen/bete/v1"
)

// item is one message for a table's worker, in stream order.
type item struct {
	seated   *betev1.Seated
	snapshot *betev1.SeatView
	event    *betev1.Event
	decision *betev1.DecisionRequest
	// poll asks the worker to fetch the current view and decide if it is the bot's turn.
	poll bool
}

// table is the runner's state for one table. The stream reader dedupes and queues messages;
// one worker goroutine per table handles them in order, so the bot sees one table serially
// while a slow decision never blocks the stream or the other tables.
type table struct {
	id   string
	r    *Runner
	wake chan struct{}
	// poll: per-table streams carry no DecisionRequest, so the worker looks at the view after
	// each burst of events.
	poll bool

	mu       sync.Mutex
	received int64 // highest sequence number received on a stream; -1 before any
	queue    []item
	running  bool
	// wg is the running Run's wait group, for goroutines the worker starts.
	wg         *sync.WaitGroup
	catchingUp bool
	finished   bool
	result     *betev1.MatchEnded
	seat       uint32

	// Worker-only state.
	seq        uint64 // latest sequence number handled
	hasSeat    bool
	decided    uint64 // the seq of the last decision made, to make each decision once
	hasDecided bool
}

func (t *table) isFinished() bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.finished
}

func (t *table) resumePoint() (uint64, bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.received < 0 {
		return 0, false
	}
	return uint64(t.received), true
}

func (t *table) forgetResumePoint() {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.received = -1
}

func (t *table) push(it item) {
	t.mu.Lock()
	if t.finished {
		t.mu.Unlock()
		return
	}
	t.queue = append(t.queue, it)
	t.mu.Unlock()
	select {
	case t.wake <- struct{}{}:
	default:
	}
}

// receiveSnapshot queues a snapshot; it sets the resume point to the snapshot's seq.
func (t *table) receiveSnapshot(v *betev1.SeatView) {
	t.mu.Lock()
	if !t.finished {
		t.received = int64(v.GetSeq())
	}
	t.mu.Unlock()
	t.push(item{snapshot: v})
}

// receiveEvent queues the next event, drops a duplicate and reports a gap (the caller then
// reopens the stream from the last event received, so nothing is lost).
func (t *table) receiveEvent(ev *betev1.Event) error {
	t.mu.Lock()
	if t.finished {
		t.mu.Unlock()
		return nil
	}
	seq := int64(ev.GetSeq())
	if t.received >= 0 && seq <= t.received {
		t.mu.Unlock()
		t.r.count(func(s *Stats) { s.Duplicates++ })
		return nil
	}
	if t.received >= 0 && seq != t.received+1 {
		want := t.received + 1
		t.mu.Unlock()
		t.r.count(func(s *Stats) { s.Gaps++ })
		return fmt.Errorf("%w: table %s sent seq %d, expected %d", errGap, t.id, seq, want)
	}
	t.received = seq
	t.mu.Unlock()
	t.push(item{event: ev})
	return nil
}

// next pops the next item, waiting for one; ok is false when ctx ends.
func (t *table) next(ctx context.Context) (it item, more bool, ok bool) {
	for {
		t.mu.Lock()
		if len(t.queue) > 0 {
			it = t.queue[0]
			t.queue[0] = item{}
			t.queue = t.queue[1:]
			more = len(t.queue) > 0
			t.mu.Unlock()
			return it, more, true
		}
		t.mu.Unlock()
		select {
		case <-ctx.Done():
			return item{}, false, false
		case <-t.wake:
		}
	}
}

func (t *table) work(ctx context.Context) {
	defer func() {
		t.mu.Lock()
		t.running = false
		t.mu.Unlock()
	}()
	for !t.isFinished() {
		it, more, ok := t.next(ctx)
		if !ok {
			return
		}
		switch {
		case it.seated != nil:
			t.setSeat(it.seated.GetSeat())
		case it.snapshot != nil:
			t.onView(ctx, it.snapshot, true)
		case it.event != nil:
			t.onEvent(it.event)
			if t.polling() && !more && !t.isFinished() {
				t.pollView(ctx)
			}
		case it.decision != nil:
			d := it.decision
			if d.GetSeq() < t.seq {
				continue // the table moved on; a newer decision follows if it is still our turn
			}
			v := d.GetView()
			if v.GetSeq() != d.GetSeq() {
				v.Seq = d.GetSeq()
			}
			t.decide(ctx, v)
		case it.poll:
			t.pollView(ctx)
		}
	}
}

func (t *table) setSeat(seat uint32) {
	t.hasSeat = true
	t.mu.Lock()
	t.seat = seat
	t.mu.Unlock()
}

// onView handles a view: a stream's snapshot (which replaces every event up to its seq) or a
// polled view (which only looks for a decision: the events up to it still come on the stream).
func (t *table) onView(ctx context.Context, v *betev1.SeatView, snapshot bool) {
	if v.ViewerSeat != nil {
		t.setSeat(v.GetViewerSeat())
	}
	if snapshot {
		t.seq = v.GetSeq()
		if v.GetMatchOver() || v.GetPhase() == betev1.Phase_PHASE_MATCH_OVER {
			// Joined the stream after the end: the result is built from the view's balances.
			balances := make([]int64, 0, len(v.GetSeatStates()))
			for _, s := range v.GetSeatStates() {
				balances = append(balances, s.GetBalance())
			}
			ended := &betev1.MatchEnded{Balances: balances}
			if h, ok := t.r.bot.(MatchEndHook); ok {
				h.MatchEnded(t.id, t.mySeat(), ended)
			}
			t.finish(ended)
			return
		}
	}
	if !snapshot && !t.polling() && v.GetMatchOver() && v.GetSeq() > t.seq {
		t.catchUp(ctx)
		return
	}
	if MyTurn(v) {
		t.decide(ctx, v)
	}
}

// catchUp follows the table with its own WatchTable stream from the last event received until
// MatchEnded: a WatchBot stream opened after a match ended no longer carries that table, so
// the events between a dropped stream and the end would otherwise never arrive. Events that
// come on both streams are deduplicated by seq.
func (t *table) catchUp(ctx context.Context) {
	t.mu.Lock()
	start := !t.catchingUp && !t.finished
	t.catchingUp = true
	wg := t.wg
	t.mu.Unlock()
	if !start {
		return
	}
	wg.Add(1)
	go func() {
		defer wg.Done()
		if err := t.r.followTable(ctx, wg, t.id); err != nil {
			t.r.report(t.id, fmt.Errorf("bete: catching up after the match ended: %w", err))
		}
	}()
}

func (t *table) mySeat() uint32 {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.seat
}

// pollView fetches the current view (retrying while the server is unreachable) and decides
// if it is the bot's turn.
func (t *table) pollView(ctx context.Context) {
	var v *betev1.SeatView
	for attempt := 0; ; attempt++ {
		cctx, cancel := context.WithTimeout(ctx, t.r.opts.CallTimeout)
		view, err := t.r.client.View(cctx, t.id)
		cancel()
		if err == nil {
			v = view
			break
		}
		if ctx.Err() != nil {
			return
		}
		e := AsError(err)
		if !retryable(e) || attempt >= 30 {
			t.r.report(t.id, fmt.Errorf("bete: GetSeatView: %w", e))
			return
		}
		if !sleep(ctx, t.r.wait(attempt, e)) {
			return
		}
	}
	if v.GetSeq() < t.seq {
		return
	}
	t.onView(ctx, v, false)
}

func (t *table) onEvent(ev *betev1.Event) {
	t.seq = ev.GetSeq()
	t.r.count(func(s *Stats) { s.Events++ })
	b := t.r.bot
	seat := t.mySeat()
	if h, ok := b.(EventHook); ok {
		h.Event(t.id, seat, ev)
	}
	switch body := ev.GetBody().(type) {
	case *betev1.Event_DealStarted:
		if h, ok := b.(DealStartHook); ok {
			h.DealStarted(t.id, seat, body.DealStarted)
		}
	case *betev1.Event_DealSettled:
		if h, ok := b.(DealEndHook); ok {
			h.DealSettled(t.id, seat, body.DealSettled)
		}
	case *betev1.Event_MatchEnded:
		if h, ok := b.(MatchEndHook); ok {
			h.MatchEnded(t.id, seat, body.MatchEnded)
		}
		t.finish(body.MatchEnded)
	}
}

func (t *table) finish(result *betev1.MatchEnded) {
	t.mu.Lock()
	if t.finished {
		t.mu.Unlock()
		return
	}
	t.finished = true
	t.result = result
	t.queue = nil
	t.mu.Unlock()
	r := t.r
	r.mu.Lock()
	close(r.changed)
	r.changed = make(chan struct{})
	r.mu.Unlock()
}

// askBot calls the bot, turning a panic into a nil answer so one bad decision never kills the
// runner (the first legal action is played instead).
func (t *table) askBot(v *betev1.SeatView) (a *betev1.Action) {
	defer func() {
		if p := recover(); p != nil {
			t.r.report(t.id, fmt.Errorf("bete: bot panicked in Decide: %v", p))
			a = nil
		}
	}()
	return t.r.bot.Decide(v)
}

// decide asks the bot once per sequence number and submits its action.
func (t *table) decide(ctx context.Context, v *betev1.SeatView) {
	if (t.hasDecided && t.decided == v.GetSeq()) || len(v.GetLegalActions()) == 0 {
		return
	}
	t.hasDecided, t.decided = true, v.GetSeq()
	t.r.count(func(s *Stats) { s.Decisions++ })
	action := t.askBot(v)
	fallback := action == nil
	if fallback {
		action = v.GetLegalActions()[0]
	}
	t.submit(ctx, v, action, fallback)
}

// submit sends the action with expected_seq = the view's seq. UNAVAILABLE (and the other
// failures where nothing was applied) are retried with the same request_id, so the server applies
// the action at most once; an illegal action from the bot is replaced by the first legal one.
func (t *table) submit(ctx context.Context, v *betev1.SeatView, action *betev1.Action, fallback bool) {
	r := t.r
	req := &betev1.SubmitActionRequest{TableId: t.id, Action: action, ExpectedSeq: v.GetSeq(), RequestId: newRequestID()}
	for attempt := 0; ; attempt++ {
		cctx, cancel := context.WithTimeout(ctx, r.opts.CallTimeout)
		_, err := r.client.Tables.SubmitAction(cctx, req)
		cancel()
		if err == nil {
			r.count(func(s *Stats) { s.Submits++ })
			return
		}
		if ctx.Err() != nil {
			return
		}
		e := AsError(err)
		switch {
		case retryable(e) && attempt < 30:
			r.count(func(s *Stats) { s.Retries++ })
			if !sleep(ctx, r.wait(attempt, e)) {
				return
			}
		case e.Reason == ReasonIllegalAction && !fallback:
			r.count(func(s *Stats) { s.Illegal++ })
			r.report(t.id, fmt.Errorf("bete: bot chose %q, playing %q instead: %w", ActionText(action), ActionText(v.GetLegalActions()[0]), e))
			fallback = true
			req = &betev1.SubmitActionRequest{TableId: t.id, Action: v.GetLegalActions()[0], ExpectedSeq: v.GetSeq(), RequestId: newRequestID()}
		case e.Reason == ReasonStaleSeq || e.Reason == ReasonNotYourSeat:
			// The table moved on (e.g. the deadline passed and the server played for us). If it is
			// our turn again, the stream's next decision says so; look once in case it was missed.
			t.push(item{poll: true})
			return
		case e.Reason == ReasonTableFinished:
			return
		default:
			r.report(t.id, fmt.Errorf("bete: SubmitAction %q: %w", ActionText(req.GetAction()), e))
			return
		}
	}
}

// retryable: failures after which the action was not applied and may be sent again unchanged.
func retryable(e *Error) bool {
	switch e.Code {
	case codes.Unavailable, codes.DeadlineExceeded:
		return true
	}
	return e.Reason == ReasonInternal || e.Reason == ReasonRateLimited || e.Reason == ReasonOverloaded
}

// setPoll marks a table followed by WatchTable alone (no DecisionRequests): its worker looks
// at the view after events.
func (t *table) setPoll() {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.poll = true
}

func (t *table) polling() bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.poll
}
