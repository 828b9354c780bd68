//! Property tests of determinization: for random mid-deal views of every ruleset, seat count
//! and a spread of configs (bower obligations, follow rules, flushes, lenient play), every
//! sampled deal agrees with the view: replaying what the seat knows on the sample gives the
//! same view, with and without the seat's memory of its own exchanges, and the sample plays
//! on to its settlement.

use bete_rules::bots::{Policy, bot_rng};
use bete_rules::determinize::{DeterminizeError, Determinizer, Seen};
use bete_rules::view::PlayedCard;
use bete_rules::{
    Action, Card, CardSet, Config, Decks, Game, Phase, PublicEvent, Rank, RulesetId, Seat, Seed,
    Setup, Suit, View, Viewer,
};
use proptest::prelude::*;
use rand_chacha::ChaCha8Rng;
use rand_chacha::rand_core::SeedableRng;

fn alternatives(r: RulesetId) -> &'static [(&'static str, &'static str)] {
    match r {
        RulesetId::Bete | RulesetId::BeteAceHigh => &[
            ("contre", "disabled"),
            ("max_curieuse", "3"),
            ("deal_pattern", "2+1+2"),
            ("must_head_in_suit", "false"),
            ("enforce_legality", "lenient"),
        ],
        RulesetId::Beast => &[("deal_pattern", "2+3")],
        RulesetId::BesteBoer => &[
            ("follow_after_trick2", "true"),
            ("enforce_legality", "lenient"),
        ],
        RulesetId::Lanterlui => &[
            ("follow_suit", "false"),
            ("four_card_flush", "true"),
            ("short_pack", "true"),
            ("enforce_legality", "lenient"),
        ],
        RulesetId::BesterBube => &[
            ("follow_suit", "false"),
            ("per_trick", "one"),
            ("enforce_legality", "lenient"),
        ],
        RulesetId::Mouche => &[
            ("exchanged_mouche", "true"),
            ("mouche_payoff", "queue_largest_first"),
            ("dealer_ante", "per_seat"),
        ],
        RulesetId::Mistigri => &[
            ("mistigri_laws", "free"),
            ("mistigri_flush", "trump_only"),
            ("exchanged_mouche", "true"),
        ],
        RulesetId::Loo => &[
            ("pam", "trump_jack"),
            ("pam_laws", "trump"),
            ("ace_lead", "none"),
            ("flush_rule", "pcg"),
        ],
        RulesetId::Rams => &[
            ("ranking", "ecarte"),
            ("undertrump", "free"),
            ("drop_requires_widow_taken", "true"),
        ],
    }
}

/// Every ruleset: Part I (sections 1-6) and Part II (Mouche, Mistigri, Loo, Rams).
const MODELLED: [RulesetId; 10] = RulesetId::ALL;

#[derive(Clone, Debug)]
struct Case {
    setup: Setup,
    heuristic: u8,
    steps: u16,
    viewer: u8,
    seed: u64,
}

fn case() -> impl Strategy<Value = Case> {
    (
        0..MODELLED.len(),
        any::<u8>(),
        any::<u16>(),
        any::<[u8; 32]>(),
        any::<u8>(),
        any::<u8>(),
        0u16..120,
        any::<u8>(),
        any::<u64>(),
    )
        .prop_map(
            |(ri, seat_pick, alt_bits, seed, dealer, heuristic, steps, viewer, s)| {
                let ruleset = MODELLED[ri];
                let (lo, hi) = ruleset.seat_range();
                let seats = lo + seat_pick % (hi - lo + 1);
                let mut pairs: Vec<(String, String)> = vec![("rounds".into(), "3".into())];
                for (i, (k, v)) in alternatives(ruleset).iter().enumerate() {
                    if (alt_bits >> (i * 2)) & 3 == 0 {
                        pairs.push((k.to_string(), v.to_string()));
                    }
                }
                let config = Config::from_pairs(ruleset, seats, &pairs).expect("valid config");
                Case {
                    setup: Setup {
                        ruleset,
                        config,
                        seats,
                        first_dealer: Seat(dealer % seats),
                        decks: Decks::Seed(Seed(seed)),
                    },
                    heuristic,
                    steps,
                    viewer,
                    seed: s,
                }
            },
        )
}

