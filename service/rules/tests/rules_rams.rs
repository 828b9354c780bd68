//! Rams (RULES.md section 15, with A47, A51–A53): one test per rule, named after it.

mod exchange_support;
mod pool_support;

use bete_rules::config::{RamsPenalty, RamsRanking, Undertrump};
use bete_rules::deal::cards;
use bete_rules::event::DealResult;
use bete_rules::{Config, Phase, RulesetId, Seat, pack};
use exchange_support::{config, game, legal, refuse, run, settled};
use pool_support::{deck, first_cards_to_the_end};

const R: RulesetId = RulesetId::Rams;

/// Three seats, dealer 0, spades trumps (7S turned up); `strong` (eldest of `dealer`) holds the
/// five top trumps, the widow is clubs.
fn sweep_deck(cfg: &Config, dealer: u8) -> Vec<bete_rules::Card> {
    let mut hands = ["7D 8D 9D TD JD"; 3];
    hands[usize::from((dealer + 1) % 3)] = "AS KS QS JS TS";
    hands[usize::from((dealer + 2) % 3)] = "7H 8H 9H TH JH";
    deck(R, cfg, 3, dealer, &hands, "7C 8C 9C TC JC", "7S", "")
}

#[test]
fn ra1_a51_three_to_five_seats_thirty_two_cards() {
    for n in [2u8, 6, 9] {
        assert!(Config::from_pairs(R, n, &[]).is_err(), "{n}");
    }
    for n in 3..=5u8 {
        let cfg = Config::defaults(R, n);
        let p = pack(R, &cfg, n);
        assert_eq!(p.len(), 32);
        assert_eq!(p[0].to_string(), "7S");
    }
}

#[test]
fn ra2_ace_high_or_ecarte_ranking() {
    let d = |cfg: &Config| {
        deck(
            R,
            cfg,
            3,
            0,
            &["JC QC KC AC 7H", "KH 7C 8C 9C TC", "AH 8H 7D 8D 9D"],
            "9H TH JH QH 8S",
            "7S",
            "",
        )
    };
    let cfg = Config::defaults(R, 3);
    let mut g = game(R, cfg.clone(), 3, 0, vec![d(&cfg)]);
    run(&mut g, "0 discard 7S, 1 stand, 2 stand, 0 stand, 1 card KH");
    assert_eq!(legal(&g, 2), "card AH");
    let cfg = config(R, 3, |c| c.ranking = RamsRanking::Ecarte);
    let mut g = game(R, cfg.clone(), 3, 0, vec![d(&cfg)]);
    run(&mut g, "0 discard 7S, 1 stand, 2 stand, 0 stand, 1 card KH");
    assert_eq!(legal(&g, 2), "card 8H, card AH");
}

#[test]
fn ra3_the_dealer_antes_five() {
    let cfg = Config::defaults(R, 3);
    let g = game(R, cfg.clone(), 3, 0, vec![sweep_deck(&cfg, 0)]);
    assert_eq!(g.balances(), &[-5, 0, 0]);
    assert_eq!(g.pools().pot, 5);
}

#[test]
fn ra4_the_widow_is_dealt_before_the_dealer_and_the_rest_takes_no_part() {
    let cfg = Config::defaults(R, 3);
    let mut g = game(R, cfg.clone(), 3, 0, vec![sweep_deck(&cfg, 0)]);
    assert_eq!(g.view(bete_rules::Viewer::Spectator).talon_len, 0);
    assert_eq!(
        g.view(bete_rules::Viewer::Seat(Seat(0))).hand,
        Some(cards("7D 8D 9D TD JD"))
    );
    run(&mut g, "0 discard 7S, 1 stand, 2 widow");
    assert_eq!(
        g.view(bete_rules::Viewer::Seat(Seat(2))).hand,
        Some(cards("7C 8C 9C TC JC"))
    );
    // the widow is never shown to the others
    assert_eq!(
        g.view(bete_rules::Viewer::Seat(Seat(1))).seat_states[2].hand_len,
        5
    );
    assert_eq!(
        g.view(bete_rules::Viewer::Seat(Seat(1)))
            .hand
            .map(|h| h.len()),
        Some(5)
    );
}

