//! Five-card Loo (RULES.md section 14, with A45–A50, A53): one test per rule, named after it.

mod exchange_support;
mod pool_support;

use bete_rules::config::{AceLead, FlushRule, LooAmount, Pam, TopLaws};
use bete_rules::deal::cards;
use bete_rules::event::DealResult;
use bete_rules::{Config, Phase, RulesetId, Seat, Suit, pack};
use exchange_support::{config, game, legal, refuse, run, settled};
use pool_support::{deck, first_cards_to_the_end, shown};

const L: RulesetId = RulesetId::Loo;

/// Three seats, dealer 0, hearts trumps (2H turned up): seat 1 holds the Ace of trumps, seat 2
/// Pam (J♣) and the King of trumps.
fn pam_deck(cfg: &Config) -> Vec<bete_rules::Card> {
    deck(
        L,
        cfg,
        3,
        0,
        &["QH TH 2S 3D 4D", "AH 3S 4S 5S 7D", "JC KH 6S 8D 9D"],
        "",
        "2H",
        "",
    )
}

#[test]
fn lo1_three_to_ten_seats_fifty_two_cards() {
    assert!(Config::from_pairs(L, 2, &[]).is_err());
    assert!(Config::from_pairs(L, 11, &[]).is_err());
    for n in 3..=10u8 {
        let cfg = Config::defaults(L, n);
        assert_eq!(pack(L, &cfg, n).len(), 52);
        let g = exchange_support::seeded(L, cfg, n, n);
        if g.deal_index() == 0 {
            let v = g.view(bete_rules::Viewer::Spectator);
            assert_eq!(usize::from(v.talon_len), 52 - 5 * usize::from(n) - 1, "{n}");
        }
    }
}

#[test]
fn lo2_pam_is_above_the_ace_of_trumps() {
    let cfg = config(L, 3, |c| c.ace_lead = AceLead::None);
    let mut g = game(L, cfg.clone(), 3, 0, vec![pam_deck(&cfg)]);
    run(
        &mut g,
        "1 stand, 2 stand, 0 stand, 1 card 3S, 2 card 6S, 0 card 2S, 2 card JC",
    );
    // LO3: a Pam lead is a trump lead; nothing heads it
    assert_eq!(legal(&g, 0), "card QH, card TH");
    let ev = run(&mut g, "0 card QH, 1 card AH");
    assert!(ev.iter().any(|e| matches!(
        e.public,
        bete_rules::PublicEvent::TrickWon {
            trick: 1,
            winner: Seat(2)
        }
    )));
}

#[test]
fn lo2_pam_may_be_the_trump_jack() {
    let cfg = config(L, 3, |c| {
        c.pam = Pam::TrumpJack;
        c.ace_lead = AceLead::None;
        c.pam_be_civil = false;
    });
    let d = deck(
        L,
        &cfg,
        3,
        0,
        &["QH TH 2S 3D 4D", "AH 3S 4S 5S 7D", "JH KH 6S 8D JC"],
        "",
        "2H",
        "",
    );
    let mut g = game(L, cfg, 3, 0, vec![d]);
    run(&mut g, "1 stand, 2 stand, 0 stand, 1 card AH");
    // JH (Pam) may beat the Ace of trumps; J♣ is a plain club
    assert_eq!(legal(&g, 2), "card JH, card KH");
    let ev = run(&mut g, "2 card JH, 0 card QH");
    assert!(ev.iter().any(|e| matches!(
        e.public,
        bete_rules::PublicEvent::TrickWon {
            trick: 0,
            winner: Seat(2)
        }
    )));
}

#[test]
fn lo3_a45_free_pam_may_be_played_to_any_suit() {
    let cfg = config(L, 3, |c| c.ace_lead = AceLead::None);
    let mut g = game(L, cfg.clone(), 3, 0, vec![pam_deck(&cfg)]);
    run(&mut g, "1 stand, 2 stand, 0 stand, 1 card 3S");
    assert_eq!(legal(&g, 2), "card 6S, card JC");
    // `pam_laws = "trump"`: Pam is simply the top trump
    let cfg = config(L, 3, |c| {
        c.ace_lead = AceLead::None;
        c.pam_laws = TopLaws::Trump;
    });
    let mut g = game(L, cfg.clone(), 3, 0, vec![pam_deck(&cfg)]);
    run(&mut g, "1 stand, 2 stand, 0 stand, 1 card 3S");
    assert_eq!(legal(&g, 2), "card 6S");
}