/// Plays `c.steps` actions (heuristic or random per seat), collecting the viewer's own
/// private events as the seat would; returns the game and the viewer's memory.
fn mid_deal(c: &Case) -> (Game, Seat, Seen) {
    let (mut game, events) = Game::new(c.setup.clone()).expect("setup");
    let n = c.setup.seats;
    let viewer = Seat(c.viewer % n);
    let mut seen = Seen::default();
    let mut deal = 0;
    let mut take = |evs: &[bete_rules::Event], seen: &mut Seen| {
        for e in evs {
            if let PublicEvent::DealStarted(ds) = &e.public {
                deal = ds.deal;
            }
            for (s, p) in &e.private {
                if *s == viewer {
                    seen.observe(deal, p);
                }
            }
        }
    };
    take(&events, &mut seen);
    let mut rngs: Vec<ChaCha8Rng> = (0..n)
        .map(|i| bot_rng(&Seed([c.viewer; 32]), Seat(i)))
        .collect();
    for _ in 0..c.steps {
        let Some(s) = game.to_act() else { break };
        let view = game.view(Viewer::Seat(s));
        let policy = if c.heuristic >> (s.0 % 8) & 1 == 1 {
            Policy::Heuristic
        } else {
            Policy::Random
        };
        let a = policy.choose(&view, &mut rngs[s.index()]);
        let evs = game.apply(s, a).expect("a policy's action is legal");
        take(&evs, &mut seen);
    }
    (game, viewer, seen)
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 2000, ..ProptestConfig::default() })]

    #[test]
    fn every_sample_agrees_with_the_view(c in case()) {
        let (game, viewer, seen) = mid_deal(&c);
        prop_assume!(game.to_act().is_some());
        let view = game.view(Viewer::Seat(viewer));
        let mut rng = ChaCha8Rng::seed_from_u64(c.seed);
        for memory in [seen.clone(), Seen::default()] {
            let d = Determinizer::new(&view, &c.setup.config, &memory)
                .unwrap_or_else(|e| panic!("{e}\n{view:#?}"));
            // What the plays rule out is never in the true hand (the hints are sound, so the
            // samples stay uniform over every consistent deal).
            for s in 0..c.setup.seats {
                let truth = game.view(Viewer::Seat(Seat(s))).hand.expect("a seat's hand");
                prop_assert!(truth.intersect(d.ruled_out(Seat(s))).is_empty());
            }
            for _ in 0..3 {
                // With exact dealing a consistent view always yields a sample.
                let mut sample = d.sample(&mut rng).unwrap_or_else(|e| panic!("{e}\n{view:#?}"));
                prop_assert_eq!(sample.view(Viewer::Seat(viewer)), view.clone());
                prop_assert_eq!(sample.to_act(), game.to_act());
                prop_assert_eq!(sample.balances(), game.balances());
                prop_assert_eq!(sample.pools(), game.pools());
                prop_assert!(sample.play_out_deal(&mut rng));
            }
        }
    }
}

/// A seat that exchanged twice: with its memory, the cards it set aside in round 1 never
/// show up in another seat's hand of a sample (without it, they may).
#[test]
fn own_set_aside_cards_stay_out_of_other_hands() {
    let mut checked = 0;
    for seed in 0..400u64 {
        let c = Case {
            setup: Setup {
                ruleset: RulesetId::BesteBoer,
                config: Config::defaults(RulesetId::BesteBoer, 4),
                seats: 4,
                first_dealer: Seat(0),
                decks: Decks::Seed(Seed([seed as u8; 32])),
            },
            heuristic: 0,
            steps: (seed % 9) as u16 + 2,
            viewer: (seed % 4) as u8,
            seed,
        };
        let (game, viewer, seen) = mid_deal(&c);
        if game.to_act().is_none() {
            continue;
        }
        let aside: Vec<_> = seen.exchanges.iter().flatten().map(|(a, _)| *a).collect();
        if aside.is_empty() {
            continue;
        }
        let view = game.view(Viewer::Seat(viewer));
        let d = Determinizer::new(&view, &c.setup.config, &seen).expect("determinizer");
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        for _ in 0..5 {
            let sample = d.sample(&mut rng).expect("sample");
            for s in 0..4 {
                if Seat(s) == viewer {
                    continue;
                }
                let theirs = sample.view(Viewer::Seat(Seat(s))).hand.expect("hand");
                for a in &aside {
                    assert!(theirs.intersect(*a).is_empty(), "seed {seed}");
                }
            }
        }
        checked += 1;
    }
    assert!(checked > 20, "only {checked} cases with an exchange");
}

