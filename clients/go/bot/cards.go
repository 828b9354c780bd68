package bot

import (
	"fmt"
	"strings"

	"google.golang.org/protobuf/proto"

	betev1 "github.com/bete-game/bete/clients/go/gen/bete/v1"
)

// Cards are strings in the notation of RULES.md 11.2: a rank `2 3 4 5 6 7 8 9 T J Q K A` then a
// suit `S H D C`, e.g. "KS", "TH". The server always sends them upper case.

const (
	rankLetters = "23456789TJQKA"
	suitLetters = "SHDC"
)

// ParseCard checks a card code (case-insensitively) and returns it in upper case.
func ParseCard(code string) (string, error) {
	c := strings.ToUpper(code)
	if len(c) != 2 || strings.IndexByte(rankLetters, c[0]) < 0 || strings.IndexByte(suitLetters, c[1]) < 0 {
		return "", fmt.Errorf("bete: %q is not a card (rank 2-9TJQKA then suit SHDC)", code)
	}
	return c, nil
}

// Rank returns the rank letter of a card ('2' .. '9', 'T', 'J', 'Q', 'K', 'A'), 0 if invalid.
func Rank(card string) byte {
	if len(card) != 2 {
		return 0
	}
	r := card[0]
	if r >= 'a' && r <= 'z' {
		r -= 'a' - 'A'
	}
	if strings.IndexByte(rankLetters, r) < 0 {
		return 0
	}
	return r
}

// RankIndex is the rank's place in 2 3 4 5 6 7 8 9 T J Q K A: 0 for '2', 12 for 'A', -1 if invalid.
// It is NOT the strength in play; that depends on the ruleset (see strategy.Strength).
func RankIndex(card string) int {
	r := Rank(card)
	if r == 0 {
		return -1
	}
	return strings.IndexByte(rankLetters, r)
}

// SuitOf returns the suit of a card, SUIT_UNSPECIFIED if it is not a card.
func SuitOf(card string) betev1.Suit {
	if len(card) != 2 {
		return betev1.Suit_SUIT_UNSPECIFIED
	}
	i := strings.IndexByte(suitLetters, strings.ToUpper(card[1:])[0])
	if i < 0 {
		return betev1.Suit_SUIT_UNSPECIFIED
	}
	return betev1.Suit(i + 1)
}

// SuitLetter returns "S", "H", "D" or "C" ("" for UNSPECIFIED).
func SuitLetter(s betev1.Suit) string {
	if s < betev1.Suit_SUIT_SPADES || s > betev1.Suit_SUIT_CLUBS {
		return ""
	}
	return suitLetters[s-1 : s]
}

// SameColourSuit returns the other suit of the same colour (S<->C, H<->D): the suit of the
// second jack ("Tweede Boer", "Unterbube") in the bower games.
func SameColourSuit(s betev1.Suit) betev1.Suit {
	switch s {
	case betev1.Suit_SUIT_SPADES:
		return betev1.Suit_SUIT_CLUBS
	case betev1.Suit_SUIT_CLUBS:
		return betev1.Suit_SUIT_SPADES
	case betev1.Suit_SUIT_HEARTS:
		return betev1.Suit_SUIT_DIAMONDS
	case betev1.Suit_SUIT_DIAMONDS:
		return betev1.Suit_SUIT_HEARTS
	}
	return betev1.Suit_SUIT_UNSPECIFIED
}

// verbs maps ActionKind to the RULES.md 11.3 verb and back.
var verbs = map[betev1.ActionKind]string{
	betev1.ActionKind_ACTION_KIND_PASS:      "pass",
	betev1.ActionKind_ACTION_KIND_PLAY:      "play",
	betev1.ActionKind_ACTION_KIND_CONTRE:    "contre",
	betev1.ActionKind_ACTION_KIND_DROP:      "drop",
	betev1.ActionKind_ACTION_KIND_STAND:     "stand",
	betev1.ActionKind_ACTION_KIND_EXCHANGE:  "exchange",
	betev1.ActionKind_ACTION_KIND_DISCARD:   "discard",
	betev1.ActionKind_ACTION_KIND_CHALLENGE: "challenge",
	betev1.ActionKind_ACTION_KIND_DECLINE:   "decline",
	betev1.ActionKind_ACTION_KIND_CARD:      "card",
	betev1.ActionKind_ACTION_KIND_HIDDEN:    "hidden",
	betev1.ActionKind_ACTION_KIND_WIDOW:     "widow",
	betev1.ActionKind_ACTION_KIND_GENERAL:   "general",
}

