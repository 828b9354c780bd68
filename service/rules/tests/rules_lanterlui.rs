//! Lanterlui (RULES.md section 5) with 0.4 items 6–19: one test per rule LL1–LL9, plus the
//! flush (item 8), the all-drop challenge (item 9) and the end-of-round-1 order (item 11).

mod exchange_support;

use bete_rules::config::{BeteGrowth, Legality};
use bete_rules::event::{DealResult, PublicEvent};
use bete_rules::view::Phase;
use bete_rules::{ActionError, Card, Config, Game, RulesetId, Seat, Viewer, pack};
use exchange_support::*;

const RS: RulesetId = RulesetId::Lanterlui;

/// Deal D: 3 seats, dealer 0, trump spades (turn-up 9S). Seat 0 ends trickless (bête).
const D: [&str; 3] = ["AS KS QH 8H 8D", "JS 7S AH KH 7D", "JC 8S AD KD 7H"];
const D_PLAY: &str = "1 stand, 2 stand, 0 stand, 1 stand, 2 stand, 0 stand, 0 discard 9S, \
    1 card JS, 2 card 8S, 0 card KS, 1 card 7S, 2 card JC, 0 card AS, \
    2 card AD, 0 card 8D, 1 card 7D, 2 card KD, 0 card QH, 1 card AH, 2 card 7H, 0 card 8H, 1 card KH";

fn cfg(f: impl FnOnce(&mut Config)) -> Config {
    config(RS, 3, f)
}

/// Deal 1 (dealer 1, trump hearts): no flush anywhere.
fn plain(c: &Config, dealer: u8) -> Vec<Card> {
    deck(
        RS,
        c,
        3,
        dealer,
        &["7H 8H 9H TH QD", "7D 8D 9D TD KC", "7C 8C 9C TC QS"],
        "AH",
        "KH",
    )
}

/// Deal D played out (pot 10 at deal 1), then `next` dealt by seat 1.
fn after_d(c: Config, next: Vec<Card>) -> Game {
    let mut g = game(
        RS,
        c.clone(),
        3,
        0,
        vec![deck(RS, &c, 3, 0, &D, "9S", ""), next],
    );
    run(&mut g, D_PLAY);
    assert_eq!(g.deal_index(), 1);
    g
}

fn flush_shown(ev: &[bete_rules::Event]) -> Option<Seat> {
    ev.iter().find_map(|e| match e.public {
        PublicEvent::FlushShown { seat, .. } => Some(seat),
        _ => None,
    })
}

#[test]
fn ll1_three_to_seven_players() {
    for n in 3..=7u8 {
        let g = seeded(RS, config(RS, n, |_| {}), n, n);
        assert_eq!(g.seats(), n);
    }
    for n in [2u8, 8] {
        let r = Game::new(bete_rules::Setup {
            ruleset: RS,
            config: config(RS, 3, |_| {}),
            seats: n,
            first_dealer: Seat(0),
            decks: bete_rules::game::Decks::Explicit(vec![]),
        });
        assert!(r.is_err());
    }
}

#[test]
fn ll2_full_pack_or_short_pack_below_six() {
    for n in 3..=7u8 {
        assert_eq!(pack(RS, &config(RS, n, |_| {}), n).len(), 52);
        let short = config(RS, n, |c| c.short_pack = true);
        assert_eq!(pack(RS, &short, n).len(), if n < 6 { 44 } else { 52 });
    }
    let g = seeded(RS, config(RS, 5, |c| c.short_pack = true), 5, 1);
    assert_eq!(g.view(Viewer::Spectator).talon_len, 18);
    let g = seeded(RS, config(RS, 7, |_| {}), 7, 1);
    assert_eq!(g.view(Viewer::Spectator).talon_len, 16);
}

#[test]
fn ll2_ranking_beste_boer_tweede_boer_then_ace_to_two() {
    // trump spades: 2S is still a trump and beats the AH of a plain suit
    let c = cfg(|_| {});
    let d = deck(
        RS,
        &c,
        3,
        0,
        &["AH KH 3D 4D 5C", "2S AD KD QD 6C", "QH JH TH 9H 7C"],
        "9S",
        "",
    );
    let mut g = game(RS, c, 3, 0, vec![d]);
    run(
        &mut g,
        "1 stand, 2 stand, 0 stand, 1 stand, 2 stand, 0 stand, 0 discard 9S",
    );
    // Vorhand leads his only trump
    assert_eq!(legal(&g, 1), "card 2S");
    run(&mut g, "1 card 2S, 2 card 7C, 0 card AH");
    assert_eq!(g.view(Viewer::Spectator).tricks[0].winner, Some(Seat(1)));
}