/// Rams: a seat that took the widow and remembers the hand it threw in never sees those cards
/// in another seat's hand of a sample (without its memory, they may be anywhere unseen).
#[test]
fn a_widow_takers_old_hand_stays_out_of_other_hands() {
    let mut checked = 0;
    for (seed, viewer) in (0..300u64).flat_map(|s| (1..4u8).map(move |v| (s, v))) {
        let c = Case {
            setup: Setup {
                ruleset: RulesetId::Rams,
                config: Config::defaults(RulesetId::Rams, 4),
                seats: 4,
                first_dealer: Seat(0),
                decks: Decks::Seed(Seed([seed as u8; 32])),
            },
            heuristic: (seed % 3) as u8,
            steps: (seed % 12) as u16 + 3,
            viewer,
            seed,
        };
        let (game, viewer, seen) = mid_deal(&c);
        let view = game.view(Viewer::Seat(viewer));
        let took = view.seat_states[viewer.index()].last_spoke == Some(Action::Widow);
        if game.to_act().is_none() || !took || view.dealer == viewer || game.deal_index() > 0 {
            continue;
        }
        let Some((old, _)) = seen.exchanges[0] else {
            continue;
        };
        let d = Determinizer::new(&view, &c.setup.config, &seen).expect("determinizer");
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        for _ in 0..5 {
            let sample = d.sample(&mut rng).expect("sample");
            assert_eq!(sample.view(Viewer::Seat(viewer)), view);
            for s in (0..4).map(Seat).filter(|&s| s != viewer) {
                let theirs = sample.view(Viewer::Seat(s)).hand.expect("hand");
                assert!(theirs.intersect(old).is_empty(), "seed {seed}");
            }
        }
        checked += 1;
    }
    assert!(checked > 5, "only {checked} widow takers");
}

/// The search policy plays whole deals of every ruleset with legal actions only, and the same
/// seeds give the same match (its budget is in playouts, not time).
#[test]
fn search_plays_every_ruleset_reproducibly() {
    use bete_rules::bots::Bots;
    for r in RulesetId::ALL {
        let n = r.seat_range().0 + 1;
        let play = || {
            let setup = Setup {
                ruleset: r,
                config: Config::from_pairs(r, n, &[("rounds".into(), "1".into())]).expect("config"),
                seats: n,
                first_dealer: Seat(0),
                decks: Decks::Seed(Seed([3; 32])),
            };
            let (mut game, _) = Game::new(setup).expect("setup");
            let mut bots = Bots::new(&[Policy::Search(30), Policy::Heuristic], n, &Seed([4; 32]));
            bots.play(&mut game, Some(2))
                .expect("search plays legal actions");
            assert!(game.deal_index() >= 2 || game.is_over(), "{r}");
            game.log().to_vec()
        };
        assert_eq!(play(), play(), "{r}");
    }
}

/// With exact dealing, a consistent view always yields a sample: over a fixed set of random
/// mid-deal views of every ruleset, not one sample runs out of proposals.
#[test]
fn the_sampler_never_runs_out() {
    use proptest::strategy::ValueTree;
    use proptest::test_runner::TestRunner;
    let mut runner = TestRunner::deterministic();
    let mut asked = 0u32;
    for _ in 0..400 {
        let c = case().new_tree(&mut runner).expect("a case").current();
        let (game, viewer, seen) = mid_deal(&c);
        if game.to_act().is_none() {
            continue;
        }
        let view = game.view(Viewer::Seat(viewer));
        let d = Determinizer::new(&view, &c.setup.config, &seen).expect("a seat's view");
        let mut rng = ChaCha8Rng::seed_from_u64(c.seed);
        for _ in 0..3 {
            asked += 1;
            let (_, tries) = d
                .sample_counted(&mut rng)
                .unwrap_or_else(|e| panic!("{e}\n{view:#?}"));
            assert!(tries < 1_000, "{tries} proposals\n{view:#?}");
        }
    }
    assert!(asked > 600, "only {asked} samples asked for");
}

