package bot

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"log/slog"
	mrand "math/rand/v2"
	"sync"
	"time"

	"google.golang.org/grpc/codes"

	betev1 "github.com/bete-game/bete/clients/go/gen/bete/v1"
)

// RunnerOptions tune a Runner; the zero value is fine.
type RunnerOptions struct {
	// PerTableStreams follows each table with its own WatchTable stream (and GetSeatView to find
	// decisions) instead of the one WatchBot stream. Only tables named to Play are followed.
	PerTableStreams bool
	// Logger gets the runner's diagnostics; nil discards them.
	Logger *slog.Logger
	// OnError hears failures the runner recovered from (an illegal action from the bot, a
	// dropped stream), for logs and tests. It may be called from several goroutines.
	OnError func(tableID string, err error)
	// MinBackoff and MaxBackoff bound the wait before reconnecting a stream or retrying an
	// UNAVAILABLE submit; defaults 50ms and 2s.
	MinBackoff, MaxBackoff time.Duration
	// CallTimeout bounds each unary call; default 10s.
	CallTimeout time.Duration
	// Exclusive makes this runner the only process playing its bot: every WatchBot stream it
	// opens is exclusive, so the server ends the bot's other streams (ABORTED /
	// STREAM_REPLACED), and Run returns that error when a later process does the same to it.
	Exclusive bool
	// StreamIdleTimeout reopens a stream that delivered nothing (not even a heartbeat, which
	// the server sends every 15s by default) for this long: a half-open connection would
	// otherwise stall the bot silently. Default 60s.
	StreamIdleTimeout time.Duration
}

// Stats count what a Runner did, for logs and tests.
type Stats struct {
	// Streams opened (WatchBot or WatchTable), the first included.
	Streams int
	// Events delivered to the bot (each exactly once).
	Events int
	// Duplicates: events received again after a resume and dropped.
	Duplicates int
	// Gaps: events that arrived after a missing sequence number (the stream is then reopened).
	Gaps int
	// Decisions the bot was asked for.
	Decisions int
	// Submits acknowledged by the server.
	Submits int
	// Retries of a submit with the same request_id after UNAVAILABLE.
	Retries int
	// Illegal actions the bot returned (replaced by the first legal action).
	Illegal int
}

// Runner plays every table its bot sits at: it follows them on one WatchBot stream, resumes
// from the last sequence number after a dropped stream, asks the Bot for each decision and
// submits it with a fresh request_id and expected_seq, retrying UNAVAILABLE with the same
// request_id so an action is applied once.
type Runner struct {
	client *Client
	bot    Bot
	opts   RunnerOptions
	log    *slog.Logger

	mu      sync.Mutex
	tables  map[string]*table
	stats   Stats
	changed chan struct{} // closed and replaced whenever a table finishes
}

// NewRunner makes a runner that plays bot through client.
func NewRunner(client *Client, bot Bot, opts RunnerOptions) *Runner {
	if opts.MinBackoff <= 0 {
		opts.MinBackoff = 50 * time.Millisecond
	}
	if opts.MaxBackoff < opts.MinBackoff {
		opts.MaxBackoff = 2 * time.Second
	}
	if opts.CallTimeout <= 0 {
		opts.CallTimeout = 10 * time.Second
	}
	if opts.StreamIdleTimeout <= 0 {
		opts.StreamIdleTimeout = 60 * time.Second
	}
	log := opts.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &Runner{client: client, bot: bot, opts: opts, log: log, tables: map[string]*table{}, changed: make(chan struct{})}
}

// Stats returns a copy of the counters.
func (r *Runner) Stats() Stats {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.stats
}