#[test]
fn ll3_beste_boer_must_be_led() {
    let c = cfg(|_| {});
    let mut g = game(RS, c.clone(), 3, 0, vec![deck(RS, &c, 3, 0, &D, "9S", "")]);
    run(
        &mut g,
        "1 stand, 2 stand, 0 stand, 1 stand, 2 stand, 0 stand, 0 discard 9S",
    );
    assert_eq!(legal(&g, 1), "card JS");
    assert!(matches!(
        refuse(&mut g, 1, "card 7S"),
        ActionError::MustLeadBower(_)
    ));
}

#[test]
fn ll4_muss_when_the_pot_is_at_most_muss_max_pot() {
    let c = cfg(|_| {});
    let mut g = after_d(c.clone(), plain(&c, 1));
    assert_eq!(g.pools().pot, 10);
    assert!(!g.view(Viewer::Spectator).muss);
    assert!(legal(&g, 2).contains("drop"));
    let c = cfg(|c| c.muss_max_pot = 10);
    let mut g10 = after_d(c.clone(), plain(&c, 1));
    assert!(
        g10.view(Viewer::Spectator).muss,
        "a double pot (10) is a Muss with muss_max_pot = 10"
    );
    assert_eq!(
        refuse(&mut g10, 2, "drop"),
        ActionError::CannotDrop("this deal is a Muss".into())
    );
    run(&mut g, "2 stand");
}

#[test]
fn ll5_dealer_takes_the_pot_when_all_others_drop_and_decline() {
    let c = cfg(|_| {});
    let mut g = after_d(c.clone(), plain(&c, 1));
    run(&mut g, "2 drop, 0 drop");
    // 0.4 item 9: round 1 ends at once, the dealer never speaks
    assert_eq!(g.phase(), Phase::Challenge);
    assert_eq!(g.to_act(), Some(Seat(2)));
    assert_eq!(legal(&g, 2), "challenge, decline");
    let before = g.balances().to_vec();
    let ev = run(&mut g, "2 decline, 0 decline");
    assert!(matches!(
        settled(&ev).result,
        DealResult::DealerTakesPot(Seat(1))
    ));
    assert_eq!(g.summaries()[1].outcome, "dealer_takes_pot");
    assert_eq!(&net_of(&ev)[..3], &[0, 10, 0]);
    assert_eq!(&betes_of(&ev)[..3], &[0, 0, 0]);
    assert_eq!(g.balances()[1] - before[1], 10);
    assert_eq!(g.pools().bete_streak, 0);
}

#[test]
fn item9_challenger_plays_against_the_dealer() {
    let c = cfg(|_| {});
    let mut g = after_d(c.clone(), plain(&c, 1));
    run(&mut g, "2 drop, 0 drop, 2 decline, 0 challenge");
    // the challenger and then the dealer take one round-2 turn, then the discard
    assert_eq!(g.phase(), Phase::Exchange { round: 2 });
    assert_eq!(legal(&g, 0).split(", ").filter(|a| *a == "drop").count(), 0);
    run(&mut g, "0 stand, 1 exchange KC");
    assert_eq!(g.phase(), Phase::DealerDiscard);
    assert_eq!(
        g.view(Viewer::Seat(Seat(1))).hand,
        Some(bete_rules::deal::cards("7D 8D 9D TD KH"))
    );
    run(&mut g, "1 discard KH");
    // the challenger leads trick 1
    assert_eq!(g.phase(), Phase::Trick { trick: 0 });
    assert_eq!(g.to_act(), Some(Seat(0)));
    play_until_deal(&mut g, 2);
    assert_eq!(g.summaries()[1].stayers, vec![0, 1]);
}

#[test]
fn ll7_two_active_seats_have_no_trick_duties_and_no_hidden() {
    let c = cfg(|_| {});
    let mut g = after_d(c.clone(), plain(&c, 1));
    run(
        &mut g,
        "2 drop, 0 drop, 2 decline, 0 challenge, 0 stand, 1 stand, 1 discard AH",
    );
    // the challenger leads trick 1: any card face up, no bower or trump duty, no hidden
    assert_eq!(g.to_act(), Some(Seat(0)));
    assert_eq!(legal(&g, 0), "card 7H, card 8H, card 9H, card QD, card TH");
    assert!(matches!(
        refuse(&mut g, 0, "hidden QD"),
        ActionError::HiddenNotAllowed(_)
    ));
    run(&mut g, "0 card QD");
    // LL8: the dealer follows suit (diamonds), no trump duty
    assert_eq!(legal(&g, 1), "card 7D, card 8D, card 9D, card TD");
    assert!(matches!(
        refuse(&mut g, 1, "card KC"),
        ActionError::MustFollowSuit(_)
    ));
}

