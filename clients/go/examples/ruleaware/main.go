// The rule-aware bot of package strategy with hooks that print each deal's settlement:
//
//	go run ./examples/ruleaware -server 127.0.0.1:50051 -ruleset lanterlui -seats 4
package main

import (
	"context"
	"flag"
	"fmt"
	"log"
	"os"
	"os/signal"

	"github.com/bete-game/bete/clients/go/bot"
	"github.com/bete-game/bete/clients/go/bot/strategy"
	pb "github.com/bete-game/bete/clients/go/gen/bete/v1"
)

// talkative adds deal hooks to the rule-aware strategy.
type talkative struct{ strategy.RuleAware }

func (talkative) DealStarted(table string, seat uint32, ev *pb.DealStarted) {
	fmt.Printf("%s deal %d: seat %d holds %v, turn-up %s\n", table, ev.Deal, seat, ev.Hand, ev.TurnUp)
}

func (talkative) DealSettled(table string, seat uint32, ev *pb.DealSettled) {
	fmt.Printf("%s deal %d settled: tricks %v, net %v\n", table, ev.Deal, ev.Tricks, ev.Net)
}

func main() {
	server := flag.String("server", "", "bete server host:port (default $BETE_SERVER or 127.0.0.1:50051)")
	ruleset := flag.String("ruleset", "bete", "ruleset id")
	seats := flag.Uint("seats", 3, "seats (house bots fill all but seat 0)")
	flag.Parse()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()

	rs, err := bot.ParseRuleset(*ruleset)
	if err != nil {
		log.Fatal(err)
	}
	c, err := bot.Dial(ctx, *server, bot.Options{Name: "go-rule-aware"})
	if err != nil {
		log.Fatal(err)
	}
	defer c.Close()
	t, err := c.CreateTable(ctx, bot.HouseTable(rs, uint32(*seats), pb.HouseBotPolicy_HOUSE_BOT_POLICY_HEURISTIC))
	if err != nil {
		log.Fatal(err)
	}
	if _, err := c.Join(ctx, t.TableId); err != nil {
		log.Fatal(err)
	}
	runner := bot.NewRunner(c, talkative{}, bot.RunnerOptions{})
	runner.Track(t.TableId, t.LastSeq) // from before the join: the hooks see deal 0 too
	results, err := runner.Play(ctx, t.TableId)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("%s final balances %v\n", t.TableId, results[t.TableId].Balances)
}
