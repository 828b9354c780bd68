//! Mouche (RULES.md section 12, with RC1–RC5 and A36–A42, A53): one test per rule, named after
//! it. Decks are stacked so that each deal is worked out by hand from the rulebook.

mod exchange_support;
mod pool_support;

use bete_rules::config::{DealPattern, DealerAnte, DealtMouchePenalty, MouchePayoff, PackRule};
use bete_rules::deal::cards;
use bete_rules::event::DealResult;
use bete_rules::{Config, Phase, RulesetId, Seat, pack};
use exchange_support::{config, game, legal, refuse, run, settled};
use pool_support::{deck, shown};

const M: RulesetId = RulesetId::Mouche;

/// Three seats, dealer 0 (eldest 1, then 2, then the dealer), spades trumps (9S turned up):
/// seat 1 can take all five tricks; seats 2 and 0 stand and make the mouche.
fn five_tricks_deck(cfg: &Config) -> Vec<bete_rules::Card> {
    deck(
        M,
        cfg,
        3,
        0,
        &["AS TS KD QD JD", "KS QS JS AH KH", "9H 8H TD 9D 8D"],
        "",
        "9S",
        "",
    )
}

/// Plays the deal of `five_tricks_deck` (MO14–MO18 worked by hand): seat 1 wins every trick.
const FIVE_TRICKS: &str = "1 stand, 2 stand, 0 stand, 0 discard 9S, \
    1 card KS, 2 card 8D, 0 card TS, \
    1 card QS, 2 card 9H, 0 card AS, \
    1 card JS, 2 card 8H, 0 card JD, \
    1 card AH, 2 card 9D, 0 card QD, \
    1 card KH, 2 card TD, 0 card KD";

#[test]
fn mo1_three_to_six_seats() {
    for seats in [2u8, 7, 10] {
        assert!(Config::from_pairs(M, seats, &[]).is_err(), "{seats}");
    }
    for seats in 3..=6 {
        assert!(Config::from_pairs(M, seats, &[]).is_ok(), "{seats}");
    }
}

#[test]
fn mo2_pack_by_seat_count_academie_and_sequential() {
    let lens = |rule| {
        (3..=6)
            .map(|n| {
                let c = config(M, n, |c| c.pack_rule = rule);
                pack(M, &c, n).len()
            })
            .collect::<Vec<_>>()
    };
    assert_eq!(lens(PackRule::Academie), [28, 36, 48, 52]);
    assert_eq!(lens(PackRule::Sequential), [32, 36, 40, 44]);
    // canonical order of 19: the 28-card pack is 8–A, the 48-card pack 3–A
    let p = pack(M, &Config::defaults(M, 3), 3);
    assert_eq!(p[0].to_string(), "8S");
    let p = pack(M, &Config::defaults(M, 5), 5);
    assert_eq!(p[0].to_string(), "3S");
    assert_eq!(p.last().expect("card").to_string(), "AC");
}

#[test]
fn mo3_ecarte_ranking_in_every_suit() {
    // QS led: the only spade above it is the King (A ranks below J); heading is exact.
    let cfg = Config::defaults(M, 3);
    let d = deck(
        M,
        &cfg,
        3,
        0,
        &["KD QD JD 8D 9C", "QS 8H 9H TH JH", "KS AS TS 8C 9D"],
        "",
        "8S",
        "",
    );
    let mut g = game(M, cfg, 3, 0, vec![d]);
    run(&mut g, "1 stand, 2 stand, 0 stand, 0 discard 8S, 1 card QS");
    assert_eq!(legal(&g, 2), "card KS");
    run(&mut g, "2 card KS");
    // the trick goes to the King, not the Ace
    run(&mut g, "0 card 9C");
    assert_eq!(g.to_act(), Some(Seat(2)));
}

