//! Beste Boer (RULES.md section 4) with 0.4 items 6–19: one test per rule BO1–BO11.

mod exchange_support;

use bete_rules::config::{BeteGrowth, Legality};
use bete_rules::event::{DealResult, PrivateEvent, PublicEvent};
use bete_rules::view::{Phase, PlayedCard};
use bete_rules::{ActionError, Game, RulesetId, Seat, Viewer, pack};
use exchange_support::*;

const RS: RulesetId = RulesetId::BesteBoer;

/// Deal D: 3 seats, dealer 0, trump spades (turn-up 9S).
const D: [&str; 3] = ["AS KS QH 8H 8D", "JS 7S AH KH 7D", "JC 8S AD KD 7H"];
const D_ROUNDS: &str = "1 stand, 2 stand, 0 stand, 1 stand, 2 stand, 0 stand, 0 discard 9S";
const D_TRICKS_1_2: &str = "1 card JS, 2 card 8S, 0 card KS, 1 card 7S, 2 card JC, 0 card AS";
const D_TRICKS_3_5: &str = "2 card AD, 0 card 8D, 1 card 7D, 2 card KD, 0 card QH, 1 card AH, 2 card 7H, 0 card 8H, 1 card KH";

fn cfg() -> bete_rules::Config {
    config(RS, 3, |_| {})
}

fn deal_d(c: &bete_rules::Config) -> Vec<bete_rules::Card> {
    deck(RS, c, 3, 0, &D, "9S", "")
}

/// A game whose deal 0 is D, played out; deal 1 (dealer 1) has `next` as its deck.
fn after_d(c: bete_rules::Config, next: Vec<bete_rules::Card>) -> Game {
    let mut g = game(RS, c.clone(), 3, 0, vec![deal_d(&c), next]);
    run(&mut g, D_ROUNDS);
    run(&mut g, D_TRICKS_1_2);
    run(&mut g, D_TRICKS_3_5);
    assert_eq!(g.deal_index(), 1);
    g
}

fn plain_deck(c: &bete_rules::Config, dealer: u8) -> Vec<bete_rules::Card> {
    deck(
        RS,
        c,
        3,
        dealer,
        &["7H 8H 9H TH QD", "7D 8D 9D TD KD", "7C 8C 9C TC QC"],
        "AH",
        "KH",
    )
}

#[test]
fn bo1_three_to_six_players_32_cards() {
    for n in 3..=6u8 {
        assert_eq!(pack(RS, &config(RS, n, |_| {}), n).len(), 32);
        let g = seeded(RS, config(RS, n, |_| {}), n, 7);
        assert_eq!(
            g.view(Viewer::Spectator).talon_len as usize,
            32 - 5 * n as usize - 1
        );
    }
    for n in [2u8, 7] {
        let r = Game::new(bete_rules::Setup {
            ruleset: RS,
            config: config(RS, 3, |_| {}),
            seats: n,
            first_dealer: Seat(0),
            decks: bete_rules::game::Decks::Explicit(vec![]),
        });
        assert!(r.is_err(), "{n} seats must be refused");
    }
}

#[test]
fn bo2_tweede_boer_is_a_trump_and_ranks_second() {
    // trump hearts: JH > JD > AH; JD is a trump and its holder is void in diamonds (A21)
    let c = config(RS, 3, |c| c.follow_after_trick2 = true);
    let d = deck(
        RS,
        &c,
        3,
        0,
        &["AH 7C 8C 9C TC", "JH KD 7S 8S 9S", "JD AD QC KC AC"],
        "7H",
        "",
    );
    let mut g = game(RS, c, 3, 0, vec![d]);
    run(
        &mut g,
        "1 stand, 2 stand, 0 stand, 1 stand, 2 stand, 0 stand, 0 discard 7H",
    );
    run(&mut g, "1 card JH");
    // seat 2's only trump is JD (the Tweede Boer): he must answer the trump lead with it... or
    // any trump; JD is his only one, and AD does not count as a trump
    assert_eq!(legal(&g, 2), "card JD");
    run(&mut g, "2 card JD, 0 card AH");
    assert_eq!(g.view(Viewer::Spectator).tricks[0].winner, Some(Seat(1)));
}

