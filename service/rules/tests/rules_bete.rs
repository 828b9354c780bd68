//! Bête and Bête Ace-high: one test per numbered rule (B1–B36, AH1–AH2), the decision table of
//! 1.7 and the settlement cases of 1.8. Deals are stacked with `deal::stack_deck`.

#![allow(clippy::unwrap_used)] // tests: a panic is the failure report

use bete_rules::config::DealPattern;
use bete_rules::deal::{cards, stack_deck};
use bete_rules::event::{BidderResult, DealResult};
use bete_rules::view::Phase;
use bete_rules::{
    Action, ActionError, Card, CardSet, Config, ConfigError, Decks, Event, Game, Pools,
    PublicEvent, Rank, RulesetId, Seat, Setup, Viewer, pack,
};
use serde_json::{Value, json};

fn c(s: &str) -> Card {
    s.parse().unwrap()
}

fn config(r: RulesetId, seats: u8, v: Value) -> Config {
    Config::from_json(r, seats, v.as_object().unwrap()).unwrap()
}

/// A deck for deal `dealer` of a table: hands per seat, the turn-up, the talon's top cards.
fn deck(
    r: RulesetId,
    cfg: &Config,
    seats: u8,
    dealer: u8,
    hands: &[&str],
    turn_up: &str,
    talon: &[&str],
) -> Vec<Card> {
    let hands: Vec<CardSet> = hands.iter().map(|h| cards(h)).collect();
    let talon: Vec<Card> = talon.iter().map(|t| c(t)).collect();
    stack_deck(
        &pack(r, cfg, seats),
        seats,
        Seat(dealer),
        cfg.deal_pattern,
        &hands,
        c(turn_up),
        &talon,
    )
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
        let seat = g
            .to_act()
            .unwrap_or_else(|| panic!("nobody to act before {a}"));
        let action: Action = a.parse().unwrap();
        out.extend(
            g.apply(seat, action)
                .unwrap_or_else(|e| panic!("{a} by {seat}: {e}")),
        );
        assert_conserved(g);
    }
    out
}

fn assert_conserved(g: &Game) {
    let sum: i64 = g.balances().iter().sum();
    assert_eq!(
        sum + g.on_table(),
        0,
        "balances {:?} + on table {}",
        g.balances(),
        g.on_table()
    );
}