#[test]
fn mo4_eldest_is_the_dealers_next_and_acts_first() {
    let cfg = Config::defaults(M, 4);
    let (g, _) = bete_rules::Game::new(bete_rules::Setup {
        ruleset: M,
        config: cfg,
        seats: 4,
        first_dealer: Seat(2),
        decks: bete_rules::Decks::Seed(bete_rules::Seed([4; 32])),
    })
    .expect("setup");
    // unless a mouche was dealt, eldest (seat 3) declares first
    if g.deal_index() == 0 {
        assert_eq!(g.to_act(), Some(Seat(3)));
    }
}

#[test]
fn mo5_dealer_antes_five_or_one_a_seat() {
    let cfg = Config::defaults(M, 3);
    let g = game(M, cfg.clone(), 3, 0, vec![five_tricks_deck(&cfg)]);
    assert_eq!(g.balances(), &[-5, 0, 0]);
    assert_eq!(g.pools().pot, 5);
    let cfg = config(M, 3, |c| c.dealer_ante = DealerAnte::PerSeat);
    let g = game(M, cfg.clone(), 3, 0, vec![five_tricks_deck(&cfg)]);
    assert_eq!(g.balances(), &[-3, 0, 0]);
    assert_eq!(g.pools().pot, 3);
}

#[test]
fn mo6_mo17_each_trick_pays_a_fifth_of_the_start_basket() {
    let cfg = Config::defaults(M, 3);
    let mut g = game(M, cfg.clone(), 3, 0, vec![five_tricks_deck(&cfg)]);
    let ev = run(&mut g, FIVE_TRICKS);
    let s = settled(&ev);
    assert_eq!(s.tricks[..3], [0, 5, 0]);
    // B = 5: one a trick to seat 1; seats 0 and 2 stood, took nothing: each pays B
    assert_eq!(s.net[..3], [-5, 5, -5]);
    // MO17 under "per_seat": B = 3 pays floor(3/5) = 0 a trick and stays whole
    let cfg = config(M, 3, |c| c.dealer_ante = DealerAnte::PerSeat);
    let mut g = game(M, cfg.clone(), 3, 0, vec![five_tricks_deck(&cfg)]);
    let ev = run(&mut g, FIVE_TRICKS);
    let s = settled(&ev);
    assert_eq!(s.net[..3], [-3, 0, -3]);
    assert_eq!(s.pools.pot, 3 + 3 + 3);
}

#[test]
fn mo7_deal_pattern_three_two_or_two_three() {
    for pattern in [DealPattern::ThreeTwo, DealPattern::TwoThree] {
        let cfg = config(M, 3, |c| c.deal_pattern = pattern);
        let d = five_tricks_deck(&cfg);
        let g = game(M, cfg, 3, 0, vec![d.clone()]);
        let v = g.view(bete_rules::Viewer::Seat(Seat(1)));
        assert_eq!(v.hand, Some(cards("KS QS JS AH KH")), "{pattern:?}");
        assert_eq!(v.turn_up.expect("turn-up").to_string(), "9S");
        assert_eq!(v.talon_len as usize, 28 - 16);
    }
    assert!(Config::from_pairs(M, 3, &[("deal_pattern".into(), "2+2+1".into())]).is_err());
}

/// Seat 1 holds a plain mouche (diamonds), seat 2 a better one (hearts K Q J A 10).
fn two_mouches(cfg: &Config, trump_mouche: bool) -> Vec<bete_rules::Card> {
    let seat1 = if trump_mouche {
        "8S 9S TS JS QS"
    } else {
        "8D 9D TD JD QD"
    };
    deck(
        M,
        cfg,
        3,
        0,
        &["8C 9C TC JC QC", seat1, "KH QH JH AH TH"],
        "",
        "KS",
        "",
    )
}