#[test]
fn ll7_two_stayers_after_the_dealer_drops() {
    let c = cfg(|_| {});
    let mut g = after_d(c.clone(), plain(&c, 1));
    run(&mut g, "2 stand, 0 stand, 1 drop, 2 stand, 0 stand");
    // the dealer dropped: no discard; Vorhand (seat 2) leads freely
    assert_eq!(g.phase(), Phase::Trick { trick: 0 });
    assert!(!g.view(Viewer::Spectator).turn_up_taken);
    assert_eq!(legal(&g, 2), "card 7C, card 8C, card 9C, card QS, card TC");
}

#[test]
fn ll6_forced_after_muss() {
    let c = cfg(|c| c.forced_after_muss = true);
    let mut g = after_d(c.clone(), plain(&c, 1));
    run(&mut g, "2 drop");
    // seat 0 is the seat before the dealer (1): every earlier seat dropped, he must play
    assert!(!legal(&g, 0).contains("drop"));
    assert!(matches!(
        refuse(&mut g, 0, "drop"),
        ActionError::CannotDrop(_)
    ));
    run(&mut g, "0 stand");
    // and the dealer then may not drop either
    assert!(!legal(&g, 1).contains("drop"));
    run(&mut g, "1 stand");
    // without the key, or when an earlier seat stayed, dropping is free
    let mut g = after_d(c.clone(), plain(&c, 1));
    run(&mut g, "2 stand");
    assert!(legal(&g, 0).contains("drop"));
    let c = cfg(|_| {});
    let mut g = after_d(c.clone(), plain(&c, 1));
    run(&mut g, "2 drop");
    assert!(legal(&g, 0).contains("drop"));
}

#[test]
fn ll8_follow_suit_in_every_trick() {
    let c = cfg(|_| {});
    let mut g = game(RS, c.clone(), 3, 0, vec![deck(RS, &c, 3, 0, &D, "9S", "")]);
    let (head, _) = D_PLAY.split_once(", 2 card AD").expect("split");
    run(&mut g, head);
    run(&mut g, "2 card AD");
    assert_eq!(legal(&g, 0), "card 8D");
    assert!(matches!(
        refuse(&mut g, 0, "card QH"),
        ActionError::MustFollowSuit(_)
    ));
    // follow_suit = false frees tricks 3-5 only
    let c = cfg(|c| c.follow_suit = false);
    let mut g = game(RS, c.clone(), 3, 0, vec![deck(RS, &c, 3, 0, &D, "9S", "")]);
    run(
        &mut g,
        "1 stand, 2 stand, 0 stand, 1 stand, 2 stand, 0 stand, 0 discard 9S",
    );
    assert_eq!(legal(&g, 1), "card JS");
    run(&mut g, head.split_once("0 discard 9S, ").expect("split").1);
    run(&mut g, "2 card AD");
    assert_eq!(legal(&g, 0), "card 8D, card 8H, card QH");
}

#[test]
fn ll8_lenient_revoke_costs_a_bete_of_the_pot() {
    let c = cfg(|c| c.enforce_legality = Legality::Lenient);
    let mut g = game(RS, c.clone(), 3, 0, vec![deck(RS, &c, 3, 0, &D, "9S", "")]);
    let (head, _) = D_PLAY.split_once(", 2 card AD").expect("split");
    run(&mut g, head);
    // seat 0 does not follow diamonds: a revoke
    let ev = run(
        &mut g,
        "2 card AD, 0 card QH, 1 card 7D, 2 card KD, 0 card 8D, 1 card AH, 2 card 7H, 0 card 8H, 1 card KH",
    );
    let s = &g.summaries()[0];
    let betes: Vec<(u8, i64)> = s.betes.iter().map(|b| (b.seat, b.amount)).collect();
    // seat 0 is trickless (bête 5) and revoked once (another bête of 5), in that order
    assert_eq!(betes, vec![(0, 5), (0, 5)]);
    assert_eq!(betes_of(&ev)[0], 10);
}

