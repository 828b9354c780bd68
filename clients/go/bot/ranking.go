package bot

import (
	"strings"

	betev1 "github.com/bete-game/bete/clients/go/gen/bete/v1"
)

// The card order of each ruleset, enough for a bot to compare cards in a trick. The server stays
// the judge of what is legal; these helpers only rank.

// Orders from high to low; ranks not in a ruleset's pack never occur.
const (
	orderEcarte       = "KQJAT98765432" // bete, beast (B3, BS2)
	orderAceHigh      = "AKQJT98765432" // bete-ace-high (AH1), plain suits of the bower games
	orderTrumpNoJacks = "AKQT98765432"  // trumps below the two bowers
)

// HasBowers tells whether the ruleset's top trumps are the two jacks of the trump colour.
func HasBowers(r betev1.Ruleset) bool {
	switch r {
	case betev1.Ruleset_RULESET_BESTE_BOER, betev1.Ruleset_RULESET_LANTERLUI, betev1.Ruleset_RULESET_BESTER_BUBE:
		return true
	}
	return false
}

// HasTopJackOfClubs tells whether the Jack of clubs is a trump above every other card: Mistigri
// (MI2) and Loo's Pam (LO2, with the default pam = "jack_of_clubs").
func HasTopJackOfClubs(r betev1.Ruleset) bool {
	return r == betev1.Ruleset_RULESET_MISTIGRI || r == betev1.Ruleset_RULESET_LOO
}

// EffectiveSuit is the suit a card belongs to in play: in the bower games the jack of the trump
// colour (Tweede Boer, Unterbube) is a trump; in Mistigri and Loo the Jack of clubs is.
func EffectiveSuit(card string, trump betev1.Suit, r betev1.Ruleset) betev1.Suit {
	s := SuitOf(card)
	if trump != betev1.Suit_SUIT_UNSPECIFIED && HasBowers(r) && Rank(card) == 'J' && s == SameColourSuit(trump) {
		return trump
	}
	if trump != betev1.Suit_SUIT_UNSPECIFIED && HasTopJackOfClubs(r) && strings.EqualFold(card, "JC") {
		return trump
	}
	return s
}

// IsTrump tells whether a card is a trump this deal.
func IsTrump(card string, trump betev1.Suit, r betev1.Ruleset) bool {
	return trump != betev1.Suit_SUIT_UNSPECIFIED && EffectiveSuit(card, trump, r) == trump
}

// Strength orders cards for trick-taking: any trump beats any plain card, higher wins. Plain
// cards of different suits get comparable numbers but never beat each other: use Beats.
func Strength(card string, trump betev1.Suit, r betev1.Ruleset) int {
	rank := Rank(card)
	trumpCard := IsTrump(card, trump, r)
	order := orderEcarte
	switch {
	case HasTopJackOfClubs(r) && trumpCard && strings.EqualFold(card, "JC"):
		return 300 // Mistigri, Pam: above every trump
	case HasBowers(r) && trumpCard && rank == 'J':
		if SuitOf(card) == trump {
			return 200
		}
		return 199
	case HasBowers(r) && trumpCard:
		order = orderTrumpNoJacks
	case HasBowers(r), r == betev1.Ruleset_RULESET_BETE_ACE_HIGH, r == betev1.Ruleset_RULESET_LOO,
		r == betev1.Ruleset_RULESET_RAMS:
		// Loo (LO2), Rams (RA2's default ranking); Mouche and Mistigri keep Écarté (MO3).
		order = orderAceHigh
	}
	v := len(order) - strings.IndexByte(order, rank)
	if trumpCard {
		v += 100
	}
	return v
}

// CardStrength is Strength with the view's trump and ruleset.
func CardStrength(view *betev1.SeatView, card string) int {
	return Strength(card, view.GetTrump(), view.GetRuleset())
}

// Beats tells whether card, played now, beats best, the winning card so far of the trick.
func Beats(card, best string, trump betev1.Suit, r betev1.Ruleset) bool {
	cs, bs := EffectiveSuit(card, trump, r), EffectiveSuit(best, trump, r)
	if cs == bs {
		return Strength(card, trump, r) > Strength(best, trump, r)
	}
	return trump != betev1.Suit_SUIT_UNSPECIFIED && cs == trump
}

// TrickWinner returns the index of the card winning a trick so far (cards in play order), -1
// for no cards.
func TrickWinner(cards []string, trump betev1.Suit, r betev1.Ruleset) int {
	if len(cards) == 0 {
		return -1
	}
	best := 0
	for i := 1; i < len(cards); i++ {
		if Beats(cards[i], cards[best], trump, r) {
			best = i
		}
	}
	return best
}

// CurrentTrick returns the trick in progress of the view (nil between tricks).
func CurrentTrick(view *betev1.SeatView) *betev1.Trick {
	ts := view.GetTricks()
	if len(ts) == 0 || ts[len(ts)-1].Winner != nil {
		return nil
	}
	return ts[len(ts)-1]
}