#[test]
fn mo8_dealt_mouche_is_shown_and_takes_the_basket_at_once() {
    let cfg = Config::defaults(M, 3);
    let (g, ev) = bete_rules::Game::new(bete_rules::Setup {
        ruleset: M,
        config: cfg.clone(),
        seats: 3,
        first_dealer: Seat(0),
        decks: bete_rules::Decks::Explicit(vec![two_mouches(&cfg, false)]),
    })
    .expect("setup");
    // every mouche in the comparison is shown, the best last (RC1)
    let s = shown(&ev);
    assert_eq!(s.len(), 3, "{s:?}");
    assert_eq!(s.last().map(|x| x.0), Some(2));
    let st = settled(&ev);
    assert_eq!(
        st.result,
        DealResult::Flush {
            seat: Seat(2),
            dealt: true
        }
    );
    assert_eq!(st.net[..3], [0, 0, 5]);
    // no action was taken: the next deal waits for its deck
    assert_eq!(g.phase(), Phase::AwaitingDeck);
    assert_eq!(g.deal_index(), 1);
}

#[test]
fn mo8_a_trump_mouche_beats_a_plain_one() {
    let cfg = Config::defaults(M, 3);
    let (_, ev) = bete_rules::Game::new(bete_rules::Setup {
        ruleset: M,
        config: cfg.clone(),
        seats: 3,
        first_dealer: Seat(0),
        decks: bete_rules::Decks::Explicit(vec![two_mouches(&cfg, true)]),
    })
    .expect("setup");
    assert_eq!(
        settled(&ev).result,
        DealResult::Flush {
            seat: Seat(1),
            dealt: true
        }
    );
}

#[test]
fn mo9_a38_others_pay_the_start_basket_for_a_dealt_mouche() {
    let cfg = config(M, 3, |c| {
        c.dealt_mouche_penalty = DealtMouchePenalty::OthersPay
    });
    let (g, ev) = bete_rules::Game::new(bete_rules::Setup {
        ruleset: M,
        config: cfg.clone(),
        seats: 3,
        first_dealer: Seat(0),
        decks: bete_rules::Decks::Explicit(vec![two_mouches(&cfg, false)]),
    })
    .expect("setup");
    let st = settled(&ev);
    // the losing mouche holder and the dealer pay B = 5 each into the next basket
    assert_eq!(st.net[..3], [-5, -5, 5]);
    assert_eq!(st.betes[..3], [5, 5, 0]);
    assert_eq!(st.pools.pot, 10);
    // the next dealer's ante joins them
    assert_eq!(g.pools().pot, 15);
}

#[test]
fn a38_equal_mouches_go_to_the_seat_nearer_eldest() {
    let cfg = Config::defaults(M, 3);
    for (dealer, winner) in [(0u8, 1u8), (1, 2)] {
        let d = deck(
            M,
            &cfg,
            3,
            dealer,
            &["8C 9C TC JC QC", "KH QH JH AH TH", "KD QD JD AD TD"],
            "",
            "KS",
            "",
        );
        let (_, ev) = bete_rules::Game::new(bete_rules::Setup {
            ruleset: M,
            config: cfg.clone(),
            seats: 3,
            first_dealer: Seat(dealer),
            decks: bete_rules::Decks::Explicit(vec![d]),
        })
        .expect("setup");
        assert_eq!(
            settled(&ev).result,
            DealResult::Flush {
                seat: Seat(winner),
                dealt: true
            },
            "dealer {dealer}"
        );
    }
}

#[test]
fn mo10_one_declaration_each_drop_stand_or_exchange_once() {
    let cfg = Config::defaults(M, 3);
    let mut g = game(M, cfg.clone(), 3, 0, vec![five_tricks_deck(&cfg)]);
    let l = g.legal_actions(Seat(1));
    assert!(l.contains(&"drop".parse().expect("a")));
    assert!(l.contains(&"stand".parse().expect("a")));
    // every non-empty subset of five cards: 31 exchanges
    assert_eq!(
        l.iter()
            .filter(|a| matches!(a, bete_rules::Action::Exchange(_)))
            .count(),
        31
    );
    run(&mut g, "1 exchange KH AH");
    refuse(&mut g, 1, "stand");
    for bad in ["pass", "challenge", "hidden 9H", "widow", "general"] {
        refuse(&mut g, 2, bad);
    }
    run(&mut g, "2 drop, 0 stand");
    // no second turn: the dealer's discard follows at once
    assert_eq!(g.phase(), Phase::DealerDiscard);
}

