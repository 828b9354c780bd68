// Command bete-go-bot plays a Go bot on a bete server: it registers (or uses $BETE_TOKEN),
// creates tables whose other seats house bots fill (or joins given tables), and plays them all
// at once until their matches are over.
//
//	bete-go-bot -server 127.0.0.1:50051 -ruleset beste-boer -seats 4 -tables 3 -strategy rule-aware
//	bete-go-bot -server 127.0.0.1:50051 -join TABLE_ID -strategy random
//	bete-go-bot -server 127.0.0.1:50051 -ladder beste-boer-4 -matches 4 -strategy rule-aware
//
// With -ladder it enters that ladder and plays the tables its scheduler seats it at, until
// Ctrl-C or -matches tables are over, then leaves the ladder.
package main

import (
	"context"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"strings"
	"time"

	"github.com/bete-game/bete/clients/go/bot"
	"github.com/bete-game/bete/clients/go/bot/strategy"
)

type listFlag []string

func (l *listFlag) String() string     { return strings.Join(*l, ",") }
func (l *listFlag) Set(v string) error { *l = append(*l, v); return nil }

func main() {
	os.Exit(run())
}

func run() int {
	var join, config listFlag
	server := flag.String("server", envOr("BETE_SERVER", "127.0.0.1:50051"), "server host:port, or https://host:port for TLS ($BETE_CA_CERT, $BETE_CLIENT_CERT/$BETE_CLIENT_KEY as for the SDK)")
	ruleset := flag.String("ruleset", "bete", "ruleset: "+strings.Join(bot.Rulesets, ", "))
	seats := flag.Uint("seats", 3, "seats per created table (the bot takes seat 0, house bots the rest)")
	tables := flag.Int("tables", 1, "tables to create and play at once")
	strat := flag.String("strategy", "rule-aware", "strategy: "+strings.Join(strategy.Names, ", "))
	house := flag.String("house-bots", "heuristic", "house bot policy for the other seats: heuristic, random, search or search:<ms>")
	name := flag.String("name", "go-bot", "bot name to register when $BETE_TOKEN is unset")
	seed := flag.Uint64("seed", uint64(time.Now().UnixNano()), "seed of the random strategy")
	deadline := flag.Uint("deadline-ms", 0, "per-decision deadline of created tables (0: server default)")
	ladder := flag.String("ladder", "", "play on this ladder (e.g. beste-boer-4) instead of creating tables")
	capacity := flag.Uint("capacity", 1, "with -ladder: ladder tables to play at once")
	matches := flag.Int("matches", 0, "with -ladder: stop after this many tables (0: until Ctrl-C)")
	perTable := flag.Bool("watch-table", false, "one WatchTable stream per table instead of one WatchBot stream")
	exclusive := flag.Bool("exclusive", false, "be the only process playing this bot: the server ends its other WatchBot streams (STREAM_REPLACED), and this one stops if a later process does the same")
	verbose := flag.Bool("v", false, "log the runner's diagnostics")
	flag.Var(&join, "join", "join this table instead of creating tables (repeatable)")
	flag.Var(&config, "config", "KEY=VALUE, a RULES.md section 10 key for created tables (repeatable)")
	flag.Parse()

	fail := func(format string, args ...any) int {
		fmt.Fprintf(os.Stderr, "bete-go-bot: "+format+"\n", args...)
		return 1
	}
	b, err := strategy.New(*strat, *seed)
	if err != nil {
		return fail("%v", err)
	}
	rs, err := bot.ParseRuleset(*ruleset)
	if err != nil {
		return fail("%v", err)
	}
	policy, budget, err := bot.ParseHouseBot(*house)
	if err != nil {
		return fail("%v", err)
	}
	cfg := map[string]string{}
	for _, kv := range config {
		k, v, ok := strings.Cut(kv, "=")
		if !ok {
			return fail("-config wants KEY=VALUE, got %q", kv)
		}
		cfg[k] = v
	}

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	client, err := bot.Dial(ctx, *server, bot.Options{Name: *name})
	if err != nil {
		return fail("%v", err)
	}
	defer client.Close()

	opts := bot.RunnerOptions{PerTableStreams: *perTable, Exclusive: *exclusive}
	if *verbose {
		opts.Logger = slog.New(slog.NewTextHandler(os.Stderr, nil))
	}
	runner := bot.NewRunner(client, b, opts)
	if *ladder != "" {
		fmt.Fprintf(os.Stderr, "bot %s entering ladder %s\n", client.BotID(), *ladder)
		played, err := runner.PlayLadder(ctx, *ladder, bot.LadderOptions{Capacity: uint32(*capacity), Matches: *matches})
		for _, id := range played {
			res, seat := runner.Result(id)
			if bal := res.GetBalances(); int(seat) < len(bal) {
				fmt.Printf("table %s: seat %d, balance %+d, balances %v\n", id, seat, bal[seat], bal)
			}
		}
		if err != nil && ctx.Err() == nil {
			return fail("%v", err)
		}
		fmt.Printf("%d ladder tables; left ladder %s\n", len(played), *ladder)
		return 0
	}
	ids := []string(join)
	for _, id := range join {
		if _, err := client.Join(ctx, id); err != nil {
			return fail("join %s: %v", id, err)
		}
	}
	for i := 0; len(join) == 0 && i < *tables; i++ {
		req := bot.HouseTable(rs, uint32(*seats), policy)
		for _, h := range req.HouseBots {
			h.SearchBudgetMs = budget
		}
		req.Config, req.DecisionDeadlineMs = cfg, uint32(*deadline)
		t, err := client.CreateTable(ctx, req)
		if err != nil {
			return fail("create table: %v", err)
		}
		if err := client.JoinSeat(ctx, t.GetTableId(), 0); err != nil {
			return fail("join %s: %v", t.GetTableId(), err)
		}
		runner.Track(t.GetTableId(), t.GetLastSeq()) // from creation: the hooks see deal 0
		ids = append(ids, t.GetTableId())
	}
	if _, err := runner.Play(ctx, ids...); err != nil {
		return fail("%v", err)
	}
	for _, id := range ids {
		res, seat := runner.Result(id)
		bal := res.GetBalances()
		if int(seat) < len(bal) {
			fmt.Printf("table %s: seat %d, balance %+d, balances %v\n", id, seat, bal[seat], bal)
		}
	}
	st := runner.Stats()
	fmt.Printf("%d decisions, %d submits, %d retries, %d refused, %d streams\n", st.Decisions, st.Submits, st.Retries, st.Illegal, st.Streams)
	return 0
}

func envOr(key, def string) string {
	if v := os.Getenv(key); v != "" {
		return v
	}
	return def
}
