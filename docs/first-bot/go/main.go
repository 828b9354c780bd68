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
//	cd docs/first-bot/go && go run . -server 127.0.0.1:50051
//
// It registers a bot, creates a table against house bots, takes the free seat, plays the whole
// match on one WatchBot stream and prints the final balances. scripts/walkthrough.sh runs it in
// the test command.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log"
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

func main() {
	server := flag.String("server", "127.0.0.1:50051", "host:port of the bete server")
	ruleset := flag.String("ruleset", "RULESET_BETE", "a Ruleset enum name")
	seats := flag.Int("seats", 3, "seats at the table")
	flag.Parse()

	// --- Step 1: connect and register ------------------------------------------------------
	conn, err := grpc.NewClient(*server, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		log.Fatal(err)
	}
	defer conn.Close()
	ctx := context.Background()
	me, err := betev1.NewBotServiceClient(conn).RegisterBot(ctx,
		&betev1.RegisterBotRequest{Name: "first-bot-go", Owner: "me@example.org"})
	if err != nil {
		log.Fatal(err)
	}
	// The token goes on every TableService call.
	ctx = metadata.AppendToOutgoingContext(ctx, "authorization", "Bearer "+me.GetToken())
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
	stream, err := tables.WatchBot(ctx, &betev1.WatchBotRequest{})
	if err != nil {
		log.Fatal(err)
	}
	decisions := 0
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
				return
			}
		}
	}
}
