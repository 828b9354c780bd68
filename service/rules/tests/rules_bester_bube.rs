//! Bester Bube (RULES.md section 6) with 0.4 items 6–19: one test per rule BB1–BB17.

mod exchange_support;

use bete_rules::config::{BetePayoff, Legality, PerTrick};
use bete_rules::event::{DealResult, PublicEvent};
use bete_rules::view::Phase;
use bete_rules::{ActionError, Card, Config, Game, RulesetId, Seat, Viewer, pack};
use exchange_support::*;

const RS: RulesetId = RulesetId::BesterBube;

/// Deal D: 3 seats, dealer 0, trump spades (turn-up 9S). Seat 0 ends trickless (bête).
const D: [&str; 3] = ["AS KS QH 8H 8D", "JS 7S AH KH 7D", "JC 8S AD KD 7H"];
const D_ROUNDS: &str = "1 stand, 2 stand, 0 stand, 1 stand, 2 stand, 0 stand, 0 discard 9S";
const D_TRICKS: &str = "1 card JS, 2 card 8S, 0 card KS, 1 card 7S, 2 card JC, 0 card AS, \
    2 card AD, 0 card 8D, 1 card 7D, 2 card KD, 0 card QH, 1 card AH, 2 card 7H, 0 card 8H, 1 card KH";

fn cfg(f: impl FnOnce(&mut Config)) -> Config {
    config(RS, 3, f)
}

fn plain(c: &Config, dealer: u8) -> Vec<Card> {
    deck(
        RS,
        c,
        3,
        dealer,
        &["7H 8H 9H TH QD", "7D 8D 9D TD KD", "7C 8C 9C TC QC"],
        "AH",
        "KH JH",
    )
}

fn after_d(c: Config, next: Vec<Vec<Card>>) -> Game {
    let mut decks = vec![deck(RS, &c, 3, 0, &D, "9S", "")];
    decks.extend(next);
    let mut g = game(RS, c, 3, 0, decks);
    run(&mut g, D_ROUNDS);
    run(&mut g, D_TRICKS);
    assert_eq!(g.deal_index(), 1);
    g
}

#[test]
fn bb1_three_to_six_players_32_cards() {
    for n in 3..=6u8 {
        assert_eq!(pack(RS, &config(RS, n, |_| {}), n).len(), 32);
    }
    let g = seeded(RS, config(RS, 6, |_| {}), 6, 2);
    assert_eq!(
        g.view(Viewer::Spectator).talon_len,
        1,
        "A26: six seats leave one card to buy"
    );
}

#[test]
fn bb2_unterbube_is_the_same_colour_jack_and_a_trump() {
    // trump diamonds: JD > JH (Unterbube) > AD; JH is not a heart for following
    let c = cfg(|_| {});
    let d = deck(
        RS,
        &c,
        3,
        0,
        &["AD 7C 8C 9C TC", "JD KH 7S 8S 9S", "JH AH QC KC AC"],
        "7D",
        "",
    );
    let mut g = game(RS, c, 3, 0, vec![d]);
    run(
        &mut g,
        "1 stand, 2 stand, 0 stand, 1 stand, 2 stand, 0 stand, 0 discard 7D",
    );
    run(&mut g, "1 card JD");
    // seat 2's only trump is the Unterbube (BB9: he has to play it); AH is no trump
    assert_eq!(legal(&g, 2), "card JH");
    run(&mut g, "2 card JH, 0 card AD");
    assert_eq!(g.view(Viewer::Spectator).tricks[0].winner, Some(Seat(1)));
}