var kinds = func() map[string]betev1.ActionKind {
	m := make(map[string]betev1.ActionKind, len(verbs))
	for k, v := range verbs {
		m[v] = k
	}
	return m
}()

// Verb returns the RULES.md 11.3 verb of a kind ("card", "exchange"), "" if unspecified.
func Verb(k betev1.ActionKind) string { return verbs[k] }

// cardCount says how many cards a verb takes: exactly n, or 1..5 for exchange (-1).
func cardCount(k betev1.ActionKind) int {
	switch k {
	case betev1.ActionKind_ACTION_KIND_CARD, betev1.ActionKind_ACTION_KIND_HIDDEN, betev1.ActionKind_ACTION_KIND_DISCARD:
		return 1
	case betev1.ActionKind_ACTION_KIND_EXCHANGE:
		return -1
	}
	return 0
}

// NewAction builds an action of kind with cards, checking the card codes and their number.
// The text field is filled in the RULES.md 11.3 form.
func NewAction(kind betev1.ActionKind, cards ...string) (*betev1.Action, error) {
	verb, ok := verbs[kind]
	if !ok {
		return nil, fmt.Errorf("bete: unknown action kind %v", kind)
	}
	want := cardCount(kind)
	if (want >= 0 && len(cards) != want) || (want < 0 && (len(cards) < 1 || len(cards) > 5)) {
		return nil, fmt.Errorf("bete: %s takes %s, got %d", verb, map[int]string{-1: "1 to 5 cards", 0: "no card", 1: "one card"}[want], len(cards))
	}
	a := &betev1.Action{Kind: kind}
	for _, c := range cards {
		pc, err := ParseCard(c)
		if err != nil {
			return nil, err
		}
		a.Cards = append(a.Cards, pc)
	}
	a.Text = ActionText(a)
	return a, nil
}

// ParseAction reads the RULES.md 11.3 text form ("pass", "card KS", "exchange 7h 8c"),
// case-insensitively, with single spaces as the rulebook demands.
func ParseAction(text string) (*betev1.Action, error) {
	parts := strings.Split(text, " ")
	kind, ok := kinds[strings.ToLower(parts[0])]
	if !ok {
		return nil, fmt.Errorf("bete: unknown action verb %q", parts[0])
	}
	return NewAction(kind, parts[1:]...)
}

// ActionText is the RULES.md 11.3 text of an action: lower-case verb, upper-case cards.
func ActionText(a *betev1.Action) string {
	var b strings.Builder
	b.WriteString(verbs[a.GetKind()])
	for _, c := range a.GetCards() {
		b.WriteByte(' ')
		b.WriteString(strings.ToUpper(c))
	}
	return b.String()
}

// Constructors for the actions without cards and with one card. They panic only on a card code
// that is not a card; use NewAction to get an error instead.
func Pass() *betev1.Action      { return must(NewAction(betev1.ActionKind_ACTION_KIND_PASS)) }
func Play() *betev1.Action      { return must(NewAction(betev1.ActionKind_ACTION_KIND_PLAY)) }
func Contre() *betev1.Action    { return must(NewAction(betev1.ActionKind_ACTION_KIND_CONTRE)) }
func Drop() *betev1.Action      { return must(NewAction(betev1.ActionKind_ACTION_KIND_DROP)) }
func Stand() *betev1.Action     { return must(NewAction(betev1.ActionKind_ACTION_KIND_STAND)) }
func Challenge() *betev1.Action { return must(NewAction(betev1.ActionKind_ACTION_KIND_CHALLENGE)) }
func Decline() *betev1.Action   { return must(NewAction(betev1.ActionKind_ACTION_KIND_DECLINE)) }

// Widow is Rams's "take the widow" (RA6).
func Widow() *betev1.Action { return must(NewAction(betev1.ActionKind_ACTION_KIND_WIDOW)) }