#[test]
fn ra5_a51_the_dealer_robs_the_turn_up_first() {
    let cfg = Config::defaults(R, 3);
    let mut g = game(R, cfg.clone(), 3, 0, vec![sweep_deck(&cfg, 0)]);
    assert_eq!(g.to_act(), Some(Seat(0)));
    assert_eq!(g.phase(), Phase::DealerDiscard);
    assert_eq!(g.legal_actions(Seat(0)).len(), 6);
    refuse(&mut g, 0, "stand");
    run(&mut g, "0 discard 7D");
    let v = g.view(bete_rules::Viewer::Seat(Seat(0)));
    assert_eq!(v.hand, Some(cards("7S 8D 9D TD JD")));
    assert_eq!(g.to_act(), Some(Seat(1)));
}

#[test]
fn ra6_a52_stand_drop_widow_or_general() {
    let cfg = Config::defaults(R, 3);
    let mut g = game(R, cfg.clone(), 3, 0, vec![sweep_deck(&cfg, 0)]);
    run(&mut g, "0 discard 7S");
    assert_eq!(legal(&g, 1), "drop, general, stand, widow");
    for bad in ["exchange 7H", "pass", "challenge"] {
        refuse(&mut g, 1, bad);
    }
    run(&mut g, "1 drop");
    // General Rams only while every earlier declarer stood
    assert_eq!(legal(&g, 2), "drop, stand, widow");
    run(&mut g, "2 widow");
    // only one seat takes the widow
    assert_eq!(legal(&g, 0), "drop, stand");
}

#[test]
fn ra6_after_general_rams_every_later_seat_must_stand() {
    let cfg = Config::defaults(R, 3);
    let mut g = game(R, cfg.clone(), 3, 0, vec![sweep_deck(&cfg, 0)]);
    run(&mut g, "0 discard 7S, 1 general");
    assert_eq!(legal(&g, 2), "stand");
    refuse(&mut g, 2, "drop");
    run(&mut g, "2 stand");
    assert_eq!(legal(&g, 0), "stand");
}

#[test]
fn ra6_drop_only_after_the_widow_is_taken() {
    let cfg = config(R, 3, |c| c.drop_requires_widow_taken = true);
    let mut g = game(R, cfg.clone(), 3, 0, vec![sweep_deck(&cfg, 0)]);
    run(&mut g, "0 discard 7S");
    assert_eq!(legal(&g, 1), "general, stand, widow");
    let e = refuse(&mut g, 1, "drop");
    assert!(matches!(e, bete_rules::ActionError::CannotDrop(_)), "{e}");
    run(&mut g, "1 widow");
    assert_eq!(legal(&g, 2), "drop, stand");
}

#[test]
fn ra7_a47_dealer_alone_and_lone_stayer() {
    let cfg = Config::defaults(R, 3);
    let mut g = game(R, cfg.clone(), 3, 0, vec![sweep_deck(&cfg, 0)]);
    let ev = run(&mut g, "0 discard 7S, 1 drop, 2 drop");
    assert_eq!(settled(&ev).result, DealResult::DealerTakesPot(Seat(0)));
    let mut g = game(R, cfg.clone(), 3, 0, vec![sweep_deck(&cfg, 0)]);
    let ev = run(&mut g, "0 discard 7S, 1 stand, 2 drop, 0 drop");
    let s = settled(&ev);
    assert_eq!(s.result, DealResult::LoneStayer(Seat(1)));
    assert_eq!(s.net[..3], [0, 5, 0]);
}

/// Hearts led, seat 2 trumps with KS, the dealer (void, 8S only) cannot overtrump.
fn undertrump_deck(cfg: &Config) -> Vec<bete_rules::Card> {
    deck(
        R,
        cfg,
        3,
        0,
        &["8S JD QD KD AD", "AH 7H 8C 9C TC", "KS 7D 8D 9D TD"],
        "9S TS JS QS AS",
        "7S",
        "",
    )
}

#[test]
fn ra8_undertrump_required_or_free() {
    let cfg = Config::defaults(R, 3);
    let mut g = game(R, cfg.clone(), 3, 0, vec![undertrump_deck(&cfg)]);
    run(&mut g, "0 discard 7S, 1 stand, 2 stand, 0 stand, 1 card AH");
    assert_eq!(legal(&g, 2), "card KS");
    run(&mut g, "2 card KS");
    assert_eq!(legal(&g, 0), "card 8S");
    let e = refuse(&mut g, 0, "card JD");
    assert!(e.to_string().contains("undertrump"), "{e}");
    let cfg = config(R, 3, |c| c.undertrump = Undertrump::Free);
    let mut g = game(R, cfg.clone(), 3, 0, vec![undertrump_deck(&cfg)]);
    run(
        &mut g,
        "0 discard 7S, 1 stand, 2 stand, 0 stand, 1 card AH, 2 card KS",
    );
    assert_eq!(g.legal_actions(Seat(0)).len(), 5);
}