#[test]
fn bo2_second_bower_beats_the_ace_of_trumps() {
    let c = cfg();
    // trick 1: JS led; seat 2 plays 8S; dealer (last) has no JS, plays AS; trick 2: 1 leads 7S,
    // 2 must play JC (Tweede Boer) which beats the dealer's AS... here KS
    let mut g = game(RS, c.clone(), 3, 0, vec![deal_d(&c)]);
    run(&mut g, D_ROUNDS);
    run(&mut g, D_TRICKS_1_2);
    assert_eq!(g.view(Viewer::Spectator).tricks[1].winner, Some(Seat(2)));
}

#[test]
fn bo3_dealer_stakes_five_and_deals_three_then_two() {
    let c = cfg();
    let g = game(RS, c.clone(), 3, 0, vec![deal_d(&c)]);
    assert_eq!(g.balances(), &[-5, 0, 0]);
    assert_eq!(g.pools().pot, 5);
    for (s, h) in D.iter().enumerate() {
        assert_eq!(
            g.view(Viewer::Seat(Seat(s as u8))).hand,
            Some(bete_rules::deal::cards(h))
        );
    }
    let v = g.view(Viewer::Spectator);
    assert_eq!(v.turn_up, Some(card("9S")));
    assert_eq!(v.hand, None);
    assert_eq!(
        v.to_act,
        Some(Seat(1)),
        "Vorhand is on the dealer's left (next in play order)"
    );
}

#[test]
fn bo4_nobody_drops_in_a_muss() {
    let c = cfg();
    let mut g = game(RS, c.clone(), 3, 0, vec![deal_d(&c)]);
    assert!(
        g.view(Viewer::Spectator).muss,
        "the first deal is always a Muss"
    );
    let e = refuse(&mut g, 1, "drop");
    assert_eq!(e, ActionError::CannotDrop("this deal is a Muss".into()));
    assert!(!legal(&g, 1).contains("drop"));
}

#[test]
fn bo4_drop_allowed_when_a_bete_is_in_the_pot() {
    let c = cfg();
    let g = after_d(c.clone(), plain_deck(&c, 1));
    assert_eq!(g.pools().pot, 10);
    assert!(!g.view(Viewer::Spectator).muss);
    assert!(legal(&g, 2).contains("drop"));
}

#[test]
fn bo4_dealer_takes_up_the_turn_up_and_discards() {
    let c = cfg();
    let mut g = game(RS, c.clone(), 3, 0, vec![deal_d(&c)]);
    run(
        &mut g,
        "1 stand, 2 stand, 0 stand, 1 stand, 2 stand, 0 stand",
    );
    assert_eq!(g.phase(), Phase::DealerDiscard);
    assert_eq!(
        legal(&g, 0),
        "discard 8D, discard 8H, discard 9S, discard AS, discard KS, discard QH"
    );
    let ev = run(&mut g, "0 discard 8D");
    assert!(matches!(
        ev[0].public,
        PublicEvent::TookTurnUp { seat: Seat(0), .. }
    ));
    assert_eq!(
        ev[0].private,
        vec![(Seat(0), PrivateEvent::Discarded(card("8D")))]
    );
    assert_eq!(
        g.view(Viewer::Seat(Seat(0))).hand,
        Some(bete_rules::deal::cards("AS KS QH 8H 9S"))
    );
    assert!(g.view(Viewer::Seat(Seat(1))).turn_up_taken);
}

#[test]
fn bo5_troef_boer_must_be_led() {
    let c = cfg();
    let mut g = game(RS, c.clone(), 3, 0, vec![deal_d(&c)]);
    run(&mut g, D_ROUNDS);
    assert_eq!(legal(&g, 1), "card JS");
    assert!(matches!(
        refuse(&mut g, 1, "card 7S"),
        ActionError::MustLeadBower(_)
    ));
    assert!(matches!(
        refuse(&mut g, 1, "card AH"),
        ActionError::MustLeadBower(_)
    ));
    assert!(matches!(
        refuse(&mut g, 1, "hidden AH"),
        ActionError::HiddenNotAllowed(_)
    ));
    run(&mut g, "1 card JS");
    // a trump lead is answered with a trump
    assert_eq!(legal(&g, 2), "card 8S, card JC");
    assert!(matches!(
        refuse(&mut g, 2, "card AD"),
        ActionError::MustFollowSuit(_)
    ));
}

