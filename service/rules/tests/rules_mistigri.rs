//! Mistigri (RULES.md section 13, with A43–A44): one test per rule, named after it.

mod exchange_support;
mod pool_support;

use bete_rules::config::{MistigriFlush, TopLaws};
use bete_rules::event::DealResult;
use bete_rules::{Config, Phase, RulesetId, Seat, Suit, pack};
use exchange_support::{config, game, legal, run, settled};
use pool_support::deck;

const MI: RulesetId = RulesetId::Mistigri;

fn trump_lead_deck(cfg: &Config) -> Vec<bete_rules::Card> {
    deck(
        MI,
        cfg,
        3,
        0,
        &["AH 9H TH 8C QC", "KH QS 8S 9C TC", "JC 9S TS JS QD"],
        "",
        "8H",
        "",
    )
}

#[test]
fn mi1_every_mouche_rule_and_key_applies() {
    for n in 3..=6 {
        let c = Config::defaults(MI, n);
        assert_eq!(pack(MI, &c, n), pack(RulesetId::Mouche, &c, n));
    }
    assert!(Config::from_pairs(MI, 7, &[]).is_err());
    for key in ["pack_rule", "mouche_payoff", "dealt_mouche_penalty"] {
        assert!(bete_rules::config::keys(MI).contains(&key));
    }
    assert!(
        Config::from_pairs(
            RulesetId::Mouche,
            4,
            &[("mistigri_laws".into(), "free".into())]
        )
        .is_err()
    );
}

#[test]
fn mi2_the_jack_of_clubs_is_the_top_trump() {
    let cfg = Config::defaults(MI, 3);
    let mut g = game(MI, cfg.clone(), 3, 0, vec![trump_lead_deck(&cfg)]);
    run(&mut g, "1 stand, 2 stand, 0 stand, 0 discard 8H, 1 card KH");
    // J♣ heads the King of trumps
    assert_eq!(legal(&g, 2), "card JC");
    run(&mut g, "2 card JC");
    // nothing heads Mistigri: any trump
    assert_eq!(legal(&g, 0), "card 9H, card AH, card TH");
    let ev = run(&mut g, "0 card AH");
    assert!(ev.iter().any(|e| matches!(
        e.public,
        bete_rules::PublicEvent::TrickWon {
            trick: 0,
            winner: Seat(2)
        }
    )));
}

#[test]
fn mi2_a_turned_up_mistigri_makes_clubs_trumps() {
    let cfg = Config::defaults(MI, 3);
    let d = deck(
        MI,
        &cfg,
        3,
        0,
        &["AH 9H TH 8C QC", "KH QS 8S 9C TC", "AD 9S TS JS QD"],
        "",
        "JC",
        "",
    );
    let g = game(MI, cfg, 3, 0, vec![d]);
    assert_eq!(
        g.view(bete_rules::Viewer::Spectator).trump,
        Some(Suit::Clubs)
    );
}

#[test]
fn mi3_a43_under_trump_laws_a_lone_mistigri_leaves_its_holder_void_in_clubs() {
    let cfg = Config::defaults(MI, 3);
    let d = deck(
        MI,
        &cfg,
        3,
        0,
        &["AH 9H TH 8C QC", "9C QS 8S KS AS", "JC 9S TS JS QD"],
        "",
        "8H",
        "",
    );
    let mut g = game(MI, cfg, 3, 0, vec![d]);
    run(&mut g, "1 stand, 2 stand, 0 stand, 0 discard 8H, 1 card 9C");
    // void in clubs (J♣ is a trump): must trump, and J♣ is the only trump
    assert_eq!(legal(&g, 2), "card JC");
}

#[test]
fn mi3_a43_free_mistigri_may_be_played_at_any_time_and_is_never_required() {
    let cfg = config(MI, 3, |c| c.mistigri_laws = TopLaws::Free);
    let mut g = game(MI, cfg.clone(), 3, 0, vec![trump_lead_deck(&cfg)]);
    run(&mut g, "1 stand, 2 stand, 0 stand, 0 discard 8H, 1 card KH");
    // no trump apart from J♣: any card, J♣ included
    assert_eq!(legal(&g, 2), "card 9S, card JC, card JS, card QD, card TS");
    let d = deck(
        MI,
        &cfg,
        3,
        0,
        &["AH 9H TH 8C QC", "QS 8S 9C TC KH", "JC KS TS JS QD"],
        "",
        "8H",
        "",
    );
    let mut g = game(MI, cfg, 3, 0, vec![d]);
    run(&mut g, "1 stand, 2 stand, 0 stand, 0 discard 8H, 1 card QS");
    // must head in spades with KS, or play the free J♣, which wins
    assert_eq!(legal(&g, 2), "card JC, card KS");
    let ev = run(&mut g, "2 card JC, 0 card 8C");
    assert!(ev.iter().any(|e| matches!(
        e.public,
        bete_rules::PublicEvent::TrickWon {
            trick: 0,
            winner: Seat(2)
        }
    )));
}

fn four_hearts_and_mistigri(cfg: &Config) -> Vec<bete_rules::Card> {
    deck(
        MI,
        cfg,
        3,
        0,
        &["8D 9D TD JD AS", "JC KH QH AH 9H", "8C 9C TC QC KS"],
        "",
        "8S",
        "",
    )
}

#[test]
fn mi4_a44_four_of_a_suit_and_mistigri_make_a_mouche() {
    let cfg = Config::defaults(MI, 3);
    let (_, ev) = bete_rules::Game::new(bete_rules::Setup {
        ruleset: MI,
        config: cfg.clone(),
        seats: 3,
        first_dealer: Seat(0),
        decks: bete_rules::Decks::Explicit(vec![four_hearts_and_mistigri(&cfg)]),
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
fn mi4_a44_trump_only_mistigri_completes_only_a_trump_mouche() {
    let cfg = config(MI, 3, |c| c.mistigri_flush = MistigriFlush::TrumpOnly);
    let g = game(MI, cfg.clone(), 3, 0, vec![four_hearts_and_mistigri(&cfg)]);
    assert_eq!(g.phase(), Phase::Exchange { round: 1 });
    let d = deck(
        MI,
        &cfg,
        3,
        0,
        &["8D 9D TD JD AH", "JC KS QS AS 9S", "8C 9C TC QC KH"],
        "",
        "8S",
        "",
    );
    let (_, ev) = bete_rules::Game::new(bete_rules::Setup {
        ruleset: MI,
        config: cfg,
        seats: 3,
        first_dealer: Seat(0),
        decks: bete_rules::Decks::Explicit(vec![d]),
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