#[test]
fn mo11_the_dealer_takes_the_turn_up_after_his_own_turn() {
    let cfg = Config::defaults(M, 3);
    let mut g = game(M, cfg.clone(), 3, 0, vec![five_tricks_deck(&cfg)]);
    refuse(&mut g, 1, "discard 9S");
    run(&mut g, "1 stand, 2 stand, 0 exchange KD");
    assert_eq!(g.phase(), Phase::DealerDiscard);
    // any card of his hand or the turn-up itself
    assert_eq!(g.legal_actions(Seat(0)).len(), 6);
    let ev = run(&mut g, "0 discard AS");
    assert!(ev.iter().any(|e| matches!(
        e.public,
        bete_rules::PublicEvent::TookTurnUp { seat: Seat(0), .. }
    )));
    let v = g.view(bete_rules::Viewer::Seat(Seat(0)));
    let hand = v.hand.expect("hand");
    assert!(hand.contains(pool_support::card("9S")) && !hand.contains(pool_support::card("AS")));
    // the turn-up's suit stays trumps
    assert_eq!(v.trump, Some(bete_rules::Suit::Spades));
    // others learn only that he took it up (RC1)
    let other = g.view(bete_rules::Viewer::Seat(Seat(1)));
    assert!(other.turn_up_taken);
    assert_eq!(other.seat_states[0].last_spoke, None);
}

#[test]
fn mo11_a_dealer_who_dropped_makes_no_discard() {
    let cfg = Config::defaults(M, 3);
    let mut g = game(M, cfg.clone(), 3, 0, vec![five_tricks_deck(&cfg)]);
    run(&mut g, "1 stand, 2 stand, 0 drop");
    assert_eq!(g.phase(), Phase::Trick { trick: 0 });
}

#[test]
fn mo12_a39_everyone_else_drops_and_the_dealer_takes_the_basket() {
    let cfg = Config::defaults(M, 3);
    let mut g = game(M, cfg.clone(), 3, 0, vec![five_tricks_deck(&cfg)]);
    let ev = run(&mut g, "1 drop, 2 drop");
    let s = settled(&ev);
    assert_eq!(s.result, DealResult::DealerTakesPot(Seat(0)));
    assert_eq!(s.net[..3], [5, 0, 0]);
    assert_eq!(g.balances(), &[0, -5, 0]);
}

#[test]
fn mo13_a39_a_lone_stayer_takes_the_basket_without_play() {
    let cfg = Config::defaults(M, 3);
    let mut g = game(M, cfg.clone(), 3, 0, vec![five_tricks_deck(&cfg)]);
    let ev = run(&mut g, "1 stand, 2 drop, 0 drop");
    let s = settled(&ev);
    assert_eq!(s.result, DealResult::LoneStayer(Seat(1)));
    assert_eq!(s.net[..3], [0, 5, 0]);
}

/// Seat 1 holds four hearts and exchanges its spade for the talon's top card, TH.
fn exchange_mouche_deck(cfg: &Config) -> Vec<bete_rules::Card> {
    deck(
        M,
        cfg,
        3,
        0,
        &["AS TS KD QD JD", "KH QH JH AH 8S", "KC QC JC AC 8D"],
        "",
        "9S",
        "TH",
    )
}