#[test]
fn lo4_a46_pam_be_civil_to_the_led_ace_of_trumps() {
    let cfg = Config::defaults(L, 3);
    let mut g = game(L, cfg.clone(), 3, 0, vec![pam_deck(&cfg)]);
    run(&mut g, "1 stand, 2 stand, 0 stand, 1 card AH");
    assert_eq!(legal(&g, 2), "card KH");
    let e = refuse(&mut g, 2, "card JC");
    assert!(e.to_string().contains("civil"), "{e}");
    let cfg = config(L, 3, |c| c.pam_be_civil = false);
    let mut g = game(L, cfg.clone(), 3, 0, vec![pam_deck(&cfg)]);
    run(&mut g, "1 stand, 2 stand, 0 stand, 1 card AH");
    assert_eq!(legal(&g, 2), "card JC, card KH");
}

#[test]
fn lo5_the_dealer_antes_five() {
    let cfg = Config::defaults(L, 3);
    let g = game(L, cfg.clone(), 3, 0, vec![pam_deck(&cfg)]);
    assert_eq!(g.balances(), &[-5, 0, 0]);
    assert_eq!(g.pools().pot, 5);
}

#[test]
fn lo6_one_card_at_a_time_by_default() {
    let cfg = Config::defaults(L, 3);
    let p = pack(L, &cfg, 3);
    let g = game(L, cfg, 3, 0, vec![p.clone()]);
    // eldest (seat 1) gets cards 0, 3, 6, 9, 12 of the deck
    let hand = g
        .view(bete_rules::Viewer::Seat(Seat(1)))
        .hand
        .expect("hand");
    assert_eq!(hand, cards("2S 5S 8S JS AS"));
    assert_eq!(g.view(bete_rules::Viewer::Spectator).turn_up, Some(p[15]));
    for pattern in ["3+2", "2+3"] {
        assert!(Config::from_pairs(L, 3, &[("deal_pattern".into(), pattern.into())]).is_ok());
    }
    assert!(Config::from_pairs(L, 3, &[("deal_pattern".into(), "2+2+1".into())]).is_err());
}

#[test]
fn lo7_one_declaration_round_exchange_once_nobody_takes_the_turn_up() {
    let cfg = Config::defaults(L, 3);
    let mut g = game(L, cfg.clone(), 3, 0, vec![pam_deck(&cfg)]);
    run(&mut g, "1 exchange 7D 5S, 2 stand");
    refuse(&mut g, 0, "discard 2H");
    run(&mut g, "0 stand");
    // no discard: the tricks start at once
    assert_eq!(g.phase(), Phase::Trick { trick: 0 });
    assert!(!g.view(bete_rules::Viewer::Spectator).turn_up_taken);
}

#[test]
fn lo8_a47_dealer_alone_and_lone_stayer() {
    let cfg = Config::defaults(L, 3);
    let mut g = game(L, cfg.clone(), 3, 0, vec![pam_deck(&cfg)]);
    let ev = run(&mut g, "1 drop, 2 drop");
    assert_eq!(settled(&ev).result, DealResult::DealerTakesPot(Seat(0)));
    let mut g = game(L, cfg.clone(), 3, 0, vec![pam_deck(&cfg)]);
    let ev = run(&mut g, "1 drop, 2 stand, 0 drop");
    let s = settled(&ev);
    assert_eq!(s.result, DealResult::LoneStayer(Seat(2)));
    assert_eq!(s.net[..3], [0, 0, 5]);
}