/// Every ruleset at every seat count it allows (Loo from 3 to 10), at every decision of a
/// deal: the samples agree with the view.
#[test]
fn every_ruleset_and_seat_count_determinizes() {
    for r in RulesetId::ALL {
        let (lo, hi) = r.seat_range();
        for n in lo..=hi {
            let mut decisions = 0;
            for seed in 0..3u8 {
                let setup = Setup {
                    ruleset: r,
                    config: Config::defaults(r, n),
                    seats: n,
                    first_dealer: Seat(seed % n),
                    decks: Decks::Seed(Seed([seed; 32])),
                };
                let (mut game, _) = Game::new(setup).expect("setup");
                let mut rng = ChaCha8Rng::seed_from_u64(u64::from(seed));
                while let Some(s) = game.to_act() {
                    if game.deal_index() > 1 {
                        break;
                    }
                    let view = game.view(Viewer::Seat(s));
                    let d = Determinizer::new(&view, &Config::defaults(r, n), &Seen::default())
                        .unwrap_or_else(|e| panic!("{r}/{n}: {e}"));
                    let sample = d
                        .sample(&mut rng)
                        .unwrap_or_else(|e| panic!("{r}/{n}: {e}"));
                    assert_eq!(sample.view(Viewer::Seat(s)), view, "{r}/{n}");
                    decisions += 1;
                    let a = Policy::Random.choose(&view, &mut rng);
                    game.play(s, a).expect("a legal action");
                }
            }
            assert!(decisions > 5, "{r}/{n}: only {decisions} decisions");
        }
    }
}

/// Random play of `r` at `n` seats, calling `check` at every decision of the first deals
/// with the acting seat's view and a determinizer for it.
fn each_decision(
    r: RulesetId,
    n: u8,
    deals: u64,
    mut check: impl FnMut(&Game, &View, &Determinizer),
) {
    for seed in 0..deals {
        each_decision_seeded(r, n, seed, &mut check);
    }
}

/// `each_decision` for the first deal of one seed.
fn each_decision_seeded(
    r: RulesetId,
    n: u8,
    seed: u64,
    mut check: impl FnMut(&Game, &View, &Determinizer),
) {
    let mut bytes = [0u8; 32];
    bytes[..8].copy_from_slice(&seed.to_le_bytes());
    let config = Config::defaults(r, n);
    let setup = Setup {
        ruleset: r,
        config: config.clone(),
        seats: n,
        first_dealer: Seat(0),
        decks: Decks::Seed(Seed(bytes)),
    };
    let (mut game, _) = Game::new(setup).expect("setup");
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    while let Some(s) = game.to_act() {
        if game.deal_index() > 0 {
            break;
        }
        let view = game.view(Viewer::Seat(s));
        let d = Determinizer::new(&view, &config, &Seen::default()).expect("determinizer");
        check(&game, &view, &d);
        let a = Policy::Random.choose(&view, &mut rng);
        game.play(s, a).expect("a legal action");
    }
}

/// The cards the viewer has not seen: not in its hand, not played face up, not a turn-up,
/// not set aside in its last exchange.
fn unseen(game: &Game, view: &View) -> CardSet {
    let mut seen = view.hand.unwrap_or_default();
    for st in &view.seat_states {
        if let (Viewer::Seat(me), Some(Action::Exchange(aside))) = (view.viewer, st.last_spoke)
            && st.seat == me
        {
            seen = seen.union(aside);
        }
    }
    for t in &view.tricks {
        for &(_, pc) in &t.cards {
            if let PlayedCard::FaceUp(c) | PlayedCard::FaceDown(Some(c)) = pc {
                seen.insert(c);
            }
        }
    }
    for &c in view.turn_up.iter().chain(&view.set_aside_turn_ups) {
        seen.insert(c);
    }
    game.pack()
        .iter()
        .copied()
        .filter(|&c| !seen.contains(c))
        .collect()
}