#[test]
fn mo13_a40_an_exchanged_mouche_takes_the_basket_and_nobody_pays() {
    let cfg = Config::defaults(M, 3);
    let mut g = game(M, cfg.clone(), 3, 0, vec![exchange_mouche_deck(&cfg)]);
    let ev = run(&mut g, "1 exchange 8S, 2 stand, 0 stand, 0 discard 9S");
    let s = settled(&ev);
    assert_eq!(
        s.result,
        DealResult::Flush {
            seat: Seat(1),
            dealt: false
        }
    );
    assert_eq!(s.net[..3], [0, 5, 0]);
    assert_eq!(s.pools.pot, 0);
    // `exchanged_mouche = false`: only a dealt mouche counts; the tricks are played
    let cfg = config(M, 3, |c| c.exchanged_mouche = false);
    let mut g = game(M, cfg.clone(), 3, 0, vec![exchange_mouche_deck(&cfg)]);
    run(&mut g, "1 exchange 8S, 2 stand, 0 stand, 0 discard 9S");
    assert_eq!(g.phase(), Phase::Trick { trick: 0 });
}

#[test]
fn mo13_taking_up_the_turn_up_can_make_the_dealers_mouche() {
    let cfg = Config::defaults(M, 3);
    let d = deck(
        M,
        &cfg,
        3,
        0,
        &["KS QS JS AS 8H", "KH QH JH AH 9D", "KC QC JC AC 8D"],
        "",
        "TS",
        "",
    );
    let mut g = game(M, cfg, 3, 0, vec![d]);
    // seat 1's dealt hearts are only four: no dealt mouche
    assert_eq!(g.deal_index(), 0);
    let ev = run(&mut g, "1 stand, 2 stand, 0 stand, 0 discard 8H");
    assert_eq!(
        settled(&ev).result,
        DealResult::Flush {
            seat: Seat(0),
            dealt: false
        }
    );
}

#[test]
fn mo14_the_first_active_seat_after_the_dealer_leads() {
    let cfg = Config::defaults(M, 3);
    let mut g = game(M, cfg.clone(), 3, 0, vec![five_tricks_deck(&cfg)]);
    run(&mut g, "1 drop, 2 stand, 0 stand, 0 discard 9S");
    assert_eq!(g.to_act(), Some(Seat(2)));
    // only the seats still in play: seat 1 is skipped
    run(&mut g, "2 card 8D");
    assert_eq!(g.to_act(), Some(Seat(0)));
}

/// Four seats, dealer 0, hearts trumps (6H turned up): QS led, seat 2 must head with KS, seat 3
/// (void) must trump with 7H, the dealer (void) must overtrump with KH.
fn duties_deck(cfg: &Config) -> Vec<bete_rules::Card> {
    deck(
        M,
        cfg,
        4,
        0,
        &[
            "KH QC JD QD KD",
            "QS 7C 8C 9C TC",
            "KS AS 7S 6C JC",
            "7D 8D 9D TD 7H",
        ],
        "",
        "6H",
        "",
    )
}

#[test]
fn mo15_a41_follow_head_trump_overtrump() {
    let cfg = Config::defaults(M, 4);
    let mut g = game(M, cfg.clone(), 4, 0, vec![duties_deck(&cfg)]);
    run(
        &mut g,
        "1 stand, 2 stand, 3 stand, 0 stand, 0 discard 6H, 1 card QS",
    );
    assert_eq!(legal(&g, 2), "card KS");
    let e = refuse(&mut g, 2, "card AS");
    assert!(matches!(e, bete_rules::ActionError::MustHead(_)), "{e}");
    let e = refuse(&mut g, 2, "card 6C");
    assert!(
        matches!(e, bete_rules::ActionError::MustFollowSuit(_)),
        "{e}"
    );
    run(&mut g, "2 card KS");
    assert_eq!(legal(&g, 3), "card 7H");
    let e = refuse(&mut g, 3, "card 7D");
    assert!(matches!(e, bete_rules::ActionError::MustTrump(_)), "{e}");
    run(&mut g, "3 card 7H");
    assert_eq!(legal(&g, 0), "card KH");
    let e = refuse(&mut g, 0, "card QD");
    assert!(
        matches!(e, bete_rules::ActionError::MustOvertrump(_)),
        "{e}"
    );
}

