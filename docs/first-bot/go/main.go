// Your first bete bot, in Go, from generated stubs only (docs/protocol.md, "Your first bot in
// 15 minutes, without an SDK").
//
// Generate the stubs into this module first (from the repository root; see the guide for the
// one -M option per .proto file that puts them under this module's import path):
//
//	protoc -I proto --go_out=docs/first-bot/go --go_opt=module=example.com/firstbot ... proto/bete/v1/*.proto
//
// then run it:
//
//	cd docs/first-bot/go && go run . -server 127.0.0.1:50051 -account-token beteacct_...
//	cd docs/first-bot/go && go run . -server 127.0.0.1:50051 -account-token beteacct_... -ladder beste-boer-4
//
// It registers a bot (owned by your account when you give its token, as a server with closed
// signup requires), creates a table against house bots, takes the free seat, plays the whole
// match on one WatchBot stream and prints the final balances. With -ladder it enters the ladder
// instead, plays one match (a duplicate set: one table per seat), leaves, and prints its line of
// the leaderboard. scripts/walkthrough.sh runs it in the test command on a closed-signup server.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log"
	"os"
	"time"

	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"

	betev1 "example.com/firstbot/betev1"
)

// --- Step 4: errors are data -------------------------------------------------------------------

// errorReason returns the ErrorInfo reason (e.g. "STALE_SEQ") and metadata of a failed call.
func errorReason(err error) (string, map[string]string) {
	st := status.Convert(err)
	for _, d := range st.Details() {
		if info, ok := d.(*errdetails.ErrorInfo); ok {
			return info.GetReason(), info.GetMetadata()
		}
	}
	return "", nil
}

// --- Step 5: the decision ----------------------------------------------------------------------

// choose picks one of view.LegalActions. Start simple: the first one is always legal. A better
// bot looks at view.Hand, view.Trump, view.Tricks and view.SeatStates here.
func choose(view *betev1.SeatView) *betev1.Action {
	return view.GetLegalActions()[0]
}

// checkChips: balances plus everything on the table is zero (RULES.md 11.4).
func checkChips(view *betev1.SeatView) {
	var sum int64
	for _, s := range view.GetSeatStates() {
		sum += s.GetBalance()
	}
	if sum+view.GetPools().GetOnTable() != 0 {
		log.Fatalf("chips not conserved at seq %d: %d + %d", view.GetSeq(), sum, view.GetPools().GetOnTable())
	}
}

func newRequestID() string {
	return fmt.Sprintf("first-bot-%d", time.Now().UnixNano())
}

// play is step 3: one WatchBot stream, act on DecisionRequest only, until `matches` tables
// ended. onSeated(n), if not nil, runs when the bot is seated at its n-th table.
func play(ctx context.Context, tables betev1.TableServiceClient, matches int, onSeated func(int)) {
	stream, err := tables.WatchBot(ctx, &betev1.WatchBotRequest{})
	if err != nil {
		log.Fatal(err)
	}
	decisions, ended, seated := 0, 0, 0
	for {
		msg, err := stream.Recv()
		if errors.Is(err, io.EOF) {
			log.Fatal("the stream ended before the match did")
		}
		if err != nil {
			log.Fatal(err)
		}
		switch k := msg.GetKind().(type) {
		case *betev1.WatchBotResponse_Decision:
			d := k.Decision
			checkChips(d.GetView())
			_, err := tables.SubmitAction(ctx, &betev1.SubmitActionRequest{
				TableId:     d.GetTableId(),
				Action:      choose(d.GetView()),
				ExpectedSeq: d.GetSeq(),     // "I decided on the state at this seq"
				RequestId:   newRequestID(), // makes a retry safe
			})
			if err != nil {
				if reason, _ := errorReason(err); reason == "STALE_SEQ" {
					continue // the table moved on: a new decision follows
				}
				log.Fatal(err)
			}
			decisions++
		case *betev1.WatchBotResponse_Seated:
			t := k.Seated.GetTable()
			fmt.Printf("seated at table %s (ladder %q): seat %d\n", t.GetTableId(), t.GetLadderId(), k.Seated.GetSeat())
			seated++
			if onSeated != nil {
				onSeated(seated)
			}
		case *betev1.WatchBotResponse_Snapshot:
			v := k.Snapshot
			// Explicit presence: ViewerSeat is a *uint32; nil means "no seat", 0 is seat 0.
			if v.ViewerSeat != nil {
				fmt.Printf("snapshot at seq %d: our seat %d\n", v.GetSeq(), v.GetViewerSeat())
			}
		case *betev1.WatchBotResponse_Event:
			switch b := k.Event.GetBody().(type) {
			case *betev1.Event_DealSettled:
				var sum int64
				for _, x := range b.DealSettled.GetBalances() {
					sum += x
				}
				if sum+b.DealSettled.GetPools().GetOnTable() != 0 {
					log.Fatal("chips not conserved at a settlement")
				}
			case *betev1.Event_MatchEnded:
				balances := b.MatchEnded.GetBalances()
				fmt.Printf("match over after %d decisions; balances %v\n", decisions, balances)
				ended++
				if ended == matches {
					return
				}
			}
		}
	}
}