#[test]
fn bo5_any_trump_lead_without_the_troef_boer() {
    let c = cfg();
    let d = deck(
        RS,
        &c,
        3,
        0,
        &["JS KS QH 8H 8D", "AS 7S AH KH 7D", "JC 8S AD KD 7H"],
        "9S",
        "",
    );
    let mut g = game(RS, c, 3, 0, vec![d]);
    run(&mut g, D_ROUNDS);
    assert_eq!(legal(&g, 1), "card 7S, card AS");
    assert!(matches!(
        refuse(&mut g, 1, "card AH"),
        ActionError::MustLeadTrump(_)
    ));
    run(&mut g, "1 card 7S");
    // seat 2 is not last: no privilege, but he holds no Troef-Boer: any trump
    assert_eq!(legal(&g, 2), "card 8S, card JC");
    run(&mut g, "2 card 8S");
    // the dealer (last) holds JS: JS or a card that wins as it stands (KS beats 8S)
    assert_eq!(legal(&g, 0), "card JS, card KS");
    assert!(matches!(
        refuse(&mut g, 0, "card QH"),
        ActionError::MustPlayBower(_)
    ));
}

#[test]
fn bo5_other_player_must_play_troef_boer() {
    let c = cfg();
    let d = deck(
        RS,
        &c,
        3,
        0,
        &["AS KS QH 8H 8D", "TS 7S AH KH 7D", "JS 8S AD KD 7H"],
        "9S",
        "",
    );
    let mut g = game(RS, c, 3, 0, vec![d]);
    run(&mut g, D_ROUNDS);
    run(&mut g, "1 card 7S");
    // seat 2 is not the last player: JS only, although 8S would be a trump answer
    assert_eq!(legal(&g, 2), "card JS");
    assert!(matches!(
        refuse(&mut g, 2, "card 8S"),
        ActionError::MustPlayBower(_)
    ));
}

#[test]
fn bo5_hidden_lead_when_vorhand_holds_no_trump() {
    let c = cfg();
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
    assert_eq!(
        legal(&g, 1),
        "hidden 7D, hidden 8D, hidden AH, hidden KH, hidden QH"
    );
    assert_eq!(refuse(&mut g, 1, "card AH"), ActionError::MustLeadHidden);
    let ev = run(&mut g, "1 hidden AH");
    assert_eq!(ev[0].public, PublicEvent::HiddenLead { seat: Seat(1) });
    assert_eq!(
        ev[0].private,
        vec![(Seat(1), PrivateEvent::HiddenCard(card("AH")))]
    );
    // the card is seen only by its leader
    let face = |s| g.view(Viewer::Seat(Seat(s))).tricks[0].cards[0].1;
    assert_eq!(face(1), PlayedCard::FaceDown(Some(card("AH"))));
    assert_eq!(face(2), PlayedCard::FaceDown(None));
    assert_eq!(
        g.view(Viewer::Spectator).tricks[0].cards[0].1,
        PlayedCard::FaceDown(None)
    );
    // a face-down lead must be answered with a trump
    assert_eq!(legal(&g, 2), "card 8S, card JC");
    assert!(matches!(
        refuse(&mut g, 2, "card AD"),
        ActionError::MustTrump(_)
    ));
    run(&mut g, "2 card 8S");
    // Hinterhand keeps JS for a card that wins as it stands: AS or KS (TH does not)
    assert_eq!(legal(&g, 0), "card AS, card JS, card KS");
    run(&mut g, "0 card KS");
    assert_eq!(g.view(Viewer::Spectator).tricks[0].winner, Some(Seat(0)));
    // trick 2: the winner still holds JS and must lead it (A24)
    assert_eq!(legal(&g, 0), "card JS");
}

