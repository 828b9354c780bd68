//! Beast (section 3): BS1–BS8 and A31.

#![allow(clippy::unwrap_used)] // tests: a panic is the failure report

use bete_rules::deal::{cards, stack_deck};
use bete_rules::event::DealResult;
use bete_rules::{
    Action, ActionError, Card, CardSet, Config, ConfigError, Decks, Event, Game, PublicEvent,
    RulesetId, Seat, Setup, Viewer, pack,
};
use serde_json::json;

const R: RulesetId = RulesetId::Beast;

fn c(s: &str) -> Card {
    s.parse().unwrap()
}

fn deck(cfg: &Config, seats: u8, dealer: u8, hands: &[&str], turn_up: &str) -> Vec<Card> {
    let hands: Vec<CardSet> = hands.iter().map(|h| cards(h)).collect();
    stack_deck(
        &pack(R, cfg, seats),
        seats,
        Seat(dealer),
        cfg.deal_pattern,
        &hands,
        c(turn_up),
        &[],
    )
}

fn new_game(seats: u8, cfg: Config, decks: Vec<Vec<Card>>) -> (Game, Vec<Event>) {
    Game::new(Setup {
        ruleset: R,
        config: cfg,
        seats,
        first_dealer: Seat(0),
        decks: Decks::Explicit(decks),
    })
    .unwrap()
}

fn run(g: &mut Game, actions: &[&str]) -> Vec<Event> {
    let mut out = Vec::new();
    for a in actions {
        let seat = g
            .to_act()
            .unwrap_or_else(|| panic!("nobody to act before {a}"));
        out.extend(
            g.apply(seat, a.parse().unwrap())
                .unwrap_or_else(|e| panic!("{a} by {seat}: {e}")),
        );
        let sum: i64 = g.balances().iter().sum();
        assert_eq!(sum + g.on_table(), 0);
    }
    out
}

fn heaps(
    events: &[Event],
) -> (
    Option<Seat>,
    Option<Seat>,
    Option<Seat>,
    [i64; bete_rules::MAX_SEATS],
) {
    for e in events {
        if let PublicEvent::DealSettled(s) = &e.public
            && let DealResult::Heaps {
                king,
                play,
                triolet,
            } = s.result
        {
            return (king, play, triolet, s.net);
        }
    }
    panic!("no settlement")
}

// Three seats, dealer 0: eldest is seat 1. Trumps are hearts (turn-up 2H).
fn three_seat_deck(cfg: &Config) -> Vec<Card> {
    deck(
        cfg,
        3,
        0,
        &["KH 4S 4D 4C 2D", "AS KS QS JS TS", "AD KD QD JD 3C"],
        "2H",
    )
}

#[test]
fn bs1_three_to_five_players() {
    for n in 3..=5 {
        assert!(Config::from_json(R, n, &Default::default()).is_ok());
    }
    for n in [2, 6, 7] {
        assert!(matches!(
            Config::from_json(R, n, &Default::default()),
            Err(ConfigError::Seats { .. })
        ));
    }
}

#[test]
fn bs2_full_pack_ecarte_ranking() {
    let cfg = Config::defaults(R, 3);
    assert_eq!(pack(R, &cfg, 3).len(), 52);
    // J beats A in Écarté order: seat 1 leads AS, seat 2 heads it with JS.
    let d = deck(
        &cfg,
        3,
        0,
        &["2C 3C 4C 5C 6C", "AS 7D 8D 9D TD", "JS 7C 8C 9C TC"],
        "2H",
    );
    let (mut g, _) = new_game(3, cfg, vec![d]);
    let ev = run(&mut g, &["card AS", "card JS", "card 2C"]);
    assert!(ev.iter().any(|e| e.public
        == PublicEvent::TrickWon {
            trick: 0,
            winner: Seat(2)
        }));
}