/// BB3 is informative (the lowest card drawn deals first): the engine never draws, it takes
/// `first_dealer` as an input and deal k is dealt by (first_dealer + k) mod n (0.4 item 1).
#[test]
fn bb3_first_dealer_is_an_input() {
    let c = cfg(|_| {});
    for first in 0..3u8 {
        let g = game(
            RS,
            c.clone(),
            3,
            first,
            vec![deck(RS, &c, 3, first, &D, "9S", "")],
        );
        assert_eq!(g.dealer(), Seat(first));
        assert_eq!(
            g.to_act(),
            Some(Seat((first + 1) % 3)),
            "Vorhand follows the given dealer"
        );
    }
    let g = after_d(c.clone(), vec![plain(&c, 1)]);
    assert_eq!(
        g.dealer(),
        Seat(1),
        "the deal passes to the next seat in play order"
    );
}

#[test]
fn bb4_dealer_stakes_five_and_vorhand_is_next() {
    let c = cfg(|_| {});
    let g = game(RS, c.clone(), 3, 2, vec![deck(RS, &c, 3, 2, &D, "9S", "")]);
    assert_eq!(g.balances(), &[0, 0, -5]);
    assert_eq!(g.to_act(), Some(Seat(0)));
    assert_eq!(
        g.view(Viewer::Seat(Seat(0))).hand,
        Some(bete_rules::deal::cards(D[0]))
    );
}

#[test]
fn bb5_muss_spiel_on_a_bare_pot() {
    let c = cfg(|_| {});
    let mut g = game(RS, c.clone(), 3, 0, vec![deck(RS, &c, 3, 0, &D, "9S", "")]);
    assert_eq!(
        refuse(&mut g, 1, "drop"),
        ActionError::CannotDrop("this deal is a Muss".into())
    );
    let g = after_d(c.clone(), vec![plain(&c, 1)]);
    assert!(!g.view(Viewer::Spectator).muss, "a bête stands in the pot");
    assert!(legal(&g, 2).contains("drop"));
}

#[test]
fn bb6_two_buying_rounds_then_the_talon_is_set_aside() {
    let c = cfg(|_| {});
    let d = deck(RS, &c, 3, 0, &D, "9S", "TH 9H 9D TD");
    let mut g = game(RS, c, 3, 0, vec![d]);
    run(&mut g, "1 exchange 7D, 2 exchange 7H, 0 stand");
    assert_eq!(g.phase(), Phase::Exchange { round: 2 });
    run(&mut g, "1 exchange TH, 2 stand, 0 exchange 8D");
    assert_eq!(
        g.view(Viewer::Seat(Seat(1))).hand,
        Some(bete_rules::deal::cards("JS 7S AH KH 9D"))
    );
    assert_eq!(
        g.view(Viewer::Seat(Seat(1))).seat_states[1].exchanged,
        [1, 1]
    );
    assert_eq!(g.phase(), Phase::DealerDiscard);
    run(&mut g, "0 discard 9S");
    assert_eq!(g.phase(), Phase::Trick { trick: 0 });
    assert_eq!(g.view(Viewer::Spectator).talon_len, 12);
}

#[test]
fn bb7_dealer_buys_before_taking_up_the_turn_up() {
    let c = cfg(|_| {});
    let d = deck(RS, &c, 3, 0, &D, "9S", "TH");
    let mut g = game(RS, c, 3, 0, vec![d]);
    run(
        &mut g,
        "1 stand, 2 stand, 0 exchange 8D, 1 stand, 2 stand, 0 stand",
    );
    assert_eq!(
        legal(&g, 0),
        "discard 8H, discard 9S, discard AS, discard KS, discard QH, discard TH"
    );
    run(&mut g, "0 discard 9S");
    // the turn-up's suit stays trumps although the dealer discarded it
    assert_eq!(
        g.view(Viewer::Spectator).trump,
        Some(bete_rules::Suit::Spades)
    );
    assert_eq!(legal(&g, 1), "card JS");
}

#[test]
fn bb7_nobody_takes_the_turn_up_when_the_dealer_dropped() {
    let c = cfg(|_| {});
    let mut g = after_d(c.clone(), vec![plain(&c, 1)]);
    run(&mut g, "2 stand, 0 stand, 1 drop, 2 stand, 0 stand");
    assert_eq!(g.phase(), Phase::Trick { trick: 0 });
    assert!(!g.view(Viewer::Spectator).turn_up_taken);
}