#[test]
fn bo5_hidden_card_ranks_below_every_trump_and_wins_if_no_trump() {
    let c = cfg();
    let d = deck(
        RS,
        &c,
        3,
        0,
        &["AH TH 9H 8H 7H", "7D 8D 9D TD QD", "7C 8C 9C TC QC"],
        "9S",
        "",
    );
    let mut g = game(RS, c, 3, 0, vec![d]);
    run(
        &mut g,
        "1 stand, 2 stand, 0 stand, 1 stand, 2 stand, 0 stand, 0 discard 9S",
    );
    run(&mut g, "1 hidden 7D, 2 card 7C, 0 card AH");
    assert_eq!(
        g.view(Viewer::Spectator).tricks[0].winner,
        Some(Seat(1)),
        "nobody trumped: the leader wins"
    );
}

#[test]
fn bo6_tweede_boer_must_be_played_to_trick_2() {
    let c = cfg();
    let mut g = game(RS, c.clone(), 3, 0, vec![deal_d(&c)]);
    run(&mut g, D_ROUNDS);
    run(&mut g, "1 card JS, 2 card 8S, 0 card KS");
    // trick 2: Vorhand won trick 1 and leads any trump (no bower left)
    assert_eq!(legal(&g, 1), "card 7S");
    assert!(matches!(
        refuse(&mut g, 1, "card AH"),
        ActionError::MustLeadTrump(_)
    ));
    run(&mut g, "1 card 7S");
    assert_eq!(legal(&g, 2), "card JC");
    assert!(matches!(
        refuse(&mut g, 2, "card AD"),
        ActionError::MustPlayBower(_)
    ));
}

#[test]
fn bo6_last_player_may_keep_the_tweede_boer() {
    let c = cfg();
    let d = deck(
        RS,
        &c,
        3,
        0,
        &["JC KS TH 9H 8H", "JS 7S AH KH QH", "9S 8S AD KD QD"],
        "TS",
        "",
    );
    let mut g = game(RS, c, 3, 0, vec![d]);
    run(
        &mut g,
        "1 stand, 2 stand, 0 stand, 1 stand, 2 stand, 0 stand, 0 discard TS",
    );
    run(
        &mut g,
        "1 card JS, 2 card 8S, 0 card KS, 1 card 7S, 2 card 9S",
    );
    assert_eq!(legal(&g, 0), "card JC");
    // the dealer could not keep JC: KS is gone. New situation: he holds JC and nothing winning
}

#[test]
fn bo6_last_player_keeps_tweede_boer_for_a_winning_card() {
    let c = cfg();
    let d = deck(
        RS,
        &c,
        3,
        0,
        &["JC KS AS 9H 8H", "JS 7S AH KH QH", "9S 8S AD KD QD"],
        "TS",
        "",
    );
    let mut g = game(RS, c, 3, 0, vec![d]);
    run(
        &mut g,
        "1 stand, 2 stand, 0 stand, 1 stand, 2 stand, 0 stand, 0 discard TS",
    );
    run(
        &mut g,
        "1 card JS, 2 card 8S, 0 card KS, 1 card 7S, 2 card 9S",
    );
    assert_eq!(legal(&g, 0), "card AS, card JC");
    run(&mut g, "0 card AS");
    assert_eq!(g.view(Viewer::Spectator).tricks[1].winner, Some(Seat(0)));
}

#[test]
fn bo6_trick2_leader_with_both_bowers_leads_the_troef_boer() {
    let c = cfg();
    let d = deck(
        RS,
        &c,
        3,
        0,
        &["JS JC AS 9H 8H", "KS 7S AH KH QH", "9S 8S AD KD QD"],
        "TS",
        "",
    );
    let mut g = game(RS, c, 3, 0, vec![d]);
    run(
        &mut g,
        "1 stand, 2 stand, 0 stand, 1 stand, 2 stand, 0 stand, 0 discard TS",
    );
    run(&mut g, "1 card KS, 2 card 8S");
    assert_eq!(legal(&g, 0), "card AS, card JC, card JS");
    run(&mut g, "0 card AS");
    assert_eq!(legal(&g, 0), "card JS");
    assert!(matches!(
        refuse(&mut g, 0, "card JC"),
        ActionError::MustLeadBower(_)
    ));
    run(&mut g, "0 card JS");
    // the followers have no bower: trump answers
    assert_eq!(legal(&g, 1), "card 7S");
}

