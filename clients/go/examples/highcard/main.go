// A complete bete bot: plays its strongest legal card, otherwise the first legal action.
package main

import (
	"context"
	"log"

	"github.com/bete-game/bete/clients/go/bot"
	pb "github.com/bete-game/bete/clients/go/gen/bete/v1"
)

func decide(v *pb.SeatView) *pb.Action {
	best := v.LegalActions[0]
	for _, a := range v.LegalActions {
		if a.Kind == pb.ActionKind_ACTION_KIND_CARD && bot.CardStrength(v, a.Cards[0]) > bot.CardStrength(v, best.Cards[0]) {
			best = a
		}
	}
	return best
}

func main() {
	ctx := context.Background()
	c := must(bot.Dial(ctx, "", bot.Options{Name: "high-card"})) // $BETE_SERVER; $BETE_TOKEN or register
	t := must(c.CreateTable(ctx, bot.HouseTable(pb.Ruleset_RULESET_BETE, 3, pb.HouseBotPolicy_HOUSE_BOT_POLICY_HEURISTIC)))
	seat := must(c.Join(ctx, t.TableId))
	results := must(bot.NewRunner(c, bot.BotFunc(decide), bot.RunnerOptions{}).Play(ctx, t.TableId))
	log.Printf("table %s: seat %d, final balances %v", t.TableId, seat, results[t.TableId].Balances)
}

func must[T any](v T, err error) T {
	if err != nil {
		log.Fatal(err)
	}
	return v
}