#[test]
fn bs3_three_heaps_staked_and_refilled_after_won() {
    let cfg = Config::defaults(R, 3);
    let (mut g, ev) = new_game(3, cfg.clone(), vec![three_seat_deck(&cfg)]);
    assert_eq!(g.pools().heaps, [3, 3, 3]);
    assert_eq!(g.balances(), &[-3, -3, -3]);
    match &ev[0].public {
        PublicEvent::DealStarted(d) => assert_eq!(&d.paid[..3], &[3, 3, 3]),
        e => panic!("{e:?}"),
    }
    // Seat 1 leads AS; seat 2 (no spade, no trump) discards; seat 0 follows with 4S.
    run(&mut g, &["card AS", "card 3C", "card 4S"]);
    // Seat 0 is void in spades and must trump with KH.
    run(&mut g, &["card KS", "card AD", "card KH"]);
    run(&mut g, &["card 4D", "card TS", "card KD"]);
    run(&mut g, &["card QD", "card 2D", "card JS"]);
    let ev = run(&mut g, &["card JD", "card 4C", "card QS"]);
    let (king, play, triolet, net) = heaps(&ev);
    assert_eq!(king, Some(Seat(0))); // KH dealt to seat 0
    assert_eq!(play, Some(Seat(2))); // three tricks against 1 + 1
    assert_eq!(triolet, Some(Seat(0))); // three 4s
    assert_eq!(&net[..3], &[6, 0, 3]);
    // All three heaps were won: next deal (awaiting its deck) restocks all three.
    let d2 = deck(
        &Config::defaults(R, 3),
        3,
        1,
        &["2S 3S 5S 6S 7S", "2C 3C 5C 6C 7C", "2D 3D 5D 6D 7D"],
        "8H",
    );
    g.provide_deck(d2).unwrap();
    assert_eq!(g.pools().heaps, [3, 3, 3]);
}

#[test]
fn bs4_deal_pattern_and_no_bidding() {
    let cfg = Config::from_json(R, 3, json!({"deal_pattern": "2+3"}).as_object().unwrap()).unwrap();
    let d = three_seat_deck(&cfg);
    let (g, _) = new_game(3, cfg, vec![d]);
    assert_eq!(
        g.view(Viewer::Seat(Seat(0))).hand.unwrap(),
        cards("KH 4S 4D 4C 2D")
    );
    // The first to act is eldest and must play a card: no bidding.
    assert_eq!(g.to_act(), Some(Seat(1)));
    let mut g2 = g.clone();
    assert!(matches!(
        g2.apply(Seat(1), Action::Pass),
        Err(ActionError::WrongRuleset { .. })
    ));
    assert!(matches!(
        g2.apply(Seat(1), Action::Play),
        Err(ActionError::WrongRuleset { .. })
    ));
    assert_eq!(g.legal_actions(Seat(1)).len(), 5);
    assert_eq!(g.view(Viewer::Seat(Seat(1))).talon_len, 52 - 16);
}

#[test]
fn bs5_follow_trump_overtrump_no_heading() {
    let cfg = Config::defaults(R, 4);
    // Dealer 0; eldest 1. Trumps hearts.
    let d = deck(
        &cfg,
        4,
        0,
        &[
            "9S 2H 3D 4D 5D",
            "TS 3S 6D 7D 8D",
            "KS 2S 6C 7C 8C",
            "5H 9H 2C 3C 4C",
        ],
        "AH",
    );
    let (mut g, _) = new_game(4, cfg, vec![d]);
    run(&mut g, &["card TS"]);
    // Seat 2 holds KS and 2S: no duty to head, either spade is legal.
    let legal = g.legal_actions(Seat(2));
    assert_eq!(legal.len(), 2);
    assert!(legal.contains(&Action::Card(c("2S"))));
    let mut h = g.clone();
    assert!(matches!(
        h.apply(Seat(2), Action::Card(c("6C"))),
        Err(ActionError::MustFollowSuit(_))
    ));
    run(&mut g, &["card 2S"]);
    // Seat 3 is void in spades: must trump (5H or 9H), not discard.
    assert!(matches!(
        g.clone().apply(Seat(3), Action::Card(c("2C"))),
        Err(ActionError::MustTrump(_))
    ));
    run(&mut g, &["card 5H"]);
    // Seat 0 holds 9S: follows suit even though it could overtrump.
    assert_eq!(g.legal_actions(Seat(0)), vec![Action::Card(c("9S"))]);
    run(&mut g, &["card 9S"]);
    // Seat 3 won with the trump and leads.
    assert_eq!(g.to_act(), Some(Seat(3)));
    run(&mut g, &["card 2C"]);
    // Seat 0: void in clubs, holds 2H: must trump.
    assert_eq!(g.legal_actions(Seat(0)), vec![Action::Card(c("2H"))]);
    run(&mut g, &["card 2H", "card 3S"]);
    // Seat 2 holds clubs: any club (no heading).
    assert_eq!(g.legal_actions(Seat(2)).len(), 3);
    run(&mut g, &["card 6C"]);
    assert_eq!(g.to_act(), Some(Seat(0)));
}