#[test]
fn bo7_any_card_in_tricks_3_to_5() {
    let c = cfg();
    let mut g = game(RS, c.clone(), 3, 0, vec![deal_d(&c)]);
    run(&mut g, D_ROUNDS);
    run(&mut g, D_TRICKS_1_2);
    run(&mut g, "2 card AD");
    assert_eq!(legal(&g, 0), "card 8D, card 8H, card QH");
    assert!(matches!(
        refuse(&mut g, 0, "hidden 8H"),
        ActionError::HiddenNotAllowed(_)
    ));
}

#[test]
fn bo7_follow_after_trick2() {
    let c = config(RS, 3, |c| c.follow_after_trick2 = true);
    let mut g = game(RS, c.clone(), 3, 0, vec![deal_d(&c)]);
    run(&mut g, D_ROUNDS);
    run(&mut g, D_TRICKS_1_2);
    run(&mut g, "2 card AD");
    assert_eq!(legal(&g, 0), "card 8D");
    assert!(matches!(
        refuse(&mut g, 0, "card QH"),
        ActionError::MustFollowSuit(_)
    ));
}

#[test]
fn bo8_each_trick_pays_a_fifth_of_the_start_pot() {
    let c = cfg();
    let mut g = game(RS, c.clone(), 3, 0, vec![deal_d(&c)]);
    run(&mut g, D_ROUNDS);
    run(&mut g, D_TRICKS_1_2);
    let ev = run(&mut g, D_TRICKS_3_5);
    // seat 1: 2 tricks, seat 2: 3 tricks, seat 0: none (bête 5)
    assert_eq!(&net_of(&ev)[..3], &[-5, 2, 3]);
    // deal 1 has started: its dealer (seat 1) staked 5
    assert_eq!(g.balances(), &[-10, 2 - 5, 3]);
    let s = &g.summaries()[0];
    assert_eq!(s.tricks, vec![0, 2, 3]);
    assert_eq!(s.outcome, "played");
    assert_eq!(s.stayers, vec![0, 1, 2]);
}

#[test]
fn bo9_bete_plus5_grows_by_five_per_deal_with_a_bete() {
    let c = cfg();
    // deal 1 (dealer 1): seat 2 takes every trick, seats 0 and 1 are bête at 10 each
    let d1 = deck_with(RS, &c, 3, 1, 2, "JS JC AS KS QS", "9S");
    let mut g = after_d(c, d1);
    assert_eq!(g.pools().pot, 10);
    assert_eq!(g.pools().bete_streak, 1);
    let before = g.balances().to_vec();
    play_until_deal(&mut g, 2);
    let s = &g.summaries()[1];
    assert_eq!(s.tricks, vec![0, 0, 5]);
    let betes: Vec<(u8, i64)> = s.betes.iter().map(|b| (b.seat, b.amount)).collect();
    assert_eq!(
        betes,
        vec![(0, 10), (1, 10)],
        "5 x k with k = 2, charged from Vorhand"
    );
    assert_eq!(g.summaries()[1].net[2], 10, "5 tricks of 10/5");
    assert_eq!(g.balances()[2] - before[2], 10 - 5, "and seat 2 deals next");
}

#[test]
fn bo9_bete_pot_option_pays_the_start_pot() {
    let c = config(RS, 3, |c| c.bete_growth = BeteGrowth::Pot);
    let d1 = deck_with(RS, &c, 3, 1, 2, "JS JC AS KS QS", "9S");
    let mut g = after_d(c, d1);
    play_until_deal(&mut g, 2);
    let betes: Vec<(u8, i64)> = g.summaries()[1]
        .betes
        .iter()
        .map(|b| (b.seat, b.amount))
        .collect();
    assert_eq!(betes, vec![(0, 10), (1, 10)]);
    // the next pot: the bêtes plus the new dealer's 5
    assert_eq!(g.pools().pot, 25);
}