/// A revealed void (Bête and Beast force following suit): a seat that played another suit to
/// a face-up lead holds none of the led suit, in the engine's deductions and in every sample.
#[test]
fn revealed_voids_hold_in_every_sample() {
    let mut voids = 0;
    for (r, n) in [(RulesetId::Bete, 5), (RulesetId::Beast, 4)] {
        each_decision(r, n, 150, |game, view, d| {
            let hidden = unseen(game, view);
            let mut rng = ChaCha8Rng::seed_from_u64(u64::from(view.deal));
            for t in &view.tricks {
                let Some(&(_, PlayedCard::FaceUp(lead))) = t.cards.first() else {
                    continue;
                };
                for &(x, pc) in &t.cards[1..] {
                    let PlayedCard::FaceUp(c) = pc else { continue };
                    if c.suit() == lead.suit() || Some(x) == view.to_act {
                        continue;
                    }
                    let void = hidden.intersect(CardSet::suit(lead.suit()));
                    assert!(
                        void.is_subset(d.ruled_out(x)),
                        "{r}: {x} void in {:?}",
                        lead.suit()
                    );
                    for _ in 0..5 {
                        let g = d.sample(&mut rng).expect("sample");
                        let hand = g.view(Viewer::Seat(x)).hand.expect("hand");
                        assert!(hand.intersect(void).is_empty(), "{r}: {x} holds {void:?}");
                    }
                    voids += 1;
                }
            }
        });
    }
    assert!(voids > 100, "only {voids} revealed voids");
}

/// The bower duty of tricks 1 and 2 (0.4 item 7, Beste Boer and Bester Bube): whoever held
/// the top bower had to play it to trick 1 unless he was the last to play; so every earlier
/// player to trick 1 who did not play it cannot hold it, in the deductions and the samples.
#[test]
fn bower_duties_hold_in_every_sample() {
    let mut duties = 0;
    for r in [RulesetId::BesteBoer, RulesetId::BesterBube] {
        each_decision(r, 4, 200, |game, view, d| {
            // A Muss with two active seats plays tricks 1-2 without bower duties (LL8).
            let active = view.seat_states.iter().filter(|st| !st.dropped).count();
            if (view.muss && active <= 2) || view.tricks.len() < 2 {
                return;
            }
            let Some(trump) = view.trump else { return };
            let bower = Card::new(Rank::Jack, trump);
            if !unseen(game, view).contains(bower) {
                return;
            }
            let first = &view.tricks[0].cards;
            let mut rng = ChaCha8Rng::seed_from_u64(u64::from(view.deal) + 1);
            for &(x, _) in &first[..first.len().saturating_sub(1)] {
                if Viewer::Seat(x) == view.viewer {
                    continue;
                }
                assert!(
                    d.ruled_out(x).contains(bower),
                    "{r}: {x} may hold {bower}\n{view:#?}"
                );
                for _ in 0..5 {
                    let g = d.sample(&mut rng).expect("sample");
                    let hand = g.view(Viewer::Seat(x)).hand.expect("hand");
                    assert!(!hand.contains(bower), "{r}: {x} holds {bower}");
                }
                duties += 1;
            }
        });
    }
    assert!(duties > 50, "only {duties} bower duties");
}

/// Lanterlui: a dealt flush in a plain suit (neither trump nor the second bower's suit) would
/// have been shown and settled the deal (0.4 item 8, in a Muss at once, else at the end of
/// round 1); so no sample gives a seat that exchanged nothing (its hand and its plays are
/// its dealt hand) five cards of one plain suit.
#[test]
fn lanterlui_flushes_that_were_not_shown_are_never_sampled() {
    let mut checked = 0;
    each_decision(RulesetId::Lanterlui, 5, 300, |_, view, d| {
        if !matches!(view.phase, Phase::Trick { .. }) {
            return;
        }
        let Some(trump) = view.trump else { return };
        let plain: Vec<Suit> = Suit::ALL
            .into_iter()
            .filter(|&s| s != trump && s != trump.same_colour())
            .collect();
        let mut rng = ChaCha8Rng::seed_from_u64(u64::from(view.deal) + 2);
        for _ in 0..20 {
            let g = d.sample(&mut rng).expect("sample");
            for st in &view.seat_states {
                if st.exchanged != [0, 0] || (view.turn_up_taken && st.seat == view.dealer) {
                    continue;
                }
                let mut five = g.view(Viewer::Seat(st.seat)).hand.expect("hand");
                for t in &view.tricks {
                    for &(x, pc) in &t.cards {
                        if let (true, PlayedCard::FaceUp(c)) = (x == st.seat, pc) {
                            five.insert(c);
                        }
                    }
                }
                for &s in &plain {
                    assert!(five.of_suit(s).len() < 5, "{} was dealt a flush", st.seat);
                }
            }
        }
        checked += 1;
    });
    assert!(checked > 50, "only {checked} views");
}