#[test]
fn ra8_a52_the_general_rams_announcer_leads() {
    let cfg = Config::defaults(R, 3);
    let mut g = game(R, cfg.clone(), 3, 0, vec![sweep_deck(&cfg, 0)]);
    run(&mut g, "0 discard 7S, 1 stand, 2 general, 0 stand");
    assert_eq!(g.to_act(), Some(Seat(2)));
}

#[test]
fn ra9_ra10_each_trick_pays_a_fifth_and_a_trickless_stayer_is_rams() {
    let cfg = Config::defaults(R, 3);
    let mut g = game(
        R,
        cfg.clone(),
        3,
        0,
        vec![sweep_deck(&cfg, 0), sweep_deck(&cfg, 1)],
    );
    // the widow taker stayed in too
    run(&mut g, "0 discard 7S, 1 stand, 2 widow, 0 stand");
    let s = settled(&first_cards_to_the_end(&mut g)).clone();
    assert_eq!(s.tricks[..3], [0, 5, 0]);
    assert_eq!(s.net[..3], [-5, 5, -5]);
    assert_eq!(s.pools.pot, 10);
    // P = 15 next deal: three a trick, rams still 5
    run(&mut g, "1 discard 7S, 2 stand, 0 stand, 1 stand");
    let s = settled(&first_cards_to_the_end(&mut g)).clone();
    assert_eq!(s.net[..3], [-5, -5, 15]);
}

#[test]
fn ra10_the_rams_penalty_may_be_the_pool() {
    let cfg = config(R, 3, |c| c.rams_penalty = RamsPenalty::Pool);
    let mut g = game(
        R,
        cfg.clone(),
        3,
        0,
        vec![sweep_deck(&cfg, 0), sweep_deck(&cfg, 1)],
    );
    run(&mut g, "0 discard 7S, 1 stand, 2 stand, 0 stand");
    first_cards_to_the_end(&mut g);
    run(&mut g, "1 discard 7S, 2 stand, 0 stand, 1 stand");
    let s = settled(&first_cards_to_the_end(&mut g)).clone();
    assert_eq!(s.net[..3], [-15, -15, 15]);
}

#[test]
fn ra11_a52_general_rams_won_and_lost() {
    let cfg = Config::defaults(R, 3);
    let mut g = game(R, cfg.clone(), 3, 0, vec![sweep_deck(&cfg, 0)]);
    run(&mut g, "0 discard 7S, 1 general, 2 stand, 0 stand");
    let s = settled(&first_cards_to_the_end(&mut g)).clone();
    // five tricks (5) and 5 from each other seat; no rams
    assert_eq!(s.net[..3], [-5, 15, -5]);
    assert_eq!(s.pools.pot, 0);
    let mut g = game(R, cfg.clone(), 3, 0, vec![sweep_deck(&cfg, 0)]);
    run(&mut g, "0 discard 7S, 1 stand, 2 general, 0 stand");
    let s = settled(&first_cards_to_the_end(&mut g)).clone();
    // the announcer took nothing: he pays 5 to each other seat
    assert_eq!(s.net[..3], [5, 10, -10]);
    assert_eq!(s.pools.pot, 0);
    let cfg = config(R, 3, |c| c.general_stake = 0);
    let mut g = game(R, cfg.clone(), 3, 0, vec![sweep_deck(&cfg, 0)]);
    run(&mut g, "0 discard 7S, 1 stand, 2 general, 0 stand");
    let s = settled(&first_cards_to_the_end(&mut g)).clone();
    assert_eq!(s.net[..3], [0, 5, 0]);
}

#[test]
fn ra12_a53_only_strict_legality() {
    assert!(Config::from_pairs(R, 4, &[("enforce_legality".into(), "lenient".into())]).is_err());
}

#[test]
fn ra13_the_match_ends_when_the_pool_is_empty() {
    let cfg = config(R, 3, |c| c.rounds = 1);
    let d = sweep_deck(&cfg, 0);
    let mut g = game(R, cfg, 3, 0, vec![d.clone(), d.clone(), d]);
    run(&mut g, "0 discard 7S, 1 drop, 2 drop");
    run(&mut g, "1 discard 7S, 2 drop, 0 drop");
    run(&mut g, "2 discard 7S, 0 drop, 1 drop");
    assert!(g.is_over());
    assert_eq!(g.on_table(), 0);
    assert_eq!(g.balances(), &[0, 0, 0]);
}