#[test]
fn bb8_drop_only_in_round_1() {
    let c = cfg(|_| {});
    let mut g = after_d(c.clone(), vec![plain(&c, 1)]);
    run(&mut g, "2 stand, 0 exchange QD, 1 stand");
    assert_eq!(g.phase(), Phase::Exchange { round: 2 });
    assert!(!legal(&g, 2).contains("drop"));
    assert_eq!(
        refuse(&mut g, 2, "drop"),
        ActionError::CannotDrop("only in round 1".into())
    );
}

#[test]
fn bb8_empty_talon_leaves_only_stand() {
    let c = config(RS, 6, |_| {});
    let mut g = seeded(RS, c, 6, 9);
    let s = g.to_act().expect("to act");
    let first = g
        .view(Viewer::Seat(s))
        .hand
        .expect("hand")
        .first()
        .expect("card");
    run(&mut g, &format!("{} exchange {first}", s.0));
    for _ in 0..5 {
        let s = g.to_act().expect("to act");
        assert_eq!(legal(&g, s.0), "stand");
        run(&mut g, &format!("{} stand", s.0));
    }
    assert_eq!(g.phase(), Phase::Exchange { round: 2 });
}

#[test]
fn bb9_vorhand_must_lead_the_bester_bube() {
    let c = cfg(|_| {});
    let mut g = game(RS, c.clone(), 3, 0, vec![deck(RS, &c, 3, 0, &D, "9S", "")]);
    run(&mut g, D_ROUNDS);
    assert_eq!(legal(&g, 1), "card JS");
    assert!(matches!(
        refuse(&mut g, 1, "card 7S"),
        ActionError::MustLeadBower(_)
    ));
}

#[test]
fn bb9_hinterhand_may_keep_bester_bube() {
    let c = cfg(|_| {});
    let d = deck(
        RS,
        &c,
        3,
        0,
        &["JS AS KS TH 9H", "AH KH QH 7D 8D", "JC 8S AD KD QD"],
        "9S",
        "",
    );
    let mut g = game(RS, c, 3, 0, vec![d]);
    run(&mut g, D_ROUNDS);
    // Vorhand holds no trump: face down, "Trumpf!"
    assert_eq!(refuse(&mut g, 1, "card AH"), ActionError::MustLeadHidden);
    run(&mut g, "1 hidden 7D");
    // seat 2 must answer with a trump; he holds no Bester Bube
    assert_eq!(legal(&g, 2), "card 8S, card JC");
    run(&mut g, "2 card JC");
    // the dealer (Hinterhand) keeps the Bester Bube only for a card that wins: none beats JC
    assert_eq!(legal(&g, 0), "card JS");
    run(&mut g, "0 card JS");
    assert_eq!(g.view(Viewer::Spectator).tricks[0].winner, Some(Seat(0)));
}

#[test]
fn bb9_first_active_seat_leads_and_last_active_seat_has_the_privilege() {
    let c = cfg(|_| {});
    // deal 1, dealer 1, trump hearts; seat 2 (Vorhand) drops: seat 0 leads trick 1
    let d1 = deck(
        RS,
        &c,
        3,
        1,
        &["9H 8H 7C 8C 9C", "JH AH QD KD AD", "7D 8D 9D TD QC"],
        "7H",
        "",
    );
    let mut g = after_d(c, vec![d1]);
    run(
        &mut g,
        "2 drop, 0 stand, 1 stand, 0 stand, 1 stand, 1 discard 7H",
    );
    assert_eq!(g.to_act(), Some(Seat(0)));
    assert_eq!(legal(&g, 0), "card 8H, card 9H");
    run(&mut g, "0 card 8H");
    // the dealer is the last active player: JH or the winning AH
    assert_eq!(legal(&g, 1), "card AH, card JH");
}