#[test]
fn ll9_dealt_flush_in_muss_settles_at_once() {
    let c = cfg(|_| {});
    // seat 1: plain flush in hearts; seat 2: a higher plain flush in clubs
    let d = deck(
        RS,
        &c,
        3,
        0,
        &["2S 3S 4S 5S 7D", "2H 3H 4H 5H 6H", "AC KC QC TC 9C"],
        "9S",
        "",
    );
    let (g, ev) = Game::new(bete_rules::Setup {
        ruleset: RS,
        config: c,
        seats: 3,
        first_dealer: Seat(0),
        decks: bete_rules::game::Decks::Explicit(vec![d]),
    })
    .expect("setup");
    assert_eq!(flush_shown(&ev), Some(Seat(2)));
    assert!(matches!(
        settled(&ev).result,
        DealResult::Flush {
            seat: Seat(2),
            dealt: true
        }
    ));
    // the holder takes the pot (5); every other seat, the losing flush included, pays 5
    assert_eq!(&net_of(&ev)[..3], &[-5, -5, 5]);
    // the payments (10) plus the next dealer's 5 (deal 1 awaits its deck)
    assert_eq!(g.pools().pot, 15);
    assert_eq!(g.summaries()[0].outcome, "flush");
    assert_conserved(&g);
}

#[test]
fn item8_trump_flush_with_the_tweede_boer_beats_a_plain_flush() {
    let c = cfg(|_| {});
    let d = deck(
        RS,
        &c,
        3,
        0,
        &["2S 3S 4S 5S JC", "2H 3H 4H 5H 6H", "AC KC QC TC 9C"],
        "9S",
        "",
    );
    let (_, ev) = Game::new(bete_rules::Setup {
        ruleset: RS,
        config: c,
        seats: 3,
        first_dealer: Seat(0),
        decks: bete_rules::game::Decks::Explicit(vec![d]),
    })
    .expect("setup");
    assert_eq!(flush_shown(&ev), Some(Seat(0)));
}

#[test]
fn item8_flush_tie_goes_to_the_seat_nearer_vorhand() {
    let c = cfg(|_| {});
    let hands = ["AS KS QS 8C 8D", "2H 3H 4H 5H 7H", "2D 3D 4D 5D 7D"];
    for (dealer, winner) in [(0u8, 1u8), (1, 2)] {
        let d = deck(RS, &c, 3, dealer, &hands, "9S", "");
        let (_, ev) = Game::new(bete_rules::Setup {
            ruleset: RS,
            config: c.clone(),
            seats: 3,
            first_dealer: Seat(dealer),
            decks: bete_rules::game::Decks::Explicit(vec![d]),
        })
        .expect("setup");
        assert_eq!(flush_shown(&ev), Some(Seat(winner)), "dealer {dealer}");
    }
}

#[test]
fn item8_four_card_flush_ranks_below_five_cards() {
    let c = cfg(|c| c.four_card_flush = true);
    let d = deck(
        RS,
        &c,
        3,
        0,
        &["2S 3S 8C 7D 6D", "AC KC QC TC 7H", "2H 3H 4H 5H 6H"],
        "9S",
        "",
    );
    let (_, ev) = Game::new(bete_rules::Setup {
        ruleset: RS,
        config: c.clone(),
        seats: 3,
        first_dealer: Seat(0),
        decks: bete_rules::game::Decks::Explicit(vec![d]),
    })
    .expect("setup");
    assert_eq!(flush_shown(&ev), Some(Seat(2)));
    // alone, a four-card flush is a Lanterlui under the key, and nothing without it
    let d = deck(
        RS,
        &c,
        3,
        0,
        &["2S 3S 8C 7D 6D", "AC KC QC TC 7H", "2H 3H 4H 5H 5D"],
        "9S",
        "",
    );
    let (_, ev) = Game::new(bete_rules::Setup {
        ruleset: RS,
        config: c,
        seats: 3,
        first_dealer: Seat(0),
        decks: bete_rules::game::Decks::Explicit(vec![d.clone()]),
    })
    .expect("setup");
    assert_eq!(flush_shown(&ev), Some(Seat(1)));
    let (_, ev) = Game::new(bete_rules::Setup {
        ruleset: RS,
        config: cfg(|_| {}),
        seats: 3,
        first_dealer: Seat(0),
        decks: bete_rules::game::Decks::Explicit(vec![d]),
    })
    .expect("setup");
    assert_eq!(flush_shown(&ev), None);
}

/// Deal 1 (dealer 1, trump hearts) where seat 0 holds a dealt club flush.
fn flush_deal(c: &Config) -> Vec<Card> {
    deck(
        RS,
        c,
        3,
        1,
        &["AC KC QC TC 9C", "7D 8D 9D TD KS", "7H 8S 9S TS QS"],
        "AH",
        "KH",
    )
}

