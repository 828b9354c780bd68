package bot

import (
	"testing"

	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	betev1 "github.com/bete-game/bete/clients/go/gen/bete/v1"
)

func TestParseCard(t *testing.T) {
	for in, want := range map[string]string{"ks": "KS", "TH": "TH", "7c": "7C", "aD": "AD", "2s": "2S"} {
		got, err := ParseCard(in)
		if err != nil || got != want {
			t.Errorf("ParseCard(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	for _, bad := range []string{"", "K", "10H", "1S", "KX", "KSS", "ZS"} {
		if _, err := ParseCard(bad); err == nil {
			t.Errorf("ParseCard(%q) accepted a non-card", bad)
		}
	}
	if SuitOf("th") != betev1.Suit_SUIT_HEARTS || Rank("th") != 'T' || SuitLetter(SuitOf("9C")) != "C" {
		t.Error("suit or rank of a card is wrong")
	}
	if SameColourSuit(betev1.Suit_SUIT_SPADES) != betev1.Suit_SUIT_CLUBS || SameColourSuit(betev1.Suit_SUIT_DIAMONDS) != betev1.Suit_SUIT_HEARTS {
		t.Error("same-colour suit is wrong")
	}
}

func TestParseAction(t *testing.T) {
	for in, want := range map[string]string{
		"pass": "pass", "PLAY": "play", "Card ks": "card KS", "exchange 7h 8C": "exchange 7H 8C",
		"hidden 7H": "hidden 7H", "discard 9s": "discard 9S", "drop": "drop", "decline": "decline",
	} {
		a, err := ParseAction(in)
		if err != nil {
			t.Fatalf("ParseAction(%q): %v", in, err)
		}
		if got := ActionText(a); got != want || a.GetText() != want {
			t.Errorf("ParseAction(%q) text %q / %q, want %q", in, got, a.GetText(), want)
		}
	}
	for _, bad := range []string{"", "fold", "card", "card KS QS", "exchange", "exchange 7H 8H 9H TH JH QH", "pass KS", "card  KS", "card XX"} {
		if a, err := ParseAction(bad); err == nil {
			t.Errorf("ParseAction(%q) accepted %v", bad, a)
		}
	}
}

func TestSameActionIgnoresExchangeOrder(t *testing.T) {
	if !SameAction(Exchange("7H", "8C"), Exchange("8c", "7h")) {
		t.Error("exchange cards in another order are the same action")
	}
	if SameAction(PlayCard("KS"), Hidden("KS")) || SameAction(Exchange("7H"), Exchange("7H", "8C")) {
		t.Error("different actions compare equal")
	}
	view := &betev1.SeatView{LegalActions: []*betev1.Action{PlayCard("KS"), PlayCard("QS")}}
	if FindLegal(view, betev1.ActionKind_ACTION_KIND_CARD, "qs") != view.LegalActions[1] || IsLegal(view, PlayCard("JS")) {
		t.Error("FindLegal / IsLegal")
	}
}

func TestRanking(t *testing.T) {
	bete, bb := betev1.Ruleset_RULESET_BETE, betev1.Ruleset_RULESET_BESTE_BOER
	h := betev1.Suit_SUIT_HEARTS
	// Bête: K > Q > J > A > 10 in every suit (B3); any trump beats a plain card.
	if !Beats("KS", "AS", h, bete) || Beats("AS", "JS", h, bete) || !Beats("7H", "KS", h, bete) || Beats("KC", "8S", h, bete) {
		t.Error("bete order")
	}
	if !Beats("AS", "KS", h, betev1.Ruleset_RULESET_BETE_ACE_HIGH) {
		t.Error("ace-high order")
	}
	// Beste Boer: JH > JD (the Tweede Boer, a trump) > AH; JD beats a plain ace of diamonds' suit lead.
	if !Beats("JH", "JD", h, bb) || !Beats("JD", "AH", h, bb) || !Beats("JD", "AD", h, bb) || EffectiveSuit("JD", h, bb) != h {
		t.Error("bower order")
	}
	if w := TrickWinner([]string{"9S", "KS", "7H", "AS"}, h, bete); w != 2 {
		t.Errorf("trick winner %d, want 2 (the trump)", w)
	}
}

func TestRulesets(t *testing.T) {
	for _, id := range Rulesets {
		r, err := ParseRuleset(id)
		if err != nil || RulesetID(r) != id {
			t.Errorf("ruleset %q: %v %v", id, r, err)
		}
	}
	if _, err := ParseRuleset("whist"); err == nil {
		t.Error("unknown ruleset accepted")
	}
}

func TestAsErrorReadsErrorInfo(t *testing.T) {
	st, err := status.New(codes.Aborted, "stale").WithDetails(
		&errdetails.ErrorInfo{Reason: ReasonStaleSeq, Domain: ErrorDomain, Metadata: map[string]string{"last_seq": "42"}},
		&errdetails.BadRequest{FieldViolations: []*errdetails.BadRequest_FieldViolation{{Field: "action.cards[0]", Description: "bad"}}},
	)
	if err != nil {
		t.Fatal(err)
	}
	e := AsError(st.Err())
	if e.Code != codes.Aborted || e.Reason != ReasonStaleSeq || e.Metadata["last_seq"] != "42" || e.Violations["action.cards[0]"] != "bad" {
		t.Errorf("AsError = %+v", e)
	}
	if status.Code(e) != codes.Aborted || ReasonOf(e) != ReasonStaleSeq {
		t.Error("an *Error must keep its gRPC status")
	}
	if AsError(nil) != nil || ReasonOf(nil) != "" {
		t.Error("nil error")
	}
}

func TestRankingOfThePartTwoRulesets(t *testing.T) {
	h, s := betev1.Suit_SUIT_HEARTS, betev1.Suit_SUIT_SPADES
	mouche, mistigri := betev1.Ruleset_RULESET_MOUCHE, betev1.Ruleset_RULESET_MISTIGRI
	loo, rams := betev1.Ruleset_RULESET_LOO, betev1.Ruleset_RULESET_RAMS
	// Mouche: the Écarté order (MO3), J♣ a plain club.
	if !Beats("KH", "AH", s, mouche) || EffectiveSuit("JC", h, mouche) != betev1.Suit_SUIT_CLUBS {
		t.Error("mouche order")
	}
	// Mistigri: J♣ above the King of trumps, and a trump (MI2).
	if !Beats("JC", "KH", h, mistigri) || EffectiveSuit("JC", h, mistigri) != h || TrickWinner([]string{"9C", "JC"}, h, mistigri) != 1 {
		t.Error("mistigri order")
	}
	// Loo: Pam above the Ace of trumps (LO2); ace high.
	if w := TrickWinner([]string{"AH", "JC", "KH"}, h, loo); w != 1 {
		t.Errorf("loo: Pam should win, got %d", w)
	}
	if !Beats("AS", "KS", h, loo) || !Beats("AD", "KD", s, rams) {
		t.Error("ace-high loo and rams")
	}
	for text, kind := range map[string]betev1.ActionKind{"widow": betev1.ActionKind_ACTION_KIND_WIDOW, "general": betev1.ActionKind_ACTION_KIND_GENERAL} {
		a, err := ParseAction(text)
		if err != nil || a.Kind != kind || ActionText(a) != text {
			t.Errorf("%s: %v %v", text, a, err)
		}
	}
}

func TestParseHouseBot(t *testing.T) {
	for _, c := range []struct {
		text   string
		policy betev1.HouseBotPolicy
		budget uint32
	}{
		{"random", betev1.HouseBotPolicy_HOUSE_BOT_POLICY_RANDOM, 0},
		{"heuristic", betev1.HouseBotPolicy_HOUSE_BOT_POLICY_HEURISTIC, 0},
		{"search", betev1.HouseBotPolicy_HOUSE_BOT_POLICY_SEARCH, 0},
		{"search:50", betev1.HouseBotPolicy_HOUSE_BOT_POLICY_SEARCH, 50},
		{"search:5ms", betev1.HouseBotPolicy_HOUSE_BOT_POLICY_SEARCH, 5},
	} {
		p, b, err := ParseHouseBot(c.text)
		if err != nil || p != c.policy || b != c.budget {
			t.Errorf("ParseHouseBot(%q) = %v, %d, %v; want %v, %d", c.text, p, b, err, c.policy, c.budget)
		}
	}
	for _, bad := range []string{"clever", "search:fast", "heuristic:50", "search:-1"} {
		if _, _, err := ParseHouseBot(bad); err == nil {
			t.Errorf("ParseHouseBot(%q) accepted", bad)
		}
	}
}