#[test]
fn bb9_two_active_seats_keep_the_duties() {
    let c = cfg(|_| {});
    let mut g = after_d(c.clone(), vec![plain(&c, 1)]);
    run(&mut g, "2 stand, 0 stand, 1 drop, 2 stand, 0 stand");
    // trump hearts; seat 2 holds no heart: face down (unlike Lanterlui's LL7)
    assert_eq!(
        legal(&g, 2),
        "hidden 7C, hidden 8C, hidden 9C, hidden QC, hidden TC"
    );
}

#[test]
fn bb10_trick_2_leader_leads_the_unterbube_and_it_must_be_played() {
    let c = cfg(|_| {});
    let mut g = game(RS, c.clone(), 3, 0, vec![deck(RS, &c, 3, 0, &D, "9S", "")]);
    run(&mut g, D_ROUNDS);
    run(&mut g, "1 card JS, 2 card 8S, 0 card KS");
    assert_eq!(legal(&g, 1), "card 7S");
    run(&mut g, "1 card 7S");
    assert!(matches!(
        refuse(&mut g, 2, "card AD"),
        ActionError::MustPlayBower(_)
    ));
    assert_eq!(legal(&g, 2), "card JC");
    // a leader holding the Unterbube leads it
    let d = deck(
        RS,
        &c,
        3,
        0,
        &["AS KS QH 8H 8D", "JS JC AH KH 7D", "TS 8S AD KD 7H"],
        "9S",
        "",
    );
    let mut g = game(RS, c, 3, 0, vec![d]);
    run(&mut g, D_ROUNDS);
    run(&mut g, "1 card JS, 2 card 8S, 0 card KS");
    assert_eq!(legal(&g, 1), "card JC");
    assert!(matches!(
        refuse(&mut g, 1, "card AH"),
        ActionError::MustLeadBower(_)
    ));
}

#[test]
fn bb11_any_lead_in_tricks_3_to_5() {
    let c = cfg(|_| {});
    let mut g = game(RS, c.clone(), 3, 0, vec![deck(RS, &c, 3, 0, &D, "9S", "")]);
    run(&mut g, D_ROUNDS);
    run(
        &mut g,
        "1 card JS, 2 card 8S, 0 card KS, 1 card 7S, 2 card JC, 0 card AS",
    );
    assert_eq!(legal(&g, 2), "card 7H, card AD, card KD");
    assert!(matches!(
        refuse(&mut g, 2, "hidden AD"),
        ActionError::HiddenNotAllowed(_)
    ));
}

#[test]
fn bb12_follow_suit_no_duty_to_trump() {
    let c = cfg(|_| {});
    let mut g = game(RS, c.clone(), 3, 0, vec![deck(RS, &c, 3, 0, &D, "9S", "")]);
    run(&mut g, D_ROUNDS);
    run(
        &mut g,
        "1 card JS, 2 card 8S, 0 card KS, 1 card 7S, 2 card JC, 0 card AS, 2 card AD",
    );
    assert_eq!(legal(&g, 0), "card 8D");
    run(&mut g, "0 card 8D, 1 card 7D, 2 card KD");
    // void in diamonds with no trump left: any card (no duty to trump anyway)
    assert_eq!(legal(&g, 0), "card 8H, card QH");
    let c = cfg(|c| c.follow_suit = false);
    let mut g = game(RS, c.clone(), 3, 0, vec![deck(RS, &c, 3, 0, &D, "9S", "")]);
    run(&mut g, D_ROUNDS);
    assert_eq!(legal(&g, 1), "card JS", "tricks 1-2 keep their duties");
    run(
        &mut g,
        "1 card JS, 2 card 8S, 0 card KS, 1 card 7S, 2 card JC, 0 card AS, 2 card AD",
    );
    assert_eq!(legal(&g, 0), "card 8D, card 8H, card QH");
}

