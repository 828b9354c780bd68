package bot

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"google.golang.org/protobuf/proto"

	betev1 "github.com/bete-game/bete/clients/go/gen/bete/v1"
)

// vectorRecord is the part of a bete-record/1 (RULES.md 11.4) the round-trip check reads.
type vectorRecord struct {
	Format  string `json:"format"`
	Ruleset string `json:"ruleset"`
	Deals   []struct {
		Deck    []string `json:"deck"`
		Actions []struct {
			Seat   uint32 `json:"seat"`
			Action string `json:"action"`
		} `json:"actions"`
	} `json:"deals"`
}

// TestSharedVectors reads the records every SDK checks (tests/vectors/*.record.json): each card
// code and each action text must survive text -> Action -> wire bytes -> Action -> text unchanged,
// exactly as in the Rust and Python SDKs.
func TestSharedVectors(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("..", "..", "..", "tests", "vectors", "*.record.json"))
	if err != nil {
		t.Fatal(err)
	}
	if len(files) == 0 {
		t.Fatal("no shared vectors in tests/vectors/*.record.json (they are part of the repository)")
	}
	rulesets := map[string]bool{}
	actions := 0
	for _, f := range files {
		raw, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		var rec vectorRecord
		if err := json.Unmarshal(raw, &rec); err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		if rec.Format != "bete-record/1" {
			t.Fatalf("%s: format %q", f, rec.Format)
		}
		if _, err := ParseRuleset(rec.Ruleset); err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		rulesets[rec.Ruleset] = true
		for d, deal := range rec.Deals {
			seen := map[string]bool{}
			for _, c := range deal.Deck {
				pc, err := ParseCard(c)
				if err != nil || pc != c {
					t.Errorf("%s deal %d: card %q -> %q, %v", f, d, c, pc, err)
				}
				if seen[c] {
					t.Errorf("%s deal %d: card %q twice in the deck", f, d, c)
				}
				seen[c] = true
				if SuitLetter(SuitOf(c)) != c[1:] || rankLetters[RankIndex(c)] != c[0] {
					t.Errorf("%s: card %q suit/rank do not round-trip", f, c)
				}
			}
			for i, a := range deal.Actions {
				got, err := roundTrip(a.Action)
				if err != nil {
					t.Errorf("%s deal %d action %d %q: %v", f, d, i, a.Action, err)
				} else if got != a.Action {
					t.Errorf("%s deal %d action %d: %q came back as %q", f, d, i, a.Action, got)
				}
				actions++
			}
		}
	}
	t.Logf("%d records, %d actions, rulesets %v", len(files), actions, rulesets)
	if actions == 0 {
		t.Error("the vectors hold no action")
	}
}

// roundTrip sends an action text through the protobuf Action message and its wire encoding.
func roundTrip(text string) (string, error) {
	a, err := ParseAction(text)
	if err != nil {
		return "", err
	}
	a.Text = "" // the server ignores text on input; the kind and cards must carry everything
	wire, err := proto.Marshal(a)
	if err != nil {
		return "", err
	}
	var back betev1.Action
	if err := proto.Unmarshal(wire, &back); err != nil {
		return "", err
	}
	return ActionText(&back), nil
}