#[test]
fn mo15_without_heading_any_card_of_the_suit_led() {
    let cfg = config(M, 4, |c| c.must_head_in_suit = false);
    let mut g = game(M, cfg.clone(), 4, 0, vec![duties_deck(&cfg)]);
    run(
        &mut g,
        "1 stand, 2 stand, 3 stand, 0 stand, 0 discard 6H, 1 card QS",
    );
    assert_eq!(legal(&g, 2), "card 7S, card AS, card KS");
}

#[test]
fn mo16_highest_trump_else_highest_of_the_suit_led() {
    let cfg = Config::defaults(M, 4);
    let mut g = game(M, cfg.clone(), 4, 0, vec![duties_deck(&cfg)]);
    let ev = run(
        &mut g,
        "1 stand, 2 stand, 3 stand, 0 stand, 0 discard 6H, 1 card QS, 2 card KS, 3 card 7H, 0 card KH",
    );
    assert!(ev.iter().any(|e| matches!(
        e.public,
        bete_rules::PublicEvent::TrickWon {
            trick: 0,
            winner: Seat(0)
        }
    )));
}

#[test]
fn mo18_a42_trickless_stayers_make_the_mouche_into_the_next_basket() {
    let cfg = Config::defaults(M, 3);
    let mut g = game(M, cfg.clone(), 3, 0, vec![five_tricks_deck(&cfg)]);
    let ev = run(&mut g, FIVE_TRICKS);
    let s = settled(&ev);
    assert_eq!(s.betes[..3], [5, 0, 5]);
    assert_eq!(s.pools.pot, 10);
    // the next dealer's ante joins them: B = 15
    assert_eq!(g.pools().pot, 15);
    assert_eq!(g.balances(), &[-10, 0, -5]);
}

#[test]
fn mo18_a42_queued_mouches_enter_an_empty_basket_largest_first() {
    let cfg = config(M, 3, |c| c.mouche_payoff = MouchePayoff::QueueLargestFirst);
    let mut g = game(M, cfg.clone(), 3, 0, vec![five_tricks_deck(&cfg)]);
    let ev = run(&mut g, FIVE_TRICKS);
    let s = settled(&ev);
    // both mouches are queued in play order from eldest: seat 2's, then the dealer's
    assert_eq!(s.pools.pot, 0);
    assert_eq!(s.pools.bete_queue, [5, 5]);
    // the basket was empty: the oldest of the equal mouches joins the next ante
    assert_eq!(g.pools().pot, 10);
    assert_eq!(g.pools().bete_queue, [5]);
    exchange_support::assert_conserved(&g);
}

#[test]
fn mo19_dropped_seats_pay_and_receive_nothing() {
    let cfg = Config::defaults(M, 3);
    let mut g = game(M, cfg.clone(), 3, 0, vec![five_tricks_deck(&cfg)]);
    let ev = run(
        &mut g,
        "1 stand, 2 drop, 0 stand, 0 discard 9S, \
         1 card KS, 0 card TS, 1 card QS, 0 card AS, 1 card JS, 0 card JD, \
         1 card AH, 0 card QD, 1 card KH, 0 card KD",
    );
    let s = settled(&ev);
    assert_eq!(s.net[..3], [-5, 5, 0]);
}

#[test]
fn mo21_a53_only_strict_legality() {
    assert!(Config::from_pairs(M, 4, &[("enforce_legality".into(), "lenient".into())]).is_err());
    assert!(Config::from_pairs(M, 4, &[("enforce_legality".into(), "strict".into())]).is_ok());
}