fn settled(
    events: &[Event],
) -> (
    &DealResult,
    [i64; bete_rules::MAX_SEATS],
    [i64; bete_rules::MAX_SEATS],
    [u8; bete_rules::MAX_SEATS],
) {
    for e in events {
        if let PublicEvent::DealSettled(s) = &e.public {
            return (&s.result, s.net, s.betes, s.tricks);
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
            if legal.contains(&Action::Card(card)) {
                assert!(
                    g.clone().apply(s, Action::Card(card)).is_ok(),
                    "card {card} legal={legal:?}"
                );
            } else {
                // Refused, and the state is unchanged.
                let before = (
                    g.view(Viewer::Seat(s)),
                    g.view(Viewer::Spectator),
                    g.log().to_vec(),
                );
                assert!(
                    g.apply(s, Action::Card(card)).is_err(),
                    "card {card} legal={legal:?}"
                );
                assert_eq!(
                    (
                        g.view(Viewer::Seat(s)),
                        g.view(Viewer::Spectator),
                        g.log().to_vec()
                    ),
                    before
                );
            }
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

// ---------------------------------------------------------------------------------------------
// Scenario helper: a table fed deal by deal. For each deal it tries seeded deck orders until one
// satisfies `pred` and lets the tricks be won by the wanted seats (a depth-first search over
// legal plays); the settlement is then checked against amounts computed here from the pools.

const ANY: u8 = 9;

struct T {
    g: Game,
    attempt: u64,
}

#[derive(Debug)]
struct Deal {
    events: Vec<Event>,
    /// Pools when the tricks began (after any Curieuse).
    start: Pools,
    w: i64,
    result: DealResult,
    net: [i64; bete_rules::MAX_SEATS],
    betes: [i64; bete_rules::MAX_SEATS],
    tricks: [u8; bete_rules::MAX_SEATS],
    pools: Pools,
}

impl T {
    fn new(r: RulesetId, seats: u8, cfg: Value) -> T {
        T::with_dealer(r, seats, cfg, 0)
    }

    fn with_dealer(r: RulesetId, seats: u8, cfg: Value, first_dealer: u8) -> T {
        let (g, _) = Game::new(Setup {
            ruleset: r,
            config: config(r, seats, cfg),
            seats,
            first_dealer: Seat(first_dealer),
            decks: Decks::Explicit(vec![]),
        })
        .unwrap();
        assert_eq!(g.phase(), Phase::AwaitingDeck);
        T { g, attempt: 0 }
    }

    fn fv(&self) -> i64 {
        self.g.setup().config.fiche_value
    }

    fn deal(&mut self, bids: &[&str], winners: &[u8]) -> Deal {
        self.deal_with(no_king, bids, winners)
    }

    fn deal_with(&mut self, pred: impl Fn(&Game) -> bool, bids: &[&str], winners: &[u8]) -> Deal {
        for _ in 0..3000 {
            self.attempt += 1;
            let mut seed = [0u8; 32];
            seed[..8].copy_from_slice(&self.attempt.to_le_bytes());
            let deck = bete_rules::deck_order(&bete_rules::Seed(seed), 0, self.g.pack());
            if let Some(d) = self.try_deck(deck, &pred, bids, winners) {
                return d;
            }
        }
        panic!("no deck found for bids {bids:?} winners {winners:?}");
    }

    fn try_deck(
        &mut self,
        deck: Vec<Card>,
        pred: &impl Fn(&Game) -> bool,
        bids: &[&str],
        winners: &[u8],
    ) -> Option<Deal> {
        let mut g = self.g.clone();
        let mut events = g.provide_deck(deck).unwrap();
        if !pred(&g) {
            return None;
        }
        events.extend(run(&mut g, bids));
        let start = g.pools();
        let w =
            start.pot + start.deals_since_won as i64 * self.fv() + start.staked_bete.unwrap_or(0);
        let mut budget = 20_000u32;
        let g = if winners.is_empty() {
            g
        } else {
            solve(&g, winners, 0, &mut budget, &mut events)?
        };
        self.g = g;
        let (result, net, betes, tricks, pools) = settled_full(&events);
        Some(Deal {
            events,
            start,
            w,
            result,
            net,
            betes,
            tricks,
            pools,
        })
    }
}

fn solve(
    g: &Game,
    winners: &[u8],
    trick: usize,
    budget: &mut u32,
    acc: &mut Vec<Event>,
) -> Option<Game> {
    if trick == winners.len() {
        return Some(g.clone());
    }
    let s = g.to_act()?;
    for a in g.legal_actions(s) {
        if *budget == 0 {
            return None;
        }
        *budget -= 1;
        let mut h = g.clone();
        let ev = h.apply(s, a).unwrap();
        assert_conserved(&h);
        let mut next = trick;
        if let Some((t, w)) = ev.iter().find_map(|e| match e.public {
            PublicEvent::TrickWon { trick, winner } => Some((trick, winner)),
            _ => None,
        }) {
            if winners[t as usize] != ANY && winners[t as usize] != w.0 {
                continue;
            }
            next += 1;
        }
        let len = acc.len();
        acc.extend(ev);
        if let Some(done) = solve(&h, winners, next, budget, acc) {
            return Some(done);
        }
        acc.truncate(len);
    }
    None
}

fn settled_full(
    events: &[Event],
) -> (
    DealResult,
    [i64; bete_rules::MAX_SEATS],
    [i64; bete_rules::MAX_SEATS],
    [u8; bete_rules::MAX_SEATS],
    Pools,
) {
    for e in events {
        if let PublicEvent::DealSettled(s) = &e.public {
            return (s.result.clone(), s.net, s.betes, s.tricks, s.pools.clone());
        }
    }
    panic!("no DealSettled")
}

fn hand(g: &Game, s: u8) -> CardSet {
    g.view(Viewer::Seat(Seat(s))).hand.unwrap()
}

fn top_card(g: &Game) -> Card {
    let v = g.view(Viewer::Spectator);
    let rank = if g.ruleset() == RulesetId::BeteAceHigh {
        Rank::Ace
    } else {
        Rank::King
    };
    Card::new(rank, v.trump.unwrap())
}

/// Nobody was dealt the King (Ace) of trumps: the top pool stays, which keeps nets simple.
fn no_king(g: &Game) -> bool {
    let k = top_card(g);
    (0..g.seats()).all(|s| !hand(g, s).contains(k))
}

fn king_with(seat: u8) -> impl Fn(&Game) -> bool {
    move |g: &Game| hand(g, seat).contains(top_card(g))
}

fn win(vole: bool) -> BidderResult {
    BidderResult::Win { vole }
}
fn lose(devole: bool) -> BidderResult {
    BidderResult::Lose { devole }
}

fn declarer(d: &Deal) -> (Seat, BidderResult, Option<(Seat, BidderResult)>) {
    match &d.result {
        DealResult::Bidders {
            declarer,
            declarer_result,
            contrer,
        } => (*declarer, *declarer_result, *contrer),
        r => panic!("{r:?}"),
    }
}

/// Runs one deal of 3 seats (dealer 0, eldest 1 declares) and returns the declarer's result.
fn outcome(seats: u8, cfg: Value, winners: &[u8]) -> BidderResult {
    let mut t = T::new(RulesetId::Bete, seats, cfg);
    let mut bids = vec!["play"];
    bids.extend(std::iter::repeat_n("pass", seats as usize - 1));
    let d = t.deal(&bids, winners);
    declarer(&d).1
}

#[test]
fn random_matches_conserve_and_end() {
    for seats in 3..=7u8 {
        for r in [RulesetId::Bete, RulesetId::BeteAceHigh] {
            for seed in 1..4u64 {
                let g = random_match(
                    r,
                    seats,
                    Config::defaults(r, seats),
                    seed * 7919 + seats as u64,
                );
                assert!(g.summaries().len() >= 2 * seats as usize);
            }
        }
    }
    let two = config(RulesetId::Bete, 2, json!({"two_players": true}));
    random_match(RulesetId::Bete, 2, two, 5);
    let lenient = config(
        RulesetId::Bete,
        5,
        json!({"enforce_legality": "lenient", "queue_order": "largest_first",
        "win_rule": "plurality", "max_curieuse": 3, "ante_rule": "literal", "fiche_value": 10}),
    );
    random_match(RulesetId::Bete, 5, lenient, 9);
}

// ---------------------------------------------------------------------------------------------
// 1.1–1.4: players, pack, ranking, rotation, stakes, deal

const B: RulesetId = RulesetId::Bete;

#[test]
fn b1_three_to_seven_players() {
    let none = serde_json::Map::new();
    for n in 3..=7 {
        assert!(Config::from_json(B, n, &none).is_ok());
    }
    let e = Config::from_json(B, 2, &none).unwrap_err();
    assert!(matches!(e, ConfigError::Seats { .. }) && e.to_string().contains("two_players"));
    assert!(Config::from_json(B, 8, &none).is_err());
    assert!(Config::from_json(B, 2, json!({"two_players": true}).as_object().unwrap()).is_ok());
    // The match refuses a two-seat table without the key too.
    let r = Game::new(Setup {
        ruleset: B,
        config: Config::defaults(B, 2),
        seats: 2,
        first_dealer: Seat(0),
        decks: Decks::Explicit(vec![]),
    });
    assert!(r.is_err());
}

#[test]
fn b2_pack_and_talon_by_player_count() {
    for (seats, pack_len, talon, cfg) in [
        (3u8, 28usize, 12u8, json!({})),
        (4, 28, 7, json!({})),
        (5, 32, 6, json!({})),
        (6, 36, 5, json!({})),
        (7, 36, 0, json!({})),
        (2, 32, 21, json!({"two_players": true})),
    ] {
        let cfg = config(B, seats, cfg);
        let p = pack(B, &cfg, seats);
        assert_eq!(p.len(), pack_len, "{seats} seats");
        let lowest = match pack_len {
            28 => "8",
            32 => "7",
            _ => "6",
        };
        assert!(p.iter().all(|c| {
            c.rank()
                >= lowest
                    .chars()
                    .next()
                    .map(|l| Rank::from_letter(l).unwrap())
                    .unwrap()
        }));
        let (g, _) = Game::new(Setup {
            ruleset: B,
            config: cfg,
            seats,
            first_dealer: Seat(0),
            decks: Decks::Explicit(vec![p]),
        })
        .unwrap();
        assert_eq!(g.view(Viewer::Spectator).talon_len, talon, "{seats} seats");
    }
}

fn three_seat_deck(cfg: &Config, hands: [&str; 3], turn_up: &str) -> Vec<Card> {
    deck(B, cfg, 3, 0, &hands, turn_up, &[])
}

#[test]
fn b3_ecarte_ranking() {
    let cfg = Config::defaults(B, 3);
    let d = three_seat_deck(
        &cfg,
        ["KS 8H 9H TH JH", "AS 8D 9D TD JD", "JS QD KD AD TC"],
        "9C",
    );
    let (mut g, _) = new_game(B, 3, cfg, vec![d]);
    run(&mut g, &["play", "pass", "pass", "card AS"]);
    // J ranks above A, K above J.
    assert_eq!(g.legal_actions(Seat(2)), vec![Action::Card(c("JS"))]);
    let ev = run(&mut g, &["card JS", "card KS"]);
    assert!(ev.iter().any(|e| e.public
        == PublicEvent::TrickWon {
            trick: 0,
            winner: Seat(0)
        }));
}

#[test]
fn ah1_ace_high_ranking() {
    let r = RulesetId::BeteAceHigh;
    let cfg = Config::defaults(r, 3);
    let d = deck(
        r,
        &cfg,
        3,
        0,
        &["KS 8H 9H TH JH", "AS 8D 9D TD JD", "JS QD KD AD TC"],
        "9C",
        &[],
    );
    let (mut g, _) = new_game(r, 3, cfg, vec![d]);
    let ev = run(
        &mut g,
        &["play", "pass", "pass", "card AS", "card JS", "card KS"],
    );
    assert!(ev.iter().any(|e| e.public
        == PublicEvent::TrickWon {
            trick: 0,
            winner: Seat(1)
        }));
    // The same pack sizes and every other rule as Bête.
    assert_eq!(g.pack().len(), 28);
}

#[test]
fn b4_b5_play_runs_in_seat_order_eldest_is_next_after_dealer() {
    let mut t = T::new(B, 4, json!({}));
    assert_eq!(t.g.dealer(), Seat(0));
    t.deal(&["pass", "pass", "play", "pass"], &[ANY; 5]);
    // The deal passes to the old eldest.
    assert_eq!(t.g.dealer(), Seat(1));
    let mut g = t.g.clone();
    g.provide_deck(bete_rules::deck_order(
        &bete_rules::Seed([3; 32]),
        0,
        t.g.pack(),
    ))
    .unwrap();
    assert_eq!(g.to_act(), Some(Seat(2)));
}

#[test]
fn b6_first_dealer_is_an_input() {
    let t = T::with_dealer(B, 5, json!({}), 3);
    assert_eq!(t.g.dealer(), Seat(3));
    let mut g = t.g.clone();
    g.provide_deck(t.g.pack().to_vec()).unwrap();
    assert_eq!(g.to_act(), Some(Seat(4)));
}

#[test]
fn b7_opening_stakes() {
    let t = T::new(B, 3, json!({}));
    // 1 fiche (5), 1 jeton for the deal, 1 for the King; the dealer one more.
    assert_eq!(t.g.balances(), &[-8, -7, -7]);
    let p = t.g.pools();
    assert_eq!(
        (p.pot, p.fiches, p.king_pool, p.deals_since_won),
        (4, 3, 3, 1)
    );
    let t = T::new(B, 5, json!({"fiche_value": 10}));
    assert_eq!(t.g.balances(), &[-13, -12, -12, -12, -12]);
}

#[test]
fn b8_dealer_adds_a_jeton_players_ante_when_the_pot_is_empty() {
    let mut t = T::new(B, 3, json!({}));
    // Null round: only the next dealer adds.
    let d = t.deal(&["play", "pass", "pass"], &[0, 1, 1, 0, 2]);
    assert_eq!(declarer(&d).1, BidderResult::Null);
    assert_eq!(t.g.pools().pot, 5);
    assert_eq!(t.g.pools().deals_since_won, 2);
    // A win empties the pot: everyone antes again with the dealer's extra jeton.
    t.deal(&["play", "pass", "pass"], &[2, 2, 2, ANY, ANY]);
    assert_eq!(t.g.pools().pot, 4);
    assert_eq!(t.g.pools().deals_since_won, 1);
}

/// Deal 0: both bidders lose (queue 9, 18). Deal 1: the staked 9 is won, 18 waits. Deal 2 starts
/// with an empty pot and a waiting bête.
fn pot_empty_queue_waiting(ante_rule: &str) -> T {
    let mut t = T::new(B, 3, json!({"ante_rule": ante_rule}));
    t.deal(&["play", "contre"], &[0, 0, 0, 1, 2]);
    assert_eq!(t.g.pools().staked_bete, Some(9));
    assert_eq!(t.g.pools().bete_queue, vec![18]);
    // deal 1: dealer 1, eldest 2 declares and wins
    t.deal(&["play", "pass", "pass"], &[2, 2, 2, ANY, ANY]);
    t
}

#[test]
fn b8_a9_ante_rules() {
    let t = pot_empty_queue_waiting("pot_empty");
    assert_eq!(
        t.g.pools().pot,
        4,
        "pot_empty: every seat antes, plus the dealer"
    );
    let t = pot_empty_queue_waiting("literal");
    assert_eq!(
        t.g.pools().pot,
        1,
        "literal: a bête waits, so only the dealer adds"
    );
}

#[test]
fn b9_fiches_not_added_until_the_dish_is_empty() {
    let mut t = T::new(B, 3, json!({"max_curieuse": 0}));
    // A win with N = 1 takes one fiche; no fiche is anted at the next deal.
    t.deal(&["play", "pass", "pass"], &[1, 1, 1, ANY, ANY]);
    assert_eq!(t.g.pools().fiches, 2);
    let before: Vec<i64> = t.g.balances().to_vec();
    // Deal 0: [-8, -7, -7]; seat 1 won 9; deal 1: every seat antes 1, the dealer (1) one more.
    assert_eq!(before, vec![-9, 0, -8]);
    // Two all-pass deals, then a win with N = 3 takes 2 fiches... the dish holds 2 only:
    t.deal(&["pass", "pass", "pass"], &[]);
    t.deal(&["pass", "pass", "pass"], &[]);
    assert_eq!(t.g.pools().deals_since_won, 3);
}

#[test]
fn b9_a11_empty_dish_refilled_at_next_antes_not_at_once() {
    let mut t = T::new(B, 3, json!({"max_curieuse": 0}));
    t.deal(&["pass", "pass", "pass"], &[]);
    t.deal(&["pass", "pass", "pass"], &[]);
    // N = 3, the dish holds 3: the winner takes all three and the dish stays empty.
    let d = t.deal(&["play", "pass", "pass"], &[0, 0, 0, ANY, ANY]);
    assert_eq!(d.pools.fiches, 0);
    assert_eq!(d.pools.deals_since_won, 0);
    // Pot: 4 + 1 + 1 = 6; 3 fiches = 15.
    assert_eq!(d.net[0], 6 + 15);
    // The next deal's antes: a fresh fiche each.
    assert_eq!(t.g.pools().fiches, 3);
    match &t.g.clone().provide_deck(t.g.pack().to_vec()).unwrap()[0].public {
        PublicEvent::DealStarted(_) => {}
        e => panic!("{e:?}"),
    }
}

#[test]
fn a11_fresh_fiches_anted_within_the_settlement() {
    let mut t = T::new(B, 3, json!({"max_curieuse": 0}));
    for _ in 0..3 {
        t.deal(&["pass", "pass", "pass"], &[]);
    }
    // Deal 3 (dealer 0, eldest 1): N = 4 but the dish holds 3.
    let d = t.deal(&["play", "pass", "pass"], &[1, 1, 1, ANY, ANY]);
    assert_eq!(d.start.deals_since_won, 4);
    assert_eq!(d.start.pot, 7);
    // The winner takes 3 fiches, everyone antes one more, he takes one: the dish keeps 2.
    assert_eq!(d.pools.fiches, 2);
    assert_eq!(d.net[1], 7 + 4 * 5 - 5);
    assert_eq!(d.net[0], -5);
    assert_eq!(d.net[2], -5);
}

#[test]
fn b10_king_pool_refilled_as_soon_as_won() {
    let mut t = T::new(B, 3, json!({}));
    let d = t.deal_with(
        king_with(2),
        &["play", "pass", "pass"],
        &[1, 1, 1, ANY, ANY],
    );
    // Seat 2 takes the King pool (3) and every seat puts 1 back at once.
    assert_eq!(d.pools.king_pool, 3);
    assert_eq!(&d.net[..3], &[-1, 9 - 1, 3 - 1]);
    let summaries = t.g.summaries();
    let won: Vec<_> = summaries[0]
        .pools_won
        .iter()
        .map(|p| (p.pool.as_str(), p.seat, p.amount))
        .collect();
    assert_eq!(
        won,
        vec![("deal_pot", 1, 4), ("fiches", 1, 5), ("king", 2, 3)]
    );
}

#[test]
fn b11_deal_patterns() {
    for (pattern, first) in [
        ("3+2", "7S 8S 9S AH 7D"),
        ("2+3", "7S 8S 9H TH JH"),
        ("2+2+1", "7S 8S 9H TH JD"),
        ("2+1+2", "7S 8S 9H AH 7D"),
    ] {
        let cfg = config(B, 5, json!({"deal_pattern": pattern}));
        let p = pack(B, &cfg, 5);
        let (g, _) = Game::new(Setup {
            ruleset: B,
            config: cfg.clone(),
            seats: 5,
            first_dealer: Seat(0),
            decks: Decks::Explicit(vec![p.clone()]),
        })
        .unwrap();
        // Eldest (seat 1) receives the first packet of each round.
        let expected = bete_rules::deal::deal_hands(&p, 5, Seat(0), cfg.deal_pattern).hands[1];
        assert_eq!(hand(&g, 1), expected, "{pattern}");
        assert_eq!(hand(&g, 1), cards(first), "{pattern}");
        assert_eq!(
            cfg.deal_pattern,
            match pattern {
                "3+2" => DealPattern::ThreeTwo,
                "2+3" => DealPattern::TwoThree,
                "2+2+1" => DealPattern::TwoTwoOne,
                _ => DealPattern::TwoOneTwo,
            }
        );
    }
}

#[test]
fn b12_turn_up_is_trump_nobody_takes_it() {
    let cfg = Config::defaults(B, 5);
    let p = pack(B, &cfg, 5);
    let (g, ev) = new_game(B, 5, cfg, vec![p.clone()]);
    let v = g.view(Viewer::Spectator);
    assert_eq!(v.turn_up, Some(p[25]));
    assert_eq!(v.trump, Some(p[25].suit()));
    assert_eq!(v.talon_len, 6);
    assert!(
        matches!(ev.last().unwrap().public, PublicEvent::DealStarted(ref d) if d.turn_up == p[25])
    );
    for s in 0..5 {
        assert!(!hand(&g, s).contains(p[25]));
        assert_eq!(hand(&g, s).len(), 5);
    }
}

// ---------------------------------------------------------------------------------------------
// 1.5 Bidding

fn bidding_game(cfg: Value) -> Game {
    let cfg = config(B, 4, cfg);
    let p = pack(B, &cfg, 4);
    new_game(B, 4, cfg, vec![p]).0
}

#[test]
fn b13_bidding_from_eldest_play_or_pass() {
    let mut g = bidding_game(json!({}));
    assert_eq!(g.phase(), Phase::Bidding);
    assert_eq!(g.to_act(), Some(Seat(1)));
    let mut l = g.legal_actions(Seat(1));
    l.sort_by_key(|a| a.to_string());
    assert_eq!(l, vec![Action::Pass, Action::Play]);
    assert!(matches!(
        g.apply(Seat(2), Action::Pass),
        Err(ActionError::NotYourTurn { to_act: Seat(1) })
    ));
    assert!(matches!(
        g.apply(Seat(1), Action::Drop),
        Err(ActionError::WrongRuleset { .. })
    ));
    assert!(matches!(
        g.apply(Seat(1), Action::Contre),
        Err(ActionError::WrongPhase { .. })
    ));
    run(&mut g, &["pass"]);
    assert_eq!(g.to_act(), Some(Seat(2)));
}

#[test]
fn b14_first_play_becomes_declarer_no_higher_bid() {
    let mut g = bidding_game(json!({}));
    run(&mut g, &["pass", "play"]);
    let v = g.view(Viewer::Spectator);
    assert!(v.seat_states[2].declarer);
    let mut l = g.legal_actions(Seat(3));
    l.sort_by_key(|a| a.to_string());
    assert_eq!(l, vec![Action::Contre, Action::Pass]);
    assert!(matches!(
        g.apply(Seat(3), Action::Play),
        Err(ActionError::WrongPhase { .. })
    ));
}

#[test]
fn b15_contre_only_after_declarer_and_it_ends_bidding() {
    let mut g = bidding_game(json!({}));
    run(&mut g, &["pass", "play", "contre"]);
    assert_eq!(g.phase(), Phase::Trick { trick: 0 });
    assert_eq!(g.to_act(), Some(Seat(1)), "eldest leads");
    assert!(g.view(Viewer::Spectator).seat_states[3].contrer);
    // Every later seat up to the dealer speaks once after a play.
    let mut g = bidding_game(json!({}));
    run(&mut g, &["play", "pass", "pass"]);
    assert_eq!(g.phase(), Phase::Bidding);
    assert_eq!(g.to_act(), Some(Seat(0)));
    run(&mut g, &["contre"]);
    assert_eq!(g.phase(), Phase::Trick { trick: 0 });
    // Disabled: bidding ends at the first play, contre is refused.
    let mut g = bidding_game(json!({"contre": "disabled"}));
    assert!(g.clone().apply(Seat(1), Action::Contre).is_err());
    run(&mut g, &["pass", "play"]);
    assert_eq!(g.phase(), Phase::Trick { trick: 0 });
}

#[test]
fn b16_no_bid_after_the_first_card() {
    let mut g = bidding_game(json!({}));
    run(&mut g, &["play", "pass", "pass", "pass"]);
    assert!(matches!(
        g.apply(Seat(1), Action::Pass),
        Err(ActionError::WrongPhase { .. })
    ));
    assert!(matches!(
        g.apply(Seat(1), Action::Contre),
        Err(ActionError::WrongPhase { .. })
    ));
    // And no card before the bidding ends.
    let mut g = bidding_game(json!({}));
    let any = hand(&g, 1).first().unwrap();
    assert!(matches!(
        g.apply(Seat(1), Action::Card(any)),
        Err(ActionError::WrongPhase { .. })
    ));
}

#[test]
fn b17_curieuse() {
    let cfg = Config::defaults(B, 3);
    let d = deck(
        B,
        &cfg,
        3,
        0,
        &["8S 9S TS JS QS", "8H 9H TH JH QH", "8D 9D TD JD QD"],
        "8C",
        &["KH"],
    );
    let (mut g, _) = new_game(B, 3, cfg.clone(), vec![d]);
    let before = g.balances().to_vec();
    let ev = run(&mut g, &["pass", "pass", "pass"]);
    let cur = ev.iter().find_map(|e| match &e.public {
        PublicEvent::Curieuse {
            set_aside,
            turn_up,
            trump,
            paid,
        } => Some((*set_aside, *turn_up, *trump, **paid)),
        _ => None,
    });
    let (set_aside, turn_up, trump, paid) = cur.expect("a Curieuse");
    assert_eq!((set_aside, turn_up), (c("8C"), c("KH")));
    assert_eq!(trump, bete_rules::Suit::Hearts);
    assert_eq!(&paid[..3], &[1, 1, 1]);
    assert_eq!(g.pools().pot, 4 + 3);
    for (now, was) in g.balances().iter().zip(&before) {
        assert_eq!(*now, was - 1);
    }
    // Bidding restarts at eldest; the old turn-up stays public.
    assert_eq!(g.to_act(), Some(Seat(1)));
    let v = g.view(Viewer::Spectator);
    assert_eq!(v.set_aside_turn_ups, vec![c("8C")]);
    assert_eq!(v.turn_up, Some(c("KH")));
    assert_eq!(v.talon_len, 11);
    // One Curieuse by default: a second all-pass ends the deal (B18).
    let ev = run(&mut g, &["pass", "pass", "pass"]);
    assert!(matches!(settled(&ev).0, DealResult::AllPassed));
    // max_curieuse = 2: two Curieuses; 0: none.
    let cfg2 = config(B, 3, json!({"max_curieuse": 2}));
    let d = deck(
        B,
        &cfg2,
        3,
        0,
        &["8S 9S TS JS QS", "8H 9H TH JH QH", "8D 9D TD JD QD"],
        "8C",
        &["KH", "AD"],
    );
    let (mut g, _) = new_game(B, 3, cfg2, vec![d]);
    run(&mut g, &["pass", "pass", "pass", "pass", "pass", "pass"]);
    assert_eq!(
        g.view(Viewer::Spectator).set_aside_turn_ups,
        vec![c("8C"), c("KH")]
    );
    assert_eq!(g.pools().pot, 4 + 6);
    let d = deck(
        B,
        &cfg,
        3,
        0,
        &["8S 9S TS JS QS", "8H 9H TH JH QH", "8D 9D TD JD QD"],
        "8C",
        &[],
    );
    let (mut g, _) = new_game(B, 3, config(B, 3, json!({"max_curieuse": 0})), vec![d]);
    let ev = run(&mut g, &["pass", "pass", "pass"]);
    assert!(matches!(settled(&ev).0, DealResult::AllPassed));
}

#[test]
fn b17_no_curieuse_with_an_empty_talon() {
    let cfg = Config::defaults(B, 7);
    let p = pack(B, &cfg, 7);
    let (mut g, _) = new_game(B, 7, cfg, vec![p]);
    assert_eq!(g.view(Viewer::Spectator).talon_len, 0);
    let ev = run(&mut g, &["pass"; 7]);
    assert!(
        !ev.iter()
            .any(|e| matches!(e.public, PublicEvent::Curieuse { .. }))
    );
    assert!(matches!(settled(&ev).0, DealResult::AllPassed));
}

#[test]
fn b18_all_pass_stakes_stay_king_settled() {
    let mut t = T::new(B, 3, json!({"max_curieuse": 0}));
    let d = t.deal_with(king_with(2), &["pass", "pass", "pass"], &[]);
    assert_eq!(d.result, DealResult::AllPassed);
    assert_eq!(
        (d.pools.pot, d.pools.fiches, d.pools.deals_since_won),
        (4, 3, 1)
    );
    // The King holder takes the pool, and it is refilled.
    assert_eq!(&d.net[..3], &[-1, -1, 2]);
    assert_eq!(t.g.summaries()[0].outcome, "all_passed");
    // Next deal: only the new dealer adds a jeton.
    assert_eq!(t.g.pools().pot, 5);
    assert_eq!(t.g.pools().deals_since_won, 2);
}

// ---------------------------------------------------------------------------------------------
// 1.6 Play

#[test]
fn b19_eldest_leads_whoever_declared_every_seat_plays() {
    let cfg = Config::defaults(B, 3);
    let d = three_seat_deck(
        &cfg,
        ["KS 8H 9H TH JH", "AS 8D 9D TD JD", "JS QD KD AD TC"],
        "9C",
    );
    let (mut g, _) = new_game(B, 3, cfg, vec![d]);
    run(&mut g, &["pass", "pass", "play"]);
    assert_eq!(g.to_act(), Some(Seat(1)));
    let ev = run(&mut g, &["card AS", "card JS", "card KS"]);
    assert_eq!(
        ev.iter()
            .filter(|e| matches!(e.public, PublicEvent::CardPlayed { .. }))
            .count(),
        3
    );
    // The trick winner leads next.
    assert_eq!(g.to_act(), Some(Seat(0)));
}

fn head_deck(cfg: &Config, turn_up: &str) -> Vec<Card> {
    three_seat_deck(
        cfg,
        ["8S KS 8H 9H TH", "9S JS 8D 9D TD", "TS QS JD QD KD"],
        turn_up,
    )
}

#[test]
fn b20_must_head_in_suit() {
    // Plain suit lead (trumps clubs) and trump lead (trumps spades): the same duty.
    for turn_up in ["8C", "AS"] {
        let cfg = Config::defaults(B, 3);
        let (mut g, _) = new_game(B, 3, cfg.clone(), vec![head_deck(&cfg, turn_up)]);
        run(&mut g, &["play", "pass", "pass", "card 9S"]);
        let mut l = g.legal_actions(Seat(2));
        l.sort_by_key(|a| a.to_string());
        assert_eq!(l, vec![Action::Card(c("QS")), Action::Card(c("TS"))]);
        run(&mut g, &["card TS"]);
        assert_eq!(g.legal_actions(Seat(0)), vec![Action::Card(c("KS"))]);
        assert!(matches!(
            g.clone().apply(Seat(0), Action::Card(c("8S"))),
            Err(ActionError::MustHead(_))
        ));
        assert!(matches!(
            g.clone().apply(Seat(0), Action::Card(c("8H"))),
            Err(ActionError::MustFollowSuit(_))
        ));
        assert!(matches!(
            g.clone().apply(Seat(0), Action::Card(c("AS"))),
            Err(ActionError::NotInHand(_))
        ));
    }
    // must_head_in_suit = false: any card of the suit.
    let cfg = config(B, 3, json!({"must_head_in_suit": false}));
    let (mut g, _) = new_game(B, 3, cfg.clone(), vec![head_deck(&cfg, "8C")]);
    run(&mut g, &["play", "pass", "pass", "card 9S", "card TS"]);
    assert_eq!(g.legal_actions(Seat(0)).len(), 2);
}

#[test]
fn b21_must_trump_then_overtrump() {
    let cfg = Config::defaults(B, 3);
    let d = three_seat_deck(
        &cfg,
        ["9C KC 8H 9H TH", "8S 9S TS JS QS", "TC 8D 9D TD JD"],
        "8C",
    );
    let (mut g, _) = new_game(B, 3, cfg, vec![d]);
    run(&mut g, &["play", "pass", "pass", "card 8S"]);
    assert_eq!(g.legal_actions(Seat(2)), vec![Action::Card(c("TC"))]);
    assert!(matches!(
        g.clone().apply(Seat(2), Action::Card(c("8D"))),
        Err(ActionError::MustTrump(_))
    ));
    run(&mut g, &["card TC"]);
    assert_eq!(g.legal_actions(Seat(0)), vec![Action::Card(c("KC"))]);
    assert!(matches!(
        g.clone().apply(Seat(0), Action::Card(c("9C"))),
        Err(ActionError::MustOvertrump(_))
    ));
    let ev = run(&mut g, &["card KC"]);
    assert!(ev.iter().any(|e| e.public
        == PublicEvent::TrickWon {
            trick: 0,
            winner: Seat(0)
        }));
}

#[test]
fn b22_discard_when_unable_to_head_no_undertrump_duty() {
    let cfg = Config::defaults(B, 3);
    let d = three_seat_deck(
        &cfg,
        ["9C 8H 9H TH JH", "8S 9S TS JS QS", "TC 8D 9D TD JD"],
        "8C",
    );
    let (mut g, _) = new_game(B, 3, cfg.clone(), vec![d]);
    run(&mut g, &["play", "pass", "pass", "card 8S", "card TC"]);
    // Only a lower trump: any card.
    assert_eq!(g.legal_actions(Seat(0)).len(), 5);
    // A trumped trick is followed with any card of the suit led (no heading).
    let d = three_seat_deck(
        &cfg,
        ["8S KS 8H 9H TH", "JS 9S TS QS AS", "TC 8D 9D TD JD"],
        "8C",
    );
    let (mut g, _) = new_game(B, 3, cfg, vec![d]);
    run(&mut g, &["play", "pass", "pass", "card JS", "card TC"]);
    assert_eq!(g.legal_actions(Seat(0)).len(), 2);
}

#[test]
fn b23_all_five_tricks_are_played() {
    let mut t = T::new(B, 3, json!({}));
    let d = t.deal(&["play", "pass", "pass"], &[1, 1, 1, ANY, ANY]);
    assert_eq!(
        d.events
            .iter()
            .filter(|e| matches!(e.public, PublicEvent::TrickWon { .. }))
            .count(),
        5
    );
    assert_eq!(d.tricks[..3].iter().sum::<u8>(), 5);
}

// ---------------------------------------------------------------------------------------------
// 1.7 Winning test: the decision table

#[test]
fn b24_first_two_tricks_win() {
    assert_eq!(outcome(3, json!({}), &[1, 1, 0, 0, 2]), win(false));
}

#[test]
fn b24_plurality() {
    let p = json!({"win_rule": "plurality"});
    assert_eq!(outcome(4, p.clone(), &[0, 1, 1, 2, 3]), win(false));
    assert_eq!(outcome(3, p.clone(), &[1, 1, 0, 0, 2]), BidderResult::Null);
    assert_eq!(outcome(3, p.clone(), &[0, 1, 1, 0, 0]), lose(false));
    assert_eq!(outcome(3, p, &[1, 1, 1, 1, 1]), win(true));
}

#[test]
fn b25_null_round_when_declarer_ties() {
    assert_eq!(outcome(3, json!({}), &[0, 1, 1, 0, 2]), BidderResult::Null);
    assert_eq!(outcome(5, json!({}), &[1, 2, 3, 4, 0]), BidderResult::Null);
}

#[test]
fn b26_lose_vole_devole() {
    assert_eq!(outcome(3, json!({}), &[1, 1, 1, 1, 1]), win(true));
    assert_eq!(outcome(3, json!({}), &[0, 0, 0, 2, 2]), lose(true));
    assert_eq!(outcome(3, json!({}), &[0, 0, 0, 1, 2]), lose(false));
}

#[test]
fn decision_table_strict() {
    let s = json!({});
    // 5 | — : win + vole
    assert_eq!(outcome(3, s.clone(), &[1, 1, 1, 1, 1]), win(true));
    // 3–4 | any : win
    assert_eq!(outcome(3, s.clone(), &[0, 2, 1, 1, 1]), win(false));
    assert_eq!(outcome(3, s.clone(), &[0, 1, 1, 1, 1]), win(false));
    // 2 | one player has 3 | any : lose
    assert_eq!(outcome(3, s.clone(), &[1, 1, 0, 0, 0]), lose(false));
    // 2 | 2 + 1 | yes : win
    assert_eq!(outcome(3, s.clone(), &[1, 1, 0, 0, 2]), win(false));
    // 2 | 2 + 1 | no : null
    assert_eq!(outcome(3, s.clone(), &[0, 1, 1, 0, 2]), BidderResult::Null);
    // 2 | 1 + 1 + 1 | yes : win
    assert_eq!(outcome(4, s.clone(), &[1, 1, 0, 2, 3]), win(false));
    // 2 | 1 + 1 + 1 | no : lose (plurality: win)
    assert_eq!(outcome(4, s.clone(), &[0, 1, 1, 2, 3]), lose(false));
    // 1 | 1+1+1+1 : null
    assert_eq!(outcome(5, s.clone(), &[1, 2, 3, 4, 0]), BidderResult::Null);
    // 1 | someone has ≥ 2 : lose
    assert_eq!(outcome(3, s.clone(), &[1, 0, 0, 2, 2]), lose(false));
    // 0 : lose + dévole
    assert_eq!(outcome(3, s, &[0, 2, 0, 2, 0]), lose(true));
}

// ---------------------------------------------------------------------------------------------
// 1.8 Settlement

#[test]
fn b27_winner_takes_pot_n_fiches_current_bete() {
    let mut t = T::new(B, 3, json!({}));
    // Deal 0: seat 1 loses, a bête of W = 4 + 5 = 9 joins the queue.
    let d0 = t.deal(&["play", "pass", "pass"], &[0, 0, 0, 2, 1]);
    assert_eq!(d0.w, 9);
    // Deal 1 (dealer 1): pot 4 + 1, N = 2, the bête 9 staked: W = 5 + 10 + 9 = 24.
    let d1 = t.deal(&["play", "pass", "pass"], &[2, 2, 2, ANY, ANY]);
    assert_eq!(d1.start.staked_bete, Some(9));
    assert_eq!(d1.w, 24);
    let (p, r, _) = declarer(&d1);
    assert_eq!((p, r), (Seat(2), win(false)));
    assert_eq!(d1.net[2], 24);
    assert_eq!(
        (
            d1.pools.pot,
            d1.pools.fiches,
            d1.pools.deals_since_won,
            d1.pools.staked_bete
        ),
        (0, 1, 0, None)
    );
    let summaries = t.g.summaries();
    let won: Vec<_> = summaries[1]
        .pools_won
        .iter()
        .map(|p| (p.pool.as_str(), p.amount))
        .collect();
    assert_eq!(won, vec![("deal_pot", 5), ("fiches", 10), ("bete", 9)]);
}

#[test]
fn b28_vole_takes_every_queued_bete() {
    let mut t = T::new(B, 3, json!({}));
    t.deal(&["play", "pass", "pass"], &[0, 0, 0, 2, 1]); // bête 9
    let d1 = t.deal(&["play", "pass", "pass"], &[0, 0, 0, 1, 1]); // seat 2 loses: bête 24
    assert_eq!(d1.w, 24);
    assert_eq!(d1.pools.bete_queue, vec![24]);
    assert_eq!(d1.pools.staked_bete, Some(9));
    // Deal 2 (dealer 2, eldest 0): pot 6, N = 3, staked 9: W = 30. Seat 0 makes a vole.
    let d2 = t.deal(&["play", "pass", "pass"], &[0, 0, 0, 0, 0]);
    assert_eq!(d2.w, 30);
    assert_eq!(declarer(&d2).1, win(true));
    assert_eq!(&d2.net[..3], &[30 + 24 + 2, -1, -1]);
    assert!(d2.pools.bete_queue.is_empty());
    assert_eq!(t.g.summaries()[2].outcome, "vole");
}

#[test]
fn b28_vole_does_not_collect_a_bete_made_in_the_same_deal() {
    let mut t = T::new(B, 3, json!({}));
    // P makes a vole; C took nothing: C loses (2W) with a dévole.
    let d = t.deal(&["play", "contre"], &[1, 1, 1, 1, 1]);
    let (_, pr, cr) = declarer(&d);
    assert_eq!(pr, win(true));
    assert_eq!(cr, Some((Seat(2), lose(true))));
    assert_eq!(d.pools.bete_queue, vec![18]);
    assert_eq!(&d.net[..3], &[0, 9 + 2 + 1, -18 - 1 - 2]);
}

#[test]
fn b29_loser_pays_w_into_the_queue_stakes_stay() {
    let mut t = T::new(B, 3, json!({}));
    let d = t.deal(&["play", "pass", "pass"], &[0, 0, 0, 1, 2]);
    assert_eq!(declarer(&d).1, lose(false));
    assert_eq!(&d.net[..3], &[0, -9, 0]);
    assert_eq!(&d.betes[..3], &[0, 9, 0]);
    assert_eq!(
        (d.pools.pot, d.pools.fiches, d.pools.deals_since_won),
        (4, 3, 1)
    );
    assert_eq!(d.pools.bete_queue, vec![9]);
    assert_eq!(
        t.g.summaries()[0]
            .betes
            .iter()
            .map(|b| (b.seat, b.amount))
            .collect::<Vec<_>>(),
        vec![(1, 9)]
    );
}

#[test]
fn b30_devole_pays_each_other_player() {
    let mut t = T::new(B, 3, json!({}));
    let d = t.deal(&["play", "pass", "pass"], &[0, 0, 0, 2, 2]);
    assert_eq!(declarer(&d).1, lose(true));
    assert_eq!(&d.net[..3], &[1, -9 - 2, 1]);
}

#[test]
fn b31_queue_fifo_and_largest_first() {
    for (order, staked, waiting) in [("fifo", 9, 18), ("largest_first", 18, 9)] {
        let mut t = T::new(B, 3, json!({"queue_order": order}));
        // Both bidders lose: P's 9 then C's 18 join the queue.
        let d = t.deal(&["play", "contre"], &[0, 0, 0, 1, 2]);
        assert_eq!(d.pools.bete_queue, vec![9, 18]);
        assert_eq!(t.g.pools().staked_bete, Some(staked), "{order}");
        assert_eq!(t.g.pools().bete_queue, vec![waiting]);
        // A newer, larger bête never displaces the staked one.
        let d1 = t.deal(&["play", "pass", "pass"], &[1, 1, 1, 2, 0]);
        assert_eq!(declarer(&d1).1, lose(false));
        assert_eq!(t.g.pools().staked_bete, Some(staked), "{order}");
        assert_eq!(t.g.pools().bete_queue, vec![waiting, d1.w]);
    }
}

#[test]
fn b32_contre_p_wins() {
    let mut t = T::new(B, 3, json!({}));
    let d = t.deal(&["play", "contre"], &[1, 1, 1, 2, 0]);
    assert_eq!(
        declarer(&d),
        (Seat(1), win(false), Some((Seat(2), lose(false))))
    );
    assert_eq!(&d.net[..3], &[0, 9, -18]);
    assert_eq!(d.pools.bete_queue, vec![18]);
}

#[test]
fn b32_contre_c_wins_p_pays_w_to_c() {
    let mut t = T::new(B, 3, json!({}));
    let d = t.deal(&["play", "contre"], &[2, 2, 2, 1, 0]);
    assert_eq!(
        declarer(&d),
        (Seat(1), lose(false), Some((Seat(2), win(false))))
    );
    assert_eq!(&d.net[..3], &[0, -9, 18]);
    assert!(d.pools.bete_queue.is_empty());
    assert_eq!(d.pools.pot, 0);
    let summaries = t.g.summaries();
    let won: Vec<_> = summaries[0]
        .pools_won
        .iter()
        .map(|p| (p.pool.as_str(), p.seat, p.amount))
        .collect();
    assert_eq!(
        won,
        vec![
            ("deal_pot", 2, 4),
            ("fiches", 2, 5),
            ("declarer_bete", 2, 9)
        ]
    );
}

#[test]
fn b32_contre_c_wins_on_the_first_two_tricks_even_with_another_two() {
    let mut t = T::new(B, 3, json!({}));
    // P 1 trick, C tricks #1 and #2, seat 0 two: P loses (1 < 2), C passes B24.
    let d = t.deal(&["play", "contre"], &[2, 2, 0, 0, 1]);
    assert_eq!(
        declarer(&d),
        (Seat(1), lose(false), Some((Seat(2), win(false))))
    );
}

#[test]
fn b32_contre_c_fails_with_a_tie_no_null_for_c() {
    let mut t = T::new(B, 4, json!({}));
    // P (seat 1) 1 trick, C (seat 2) 2 tricks not the first two, seat 3 two: P loses, C loses.
    let d = t.deal(&["play", "contre"], &[3, 2, 2, 3, 1]);
    assert_eq!(
        declarer(&d),
        (Seat(1), lose(false), Some((Seat(2), lose(false))))
    );
}

#[test]
fn b32_contre_both_lose() {
    let mut t = T::new(B, 3, json!({}));
    let d = t.deal(&["play", "contre"], &[0, 0, 0, 1, 2]);
    assert_eq!(
        declarer(&d),
        (Seat(1), lose(false), Some((Seat(2), lose(false))))
    );
    assert_eq!(&d.net[..3], &[0, -9, -18]);
    assert_eq!(d.pools.bete_queue, vec![9, 18]);
    assert_eq!(&d.betes[..3], &[0, 9, 18]);
}

#[test]
fn b32_contre_null_for_both() {
    let mut t = T::new(B, 3, json!({}));
    let d = t.deal(&["play", "contre"], &[0, 1, 1, 0, 2]);
    assert_eq!(
        declarer(&d),
        (
            Seat(1),
            BidderResult::Null,
            Some((Seat(2), BidderResult::Null))
        )
    );
    assert_eq!(&d.net[..3], &[0, 0, 0]);
}

#[test]
fn b32_contre_c_vole_and_p_devole() {
    let mut t = T::new(B, 3, json!({}));
    let d = t.deal(&["play", "contre"], &[2, 2, 2, 2, 2]);
    assert_eq!(
        declarer(&d),
        (Seat(1), lose(true), Some((Seat(2), win(true))))
    );
    assert_eq!(&d.net[..3], &[0, -9 - 2 - 1, 9 + 9 + 1 + 2]);
}

#[test]
fn b33_king_pool_goes_to_the_holder_of_the_trump_king() {
    let mut t = T::new(B, 3, json!({}));
    let d = t.deal_with(
        king_with(1),
        &["play", "pass", "pass"],
        &[1, 1, 1, ANY, ANY],
    );
    assert_eq!(&d.net[..3], &[-1, 9 + 3 - 1, -1]);
    assert_eq!(d.pools.king_pool, 3);
}

#[test]
fn b33_losing_bidder_forfeits_the_king_pool() {
    let mut t = T::new(B, 3, json!({}));
    let d = t.deal_with(king_with(1), &["play", "pass", "pass"], &[0, 0, 0, 2, 1]);
    assert_eq!(&d.net[..3], &[0, -9, 0]);
    assert_eq!(d.pools.king_pool, 3);
    // A losing contrer too.
    let mut t = T::new(B, 3, json!({}));
    let d = t.deal_with(king_with(2), &["play", "contre"], &[1, 1, 1, 2, 0]);
    assert_eq!(&d.net[..3], &[0, 9, -18]);
    // A winning bidder or a bystander holder takes it when the bidder loses.
    let mut t = T::new(B, 3, json!({}));
    let d = t.deal_with(king_with(0), &["play", "pass", "pass"], &[0, 0, 0, 2, 1]);
    assert_eq!(&d.net[..3], &[3 - 1, -9 - 1, -1]);
}

#[test]
fn b33_nobody_holds_the_king_pool_stays() {
    let mut t = T::new(B, 3, json!({}));
    let turned = |g: &Game| g.view(Viewer::Spectator).turn_up.unwrap().rank() == Rank::King;
    let d = t.deal_with(turned, &["play", "pass", "pass"], &[1, 1, 1, ANY, ANY]);
    assert_eq!(&d.net[..3], &[0, 9, 0]);
    assert_eq!(d.pools.king_pool, 3);
    // The King of the new trump suit put aside by a Curieuse is held by nobody.
    let cfg = Config::defaults(B, 3);
    let d = deck(
        B,
        &cfg,
        3,
        0,
        &["8S 9S TS JS QS", "8H 9H TH JH QH", "8D 9D TD JD QD"],
        "KC",
        &["AC"],
    );
    let (mut g, _) = new_game(B, 3, cfg, vec![d]);
    let ev = run(&mut g, &["pass", "pass", "pass", "pass", "pass", "pass"]);
    let (r, net, _, _) = settled(&ev);
    assert_eq!(*r, DealResult::AllPassed);
    assert_eq!(&net[..3], &[0, 0, 0]);
}

#[test]
fn b33_king_of_the_final_trump_after_a_curieuse() {
    let cfg = Config::defaults(B, 3);
    // Seat 2 holds KH; the Curieuse turns a heart.
    let d = deck(
        B,
        &cfg,
        3,
        0,
        &["8S 9S TS JS QS", "8C 9C TC JC QC", "8D 9D TD JD KH"],
        "KS",
        &["AH"],
    );
    let (mut g, _) = new_game(B, 3, config(B, 3, json!({})), vec![d]);
    let ev = run(&mut g, &["pass", "pass", "pass", "pass", "pass", "pass"]);
    let (_, net, _, _) = settled(&ev);
    assert_eq!(&net[..3], &[-1, -1, 2]);
}

#[test]
fn ah2_ace_pool() {
    let r = RulesetId::BeteAceHigh;
    let mut t = T::new(r, 3, json!({"max_curieuse": 0}));
    let both = |g: &Game| {
        let trump = g.view(Viewer::Spectator).trump.unwrap();
        hand(g, 2).contains(Card::new(Rank::Ace, trump))
            && hand(g, 0).contains(Card::new(Rank::King, trump))
    };
    let d = t.deal_with(both, &["pass", "pass", "pass"], &[]);
    assert_eq!(d.result, DealResult::AllPassed);
    assert_eq!(&d.net[..3], &[-1, -1, 3 - 1]);
    assert!(
        t.g.summaries()[0]
            .pools_won
            .iter()
            .any(|p| p.pool == "ace" && p.seat == 2)
    );
}

#[test]
fn b34_null_round_stakes_stay_king_settled_n_counts() {
    let mut t = T::new(B, 3, json!({}));
    let d = t.deal_with(king_with(1), &["play", "pass", "pass"], &[0, 1, 1, 0, 2]);
    assert_eq!(declarer(&d).1, BidderResult::Null);
    assert_eq!(
        (d.pools.pot, d.pools.fiches, d.pools.deals_since_won),
        (4, 3, 1)
    );
    assert_eq!(&d.net[..3], &[-1, 2, -1]);
    assert_eq!(t.g.pools().deals_since_won, 2);
    assert_eq!(t.g.pools().pot, 5);
    assert_eq!(t.g.summaries()[0].outcome, "null");
}

#[test]
fn b35_lenient_revoke_costs_a_bete_after_the_deals_own() {
    let cfg = config(B, 3, json!({"enforce_legality": "lenient"}));
    let d = deck(
        B,
        &cfg,
        3,
        0,
        &["8S KS 8H 9H TH", "9S JS 8D 9D TD", "TS QS JD QD KD"],
        "8C",
        &[],
    );
    // Strict refuses the revoke.
    let (mut strict, _) = new_game(B, 3, Config::defaults(B, 3), vec![d.clone()]);
    run(&mut strict, &["play", "pass", "pass", "card 9S"]);
    assert!(matches!(
        strict.apply(Seat(2), Action::Card(c("JD"))),
        Err(ActionError::MustFollowSuit(_))
    ));
    let mut t = T::new(B, 3, json!({"enforce_legality": "lenient"}));
    let mut g = t.g.clone();
    g.provide_deck(d).unwrap();
    run(&mut g, &["play", "pass", "pass", "card 9S"]);
    // Lenient: every card in hand is accepted; a card off duty is a revoke.
    assert_eq!(g.legal_actions(Seat(2)).len(), 5);
    run(&mut g, &["card JD"]);
    t.g = g;
    let mut events = Vec::new();
    let mut budget = 100_000;
    let g = solve(&t.g, &[ANY; 5], 0, &mut budget, &mut events).unwrap();
    let (_, _, betes, _, pools) = settled_full(&events);
    // W = 4 + 5 = 9; the revoke's bête is the last entry of the queue.
    assert_eq!(*pools.bete_queue.last().unwrap(), 9);
    assert!(betes[2] >= 9);
    assert_conserved(&g);
}

#[test]
fn b35_timeout_safe_action_never_revokes_in_lenient_mode() {
    let cfg = config(B, 3, json!({"enforce_legality": "lenient"}));
    // Seat 2 must head 9S with QS; its lowest card by canonical order, 8S, would be a revoke.
    let d = deck(
        B,
        &cfg,
        3,
        0,
        &["KS 8H 9H TH JH", "9S JS 8D 9D TD", "8S QS JD QD KD"],
        "8C",
        &[],
    );
    let (mut g, _) = new_game(B, 3, cfg, vec![d]);
    run(&mut g, &["play", "pass", "pass", "card 9S"]);
    assert_eq!(g.legal_actions(Seat(2)).len(), 5);
    assert_eq!(g.safe_action(Seat(2)), Some(Action::Card(c("QS"))));
    let (a, _) = g.apply_timeout(Seat(2)).unwrap();
    assert_eq!(a, Action::Card(c("QS")));
    assert!(g.log()[0].actions.last().unwrap().auto);
}

// ---------------------------------------------------------------------------------------------
// B36 / 0.4 item 17: end of the match

fn match_ended(events: &[Event]) -> Option<[i64; bete_rules::MAX_SEATS]> {
    events.iter().find_map(|e| match &e.public {
        PublicEvent::MatchEnded { returned, .. } => Some(**returned),
        _ => None,
    })
}

#[test]
fn b36_match_ends_after_whole_rounds_when_the_queue_is_empty() {
    let mut t = T::new(B, 3, json!({"rounds": 1}));
    t.deal(&["play", "pass", "pass"], &[1, 1, 1, ANY, ANY]);
    t.deal(&["play", "pass", "pass"], &[2, 2, 2, ANY, ANY]);
    assert!(!t.g.is_over());
    let d = t.deal(&["play", "pass", "pass"], &[0, 0, 0, ANY, ANY]);
    assert!(t.g.is_over());
    assert_eq!(t.g.phase(), Phase::MatchOver);
    // The dish is empty (three wins of one fiche) and not refilled; the King pool (3, never
    // won) goes back one jeton a seat.
    assert_eq!(match_ended(&d.events).unwrap()[..3], [1, 1, 1]);
    assert_eq!(t.g.on_table(), 0);
    assert_eq!(t.g.balances().iter().sum::<i64>(), 0);
    assert!(matches!(
        t.g.apply(Seat(0), Action::Pass),
        Err(ActionError::MatchOver)
    ));
}

#[test]
fn b36_b10_king_pool_not_restocked_at_the_last_settlement() {
    let mut t = T::new(B, 3, json!({"rounds": 1}));
    t.deal(&["play", "pass", "pass"], &[1, 1, 1, ANY, ANY]);
    t.deal(&["play", "pass", "pass"], &[2, 2, 2, ANY, ANY]);
    let d = t.deal_with(
        king_with(1),
        &["play", "pass", "pass"],
        &[0, 0, 0, ANY, ANY],
    );
    assert!(t.g.is_over());
    // Seat 1 takes the King pool (3) and nobody puts a jeton back.
    assert_eq!(d.pools.king_pool, 0);
    assert_eq!(&d.net[..3], &[4 + 5, 3, 0]);
    assert_eq!(match_ended(&d.events).unwrap()[..3], [0, 0, 0]);
    assert_eq!(t.g.on_table(), 0);
}

#[test]
fn b36_extra_deals_until_the_queue_is_empty() {
    let mut t = T::new(B, 3, json!({"rounds": 1}));
    t.deal(&["play", "pass", "pass"], &[1, 1, 1, ANY, ANY]);
    t.deal(&["play", "pass", "pass"], &[2, 2, 2, ANY, ANY]);
    t.deal(&["play", "pass", "pass"], &[1, 1, 1, 2, 2]); // seat 0 loses: a bête waits
    assert!(!t.g.is_over());
    t.deal(&["play", "pass", "pass"], &[1, 1, 1, ANY, ANY]); // seat 1 wins it
    assert!(t.g.is_over());
    assert_eq!(t.g.summaries().len(), 4);
}

#[test]
fn b36_max_extra_deals_returns_stakes_with_odd_jetons_from_the_last_eldest() {
    let mut t = T::new(
        B,
        3,
        json!({"rounds": 1, "max_extra_deals": 0, "fiche_value": 10}),
    );
    t.deal(&["play", "pass", "pass"], &[1, 1, 1, ANY, ANY]);
    t.deal(&["play", "pass", "pass"], &[2, 2, 2, ANY, ANY]);
    // Deal 2 (dealer 2, eldest 0): pot 4, one fiche (10) left; seat 0 loses a bête of 14.
    let d = t.deal(&["play", "pass", "pass"], &[1, 1, 1, 2, 2]);
    assert_eq!(d.w, 14);
    assert!(t.g.is_over());
    let returned = match_ended(&d.events).unwrap();
    // Bête 14 back to seat 0; King pool 1 each; pot + dish = 14: 4 each and the odd 2 to seats
    // 0 and 1 (from the last deal's eldest, seat 0).
    assert_eq!(&returned[..3], &[14 + 1 + 5, 1 + 5, 1 + 4]);
    assert_eq!(t.g.on_table(), 0);
    assert_eq!(t.g.balances().iter().sum::<i64>(), 0);
}

// ---------------------------------------------------------------------------------------------
// Events and views (0.4 item 18)

#[test]
fn hands_are_private_and_revealed_to_spectators_at_settlement() {
    let mut t = T::new(B, 3, json!({}));
    let d = t.deal(&["play", "pass", "pass"], &[1, 1, 1, ANY, ANY]);
    let started = d
        .events
        .iter()
        .find(|e| matches!(e.public, PublicEvent::DealStarted(_)))
        .unwrap();
    for s in 0..3u8 {
        let p = started.project(Viewer::Seat(Seat(s)));
        assert!(matches!(p.private, Some(bete_rules::PrivateEvent::Hand(h)) if h.len() == 5));
    }
    assert!(started.project(Viewer::Spectator).private.is_none());
    let settled_ev = d
        .events
        .iter()
        .find(|e| matches!(e.public, PublicEvent::DealSettled(_)))
        .unwrap();
    assert!(settled_ev.project(Viewer::Seat(Seat(0))).reveal.is_none());
    let rev = settled_ev.project(Viewer::Spectator).reveal.unwrap();
    assert_eq!(rev.deck.len(), 28);
    assert_eq!(rev.hands[..3].iter().map(|h| h.len()).sum::<u32>(), 15);
    // A seat's view shows only its own hand; a spectator's none.
    let mut g = t.g.clone();
    g.provide_deck(t.g.pack().to_vec()).unwrap();
    assert!(g.view(Viewer::Spectator).hand.is_none());
    assert_eq!(g.view(Viewer::Seat(Seat(1))).hand.unwrap().len(), 5);
    // Deal 1: dealer 1, eldest 2 is to act.
    assert!(g.view(Viewer::Seat(Seat(0))).legal_actions.is_empty());
    assert!(!g.view(Viewer::Seat(Seat(2))).legal_actions.is_empty());
}