#[test]
fn bo9_plus5_per_bete_charges_in_play_order() {
    let c = config(RS, 3, |c| c.bete_growth = BeteGrowth::Plus5PerBete);
    let d1 = deck_with(RS, &c, 3, 1, 2, "JS JC AS KS QS", "9S");
    let mut g = after_d(c, d1);
    play_until_deal(&mut g, 2);
    // deal 0 charged 5; deal 1 continues: 10 (seat 0, Vorhand after dealer 1... seat 2 is
    // Vorhand and took every trick, then seat 0), 15 (seat 1)
    let betes: Vec<(u8, i64)> = g.summaries()[1]
        .betes
        .iter()
        .map(|b| (b.seat, b.amount))
        .collect();
    assert_eq!(betes, vec![(0, 10), (1, 15)]);
}

#[test]
fn item10_streak_resets_after_a_deal_without_bete() {
    let c = cfg();
    let d1 = plain_deck(&c, 1);
    let mut g = after_d(c.clone(), d1);
    assert_eq!(g.pools().bete_streak, 1);
    // deal 1: everybody but seat 1 drops: a lone stayer, no bête
    let ev = run(&mut g, "2 drop, 0 drop, 1 stand");
    assert!(matches!(
        settled(&ev).result,
        DealResult::LoneStayer(Seat(1))
    ));
    assert_eq!(g.pools().bete_streak, 0);
    assert_eq!(g.summaries()[1].outcome, "lone_stayer");
    assert_eq!(g.summaries()[1].pools_won[0].amount, 10);
}

#[test]
fn bo10_next_pot_is_the_dealers_five_plus_all_betes() {
    let c = cfg();
    let g = after_d(c.clone(), plain_deck(&c, 1));
    // deal 0: pot 5 paid out in full, one bête of 5; deal 1: + dealer's 5
    assert_eq!(g.pools().pot, 10);
    assert_eq!(g.balances(), &[-10, -3, 3]);
}

#[test]
fn bo11_strict_refuses_and_lenient_charges_a_bete_per_revoke() {
    let c = cfg();
    let mut g = game(RS, c.clone(), 3, 0, vec![deal_d(&c)]);
    run(&mut g, D_ROUNDS);
    refuse(&mut g, 1, "card 7S");
    let c = config(RS, 3, |c| c.enforce_legality = Legality::Lenient);
    let mut g = game(RS, c.clone(), 3, 0, vec![deal_d(&c)]);
    run(&mut g, D_ROUNDS);
    // lenient: every card of the hand and every face-down lead is offered to the leader
    assert_eq!(g.legal_actions(Seat(1)).len(), 10);
    // a card not in hand and an out-of-turn play are still refused
    assert!(matches!(
        refuse(&mut g, 1, "card AD"),
        ActionError::NotInHand(_)
    ));
    assert!(matches!(
        refuse(&mut g, 2, "card AD"),
        ActionError::NotYourTurn { .. }
    ));
    // seat 1 revokes (does not lead JS); seat 2 revokes (does not trump)
    run(&mut g, "1 card 7S, 2 card AD, 0 card KS");
    run(&mut g, "0 card AS, 1 card JS, 2 card JC");
    let ev = run(
        &mut g,
        "1 card AH, 2 card KD, 0 card QH, 1 card KH, 2 card 7H, 0 card 8H, 1 card 7D, 2 card 8S, 0 card 8D",
    );
    // tricks: 0: KS (t1), 1: JS (t2), AH (t3), KH (t4), 2: 8S trumps (t5)
    let s = &g.summaries()[0];
    assert_eq!(s.tricks, vec![1, 3, 1]);
    let betes: Vec<(u8, i64)> = s.betes.iter().map(|b| (b.seat, b.amount)).collect();
    assert_eq!(betes, vec![(1, 5), (2, 5)], "one bête per revoke, in order");
    assert_eq!(&betes_of(&ev)[..3], &[0, 5, 5]);
}