/// A view no deal can reach gets the typed error, never a panic or a wrong sample: a seat
/// that showed a void and later plays a card of that suit (a stale or doctored view).
#[test]
fn an_irreconcilable_view_is_a_typed_error() {
    let mut refused = 0;
    each_decision(RulesetId::Beast, 4, 100, |game, view, _| {
        if refused >= 5
            || view.tricks.len() < 2
            || !view.tricks[1].cards.is_empty() && view.tricks.len() > 2
        {
            return;
        }
        let Some(&(_, PlayedCard::FaceUp(lead))) = view.tricks[0].cards.first() else {
            return;
        };
        let hidden = unseen(game, view).intersect(CardSet::suit(lead.suit()));
        let Some(c) = hidden.first() else { return };
        // A seat that did not follow in trick 1 and has played to trick 2.
        let second = &view.tricks[1].cards;
        let Some(at) = second.iter().position(|&(x, pc)| {
            matches!(pc, PlayedCard::FaceUp(p) if p.suit() != lead.suit())
                && view.tricks[0].cards.iter().any(|&(y, q)| {
                    y == x && matches!(q, PlayedCard::FaceUp(q) if q.suit() != lead.suit())
                })
        }) else {
            return;
        };
        let mut stale = view.clone();
        stale.tricks[1].cards[at].1 = PlayedCard::FaceUp(c);
        let got = Determinizer::new(
            &stale,
            &Config::defaults(RulesetId::Beast, 4),
            &Seen::default(),
        )
        .and_then(|d| d.sample(&mut ChaCha8Rng::seed_from_u64(1)));
        assert!(
            matches!(got, Err(DeterminizeError::Unreconciled(_))),
            "{:?}",
            got.map(|_| ())
        );
        refused += 1;
    });
    assert!(refused >= 3, "only {refused} doctored views");
}

/// Uniformity through the whole sampler (dealing, history, replay): at the lead of the last
/// trick of a 3-seat Bête deal, each other seat holds one card; every pair of cards they may
/// hold by what the view shows turns up, about equally often (chi-square against uniform).
#[test]
fn the_last_cards_are_drawn_uniformly() {
    let mut tested = 0;
    for seed in 0..40u64 {
        if tested >= 2 {
            break;
        }
        let mut done = false;
        each_decision_seeded(RulesetId::Bete, 3, seed, |game, view, d| {
            if done || view.phase != (Phase::Trick { trick: 4 }) || !view.tricks[4].cards.is_empty()
            {
                return;
            }
            done = true;
            let Viewer::Seat(me) = view.viewer else {
                return;
            };
            let (x, y) = (Seat((me.0 + 1) % 3), Seat((me.0 + 2) % 3));
            let hidden = unseen(game, view);
            let allowed = |s: Seat, c: Card| hidden.contains(c) && !d.ruled_out(s).contains(c);
            let cells: Vec<(Card, Card)> = hidden
                .iter()
                .flat_map(|a| hidden.iter().map(move |b| (a, b)))
                .filter(|&(a, b)| a != b && allowed(x, a) && allowed(y, b))
                .collect();
            let per_cell = 60;
            let draws = per_cell * cells.len();
            let mut rng = ChaCha8Rng::seed_from_u64(seed);
            let mut counts = std::collections::HashMap::new();
            for _ in 0..draws {
                let g = d.sample(&mut rng).expect("sample");
                let hand = |s: Seat| g.view(Viewer::Seat(s)).hand.and_then(|h| h.first());
                let cell = (hand(x).expect("a card"), hand(y).expect("a card"));
                assert!(cells.contains(&cell), "{cell:?} is not allowed");
                *counts.entry(cell).or_insert(0u32) += 1;
            }
            // Cells the replay rejects never turn up; the others share the draws equally.
            let k = counts.len();
            assert!(k * 10 >= cells.len() * 9, "{k} of {} cells", cells.len());
            let mean = draws as f64 / k as f64;
            let chi2: f64 = counts
                .values()
                .map(|&o| (f64::from(o) - mean).powi(2) / mean)
                .sum();
            let df = (k - 1) as f64;
            assert!(
                chi2 < df + 4.4 * (2.0 * df).sqrt(),
                "chi2 {chi2} for {df} df"
            );
            tested += 1;
        });
    }
    assert!(tested >= 2, "only {tested} views");
}