#[test]
fn mo22_rc4_end_of_match_splits_the_basket_from_the_last_eldest() {
    let cfg = config(M, 3, |c| {
        c.rounds = 1;
        c.max_extra_deals = 0;
    });
    let drop_deck = five_tricks_deck(&cfg);
    // deal 2: dealer 2, eldest 0 holds the five winners
    let last = deck(
        M,
        &cfg,
        3,
        2,
        &["KS QS JS AH KH", "9H 8H TD 9D 8D", "AS TS KD QD JD"],
        "",
        "9S",
        "",
    );
    let mut g = game(M, cfg, 3, 0, vec![drop_deck.clone(), drop_deck, last]);
    run(&mut g, "1 drop, 2 drop"); // deal 0: the dealer takes 5
    run(&mut g, "2 drop, 0 drop"); // deal 1: the dealer takes 5
    let ev = run(
        &mut g,
        "0 stand, 1 stand, 2 stand, 2 discard 9S, \
         0 card KS, 1 card 8D, 2 card TS, 0 card QS, 1 card 9H, 2 card AS, \
         0 card JS, 1 card 8H, 2 card JD, 0 card AH, 1 card 9D, 2 card QD, \
         0 card KH, 1 card TD, 2 card KD",
    );
    // deal 3 is the last (R = 3, no extra deals): the basket of 10 goes back 4/3/3
    let returned = ev
        .iter()
        .find_map(|e| match &e.public {
            bete_rules::PublicEvent::MatchEnded { returned, .. } => Some(**returned),
            _ => None,
        })
        .expect("match ended");
    assert_eq!(returned[..3], [4, 3, 3]);
    assert!(g.is_over());
    assert_eq!(g.on_table(), 0);
    assert_eq!(g.balances().iter().sum::<i64>(), 0);
}

#[test]
fn mo22_the_match_goes_on_while_the_basket_holds_mouches() {
    let cfg = config(M, 3, |c| c.rounds = 1);
    let drop_deck = five_tricks_deck(&cfg);
    let last = deck(
        M,
        &cfg,
        3,
        2,
        &["KS QS JS AH KH", "9H 8H TD 9D 8D", "AS TS KD QD JD"],
        "",
        "9S",
        "",
    );
    let mut g = game(M, cfg, 3, 0, vec![drop_deck.clone(), drop_deck, last]);
    run(&mut g, "1 drop, 2 drop, 2 drop, 0 drop");
    run(
        &mut g,
        "0 stand, 1 stand, 2 stand, 2 discard 9S, \
         0 card KS, 1 card 8D, 2 card TS, 0 card QS, 1 card 9H, 2 card AS, \
         0 card JS, 1 card 8H, 2 card JD, 0 card AH, 1 card 9D, 2 card QD, \
         0 card KH, 1 card TD, 2 card KD",
    );
    // R = 3 reached, but two mouches are in the basket: an extra deal starts
    assert!(!g.is_over());
    assert_eq!(g.phase(), Phase::AwaitingDeck);
}

#[test]
fn rc1_hands_set_aside_cards_and_the_talon_stay_hidden() {
    let cfg = Config::defaults(M, 3);
    let mut g = game(M, cfg.clone(), 3, 0, vec![five_tricks_deck(&cfg)]);
    run(&mut g, "1 exchange KH AH");
    let other = g.view(bete_rules::Viewer::Seat(Seat(2)));
    assert_eq!(other.seat_states[1].exchanged[0], 2);
    assert_eq!(
        other.seat_states[1].last_spoke,
        Some(bete_rules::Action::Exchange(bete_rules::CardSet::EMPTY))
    );
    let spectator = g.view(bete_rules::Viewer::Spectator);
    assert_eq!(spectator.hand, None);
    let own = g.view(bete_rules::Viewer::Seat(Seat(1)));
    assert_eq!(own.hand.expect("hand").len(), 5);
}

#[test]
fn rc2_start_basket_a_multiple_of_five_under_the_default_ante() {
    let cfg = config(M, 5, |c| c.rounds = 3);
    let mut g = exchange_support::seeded(M, cfg, 5, 11);
    while let Some(s) = g.to_act() {
        assert_eq!(g.pools().pot % 5, 0);
        let a = g.safe_action(s).expect("safe");
        g.apply(s, a).expect("legal");
        exchange_support::assert_conserved(&g);
    }
    assert_eq!(g.on_table(), 0);
}