// General announces General Rams (RA6).
func General() *betev1.Action { return must(NewAction(betev1.ActionKind_ACTION_KIND_GENERAL)) }
func PlayCard(card string) *betev1.Action {
	return must(NewAction(betev1.ActionKind_ACTION_KIND_CARD, card))
}
func Hidden(card string) *betev1.Action {
	return must(NewAction(betev1.ActionKind_ACTION_KIND_HIDDEN, card))
}
func Discard(card string) *betev1.Action {
	return must(NewAction(betev1.ActionKind_ACTION_KIND_DISCARD, card))
}
func Exchange(cards ...string) *betev1.Action {
	return must(NewAction(betev1.ActionKind_ACTION_KIND_EXCHANGE, cards...))
}

func must(a *betev1.Action, err error) *betev1.Action {
	if err != nil {
		panic(err)
	}
	return a
}

// SameAction tells whether two actions are the same decision: same kind and the same cards
// (in any order for exchange, whose order does not matter), ignoring text and case.
func SameAction(a, b *betev1.Action) bool {
	if a.GetKind() != b.GetKind() || len(a.GetCards()) != len(b.GetCards()) {
		return false
	}
	seen := map[string]int{}
	for _, c := range a.GetCards() {
		seen[strings.ToUpper(c)]++
	}
	for _, c := range b.GetCards() {
		seen[strings.ToUpper(c)]--
	}
	for _, n := range seen {
		if n != 0 {
			return false
		}
	}
	return true
}

// FindLegal returns the legal action of the view matching kind and cards (nil if none), so a
// bot can name its choice and still submit the server's own copy.
func FindLegal(view *betev1.SeatView, kind betev1.ActionKind, cards ...string) *betev1.Action {
	want := &betev1.Action{Kind: kind, Cards: cards}
	for _, a := range view.GetLegalActions() {
		if SameAction(a, want) {
			return a
		}
	}
	return nil
}

// LegalOfKind returns the view's legal actions of one kind, in the server's order.
func LegalOfKind(view *betev1.SeatView, kind betev1.ActionKind) []*betev1.Action {
	var out []*betev1.Action
	for _, a := range view.GetLegalActions() {
		if a.GetKind() == kind {
			out = append(out, a)
		}
	}
	return out
}

// IsLegal tells whether action is one of the view's legal actions.
func IsLegal(view *betev1.SeatView, action *betev1.Action) bool {
	return FindLegal(view, action.GetKind(), action.GetCards()...) != nil
}

// CloneAction returns a copy of a to submit (the server ignores its text).
func CloneAction(a *betev1.Action) *betev1.Action { return proto.Clone(a).(*betev1.Action) }

// rulesetIDs maps the RULES.md 11.1 ids to the enum.
var rulesetIDs = map[string]betev1.Ruleset{
	"bete":          betev1.Ruleset_RULESET_BETE,
	"bete-ace-high": betev1.Ruleset_RULESET_BETE_ACE_HIGH,
	"beast":         betev1.Ruleset_RULESET_BEAST,
	"beste-boer":    betev1.Ruleset_RULESET_BESTE_BOER,
	"lanterlui":     betev1.Ruleset_RULESET_LANTERLUI,
	"bester-bube":   betev1.Ruleset_RULESET_BESTER_BUBE,
	"mouche":        betev1.Ruleset_RULESET_MOUCHE,
	"mistigri":      betev1.Ruleset_RULESET_MISTIGRI,
	"loo":           betev1.Ruleset_RULESET_LOO,
	"rams":          betev1.Ruleset_RULESET_RAMS,
}

// Rulesets lists every ruleset id in the order of RULES.md 11.1.
var Rulesets = []string{"bete", "bete-ace-high", "beast", "beste-boer", "lanterlui", "bester-bube",
	"mouche", "mistigri", "loo", "rams"}

// ParseRuleset reads a RULES.md 11.1 ruleset id ("bete-ace-high").
func ParseRuleset(id string) (betev1.Ruleset, error) {
	r, ok := rulesetIDs[strings.ToLower(id)]
	if !ok {
		return 0, fmt.Errorf("bete: unknown ruleset %q (one of %s)", id, strings.Join(Rulesets, ", "))
	}
	return r, nil
}

// RulesetID returns the RULES.md 11.1 id of a ruleset ("" if unspecified).
func RulesetID(r betev1.Ruleset) string {
	for id, v := range rulesetIDs {
		if v == r {
			return id
		}
	}
	return ""
}
