//! Heap allocations of the engine's hot path, counted with a counting global allocator over
//! whole random matches of every ruleset:
//!
//! - `legal_actions_into` with a warm buffer never allocates;
//! - `apply_into` of any action that does not end the deal never allocates, in every family
//!   (a one-seat private part of an exchange, a discard or a face-down lead is held inline);
//! - a deal's last action pays only for the settlement and the next deal: the boxed
//!   `DealSettled` and `DealStarted` payloads, the dealt hands, the spectators' `Reveal`, the log
//!   entry and the shuffled deck (and the waiting bêtes listed in `Pools`, the match's end);
//!   a bid that turns a Curieuse pays for its boxed payments (one allocation):
//!   at most 12 on average (it was 12.5 to 24 before the summaries became compact).
//!
//! The counting allocator (`allocation-counter`) counts per thread, so the test harness's own
//! threads, and the other test of this binary, never show up in a measurement. Run with
//! `-- --nocapture` to see allocations per deal by ruleset (docs/benchmarks.md).

use bete_rules::event::Event;
use bete_rules::{Action, Config, Decks, Game, RulesetId, Seat, Seed, Setup};
use rand_chacha::ChaCha8Rng;
use rand_chacha::rand_core::{RngCore, SeedableRng};

/// Heap allocations `f` makes on this thread.
fn allocations(f: impl FnOnce()) -> u64 {
    allocation_counter::measure(f).count_total
}

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
    /// Bids that turned a Curieuse (one boxed payload each).
    curieuses: u64,
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
            counts.legal_allocs += allocations(|| game.legal_actions_into(seat, &mut legal));

            let action = legal[(rng.next_u64() % legal.len() as u64) as usize];
            let deal = game.deal_index();
            events.clear();
            let allocs = allocations(|| {
                game.apply_into(seat, action, &mut events)
                    .expect("legal action");
            });
            // A Curieuse (B17) boxes its payments, like every once-a-deal payload, since ten
            // seats' amounts no longer fit a small event: one allocation, at most three a deal.
            let curieuse = events
                .iter()
                .any(|e| matches!(e.public, bete_rules::PublicEvent::Curieuse { .. }));
            // Dropping the events (private parts, reveal) is the caller's business.
            events.clear();
            counts.actions += 1;
            if curieuse && game.deal_index() == deal && !game.is_over() {
                assert!(allocs <= 1, "a Curieuse allocated {allocs} times");
                counts.curieuses += 1;
            } else if game.deal_index() != deal || game.is_over() {
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
    for (ruleset, seats) in [
        (RulesetId::Bete, 5),
        (RulesetId::Bete, 7),
        (RulesetId::BeteAceHigh, 4),
        (RulesetId::Beast, 4),
        (RulesetId::BesteBoer, 5),
        (RulesetId::Lanterlui, 5),
        (RulesetId::Lanterlui, 7),
        (RulesetId::BesterBube, 4),
        (RulesetId::Mouche, 4),
        (RulesetId::Mistigri, 6),
        (RulesetId::Loo, 5),
        (RulesetId::Loo, 10),
        (RulesetId::Rams, 5),
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
/// deal's antes) run without a heap allocation, save one: the queue of waiting bêtes is a
/// `Vec` with room for 8, and random play can queue more, so it doubles (amortized) when the
/// bêtes waiting reach a new high past its room. The test bounds the whole match's count by
/// those doublings, so any allocation that comes with every deal fails it.
#[test]
fn bete_playout_deals_do_not_allocate() {
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
        let (mut deals, mut allocs, mut most_waiting) = (0u64, 0u64, 0usize);
        while !game.is_over() {
            // A deck permutation from the test's own RNG, outside the measured region.
            for i in (1..deck.len()).rev() {
                deck.swap(i, (rng.next_u64() % (i as u64 + 1)) as usize);
            }
            let mut played = false;
            let deal_allocs = allocations(|| {
                game.play_deck(&deck).expect("a permutation of the pack");
                played = game.play_out_deal(&mut rng);
            });
            assert!(
                played,
                "{ruleset}/{seats}: a dealt deal waits for an action"
            );
            // Under the default rules a deal queues at most two bêtes (the declarer's and the
            // contrer's; revokes queue bêtes only under lenient legality), so the queue doubles
            // at most once per deal.
            assert!(
                deal_allocs <= 1,
                "{ruleset}/{seats}: deal {deals} allocated {deal_allocs} times"
            );
            let pools = game.pools();
            let waiting = pools.bete_queue.len() + usize::from(pools.staked_bete.is_some());
            most_waiting = most_waiting.max(waiting);
            allocs += deal_allocs;
            deals += 1;
        }
        // The queue's peak, mid-settlement, is at most one deal's two bêtes above what waits
        // after it; each doubling from 8 up to that peak may allocate once.
        let peak = most_waiting + 2;
        let mut doublings = 0;
        let mut room = 8;
        while room < peak {
            room *= 2;
            doublings += 1;
        }
        println!(
            "{ruleset}/{seats}: {deals} playout deals, {allocs} allocations (the bête queue: \
             at most {most_waiting} waiting after a deal, {doublings} doublings allowed)"
        );
        assert!(
            allocs <= doublings,
            "{ruleset}/{seats}: {allocs} allocations in {deals} deals; the bête queue's growth \
             accounts for at most {doublings}"
        );
        assert!(deals >= u64::from(seats) * 2, "a whole match was played");
    }
}
