//! Bête and Bête Ace-high: one test per numbered rule (B1–B36, AH1–AH2), the decision table of
//! 1.7 and the settlement cases of 1.8. Deals are stacked with `deal::stack_deck`.

use bete_rules::config::DealPattern;
use bete_rules::deal::{cards, stack_deck};
use bete_rules::event::{BidderResult, DealResult};
use bete_rules::view::Phase;
use bete_rules::{
    Action, ActionError, Card, CardSet, Config, Decks, Event, Game, PublicEvent, RulesetId, Seat,
    Setup, Viewer, pack,
};
use serde_json::{Value, json};

fn c(s: &str) -> Card {
    s.parse().unwrap()
}

fn config(r: RulesetId, seats: u8, v: Value) -> Config {
    Config::from_json(r, seats, v.as_object().unwrap()).unwrap()
}

/// A deck for deal `dealer` of a table: hands per seat, the turn-up, the talon's top cards.
fn deck(r: RulesetId, cfg: &Config, seats: u8, dealer: u8, hands: &[&str], turn_up: &str, talon: &[&str]) -> Vec<Card> {
    let hands: Vec<CardSet> = hands.iter().map(|h| cards(h)).collect();
    let talon: Vec<Card> = talon.iter().map(|t| c(t)).collect();
    stack_deck(&pack(r, cfg, seats), seats, Seat(dealer), cfg.deal_pattern, &hands, c(turn_up), &talon)
}

fn new_game(r: RulesetId, seats: u8, cfg: Config, decks: Vec<Vec<Card>>) -> (Game, Vec<Event>) {
    Game::new(Setup {
        ruleset: r,
        config: cfg,
        seats,
        first_dealer: Seat(0),
        decks: Decks::Explicit(decks),
    })
    .unwrap()
}

/// Applies actions in text form, each by the seat to act; returns all events.
fn run(g: &mut Game, actions: &[&str]) -> Vec<Event> {
    let mut out = Vec::new();
    for a in actions {
        let seat = g.to_act().unwrap_or_else(|| panic!("nobody to act before {a}"));
        let action: Action = a.parse().unwrap();
        out.extend(g.apply(seat, action).unwrap_or_else(|e| panic!("{a} by {seat}: {e}")));
        assert_conserved(g);
    }
    out
}

fn assert_conserved(g: &Game) {
    let sum: i64 = g.balances().iter().sum();
    assert_eq!(sum + g.on_table(), 0, "balances {:?} + on table {}", g.balances(), g.on_table());
}

fn settled(events: &[Event]) -> (&DealResult, [i64; 7], [i64; 7], [u8; 7]) {
    for e in events {
        if let PublicEvent::DealSettled { result, net, betes, tricks, .. } = &e.public {
            return (result, *net, *betes, *tricks);
        }
    }
    panic!("no DealSettled in {events:?}")
}

/// Tiny deterministic RNG for the random playouts.
struct Rng(u64);
impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
}

fn random_match(r: RulesetId, seats: u8, cfg: Config, seed: u64) -> Game {
    let mut seed_bytes = [0u8; 32];
    seed_bytes[..8].copy_from_slice(&seed.to_le_bytes());
    let (mut g, _) = Game::new(Setup {
        ruleset: r,
        config: cfg,
        seats,
        first_dealer: Seat((seed % seats as u64) as u8),
        decks: Decks::Seed(bete_rules::Seed(seed_bytes)),
    })
    .unwrap();
    let mut rng = Rng(seed | 1);
    let mut steps = 0;
    while let Some(s) = g.to_act() {
        let legal = g.legal_actions(s);
        assert!(!legal.is_empty());
        // apply accepts exactly the legal actions
        let hand = g.view(Viewer::Seat(s)).hand.unwrap();
        for card in hand {
            let mut h = g.clone();
            let ok = h.apply(s, Action::Card(card)).is_ok();
            assert_eq!(ok, legal.contains(&Action::Card(card)), "card {card} legal={legal:?}");
        }
        for a in [Action::Pass, Action::Play, Action::Contre] {
            let mut h = g.clone();
            assert_eq!(h.apply(s, a).is_ok(), legal.contains(&a), "{a}");
        }
        let a = legal[(rng.next() % legal.len() as u64) as usize];
        g.apply(s, a).unwrap();
        assert_conserved(&g);
        steps += 1;
        assert!(steps < 100_000);
    }
    assert!(g.is_over());
    assert_eq!(g.on_table(), 0);
    assert_eq!(g.balances().iter().sum::<i64>(), 0);
    g
}

#[test]
fn random_matches_conserve_and_end() {
    for seats in 3..=7u8 {
        for r in [RulesetId::Bete, RulesetId::BeteAceHigh] {
            for seed in 1..4u64 {
                let g = random_match(r, seats, Config::defaults(r, seats), seed * 7919 + seats as u64);
                assert!(g.summaries().len() >= 2 * seats as usize);
            }
        }
    }
    let two = config(RulesetId::Bete, 2, json!({"two_players": true}));
    random_match(RulesetId::Bete, 2, two, 5);
    let lenient = config(RulesetId::Bete, 5, json!({"enforce_legality": "lenient", "queue_order": "largest_first",
        "win_rule": "plurality", "max_curieuse": 3, "ante_rule": "literal", "fiche_value": 10}));
    random_match(RulesetId::Bete, 5, lenient, 9);
}