#[test]
fn bs5_must_overtrump_or_discard_when_unable() {
    let cfg = Config::defaults(R, 3);
    let d = deck(
        &cfg,
        3,
        0,
        &["3H 2C 3C 4C 5C", "AS KS QS JS TS", "KH 2H 7D 8D 9D"],
        "AH",
    );
    let (mut g, _) = new_game(3, cfg, vec![d]);
    run(&mut g, &["card AS", "card KH"]);
    // Seat 0: void in spades, holds 3H only (lower than KH): may play any card.
    assert_eq!(g.legal_actions(Seat(0)).len(), 5);
    let d = deck(
        &Config::defaults(R, 3),
        3,
        0,
        &["KH 2C 3C 4C 5C", "AS KS QS JS TS", "3H 2H 7D 8D 9D"],
        "AH",
    );
    let (mut g, _) = new_game(3, Config::defaults(R, 3), vec![d]);
    run(&mut g, &["card AS", "card 2H"]);
    // Seat 0 holds KH over 2H: must overtrump.
    assert_eq!(g.legal_actions(Seat(0)), vec![Action::Card(c("KH"))]);
    assert!(matches!(
        g.clone().apply(Seat(0), Action::Card(c("2C"))),
        Err(ActionError::MustOvertrump(_))
    ));
}

#[test]
fn bs5_no_lenient_mode() {
    assert!(
        Config::from_json(
            R,
            3,
            json!({"enforce_legality": "lenient"}).as_object().unwrap()
        )
        .is_err()
    );
}

fn play_out(g: &mut Game) -> Vec<Event> {
    let mut out = Vec::new();
    while let Some(s) = g.to_act() {
        let a = g.legal_actions(s)[0];
        out.extend(g.apply(s, a).unwrap());
        let sum: i64 = g.balances().iter().sum();
        assert_eq!(sum + g.on_table(), 0);
    }
    out
}

#[test]
fn bs6_most_tricks_takes_play_heap() {
    let cfg = Config::defaults(R, 3);
    // Seat 1 takes 2 tricks, seat 2 takes 3.
    let d = deck(
        &cfg,
        3,
        0,
        &["AC 2S 3S 4S 5S", "KH QH 6C 7C 8C", "KC QC 6D 7D 8D"],
        "2H",
    );
    // Trumps hearts. Seat 1 leads KH, QH (2 tricks), then clubs.
    let (mut g, _) = new_game(3, cfg, vec![d]);
    run(&mut g, &["card KH", "card 6D", "card 2S"]);
    run(&mut g, &["card QH", "card 7D", "card 3S"]);
    // Seat 1 leads 6C: seat 2 KC wins; seat 0 follows with AC.
    run(&mut g, &["card 6C", "card KC", "card AC"]);
    // Seat 2 leads QC: seat 0 void in clubs, no trump: any; seat 1 follows 7C.
    run(&mut g, &["card QC", "card 4S", "card 7C"]);
    // Seat 2 leads 8D: seat 0 plays 5S, seat 1 8C: seat 2 wins -> 2-3? no: 2 tricks seat 1, 3 seat 2.
    let ev = run(&mut g, &["card 8D", "card 5S", "card 8C"]);
    let (_, play, _, net) = heaps(&ev);
    assert_eq!(play, Some(Seat(2)));
    assert_eq!(net[2], 3);
}

#[test]
fn bs6_tie_for_most_tricks_carries() {
    let cfg = Config::defaults(R, 3);
    // Trumps clubs (turn-up 2C). Seat 1 leads. A 2-2-1 split.
    let d = deck(
        &cfg,
        3,
        0,
        &["AS 3D 4D 5D TD", "KS QS 7H 8H 9H", "KH QH 7S 8S 9D"],
        "2C",
    );
    let (mut g, _) = new_game(3, cfg, vec![d]);
    run(&mut g, &["card KS", "card 7S", "card AS"]); // seat 1
    run(&mut g, &["card QS", "card 8S", "card 3D"]); // seat 1
    run(&mut g, &["card 7H", "card KH", "card 4D"]); // seat 2
    run(&mut g, &["card QH", "card 5D", "card 8H"]); // seat 2
    let ev = run(&mut g, &["card 9D", "card TD", "card 9H"]); // seat 0
    let (_, play, _, net) = heaps(&ev);
    assert_eq!(play, None);
    assert_eq!(g.pools().heaps[1], 3, "the Play heap carries");
    assert_eq!(net[1], 0);
}