// Result returns the final result of a table's match and the bot's seat there, or nil while the
// match is running (or if the runner never saw the table).
func (r *Runner) Result(tableID string) (*betev1.MatchEnded, uint32) {
	r.mu.Lock()
	t := r.tables[tableID]
	r.mu.Unlock()
	if t == nil {
		return nil, 0
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if !t.finished {
		return nil, 0
	}
	return t.result, t.seat
}

// Track makes the runner follow tableID from the event after fromSeq (e.g. the table's
// last_seq before you joined, so the bot's hooks see the match start and the first deal). Call
// it before Run or Play; without it a table is followed from a snapshot of its current view.
func (r *Runner) Track(tableID string, fromSeq uint64) {
	r.mu.Lock()
	defer r.mu.Unlock()
	t := r.tables[tableID]
	if t == nil {
		t = &table{id: tableID, r: r, wake: make(chan struct{}, 1), received: -1}
		r.tables[tableID] = t
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if !t.finished {
		t.received = int64(fromSeq)
	}
}

// Run plays until ctx is cancelled, every table the bot sits at now or joins later. It returns
// nil on cancellation and an error only when the server refuses the stream for good (e.g. a bad
// token).
func (r *Runner) Run(ctx context.Context) error {
	return r.run(ctx, nil)
}

// Play plays until the matches at every listed table are over (the bot must be seated there,
// or join while Play runs) and returns their final results by table id. If ctx ends first it
// returns ctx's error.
func (r *Runner) Play(ctx context.Context, tableIDs ...string) (map[string]*betev1.MatchEnded, error) {
	if len(tableIDs) == 0 {
		return nil, errors.New("bete: Play needs at least one table id")
	}
	if err := r.run(ctx, tableIDs); err != nil {
		return nil, err
	}
	out := make(map[string]*betev1.MatchEnded, len(tableIDs))
	for _, id := range tableIDs {
		out[id], _ = r.Result(id)
	}
	return out, nil
}

func (r *Runner) run(ctx context.Context, until []string) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var wg sync.WaitGroup
	defer wg.Wait()
	defer cancel()

	if until != nil {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r.waitFinished(ctx, until)
			cancel()
		}()
	}

	var err error
	if r.opts.PerTableStreams {
		if until == nil {
			return errors.New("bete: PerTableStreams needs the table ids: use Play")
		}
		errs := make(chan error, len(until))
		for _, id := range until {
			r.table(ctx, &wg, id).setPoll()
			wg.Add(1)
			go func() {
				defer wg.Done()
				errs <- r.followTable(ctx, &wg, id)
			}()
		}
		for range until {
			if e := <-errs; e != nil && err == nil {
				err = e
				cancel()
			}
		}
	} else {
		err = r.followBot(ctx, &wg)
	}
	if err != nil {
		return err
	}
	if until != nil && !r.allFinished(until) {
		return ctx.Err()
	}
	return nil
}

func (r *Runner) allFinished(ids []string) bool {
	for _, id := range ids {
		r.mu.Lock()
		t := r.tables[id]
		r.mu.Unlock()
		if t == nil || !t.isFinished() {
			return false
		}
	}
	return true
}

func (r *Runner) waitFinished(ctx context.Context, ids []string) {
	for {
		r.mu.Lock()
		ch := r.changed
		r.mu.Unlock()
		if r.allFinished(ids) {
			return
		}
		select {
		case <-ctx.Done():
			return
		case <-ch:
		}
	}
}

// wait returns the pause before attempt n after failure e: the backoff, but never less than the
// delay the server asked for (RetryInfo of RATE_LIMITED, OVERLOADED).
func (r *Runner) wait(n int, e *Error) time.Duration {
	d := r.backoff(n)
	if e != nil && e.RetryAfter > d {
		return e.RetryAfter
	}
	return d
}

// backoff returns the wait before attempt n (0-based): doubling with jitter, capped.
func (r *Runner) backoff(n int) time.Duration {
	d := r.opts.MinBackoff
	for i := 0; i < n && d < r.opts.MaxBackoff; i++ {
		d *= 2
	}
	d = min(d, r.opts.MaxBackoff)
	return d/2 + time.Duration(mrand.Int64N(int64(d/2)+1))
}

func sleep(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-t.C:
		return true
	}
}

