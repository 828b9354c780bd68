// A random bete bot that joins existing tables: `go run ./examples/random -server HOST:PORT -join ID`.
// With no -join it creates a 4-seat Beste Boer table with random house bots.
package main

import (
	"context"
	"flag"
	"fmt"
	"log"
	"math/rand/v2"
	"os"
	"os/signal"

	"github.com/bete-game/bete/clients/go/bot"
	pb "github.com/bete-game/bete/clients/go/gen/bete/v1"
)

func main() {
	server := flag.String("server", "127.0.0.1:50051", "bete server host:port")
	join := flag.String("join", "", "table to join (default: create one)")
	flag.Parse()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()

	c, err := bot.Dial(ctx, *server, bot.Options{Name: "go-random"})
	if err != nil {
		log.Fatal(err)
	}
	defer c.Close()
	id := *join
	if id == "" {
		t, err := c.CreateTable(ctx, &pb.CreateTableRequest{Ruleset: pb.Ruleset_RULESET_BESTE_BOER, Seats: 4,
			HouseBots: bot.HouseBots(pb.HouseBotPolicy_HOUSE_BOT_POLICY_RANDOM, 1, 2, 3)})
		if err != nil {
			log.Fatal(err)
		}
		id = t.TableId
	}
	if _, err := c.Join(ctx, id); err != nil {
		log.Fatal(err)
	}
	random := bot.BotFunc(func(v *pb.SeatView) *pb.Action {
		return v.LegalActions[rand.IntN(len(v.LegalActions))]
	})
	results, err := bot.NewRunner(c, random, bot.RunnerOptions{}).Play(ctx, id)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("table %s: final balances %v\n", id, results[id].GetBalances())
}