#[test]
fn item6_exchange_draws_from_the_talon_in_order() {
    let c = cfg();
    let d = deck(RS, &c, 3, 0, &D, "9S", "TD 9D");
    let mut g = game(RS, c, 3, 0, vec![d]);
    assert_eq!(g.view(Viewer::Spectator).talon_len, 16);
    // 31 subsets of the hand, stand, no drop (Muss)
    assert_eq!(g.legal_actions(Seat(1)).len(), 32);
    let ev = run(&mut g, "1 exchange 7D AH");
    assert_eq!(
        ev[0].public,
        PublicEvent::Exchanged {
            seat: Seat(1),
            count: 2
        }
    );
    assert_eq!(
        ev[0].private,
        vec![(
            Seat(1),
            PrivateEvent::Exchange {
                set_aside: bete_rules::deal::cards("7D AH"),
                drawn: bete_rules::deal::cards("TD 9D")
            }
        )]
    );
    assert_eq!(
        g.view(Viewer::Seat(Seat(1))).hand,
        Some(bete_rules::deal::cards("JS 7S KH TD 9D"))
    );
    assert_eq!(g.view(Viewer::Spectator).talon_len, 14);
    assert_eq!(
        g.view(Viewer::Seat(Seat(2))).seat_states[1].exchanged,
        [2, 0]
    );
    assert!(matches!(
        refuse(&mut g, 2, "exchange AS"),
        ActionError::NotInHand(_)
    ));
}

#[test]
fn item6_talon_too_short_and_first_come_first_served() {
    // 6 seats: the talon holds one card
    let c = config(RS, 6, |_| {});
    let g0 = seeded(RS, c, 6, 3);
    let mut g = g0.clone();
    let v = g.view(Viewer::Spectator);
    assert_eq!(v.talon_len, 1);
    let s = g.to_act().expect("to act");
    let hand: Vec<_> = g.view(Viewer::Seat(s)).hand.expect("hand").iter().collect();
    // 5 single-card exchanges + stand (Muss: no drop)
    assert_eq!(g.legal_actions(s).len(), 6);
    let two = format!("exchange {} {}", hand[0], hand[1]);
    assert_eq!(
        refuse(&mut g, s.0, &two),
        ActionError::TalonTooShort { asked: 2, left: 1 }
    );
    run(&mut g, &format!("{} exchange {}", s.0, hand[0]));
    // the next seat finds the talon empty: only stand
    let next = g.to_act().expect("next");
    assert_eq!(legal(&g, next.0), "stand");
}

#[test]
fn item11_nobody_in_carries_the_pot() {
    let c = cfg();
    let mut g = after_d(c.clone(), plain_deck(&c, 1));
    let ev = run(&mut g, "2 drop, 0 drop, 1 drop");
    assert!(matches!(settled(&ev).result, DealResult::Carried));
    assert_eq!(g.summaries()[1].outcome, "carried");
    // the carried pot (10) plus the next dealer's 5
    assert_eq!(g.pools().pot, 15);
    assert_eq!(g.pools().bete_streak, 0);
}

#[test]
fn item13_muss_when_the_pot_is_only_the_dealers_five() {
    let c = cfg();
    let mut g = after_d(c.clone(), plain_deck(&c, 1));
    run(&mut g, "2 drop, 0 stand, 1 drop"); // lone stayer takes 10: pot empty
    assert_eq!(g.pools().pot, 5);
    g.provide_deck(plain_deck(&c, 2)).expect("deck");
    assert!(g.view(Viewer::Spectator).muss);
    assert!(matches!(
        refuse(&mut g, 0, "drop"),
        ActionError::CannotDrop(_)
    ));
}

#[test]
fn item17_match_ends_when_the_pot_is_empty_after_r_deals() {
    let c = config(RS, 3, |c| {
        c.rounds = 1;
        c.max_extra_deals = 0;
    });
    let mut g = game(
        RS,
        c.clone(),
        3,
        0,
        vec![deal_d(&c), plain_deck(&c, 1), plain_deck(&c, 2)],
    );
    run(&mut g, D_ROUNDS);
    run(&mut g, D_TRICKS_1_2);
    run(&mut g, D_TRICKS_3_5);
    run(&mut g, "2 drop, 0 drop, 1 drop"); // carried: pot 10
    // deal 2 (dealer 2, pot 15): the last deal; everybody plays it out
    play_until_deal(&mut g, 3);
    assert!(g.is_over());
    assert_eq!(g.on_table(), 0);
    assert_eq!(g.balances().iter().sum::<i64>(), 0);
}