// fatalStream tells whether a stream failure is one reconnecting cannot cure. A stream
// replaced by another process's exclusive one must not reconnect and take the bot back.
func fatalStream(e *Error) bool {
	if e.Reason == ReasonStreamReplaced {
		return true
	}
	switch e.Code {
	case codes.Unauthenticated, codes.PermissionDenied, codes.InvalidArgument, codes.Unimplemented, codes.NotFound:
		return true
	}
	return false
}

var errGap = errors.New("bete: event stream has a gap")

// followBot keeps one WatchBot stream open, resuming after every drop.
func (r *Runner) followBot(ctx context.Context, wg *sync.WaitGroup) error {
	failures := 0
	for ctx.Err() == nil {
		resumed := r.resumePoints()
		r.count(func(s *Stats) { s.Streams++ })
		got, err := r.watchBotOnce(ctx, wg, resumed)
		if ctx.Err() != nil {
			return nil
		}
		e := AsError(err)
		if e != nil && fatalStream(e) {
			return e
		}
		if e != nil && e.Reason == ReasonFromSeqOutOfRange {
			// A resume point the server no longer keeps: start those tables over from a snapshot.
			r.forgetResumePoints()
		}
		r.report("", fmt.Errorf("bete: WatchBot stream ended, resuming: %w", err))
		if got {
			failures = 0
		}
		if !sleep(ctx, r.wait(failures, e)) {
			return nil
		}
		failures++
	}
	return nil
}

// watchBotOnce runs one WatchBot stream to its end; got says whether it delivered anything.
func (r *Runner) watchBotOnce(ctx context.Context, wg *sync.WaitGroup, from map[string]uint64) (got bool, err error) {
	sctx, cancel := context.WithCancel(ctx)
	defer cancel()
	idle := time.AfterFunc(r.opts.StreamIdleTimeout, cancel)
	defer idle.Stop()
	stream, err := r.client.Tables.WatchBot(sctx, &betev1.WatchBotRequest{FromSeq: from, Exclusive: r.opts.Exclusive})
	if err != nil {
		return false, err
	}
	if len(from) > 0 {
		// A decision sent while the stream was down is not replayed by the events after
		// from_seq: look at each resumed table's current view once.
		for id := range from {
			r.table(ctx, wg, id).push(item{poll: true})
		}
	}
	for {
		msg, err := stream.Recv()
		if err != nil {
			if errors.Is(err, io.EOF) {
				err = errors.New("bete: server closed the WatchBot stream")
			}
			return got, err
		}
		idle.Reset(r.opts.StreamIdleTimeout)
		got = true
		id := msg.GetTableId()
		switch k := msg.GetKind().(type) {
		case *betev1.WatchBotResponse_Heartbeat:
		case *betev1.WatchBotResponse_Seated:
			t := r.table(ctx, wg, id)
			t.push(item{seated: k.Seated})
		case *betev1.WatchBotResponse_Snapshot:
			r.table(ctx, wg, id).receiveSnapshot(k.Snapshot)
		case *betev1.WatchBotResponse_Event:
			if err := r.table(ctx, wg, id).receiveEvent(k.Event); err != nil {
				return got, err
			}
		case *betev1.WatchBotResponse_Decision:
			r.table(ctx, wg, id).push(item{decision: k.Decision})
		case *betev1.WatchBotResponse_Resync:
			return got, fmt.Errorf("bete: server asked to resync table %s from %d: %s", id, k.Resync.GetFromSeq(), k.Resync.GetReason())
		}
	}
}