#[test]
fn bb13_a_fifth_of_the_pot_per_trick() {
    let c = cfg(|_| {});
    let d1 = deck_with(RS, &c, 3, 1, 2, "JS JC AS KS QS", "9S");
    let mut g = after_d(c, vec![d1]);
    assert_eq!(g.pools().pot, 10);
    play_until_deal(&mut g, 2);
    assert_eq!(g.summaries()[1].net[2], 10, "five tricks of 10 / 5");
}

#[test]
fn bb13_per_trick_one_pays_one_and_keeps_the_rest() {
    let c = cfg(|c| c.per_trick = PerTrick::One);
    let d1 = deck_with(RS, &c, 3, 1, 2, "JS JC AS KS QS", "9S");
    let mut g = after_d(c.clone(), vec![d1, plain(&c, 2)]);
    // deal 0: tricks 1 each (5 paid), bête 5: pot 5 + dealer 5
    assert_eq!(g.pools().pot, 10);
    play_until_deal(&mut g, 2);
    assert_eq!(g.summaries()[1].net[2], 5);
    // deal 1: 10 - 5 + two bêtes of 10; + dealer 5
    assert_eq!(g.pools().pot, 30);
    assert!(!g.view(Viewer::Spectator).muss);
}

#[test]
fn item13_per_trick_one_muss_when_nobody_paid_a_bete() {
    let c = cfg(|c| c.per_trick = PerTrick::One);
    let mut g = after_d(c.clone(), vec![plain(&c, 1), plain(&c, 2)]);
    run(&mut g, "2 drop, 0 drop, 1 drop"); // carried: no bête
    assert_eq!(g.pools().pot, 15);
    assert!(
        g.view(Viewer::Spectator).muss,
        "the pot test is replaced by the bête test"
    );
    // with a fifth per trick the same pot is no Muss
    let c = cfg(|_| {});
    let mut g = after_d(c.clone(), vec![plain(&c, 1), plain(&c, 2)]);
    run(&mut g, "2 drop, 0 drop, 1 drop");
    assert!(!g.view(Viewer::Spectator).muss);
}

#[test]
fn bb14_bete_equals_the_start_pot() {
    let c = cfg(|_| {});
    let d1 = deck_with(RS, &c, 3, 1, 2, "JS JC AS KS QS", "9S");
    let mut g = after_d(c, vec![d1]);
    play_until_deal(&mut g, 2);
    let betes: Vec<(u8, i64)> = g.summaries()[1]
        .betes
        .iter()
        .map(|b| (b.seat, b.amount))
        .collect();
    assert_eq!(betes, vec![(0, 10), (1, 10)]);
    // BB15: all at once into the next pot, with the next dealer's 5
    assert_eq!(g.pools().pot, 25);
}

#[test]
fn bb15_successive_fifo_queues_betes() {
    let c = cfg(|c| c.bete_payoff = BetePayoff::SuccessiveFifo);
    let mut g = game(RS, c.clone(), 3, 0, vec![deck(RS, &c, 3, 0, &D, "9S", "")]);
    run(&mut g, D_ROUNDS);
    let ev = run(&mut g, D_TRICKS);
    {
        let pools = &settled(&ev).pools;
        {
            assert_eq!(pools.pot, 0);
            assert_eq!(pools.bete_queue, vec![5]);
        }
    }
    // the next deal's pot was empty: it draws the queue head with the dealer's 5
    assert_eq!(g.pools().pot, 10);
    assert!(g.pools().bete_queue.is_empty());
    assert_conserved(&g);
}