#[test]
fn bs7_king_of_trumps_holder_takes_king_heap_turn_up_king_stays() {
    let cfg = Config::defaults(R, 3);
    let d = deck(
        &cfg,
        3,
        0,
        &["AS 3D 4D 5D 6D", "KS QS 7H 8H 9H", "QH JH TH 7S 8S"],
        "KH",
    );
    let (mut g, _) = new_game(3, cfg, vec![d]);
    let ev = play_out(&mut g);
    let (king, _, _, _) = heaps(&ev);
    assert_eq!(king, None);
    assert_eq!(
        g.pools().heaps[0],
        3,
        "the King heap stays when the King is the turn-up"
    );
}

#[test]
fn bs8_best_triplet_takes_triolet_by_ecarte_rank() {
    let cfg = Config::defaults(R, 4);
    // Seat 1 three Aces, seat 2 three Jacks: J beats A in Écarté order.
    let d = deck(
        &cfg,
        4,
        0,
        &[
            "2S 3S 4S 5S 6S",
            "AS AH AD 2C 3C",
            "JS JH JD 4C 5C",
            "7S 8S 9S TS 6C",
        ],
        "2D",
    );
    let (mut g, _) = new_game(4, cfg.clone(), vec![d]);
    let (_, _, triolet, _) = heaps(&play_out(&mut g));
    assert_eq!(triolet, Some(Seat(2)));
    // Four of a kind counts as its rank; nobody with a triplet: the heap stays.
    let d = deck(
        &cfg,
        4,
        0,
        &[
            "2S 2H 2D 2C 6S",
            "AS AH 3D 4C 3C",
            "JS JH 5D 7C 5C",
            "7S 8S 9S TS 6C",
        ],
        "9D",
    );
    let (mut g, _) = new_game(4, cfg.clone(), vec![d]);
    let (_, _, triolet, _) = heaps(&play_out(&mut g));
    assert_eq!(triolet, Some(Seat(0)));
    let d = deck(
        &cfg,
        4,
        0,
        &[
            "2S 3H 4D 8C 6S",
            "AS AH 3D 4C 3C",
            "JS JH 5D 7C 5C",
            "7S 8S 9S TS 6C",
        ],
        "9D",
    );
    let (mut g, _) = new_game(4, cfg, vec![d]);
    let (_, _, triolet, _) = heaps(&play_out(&mut g));
    assert_eq!(triolet, None);
    assert_eq!(g.pools().heaps[2], 4);
}

#[test]
fn a31_match_ends_at_deal_r_with_equal_shares() {
    let cfg = Config::from_json(R, 3, json!({"rounds": 1}).as_object().unwrap()).unwrap();
    let (mut g, _) = Game::new(Setup {
        ruleset: R,
        config: cfg,
        seats: 3,
        first_dealer: Seat(2),
        decks: Decks::Seed("00".repeat(32).parse().unwrap()),
    })
    .unwrap();
    let ev = play_out(&mut g);
    assert!(g.is_over());
    assert_eq!(g.summaries().len(), 3);
    assert_eq!(g.on_table(), 0);
    assert_eq!(g.balances().iter().sum::<i64>(), 0);
    assert!(
        ev.iter()
            .any(|e| matches!(e.public, PublicEvent::MatchEnded { .. }))
    );
}

#[test]
fn random_beast_matches_conserve() {
    for seats in 3..=5u8 {
        for seed in 0..3u8 {
            let mut s = [0u8; 32];
            s[0] = seed;
            s[1] = seats;
            let (mut g, _) = Game::new(Setup {
                ruleset: R,
                config: Config::defaults(R, seats),
                seats,
                first_dealer: Seat(0),
                decks: Decks::Seed(bete_rules::Seed(s)),
            })
            .unwrap();
            let mut k = 0usize;
            while let Some(st) = g.to_act() {
                let legal = g.legal_actions(st);
                let hand = g.view(Viewer::Seat(st)).hand.unwrap();
                for card in hand {
                    assert_eq!(
                        g.clone().apply(st, Action::Card(card)).is_ok(),
                        legal.contains(&Action::Card(card))
                    );
                }
                k = k.wrapping_mul(31).wrapping_add(7);
                g.apply(st, legal[k % legal.len()]).unwrap();
                assert_eq!(g.balances().iter().sum::<i64>() + g.on_table(), 0);
            }
            assert_eq!(g.summaries().len(), 2 * seats as usize);
            assert_eq!(g.on_table(), 0);
        }
    }
}
