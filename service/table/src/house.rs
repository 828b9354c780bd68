//! House bots: the engine's policies, played for a seat from that seat's own view only.
//!
//! `random` and `heuristic` answer at once, inside the table actor. `search` thinks for up to
//! its time budget, so it runs on a blocking thread (off the async runtime, never stalling a
//! table actor); at most one search per core runs at once, and a decision that finds every
//! core searching is played by the heuristic instead, so a busy server degrades to the
//! heuristic rather than queueing searches past their deadlines.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use bete_rules::bots::{Budget, MAX_PLAYOUTS, Policy, heuristic_action, search_action_within};
use bete_rules::determinize::Seen;
use bete_rules::{Action, Config, Game, PublicEvent, Seat, View, Viewer};
use rand_chacha::ChaCha8Rng;
use rand_chacha::rand_core::{RngCore, SeedableRng};

use super::event::{Body, TableEvent};

/// Bounds of a search house bot's time per decision (ms); each decision also gets at most half
/// the table's deadline. Ten seconds is far past the point where more samples change the move.
pub const MIN_SEARCH_BUDGET_MS: u32 = 1;
pub const MAX_SEARCH_BUDGET_MS: u32 = 10_000;

/// The RNG of a table's house bots. Their choices are logged as actions, so it need not be
/// reproducible.
pub fn rng() -> ChaCha8Rng {
    ChaCha8Rng::from_seed(rand::random())
}

/// A house bot's policy, as stored in a seat (`random`, `heuristic`, `search:<ms>ms`).
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum HousePolicy {
    Random,
    Heuristic,
    /// Search with this many milliseconds per decision (before the table's deadline cap).
    Search {
        budget_ms: u32,
    },
}

impl HousePolicy {
    /// The stored spelling; `parse` reads it back.
    pub fn text(self) -> String {
        match self {
            HousePolicy::Random => "random".into(),
            HousePolicy::Heuristic => "heuristic".into(),
            HousePolicy::Search { budget_ms } => format!("search:{budget_ms}ms"),
        }
    }

    pub fn parse(s: &str) -> Option<HousePolicy> {
        match s {
            "random" => Some(HousePolicy::Random),
            "heuristic" => Some(HousePolicy::Heuristic),
            _ => {
                let ms: u32 = s
                    .strip_prefix("search:")?
                    .strip_suffix("ms")?
                    .parse()
                    .ok()?;
                (MIN_SEARCH_BUDGET_MS..=MAX_SEARCH_BUDGET_MS)
                    .contains(&ms)
                    .then_some(HousePolicy::Search { budget_ms: ms })
            }
        }
    }

    /// The time one decision may take at a table with this decision deadline: the budget,
    /// capped at a quarter of the deadline. The rest is margin for what the clock cannot stop
    /// (setting up the sampler, the playouts under way, waiting for a core on a busy server)
    /// and for storing the move.
    pub fn think_time(budget_ms: u32, deadline_ms: u64) -> Duration {
        Duration::from_millis(u64::from(budget_ms).min(deadline_ms / 4).max(1))
    }
}

/// The policy's action for `seat`, from that seat's own view only, when it answers at once
/// (`random`, `heuristic`); None for `search` (see [`SearchJob`]) or when the seat has nothing
/// to decide.
pub fn choose_now(
    policy: HousePolicy,
    game: &Game,
    seat: Seat,
    rng: &mut ChaCha8Rng,
) -> Option<Action> {
    let view = game.view(Viewer::Seat(seat));
    if view.legal_actions.is_empty() {
        return None;
    }
    match policy {
        HousePolicy::Random => Some(Policy::Random.choose(&view, rng)),
        HousePolicy::Heuristic => Some(heuristic_action(&view)),
        HousePolicy::Search { .. } => None,
    }
}

/// One search decision, with everything it needs copied out of the actor: the seat's view
/// (never the game, which knows every hand), what the seat saw of its own moves this deal, the
/// table's config, and an RNG of its own.
pub struct SearchJob {
    view: View,
    seen: Seen,
    config: Config,
    until: Instant,
    rng: ChaCha8Rng,
}

/// Searches running now, across every table of the server.
static RUNNING: AtomicUsize = AtomicUsize::new(0);

/// How many searches may run at once: one per core.
fn max_running() -> usize {
    std::thread::available_parallelism().map_or(1, |n| n.get())
}

/// Holds one of the `max_running` search slots while alive.
pub struct SearchSlot(());

impl SearchSlot {
    /// A free slot, or None when every core is searching already.
    pub fn take() -> Option<SearchSlot> {
        let max = max_running();
        RUNNING
            .fetch_update(Ordering::AcqRel, Ordering::Acquire, |n| {
                (n < max).then_some(n + 1)
            })
            .ok()
            .map(|_| SearchSlot(()))
    }
}

impl Drop for SearchSlot {
    fn drop(&mut self) {
        RUNNING.fetch_sub(1, Ordering::AcqRel);
    }
}

impl SearchJob {
    /// The job for `seat` of `game`, which must think for at most `think`; `events` are the
    /// table's events so far (only `seat`'s own private events are read from them).
    pub fn new(
        game: &Game,
        seat: Seat,
        events: &[std::sync::Arc<TableEvent>],
        think: Duration,
        rng: &mut ChaCha8Rng,
    ) -> Option<SearchJob> {
        let view = game.view(Viewer::Seat(seat));
        if view.legal_actions.is_empty() {
            return None;
        }
        let mut seed = [0u8; 32];
        rng.fill_bytes(&mut seed);
        Some(SearchJob {
            seen: seen_by(events, seat, view.deal),
            view,
            config: game.setup().config.clone(),
            until: Instant::now() + think,
            rng: ChaCha8Rng::from_seed(seed),
        })
    }