#[test]
fn item17_leftover_pot_is_split_from_the_eldest() {
    let c = config(RS, 3, |c| {
        c.rounds = 1;
        c.max_extra_deals = 0;
    });
    let mut g = game(
        RS,
        c.clone(),
        3,
        0,
        vec![deal_d(&c), plain_deck(&c, 1), plain_deck(&c, 2)],
    );
    play_until_deal(&mut g, 1);
    run(&mut g, "2 drop, 0 drop, 1 drop"); // carry 10
    let before = g.balances().to_vec();
    let ev = run(&mut g, "0 drop, 1 drop, 2 drop"); // carry again: 15, split 5 each
    assert!(g.is_over());
    let returned = ev
        .iter()
        .find_map(|e| match &e.public {
            PublicEvent::MatchEnded { returned, .. } => Some(**returned),
            _ => None,
        })
        .expect("MatchEnded");
    assert_eq!(&returned[..3], &[5, 5, 5]);
    assert_eq!(g.balances()[0] - before[0], 5);
    assert_eq!(g.on_table(), 0);
}

#[test]
fn legal_actions_agree_with_apply_in_random_matches() {
    for n in 3..=6u8 {
        for (i, f) in [
            (|_: &mut bete_rules::Config| {}) as fn(&mut bete_rules::Config),
            |c| c.enforce_legality = Legality::Lenient,
            |c| c.follow_after_trick2 = true,
            |c| c.bete_growth = BeteGrowth::Plus5PerBete,
        ]
        .iter()
        .enumerate()
        {
            let g = seeded(RS, config(RS, n, *f), n, n * 10 + i as u8);
            check_legal_agrees(g, 150, 0x9e37_79b9 + n as u64 * 31 + i as u64);
        }
    }
}

#[test]
fn item7_follower_with_both_bowers_plays_the_top_bower_to_trick_1() {
    let c = cfg();
    let d = deck(
        RS,
        &c,
        3,
        0,
        &["KS 8S QH 8H 8D", "AS 7S AH KH 7D", "JS JC AD KD 7H"],
        "9S",
        "",
    );
    let mut g = game(RS, c, 3, 0, vec![d]);
    run(&mut g, D_ROUNDS);
    run(&mut g, "1 card AS");
    assert_eq!(legal(&g, 2), "card JS");
    run(&mut g, "2 card JS, 0 card KS");
    // trick 2: the winner holds the Tweede Boer and leads it
    assert_eq!(legal(&g, 2), "card JC");
}

#[test]
fn item7_last_player_privilege_when_the_dealer_dropped() {
    let c = cfg();
    let d1 = deck(
        RS,
        &c,
        3,
        1,
        &["JH AH 7C 8C 9C", "7D 8D 9D TD KD", "8H 9H QC KC AC"],
        "7H",
        "",
    );
    let mut g = after_d(c, d1);
    run(&mut g, "2 stand, 0 stand, 1 drop, 2 stand, 0 stand");
    assert_eq!(legal(&g, 2), "card 8H, card 9H");
    run(&mut g, "2 card 9H");
    // seat 0 is the last active player (the dealer is out): JH or the winning AH
    assert_eq!(legal(&g, 0), "card AH, card JH");
    run(&mut g, "0 card AH");
    // he kept the Troef-Boer and leads it to trick 2 (A24)
    assert_eq!(legal(&g, 0), "card JH");
}

#[test]
fn item14_pot_stays_a_multiple_of_five() {
    for seed in 0..20u8 {
        let mut g = seeded(RS, config(RS, 4, |_| {}), 4, seed);
        for _ in 0..400 {
            if g.is_over() {
                break;
            }
            assert_eq!(g.pools().pot % 5, 0);
            let s = g.to_act().expect("to act");
            let a = g.safe_action(s).expect("action");
            g.apply(s, a).expect("applies");
            assert_conserved(&g);
        }
    }
}