/// Four seats, dealer 0, spades trumps: seat 1 a heart flush, seat 2 an inferior diamond flush,
/// seat 3 Pam, the dealer nothing.
fn flush_deck(cfg: &Config) -> Vec<bete_rules::Card> {
    deck(
        L,
        cfg,
        4,
        0,
        &[
            "8C 9C TC 2D 2H",
            "AH KH QH 9H 3H",
            "KD QD JD 9D 3D",
            "JC 4C 5S 6H 7D",
        ],
        "",
        "2S",
        "",
    )
}

#[test]
fn lo9_a48_the_best_flush_sweeps_the_board_hoyle() {
    let cfg = Config::defaults(L, 4);
    let mut g = game(L, cfg.clone(), 4, 0, vec![flush_deck(&cfg)]);
    let ev = run(&mut g, "1 stand, 2 stand, 3 stand, 0 stand");
    let s = settled(&ev);
    assert_eq!(
        s.result,
        DealResult::Flush {
            seat: Seat(1),
            dealt: true
        }
    );
    // the inferior flush and the Pam holder are exempt; the dealer is looed (5, next pool)
    assert_eq!(s.net[..4], [-5, 5, 0, 0]);
    assert_eq!(s.pools.pot, 5);
    // shown: both flushes (the best last) and the exempting Pam
    let seen: Vec<u8> = shown(&ev).iter().map(|x| x.0).collect();
    assert_eq!(seen, [2, 1, 3]);
    assert_eq!(shown(&ev)[2].1, cards("JC"));
    // a seat that dropped pays nothing
    let mut g = game(L, cfg.clone(), 4, 0, vec![flush_deck(&cfg)]);
    let ev = run(&mut g, "1 stand, 2 stand, 3 stand, 0 drop");
    assert_eq!(settled(&ev).net[..4], [0, 5, 0, 0]);
}

#[test]
fn lo9_a48_pcg_every_other_seat_pays_the_holder() {
    let cfg = config(L, 4, |c| c.flush_rule = FlushRule::Pcg);
    let mut g = game(L, cfg.clone(), 4, 0, vec![flush_deck(&cfg)]);
    let ev = run(&mut g, "1 stand, 2 stand, 3 stand, 0 drop");
    let s = settled(&ev);
    assert_eq!(s.net[..4], [-5, 20, -5, -5]);
    assert_eq!(s.pools.pot, 0);
}

#[test]
fn a48_a_lone_stayer_with_a_flush_collects_nothing_more() {
    let cfg = config(L, 4, |c| c.flush_rule = FlushRule::Pcg);
    let mut g = game(L, cfg.clone(), 4, 0, vec![flush_deck(&cfg)]);
    let ev = run(&mut g, "1 stand, 2 drop, 3 drop, 0 drop");
    let s = settled(&ev);
    assert_eq!(s.result, DealResult::LoneStayer(Seat(1)));
    assert_eq!(s.net[..4], [0, 5, 0, 0]);
}

#[test]
fn lo10_the_first_seat_in_after_the_dealer_leads_and_must_head() {
    let cfg = config(L, 3, |c| c.ace_lead = AceLead::None);
    let mut g = game(L, cfg.clone(), 3, 0, vec![pam_deck(&cfg)]);
    run(&mut g, "1 drop, 2 stand, 0 stand");
    assert_eq!(g.to_act(), Some(Seat(2)));
    run(&mut g, "2 card 8D");
    // must follow diamonds; none of them heads the 8: either
    assert_eq!(legal(&g, 0), "card 3D, card 4D");
}

#[test]
fn lo11_a49_the_trick_1_leader_leads_the_ace_of_trumps() {
    let cfg = Config::defaults(L, 3);
    let mut g = game(L, cfg.clone(), 3, 0, vec![pam_deck(&cfg)]);
    run(&mut g, "1 stand, 2 stand, 0 stand");
    assert_eq!(legal(&g, 1), "card AH");
    let e = refuse(&mut g, 1, "card 3S");
    assert!(
        matches!(e, bete_rules::ActionError::MustLeadTrump(_)),
        "{e}"
    );
    let cfg = config(L, 3, |c| c.ace_lead = AceLead::None);
    let mut g = game(L, cfg.clone(), 3, 0, vec![pam_deck(&cfg)]);
    run(&mut g, "1 stand, 2 stand, 0 stand");
    assert_eq!(g.legal_actions(Seat(1)).len(), 5);
}