#[test]
fn ll9_dealt_flush_outside_muss_shown_at_end_of_round_1() {
    let c = cfg(|_| {});
    let mut g = after_d(c.clone(), flush_deal(&c));
    // the holder may only stand or drop in round 1
    assert!(legal(&g, 2).contains("exchange"));
    run(&mut g, "2 stand");
    assert_eq!(legal(&g, 0), "drop, stand");
    assert!(matches!(
        refuse(&mut g, 0, "exchange AC"),
        ActionError::Other(_)
    ));
    let ev = run(&mut g, "0 stand, 1 drop");
    assert_eq!(flush_shown(&ev), Some(Seat(0)));
    // the holder takes the pot (10); seat 2 stayed: pays the start pot (10); the dealer
    // dropped: pays 5
    assert_eq!(&net_of(&ev)[..3], &[10, -5, -10]);
    assert_eq!(
        g.pools().pot,
        15 + 5,
        "the payments plus the next dealer's 5"
    );
}

#[test]
fn ll9_dealt_flush_holder_who_dropped_still_wins() {
    let c = cfg(|c| c.bete_growth = BeteGrowth::Plus5);
    let mut g = after_d(c.clone(), flush_deal(&c));
    let ev = run(&mut g, "2 exchange 7H, 0 drop, 1 stand");
    assert_eq!(flush_shown(&ev), Some(Seat(0)));
    // plus5 with a streak of 1: a stayer pays 10
    assert_eq!(&net_of(&ev)[..3], &[10, -10, -10]);
}

#[test]
fn item11_dealt_flush_is_settled_before_the_challenge() {
    let c = cfg(|_| {});
    let mut g = after_d(c.clone(), flush_deal(&c));
    let ev = run(&mut g, "2 drop, 0 drop");
    assert_eq!(flush_shown(&ev), Some(Seat(0)));
    // the dealer never spoke: he counts as having dropped and pays 5
    assert_eq!(&net_of(&ev)[..3], &[10, -5, -5]);
}

#[test]
fn ll9_flush_made_by_exchanging_wins_only_the_pot() {
    let c = cfg(|_| {});
    let d = deck(
        RS,
        &c,
        3,
        0,
        &["AS KS QH 8H 8D", "AC KC QC TC 7D", "JC 8S AD KD 7H"],
        "9S",
        "9C",
    );
    let mut g = game(RS, c, 3, 0, vec![d]);
    let ev = run(
        &mut g,
        "1 exchange 7D, 2 stand, 0 stand, 1 stand, 2 stand, 0 stand",
    );
    assert_eq!(flush_shown(&ev), None, "checked only after the discard");
    assert_eq!(g.phase(), Phase::DealerDiscard);
    let ev = run(&mut g, "0 discard 9S");
    assert_eq!(flush_shown(&ev), Some(Seat(1)));
    assert!(matches!(
        settled(&ev).result,
        DealResult::Flush {
            seat: Seat(1),
            dealt: false
        }
    ));
    assert_eq!(&net_of(&ev)[..3], &[0, 5, 0]);
    assert_eq!(&betes_of(&ev)[..3], &[0, 0, 0]);
}

#[test]
fn ll9_bete_is_the_start_pot_by_default() {
    let c = cfg(|_| {});
    // deal 1: seat 2 (Vorhand) takes every trick with the five top trumps... which would be a
    // flush; use four top trumps and the ace of a suit nobody else holds
    let d1 = deck(
        RS,
        &c,
        3,
        1,
        &["2C 3C 4C 2D 3D", "5C 6C 7C 4D 5D", "JH JD AH KH AS"],
        "QH",
        "",
    );
    let mut g = after_d(c, d1);
    play_until_deal(&mut g, 2);
    let betes: Vec<(u8, i64)> = g.summaries()[1]
        .betes
        .iter()
        .map(|b| (b.seat, b.amount))
        .collect();
    assert_eq!(g.summaries()[1].tricks, vec![0, 0, 5]);
    assert_eq!(betes, vec![(0, 10), (1, 10)]);
}

#[test]
fn legal_actions_agree_with_apply_in_random_matches() {
    for n in 3..=7u8 {
        for (i, f) in [
            (|_: &mut Config| {}) as fn(&mut Config),
            |c| c.enforce_legality = Legality::Lenient,
            |c| {
                c.four_card_flush = true;
                c.forced_after_muss = true;
                c.short_pack = true;
            },
            |c| {
                c.follow_suit = false;
                c.muss_max_pot = 10;
                c.bete_growth = BeteGrowth::Plus5;
            },
        ]
        .iter()
        .enumerate()
        {
            let g = seeded(RS, config(RS, n, *f), n, n * 10 + i as u8);
            check_legal_agrees(g, 150, 0x5bd1_e995 + n as u64 * 7 + i as u64);
        }
    }
}