#[test]
fn bb15_queue_blocks_the_muss_and_returns_to_payers_at_the_end() {
    let c = cfg(|c| {
        c.bete_payoff = BetePayoff::SuccessiveFifo;
        c.rounds = 1;
        c.max_extra_deals = 0;
    });
    let d1 = deck_with(RS, &c, 3, 1, 2, "JS JC AS KS QS", "9S");
    let mut g = after_d(c.clone(), vec![d1, plain(&c, 2)]);
    play_until_deal(&mut g, 2);
    // deal 1: bêtes of 10 by seats 0 and 1 queued; deal 2 draws seat 0's
    assert_eq!(g.pools().bete_queue, vec![10]);
    assert_eq!(g.pools().pot, 15);
    assert!(!g.view(Viewer::Spectator).muss);
    let before = g.balances().to_vec();
    let ev = run(&mut g, "0 drop, 1 drop, 2 drop"); // carried; the match's last deal
    assert!(g.is_over());
    let returned = ev
        .iter()
        .find_map(|e| match &e.public {
            PublicEvent::MatchEnded { returned, .. } => Some(**returned),
            _ => None,
        })
        .expect("MatchEnded");
    // the pot (15) in equal shares; seat 1's queued bête (10) back to him
    assert_eq!(&returned[..3], &[5, 15, 5]);
    assert_eq!(g.balances()[1] - before[1], 15);
    assert_eq!(g.on_table(), 0);
}

#[test]
fn bb16_lone_stayer_takes_the_pot_and_nobody_in_carries() {
    let c = cfg(|_| {});
    let mut g = after_d(c.clone(), vec![plain(&c, 1), plain(&c, 2)]);
    let ev = run(&mut g, "2 drop, 0 stand, 1 drop");
    assert!(matches!(
        settled(&ev).result,
        DealResult::LoneStayer(Seat(0))
    ));
    assert_eq!(&net_of(&ev)[..3], &[10, 0, 0]);
    let mut g = after_d(c.clone(), vec![plain(&c, 1), plain(&c, 2)]);
    let ev = run(&mut g, "2 drop, 0 drop, 1 drop");
    assert!(matches!(settled(&ev).result, DealResult::Carried));
}

#[test]
fn bb17_lenient_revoke_costs_one_bete_of_the_pot() {
    let c = cfg(|c| c.enforce_legality = Legality::Lenient);
    let mut g = game(RS, c.clone(), 3, 0, vec![deck(RS, &c, 3, 0, &D, "9S", "")]);
    run(&mut g, D_ROUNDS);
    // seat 1 leads face down while holding trumps: a revoke; the card counts as the lowest trump
    run(&mut g, "1 hidden 7D, 2 card 8S, 0 card KS");
    assert_eq!(g.view(Viewer::Spectator).tricks[0].winner, Some(Seat(0)));
    let ev = play_until_deal(&mut g, 1);
    let s = &g.summaries()[0];
    // the revoke is charged after the deal's own bêtes, at the pot value (5)
    assert_eq!(s.betes.last().map(|b| (b.seat, b.amount)), Some((1, 5)));
    // the face-down card becomes public at settlement
    assert_eq!(settled(&ev).hidden_revealed, bete_rules::deal::cards("7D"));
}

#[test]
fn item18_views_show_only_own_hand() {
    let c = cfg(|_| {});
    let g = game(RS, c.clone(), 3, 0, vec![deck(RS, &c, 3, 0, &D, "9S", "")]);
    for s in 0..3u8 {
        let v = g.view(Viewer::Seat(Seat(s)));
        assert_eq!(v.hand, Some(bete_rules::deal::cards(D[s as usize])));
    }
    assert_eq!(g.view(Viewer::Spectator).hand, None);
}

#[test]
fn legal_actions_agree_with_apply_in_random_matches() {
    for n in 3..=6u8 {
        for (i, f) in [
            (|_: &mut Config| {}) as fn(&mut Config),
            |c| c.enforce_legality = Legality::Lenient,
            |c| {
                c.per_trick = PerTrick::One;
                c.bete_payoff = BetePayoff::SuccessiveFifo;
            },
            |c| c.follow_suit = false,
        ]
        .iter()
        .enumerate()
        {
            let g = seeded(RS, config(RS, n, *f), n, n * 10 + i as u8 + 100);
            check_legal_agrees(g, 150, 0x2545_f491 + n as u64 * 13 + i as u64);
        }
    }
}