#[test]
fn lo11_the_king_when_the_ace_is_turned_up_and_a_free_pam_stays_legal() {
    let cfg = Config::defaults(L, 3);
    let d = deck(
        L,
        &cfg,
        3,
        0,
        &["QH TH 2S 3D 4D", "KH JC 4S 5S 7D", "2H 3S 6S 8D 9D"],
        "",
        "AH",
        "",
    );
    let mut g = game(L, cfg, 3, 0, vec![d]);
    run(&mut g, "1 stand, 2 stand, 0 stand");
    assert_eq!(legal(&g, 1), "card JC, card KH");
}

/// Seat `strong` holds the top hearts and spades (hearts trumps): it takes all five tricks.
fn sweep_deck(cfg: &Config, dealer: u8) -> Vec<bete_rules::Card> {
    let mut hands = ["2S 3D 4D 8C 9C"; 3];
    hands[usize::from((dealer + 1) % 3)] = "AH KH QH AS KS";
    hands[usize::from((dealer + 2) % 3)] = "3S 4S 5D 6D 7C";
    deck(L, cfg, 3, dealer, &hands, "", "2H", "")
}

fn two_sweeps(cfg: Config) -> (bete_rules::Settlement, bete_rules::Settlement) {
    let mut g = game(
        L,
        cfg.clone(),
        3,
        0,
        vec![sweep_deck(&cfg, 0), sweep_deck(&cfg, 1)],
    );
    run(&mut g, "1 stand, 2 stand, 0 stand");
    let first = settled(&first_cards_to_the_end(&mut g)).clone();
    run(&mut g, "2 stand, 0 stand, 1 stand");
    let second = settled(&first_cards_to_the_end(&mut g)).clone();
    exchange_support::assert_conserved(&g);
    (first, second)
}

#[test]
fn lo12_lo13_a50_each_trick_pays_a_fifth_and_the_limited_loo_is_five() {
    let (first, second) = two_sweeps(Config::defaults(L, 3));
    // P = 5: one a trick; the two looed seats pay 5 each into the next pool
    assert_eq!(first.net[..3], [-5, 5, -5]);
    assert_eq!(first.pools.pot, 10);
    // P = 15: three a trick, still 5 a loo
    assert_eq!(second.net[..3], [-5, -5, 15]);
}

#[test]
fn lo13_a50_unlimited_and_mixed_loo() {
    let (_, second) = two_sweeps(config(L, 3, |c| c.loo_amount = LooAmount::Unlimited));
    assert_eq!(second.net[..3], [-15, -15, 15]);
    let (_, second) = two_sweeps(config(L, 3, |c| {
        c.loo_amount = LooAmount::Mixed;
        c.loo_limit = 10;
    }));
    assert_eq!(second.net[..3], [-10, -10, 15]);
    for bad in ["0", "7", "-5", "\"25\""] {
        assert!(
            Config::from_pairs(L, 3, &[("loo_limit".into(), bad.into())]).is_err(),
            "{bad}"
        );
    }
}

#[test]
fn lo14_a53_only_strict_legality() {
    assert!(Config::from_pairs(L, 4, &[("enforce_legality".into(), "lenient".into())]).is_err());
}

#[test]
fn lo15_the_match_ends_on_a_deal_without_a_loo() {
    let cfg = config(L, 3, |c| c.rounds = 1);
    let mut g = game(
        L,
        cfg.clone(),
        3,
        0,
        vec![
            sweep_deck(&cfg, 0),
            sweep_deck(&cfg, 1),
            sweep_deck(&cfg, 2),
        ],
    );
    run(&mut g, "1 drop, 2 drop"); // deal 0: the dealer takes the pool, no loo
    run(&mut g, "2 drop, 0 drop");
    run(&mut g, "0 stand, 1 stand, 2 stand");
    first_cards_to_the_end(&mut g);
    // deal 3 reached with two loos in the pool: the match goes on
    assert!(!g.is_over());
    assert_eq!(g.pools().pot, 15);
    let _ = Suit::Clubs;
}
