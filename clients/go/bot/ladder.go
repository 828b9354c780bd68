package bot

import (
	"context"
	"errors"
	"sync"
	"time"

	betev1 "github.com/bete-game/bete/clients/go/gen/bete/v1"
)

// CreateAccount creates an account (the owner of bots) and returns its id and its token, shown
// only this once. Anyone may call it on a server with open signup (the default). Register bots
// under it with [Options.AccountToken]; a client dialled with the account's token as
// [Options.Token] lists them with [Client.AccountBots].
func (c *Client) CreateAccount(ctx context.Context, name string) (*betev1.CreateAccountResponse, error) {
	return c.Accounts.CreateAccount(ctx, &betev1.CreateAccountRequest{Name: name})
}

// AccountBots lists the bots of the account whose token this client holds, oldest first.
func (c *Client) AccountBots(ctx context.Context) (*betev1.ListAccountBotsResponse, error) {
	return c.Accounts.ListAccountBots(ctx, &betev1.ListAccountBotsRequest{})
}

// ListLadders returns every ladder of the server.
func (c *Client) ListLadders(ctx context.Context) ([]*betev1.Ladder, error) {
	resp, err := c.Ladders.ListLadders(ctx, &betev1.ListLaddersRequest{})
	if err != nil {
		return nil, err
	}
	return resp.GetLadders(), nil
}

// GetLadder returns one ladder and, when this bot entered it, its entry (nil otherwise).
func (c *Client) GetLadder(ctx context.Context, ladderID string) (*betev1.Ladder, *betev1.LadderEntry, error) {
	resp, err := c.Ladders.GetLadder(ctx, &betev1.GetLadderRequest{LadderId: ladderID})
	if err != nil {
		return nil, nil, err
	}
	return resp.GetLadder(), resp.GetEntry(), nil
}

// EnterLadder enters this bot in a ladder to play capacity ladder tables at once (0 means 1).
// The scheduler seats the bot only while it holds a WatchBot stream: run a [Runner] (or use
// [Runner.PlayLadder], which enters, plays and leaves).
func (c *Client) EnterLadder(ctx context.Context, ladderID string, capacity uint32) (*betev1.LadderEntry, error) {
	resp, err := c.Ladders.EnterLadder(ctx, &betev1.EnterLadderRequest{LadderId: ladderID, Capacity: capacity})
	if err != nil {
		return nil, err
	}
	return resp.GetEntry(), nil
}

// LeaveLadder takes this bot off a ladder; matches under way go on and count.
func (c *Client) LeaveLadder(ctx context.Context, ladderID string) (*betev1.LadderEntry, error) {
	resp, err := c.Ladders.LeaveLadder(ctx, &betev1.LeaveLadderRequest{LadderId: ladderID})
	if err != nil {
		return nil, err
	}
	return resp.GetEntry(), nil
}

// Standings returns a ladder's whole leaderboard, best first (every page).
func (c *Client) Standings(ctx context.Context, ladderID string) ([]*betev1.Standing, error) {
	var out []*betev1.Standing
	req := &betev1.GetStandingsRequest{LadderId: ladderID, PageSize: 500}
	for {
		resp, err := c.Ladders.GetStandings(ctx, req)
		if err != nil {
			return nil, err
		}
		out = append(out, resp.GetStandings()...)
		if resp.GetNextPageToken() == "" {
			return out, nil
		}
		req.PageToken = resp.GetNextPageToken()
	}
}

// LadderMatches returns one page of a ladder's matches, newest first, of one bot when botID is
// not empty (pageSize 0: the server's default), and the next page's token.
func (c *Client) LadderMatches(ctx context.Context, ladderID, botID string, pageSize uint32, pageToken string) ([]*betev1.LadderMatch, string, error) {
	resp, err := c.Ladders.ListLadderMatches(ctx, &betev1.ListLadderMatchesRequest{
		LadderId: ladderID, BotId: botID, PageSize: pageSize, PageToken: pageToken,
	})
	if err != nil {
		return nil, "", err
	}
	return resp.GetMatches(), resp.GetNextPageToken(), nil
}

// LadderOptions tune [Runner.PlayLadder].
type LadderOptions struct {
	// Capacity is how many ladder tables the bot plays at once (0 means 1; at most the
	// ladder's max_tables_per_bot).
	Capacity uint32
	// Matches stops after this many tables have finished; 0 plays until ctx is cancelled.
	// Once seated at that many tables the bot leaves the ladder, so no more are scheduled.
	Matches int
}

// PlayLadder enters the runner's bot in ladderID and plays the tables the ladder's scheduler
// seats it at (they arrive on the WatchBot stream like any table, so the runner plays them as
// always), until ctx is cancelled or opts.Matches tables have finished; then it leaves the
// ladder. A bot that had already entered plays on. It returns the ids of the finished tables;
// the error is ctx's when ctx ended before opts.Matches tables did.
func (r *Runner) PlayLadder(ctx context.Context, ladderID string, opts LadderOptions) ([]string, error) {
	if r.opts.PerTableStreams {
		return nil, errors.New("bete: ladder tables come on the WatchBot stream; unset PerTableStreams")
	}
	if _, err := r.client.EnterLadder(ctx, ladderID, opts.Capacity); err != nil && ReasonOf(err) != ReasonLadderAlreadyEntered {
		return nil, err
	}
	var leaveOnce sync.Once
	leave := func() {
		leaveOnce.Do(func() {
			// Leave even when ctx is over: the caller stopped playing.
			lctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), r.opts.CallTimeout)
			defer cancel()
			if _, err := r.client.LeaveLadder(lctx, ladderID); err != nil && ReasonOf(err) != ReasonLadderNotEntered {
				r.report("", err)
			}
		})
	}
	defer leave()

	playing, stop := context.WithCancel(ctx)
	defer stop()
	watched := make(chan struct{})
	go func() {
		defer close(watched)
		if opts.Matches <= 0 {
			return
		}
		tick := time.NewTicker(100 * time.Millisecond)
		defer tick.Stop()
		for {
			r.mu.Lock()
			changed := r.changed
			r.mu.Unlock()
			seen, finished := r.tableCounts()
			if seen >= opts.Matches {
				leave()
			}
			if finished >= opts.Matches {
				stop()
				return
			}
			select {
			case <-playing.Done():
				return
			case <-changed:
			case <-tick.C: // a newly seated table does not signal
			}
		}
	}()
	err := r.run(playing, nil)
	stop()
	<-watched
	leave()
	finished := r.finishedTables()
	if err != nil {
		return finished, err
	}
	if opts.Matches > 0 && len(finished) < opts.Matches {
		return finished, ctx.Err()
	}
	return finished, nil
}

// tableCounts returns how many tables the runner has seen and how many of them finished.
func (r *Runner) tableCounts() (seen, finished int) {
	r.mu.Lock()
	tables := make([]*table, 0, len(r.tables))
	for _, t := range r.tables {
		tables = append(tables, t)
	}
	r.mu.Unlock()
	for _, t := range tables {
		if t.isFinished() {
			finished++
		}
	}
	return len(tables), finished
}

func (r *Runner) finishedTables() []string {
	r.mu.Lock()
	tables := make(map[string]*table, len(r.tables))
	for id, t := range r.tables {
		tables[id] = t
	}
	r.mu.Unlock()
	var out []string
	for id, t := range tables {
		if t.isFinished() {
			out = append(out, id)
		}
	}
	return out
}