    /// The heuristic's action for the same view: what the seat plays when no core is free.
    pub fn fallback(&self) -> Action {
        heuristic_action(&self.view)
    }

    /// Runs the search (blocking: call it off the async runtime).
    pub fn run(mut self) -> Action {
        let budget = Budget {
            playouts: MAX_PLAYOUTS,
            until: Some(self.until),
        };
        search_action_within(&self.view, &self.config, &self.seen, budget, &mut self.rng)
    }
}

/// What `seat` saw of its own moves in deal `deal`: its private events since that deal began.
fn seen_by(events: &[std::sync::Arc<TableEvent>], seat: Seat, deal: u32) -> Seen {
    let start = events
        .iter()
        .rposition(|e| {
            matches!(&e.body, Body::Game(g)
                if matches!(&g.public, PublicEvent::DealStarted(ds) if ds.deal == deal))
        })
        .unwrap_or(events.len());
    let mut seen = Seen::default();
    for e in &events[start..] {
        if let Body::Game(g) = &e.body {
            for (s, p) in &g.private {
                if *s == seat {
                    seen.observe(deal, p);
                }
            }
        }
    }
    seen
}

/// The `created_by` of showcase tables (no bot id has this form: ids are `b_...`).
pub const SHOWCASE_CREATOR: &str = "house";

/// How long a house bot of a showcase table waits before each decision (or the server's
/// `house_delay`, if longer): about a deal every 15 s at 4 seats, slow enough to follow.
pub const SHOWCASE_PACE: std::time::Duration = std::time::Duration::from_millis(600);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn policies_round_trip_through_their_stored_text() {
        for p in [
            HousePolicy::Random,
            HousePolicy::Heuristic,
            HousePolicy::Search { budget_ms: 1 },
            HousePolicy::Search { budget_ms: 50 },
            HousePolicy::Search {
                budget_ms: MAX_SEARCH_BUDGET_MS,
            },
        ] {
            assert_eq!(HousePolicy::parse(&p.text()), Some(p));
        }
        for bad in ["search", "search:0ms", "search:50", "search:10001ms", "god"] {
            assert_eq!(HousePolicy::parse(bad), None, "{bad}");
        }
    }

    /// The job a search runs on holds the seat's own view and its own private events only:
    /// nothing of another seat's hand, exchanges or discards.
    #[test]
    #[allow(clippy::unwrap_used)]
    fn a_search_job_holds_only_its_seats_knowledge() {
        use bete_rules::bots::{Bots, Policy};
        use bete_rules::{Decks, RulesetId, Seed, Setup};
        use std::sync::Arc;
        let seed = Seed([3; 32]);
        let setup = Setup {
            ruleset: RulesetId::BesteBoer,
            config: Config::defaults(RulesetId::BesteBoer, 4),
            seats: 4,
            first_dealer: Seat(0),
            decks: Decks::Seed(seed),
        };
        let (mut game, first) = Game::new(setup).unwrap();
        let mut events: Vec<Arc<TableEvent>> = Vec::new();
        let push = |evs: Vec<bete_rules::Event>, events: &mut Vec<Arc<TableEvent>>| {
            for e in evs {
                events.push(Arc::new(TableEvent {
                    seq: events.len() as u64 + 1,
                    time_ms: 0,
                    auto: false,
                    body: Body::Game(e),
                }));
            }
        };
        push(first, &mut events);
        let mut bots = Bots::new(&[Policy::Heuristic], 4, &seed);
        // Into the trick play of the first deal, past the buying rounds.
        let mut checked = 0;
        while let Some(s) = game.to_act() {
            if game.deal_index() > 0 {
                break;
            }
            let mut rng = rng();
            let job =
                SearchJob::new(&game, s, &events, Duration::from_millis(1), &mut rng).unwrap();
            assert_eq!(job.view, game.view(Viewer::Seat(s)));
            // What the seat saw of its own moves, exactly as a bot at that seat would.
            let mut own = Seen::default();
            for e in &events {
                if let Body::Game(g) = &e.body {
                    for (t, p) in &g.private {
                        if *t == s {
                            own.observe(0, p);
                        }
                    }
                }
            }
            assert_eq!(job.seen, own);
            assert!(job.seen.dealt.is_some());
            checked += 1;
            let view = game.view(Viewer::Seat(s));
            let a = bots.choose(&view);
            let evs = game.apply(s, a).unwrap();
            bots.observe(&evs);
            push(evs, &mut events);
        }
        assert!(checked > 10, "{checked}");
    }

    #[test]
    fn think_time_is_capped_at_a_quarter_of_the_deadline() {
        assert_eq!(
            HousePolicy::think_time(50, 10_000),
            Duration::from_millis(50)
        );
        assert_eq!(HousePolicy::think_time(50, 20), Duration::from_millis(5));
        assert_eq!(HousePolicy::think_time(5_000, 25), Duration::from_millis(6));
        assert_eq!(HousePolicy::think_time(5_000, 3), Duration::from_millis(1));
    }
}