// followTable keeps one WatchTable stream open for a table, resuming after every drop.
func (r *Runner) followTable(ctx context.Context, wg *sync.WaitGroup, id string) error {
	t := r.table(ctx, wg, id)
	failures := 0
	for ctx.Err() == nil && !t.isFinished() {
		req := &betev1.WatchTableRequest{TableId: id}
		if seq, ok := t.resumePoint(); ok {
			req.FromSeq = &seq
		}
		r.count(func(s *Stats) { s.Streams++ })
		got, err := r.watchTableOnce(ctx, t, req)
		if ctx.Err() != nil || t.isFinished() {
			return nil
		}
		e := AsError(err)
		if e != nil && fatalStream(e) {
			return e
		}
		if e != nil && e.Reason == ReasonFromSeqOutOfRange {
			t.forgetResumePoint()
		}
		r.report(id, fmt.Errorf("bete: WatchTable stream ended, resuming: %w", err))
		if got {
			failures = 0
		}
		if !sleep(ctx, r.wait(failures, e)) {
			return nil
		}
		failures++
	}
	return nil
}

func (r *Runner) watchTableOnce(ctx context.Context, t *table, req *betev1.WatchTableRequest) (got bool, err error) {
	sctx, cancel := context.WithCancel(ctx)
	defer cancel()
	idle := time.AfterFunc(r.opts.StreamIdleTimeout, cancel)
	defer idle.Stop()
	stream, err := r.client.Tables.WatchTable(sctx, req)
	if err != nil {
		return false, err
	}
	if req.FromSeq != nil && t.polling() {
		t.push(item{poll: true})
	}
	for {
		msg, err := stream.Recv()
		if err != nil {
			if errors.Is(err, io.EOF) {
				err = errors.New("bete: server closed the WatchTable stream")
			}
			return got, err
		}
		idle.Reset(r.opts.StreamIdleTimeout)
		got = true
		switch k := msg.GetKind().(type) {
		case *betev1.WatchTableResponse_Snapshot:
			t.receiveSnapshot(k.Snapshot)
		case *betev1.WatchTableResponse_Event:
			if err := t.receiveEvent(k.Event); err != nil {
				return got, err
			}
		case *betev1.WatchTableResponse_Resync:
			return got, fmt.Errorf("bete: server asked to resync from %d: %s", k.Resync.GetFromSeq(), k.Resync.GetReason())
		case *betev1.WatchTableResponse_Heartbeat:
		}
	}
}

// resumePoints returns the from_seq map for a WatchBot reconnect: every table still playing
// whose position is known.
func (r *Runner) resumePoints() map[string]uint64 {
	r.mu.Lock()
	ts := make([]*table, 0, len(r.tables))
	for _, t := range r.tables {
		ts = append(ts, t)
	}
	r.mu.Unlock()
	out := map[string]uint64{}
	for _, t := range ts {
		if t.isFinished() {
			continue
		}
		if seq, ok := t.resumePoint(); ok {
			out[t.id] = seq
		}
	}
	return out
}

func (r *Runner) forgetResumePoints() {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, t := range r.tables {
		t.forgetResumePoint()
	}
}

func (r *Runner) count(f func(*Stats)) {
	r.mu.Lock()
	defer r.mu.Unlock()
	f(&r.stats)
}

func (r *Runner) report(tableID string, err error) {
	r.log.Warn("bete runner", "table", tableID, "err", err)
	if r.opts.OnError != nil {
		r.opts.OnError(tableID, err)
	}
}

// table returns the state of a table, starting its worker on first sight.
func (r *Runner) table(ctx context.Context, wg *sync.WaitGroup, id string) *table {
	r.mu.Lock()
	defer r.mu.Unlock()
	t := r.tables[id]
	if t == nil {
		t = &table{id: id, r: r, wake: make(chan struct{}, 1), received: -1}
		r.tables[id] = t
	}
	t.mu.Lock()
	start := !t.running && !t.finished
	t.running = start || t.running
	if start {
		t.wg = wg
	}
	t.mu.Unlock()
	if start {
		wg.Add(1)
		go func() {
			defer wg.Done()
			t.work(ctx)
		}()
	}
	return t
}

// newRequestID returns a fresh random request_id (32 hex digits).
func newRequestID() string {
	var b [16]byte
	_, _ = rand.Read(b[:]) // crypto/rand.Read never fails (it panics on a broken system source).
	return hex.EncodeToString(b[:])
}