// ladder is step 6: enter the ladder, stay online on WatchBot (the scheduler seats only bots
// with a stream open), play one match, leave, read the leaderboard (public: no token needed).
func ladder(ctx context.Context, conn *grpc.ClientConn, botID, ladderID string) {
	ladders := betev1.NewLadderServiceClient(conn)
	got, err := ladders.GetLadder(ctx, &betev1.GetLadderRequest{LadderId: ladderID})
	if err != nil {
		log.Fatal(err)
	}
	l := got.GetLadder()
	if _, err := ladders.EnterLadder(ctx, &betev1.EnterLadderRequest{LadderId: ladderID, Capacity: 1}); err != nil {
		log.Fatal(err)
	}
	// A duplicate set is one table per seat, played one after another; its result is the total.
	perMatch := 1
	if l.GetDuplicate() {
		perMatch = int(l.GetSeatCount())
	}
	fmt.Printf("entered %s: %d seats, %d tables per match\n", ladderID, l.GetSeatCount(), perMatch)
	play(ctx, betev1.NewTableServiceClient(conn), perMatch, func(n int) {
		// Seated at the match's last table: leave now, so no further match is started for us
		// (after LeaveLadder returns no new table seats the bot); this table is still played.
		if n == perMatch {
			if _, err := ladders.LeaveLadder(ctx, &betev1.LeaveLadderRequest{LadderId: ladderID}); err != nil {
				log.Fatal(err)
			}
		}
	})
	// The match's ratings are stored before its last MatchEnded is sent: they are readable now.
	standings, err := ladders.GetStandings(ctx, &betev1.GetStandingsRequest{LadderId: ladderID})
	if err != nil {
		log.Fatal(err)
	}
	for _, s := range standings.GetStandings() {
		if s.GetBotId() == botID {
			fmt.Printf("left %s: rank %d, rating %.2f after %d match(es)\n", ladderID, s.GetRank(), s.GetRating(), s.GetMatches())
			if s.GetMatches() < 1 {
				log.Fatal("the match is not rated yet")
			}
			return
		}
	}
	log.Fatal("the bot is not on the leaderboard")
}

func main() {
	server := flag.String("server", "127.0.0.1:50051", "host:port of the bete server")
	accountToken := flag.String("account-token", os.Getenv("BETE_ACCOUNT_TOKEN"),
		"your account's token (AccountService); needed where signup is closed")
	ruleset := flag.String("ruleset", "RULESET_BETE", "a Ruleset enum name")
	seats := flag.Int("seats", 3, "seats at the table")
	ladderID := flag.String("ladder", "", "play a match on this ladder (e.g. beste-boer-4) instead")
	flag.Parse()

	// --- Step 1: connect and register ------------------------------------------------------
	conn, err := grpc.NewClient(*server, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		log.Fatal(err)
	}
	defer conn.Close()
	ctx := context.Background()
	// With an account token the bot belongs to the account (a closed-signup server requires it).
	regCtx := ctx
	if *accountToken != "" {
		regCtx = metadata.AppendToOutgoingContext(ctx, "authorization", "Bearer "+*accountToken)
	}
	// An account holds one bot per name and version: each run registers a new version here. A
	// real bot registers once and keeps its token (its rating belongs to that bot id).
	me, err := betev1.NewBotServiceClient(conn).RegisterBot(regCtx, &betev1.RegisterBotRequest{
		Name: "first-bot-go", Owner: "me@example.org", Version: fmt.Sprint(time.Now().UnixNano()),
	})
	if err != nil {
		log.Fatal(err)
	}
	// The token goes on every TableService call.
	ctx = metadata.AppendToOutgoingContext(ctx, "authorization", "Bearer "+me.GetToken())
	if *ladderID != "" {
		ladder(ctx, conn, me.GetBotId(), *ladderID)
		return
	}
	tables := betev1.NewTableServiceClient(conn)

	// Errors carry a reason to branch on: ask for a table that does not exist.
	_, err = tables.GetTable(ctx, &betev1.GetTableRequest{TableId: "t_does_not_exist"})
	if reason, _ := errorReason(err); reason != "TABLE_NOT_FOUND" {
		log.Fatalf("want TABLE_NOT_FOUND, got %v", err)
	}
	fmt.Printf("as expected: %s TABLE_NOT_FOUND\n", status.Code(err))

	// --- Step 2: a table against house bots, and our seat -----------------------------------
	rs, ok := betev1.Ruleset_value[*ruleset]
	if !ok {
		log.Fatalf("unknown ruleset %q", *ruleset)
	}
	var house []*betev1.HouseBotSeat
	for s := 1; s < *seats; s++ {
		house = append(house, &betev1.HouseBotSeat{Seat: uint32(s), Policy: betev1.HouseBotPolicy_HOUSE_BOT_POLICY_HEURISTIC})
	}
	created, err := tables.CreateTable(ctx, &betev1.CreateTableRequest{
		Ruleset: betev1.Ruleset(rs), Seats: uint32(*seats), HouseBots: house,
	})
	if err != nil {
		log.Fatal(err)
	}
	tableID := created.GetTable().GetTableId()
	joined, err := tables.JoinTable(ctx, &betev1.JoinTableRequest{TableId: tableID})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("table %s: seat %d of %d, %s\n", tableID, joined.GetSeat(), *seats, *ruleset)

	// --- Step 3: one stream, act on DecisionRequest only ------------------------------------
	play(ctx, tables, 1, nil)
}
