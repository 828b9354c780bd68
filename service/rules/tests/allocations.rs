//! Heap allocations of the engine's hot path, counted with a counting global allocator over
//! whole random matches of every ruleset:
//!
//! - `legal_actions_into` with a warm buffer never allocates;
//! - `apply_into` of any action that does not end the deal never allocates, in every family
//!   (a one-seat private part of an exchange, a discard or a face-down lead is held inline);
//! - a deal's last action pays only for the settlement and the next deal: the boxed
//!   `DealSettled` and `DealStarted` payloads, the dealt hands, the spectators' `Reveal`, the log
//!   entry and the shuffled deck (and the waiting bêtes listed in `Pools`, the match's end):
//!   at most 12 on average (it was 12.5 to 24 before the summaries became compact).
//!
//! One test in this binary, so no other test allocates while it counts (a step that shows an
//! allocation is measured again, in case a harness thread allocated meanwhile). Run with
//! `-- --nocapture` to see allocations per deal by ruleset (docs/benchmarks.md).

use std::alloc::System;

use bete_rules::event::Event;
use bete_rules::{Action, Config, Decks, Game, RulesetId, Seat, Seed, Setup};
use rand_chacha::ChaCha8Rng;
use rand_chacha::rand_core::{RngCore, SeedableRng};
use stats_alloc::{INSTRUMENTED_SYSTEM, Region, StatsAlloc};

#[global_allocator]
static GLOBAL: &StatsAlloc<System> = &INSTRUMENTED_SYSTEM;

/// The allocator's counters are process-wide: the tests of this file take turns.
static ONE_AT_A_TIME: std::sync::Mutex<()> = std::sync::Mutex::new(());

#[derive(Default, Debug)]
struct Counts {
    deals: u64,
    actions: u64,
    legal_allocs: u64,
    /// Face-up cards that did not end the deal.
    card_allocs: u64,
    cards: u64,
    /// Bids, exchange-round turns, discards, face-down leads that did not end the deal.
    other_allocs: u64,
    others: u64,
    max_other: u64,
    /// The action that ended a deal (settlement and the start of the next deal).
    ending_allocs: u64,
}

fn play(ruleset: RulesetId, seats: u8, matches: u64) -> Counts {
    let mut counts = Counts::default();
    let mut rng = ChaCha8Rng::seed_from_u64(9);
    let mut legal: Vec<Action> = Vec::with_capacity(64);
    let mut events: Vec<Event> = Vec::with_capacity(64);
    for m in 0..matches {
        let mut seed = [7u8; 32];
        seed[..8].copy_from_slice(&m.to_le_bytes());
        let setup = Setup {
            ruleset,
            config: Config::defaults(ruleset, seats),
            seats,
            first_dealer: Seat(0),
            decks: Decks::Seed(Seed(seed)),
        };
        let (mut game, _) = Game::new(setup).expect("setup");
        while let Some(seat) = game.to_act() {
            let mut least = u64::MAX;
            for _ in 0..3 {
                let region = Region::new(GLOBAL);
                game.legal_actions_into(seat, &mut legal);
                least = least.min(region.change().allocations as u64);
                if least == 0 {
                    break;
                }
            }
            counts.legal_allocs += least;

            let action = legal[(rng.next_u64() % legal.len() as u64) as usize];
            let deal = game.deal_index();
            let before = game.clone();
            events.clear();
            let region = Region::new(GLOBAL);
            game.apply_into(seat, action, &mut events)
                .expect("legal action");
            let mut allocs = region.change().allocations as u64;
            // The allocator is global: another thread of the test harness may allocate while
            // we count. Re-measure the same step on copies and keep the least.
            for _ in 0..3 {
                if allocs == 0 {
                    break;
                }
                let mut again = before.clone();
                events.clear();
                let region = Region::new(GLOBAL);
                again
                    .apply_into(seat, action, &mut events)
                    .expect("legal action");
                allocs = allocs.min(region.change().allocations as u64);
            }
            // Dropping the events (private parts, reveal) is the caller's business.
            events.clear();
            counts.actions += 1;
            if game.deal_index() != deal || game.is_over() {
                counts.deals += 1;
                counts.ending_allocs += allocs;
            } else if let Action::Card(_) = action {
                counts.cards += 1;
                counts.card_allocs += allocs;
            } else {
                counts.others += 1;
                counts.other_allocs += allocs;
                counts.max_other = counts.max_other.max(allocs);
            }
        }
    }
    counts
}

