// Package strategy holds two ready bots: Random and RuleAware (used by cmd/bete-go-bot).
package strategy

import (
	"fmt"
	"math/rand/v2"
	"sync"

	"github.com/bete-game/bete/clients/go/bot"
	betev1 "github.com/bete-game/bete/clients/go/gen/bete/v1"
)

// Random picks uniformly among the legal actions.
type Random struct {
	mu  sync.Mutex // the runner asks for several tables at once
	rng *rand.Rand
}

// NewRandom returns a Random bot; the same seed gives the same choices.
func NewRandom(seed uint64) *Random {
	return &Random{rng: rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))}
}

// Decide picks a legal action at random.
func (b *Random) Decide(view *betev1.SeatView) *betev1.Action {
	b.mu.Lock()
	defer b.mu.Unlock()
	legal := view.GetLegalActions()
	return legal[b.rng.IntN(len(legal))]
}

// RuleAware is a simple player that knows the card order of each ruleset. In a trick it plays
// the lowest card that wins the trick so far, else its lowest card, and leads its highest. It
// declares or stays in only with trumps and high cards, exchanges its weak plain cards, and
// passes or drops weak hands.
type RuleAware struct{}

// Decide chooses by card strength.
func (RuleAware) Decide(view *betev1.SeatView) *betev1.Action {
	r, trump := view.GetRuleset(), view.GetTrump()
	power := func(a *betev1.Action) int { return bot.Strength(a.GetCards()[0], trump, r) }
	good := func(c string) bool {
		if bot.IsTrump(c, trump, r) {
			return true
		}
		top := "AK"
		if r == betev1.Ruleset_RULESET_BETE || r == betev1.Ruleset_RULESET_BEAST {
			top = "KQ"
		}
		return bot.Rank(c) == top[0] || bot.Rank(c) == top[1]
	}
	score := 0
	for _, c := range view.GetHand() {
		if good(c) {
			score++
		}
	}
	of := func(k betev1.ActionKind) []*betev1.Action { return bot.LegalOfKind(view, k) }
	first := func(k betev1.ActionKind) *betev1.Action {
		if as := of(k); len(as) > 0 {
			return as[0]
		}
		return nil
	}

	plays := of(betev1.ActionKind_ACTION_KIND_CARD)
	if len(plays) == 0 {
		plays = of(betev1.ActionKind_ACTION_KIND_HIDDEN)
	}
	if len(plays) > 0 {
		var shown []string
		if t := bot.CurrentTrick(view); t != nil {
			for _, p := range t.GetPlays() {
				if p.GetCard() != "" {
					shown = append(shown, p.GetCard())
				}
			}
		}
		if len(shown) == 0 {
			return pick(plays, power, true)
		}
		best := shown[bot.TrickWinner(shown, trump, r)]
		var winners []*betev1.Action
		for _, a := range plays {
			if bot.Beats(a.GetCards()[0], best, trump, r) {
				winners = append(winners, a)
			}
		}
		if len(winners) > 0 {
			return pick(winners, power, false)
		}
		return pick(plays, power, false)
	}
	if a := first(betev1.ActionKind_ACTION_KIND_CONTRE); a != nil && score >= 4 {
		return a
	}
	if a := first(betev1.ActionKind_ACTION_KIND_PLAY); a != nil && score >= 3 {
		return a
	}
	if a := first(betev1.ActionKind_ACTION_KIND_PASS); a != nil {
		return a
	}
	if ds := of(betev1.ActionKind_ACTION_KIND_DISCARD); len(ds) > 0 {
		return pick(ds, func(a *betev1.Action) int {
			v := power(a)
			if good(a.GetCards()[0]) {
				v += 1000
			}
			return v
		}, false)
	}
	if a := first(betev1.ActionKind_ACTION_KIND_CHALLENGE); a != nil {
		if score >= 3 {
			return a
		}
		if d := first(betev1.ActionKind_ACTION_KIND_DECLINE); d != nil {
			return d
		}
	}
	if a := first(betev1.ActionKind_ACTION_KIND_DROP); a != nil && score < 2 {
		return a
	}
	var swap *betev1.Action
	for _, a := range of(betev1.ActionKind_ACTION_KIND_EXCHANGE) {
		weak := true
		for _, c := range a.GetCards() {
			weak = weak && !good(c)
		}
		if weak && (swap == nil || len(a.GetCards()) > len(swap.GetCards())) {
			swap = a
		}
	}
	if swap != nil {
		return swap
	}
	if a := first(betev1.ActionKind_ACTION_KIND_STAND); a != nil {
		return a
	}
	return view.GetLegalActions()[0]
}

// pick returns the action of highest (high) or lowest value; the first on ties.
func pick(as []*betev1.Action, value func(*betev1.Action) int, high bool) *betev1.Action {
	best := as[0]
	for _, a := range as[1:] {
		if v, b := value(a), value(best); (high && v > b) || (!high && v < b) {
			best = a
		}
	}
	return best
}

// Names lists the strategies New knows.
var Names = []string{"random", "rule-aware"}

// New returns the strategy of a name: "random" or "rule-aware".
func New(name string, seed uint64) (bot.Bot, error) {
	switch name {
	case "random":
		return NewRandom(seed), nil
	case "rule-aware", "rule_aware", "ruleaware":
		return RuleAware{}, nil
	}
	return nil, fmt.Errorf("unknown strategy %q (random or rule-aware)", name)
}