#[test]
fn hot_path_does_not_allocate() {
    let _turn = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    for (ruleset, seats) in [
        (RulesetId::Bete, 5),
        (RulesetId::Bete, 7),
        (RulesetId::BeteAceHigh, 4),
        (RulesetId::Beast, 4),
        (RulesetId::BesteBoer, 5),
        (RulesetId::Lanterlui, 5),
        (RulesetId::Lanterlui, 7),
        (RulesetId::BesterBube, 4),
    ] {
        let c = play(ruleset, seats, 40);
        println!(
            "{ruleset}/{seats}: {} deals, {} actions; allocations: legal_actions {}, face-up cards {}/{}, \
             other mid-deal actions {}/{} (max {} each), per deal-ending action {:.1}",
            c.deals,
            c.actions,
            c.legal_allocs,
            c.card_allocs,
            c.cards,
            c.other_allocs,
            c.others,
            c.max_other,
            c.ending_allocs as f64 / c.deals.max(1) as f64,
        );
        assert!(c.deals > 0 && c.cards > 0);
        assert_eq!(
            c.legal_allocs, 0,
            "{ruleset}/{seats}: legal_actions_into allocated"
        );
        assert_eq!(
            c.card_allocs, 0,
            "{ruleset}/{seats}: playing a card allocated"
        );
        assert_eq!(
            c.other_allocs, 0,
            "{ruleset}/{seats}: a mid-deal action allocated: {c:?}"
        );
        let per_deal = c.ending_allocs as f64 / c.deals as f64;
        assert!(
            per_deal <= 12.0,
            "{ruleset}/{seats}: {per_deal:.1} allocations per deal-ending action"
        );
    }
}

/// The playout fast path of Bête (`Game::new_playout` + `play_deck` + `play_out_deal`): once
/// the match is set up, whole deals (antes, deal, bidding, five tricks, settlement, the next
/// deal's antes) run without a single heap allocation.
#[test]
fn bete_playout_deals_do_not_allocate() {
    let _turn = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    for (ruleset, seats) in [(RulesetId::Bete, 5), (RulesetId::BeteAceHigh, 7)] {
        let setup = Setup {
            ruleset,
            config: Config::defaults(ruleset, seats),
            seats,
            first_dealer: Seat(0),
            decks: Decks::Explicit(Vec::new()),
        };
        let mut rng = ChaCha8Rng::seed_from_u64(3);
        let mut game = Game::new_playout(setup).expect("setup");
        let mut deck = game.pack().to_vec();
        let (mut deals, mut allocs) = (0u64, 0u64);
        while !game.is_over() {
            // A deck permutation from the test's own RNG, outside the measured region.
            for i in (1..deck.len()).rev() {
                deck.swap(i, (rng.next_u64() % (i as u64 + 1)) as usize);
            }
            // The counters are process-wide, and the test harness's own threads may allocate
            // meanwhile (reporting the previous test): a deal that shows allocations is played
            // again from a copy, up to three times, and the least count stands.
            let (before, rng_before) = (game.clone(), rng.clone());
            let mut least = u64::MAX;
            for attempt in 0..4 {
                if attempt > 0 {
                    (game, rng) = (before.clone(), rng_before.clone());
                }
                let region = Region::new(GLOBAL);
                game.play_deck(&deck).expect("a permutation of the pack");
                let played = game.play_out_deal(&mut rng);
                least = least.min(region.change().allocations as u64);
                assert!(
                    played,
                    "{ruleset}/{seats}: a dealt deal waits for an action"
                );
                if least == 0 {
                    break;
                }
            }
            allocs += least;
            deals += 1;
        }
        println!("{ruleset}/{seats}: {deals} playout deals, {allocs} allocations");
        assert!(deals >= u64::from(seats) * 2, "a whole match was played");
        assert_eq!(allocs, 0, "{ruleset}/{seats}: playout deals allocated");
    }
}
