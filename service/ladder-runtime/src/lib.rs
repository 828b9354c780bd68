//! # bete-ladder-runtime
//!
//! Ladders on the server: one scheduler task per ladder (like a table actor) owns the ladder's
//! entrants, its running matches and its recent history; the decisions themselves (who meets,
//! how ratings move, who sits where in a set) are `bete-ladder`'s pure functions.
//!
//! A ladder match is one table, or a duplicate set of `seats` tables with one seed played one
//! after another (entrant i at seat (i + r) mod n of rotation r). Ladder tables are ordinary
//! tables with a ladder id: the scheduler creates each with its entrants already seated (one
//! store transaction: the table, its seats and their joins), so a bot plays them on its
//! WatchBot stream like any other table.
//! In a cluster one node schedules every ladder (the leader, see [`Leadership`]); the others
//! write entries to the store and leave the rest to it. Strike records (removals, cooldowns,
//! strike windows) are the leader's, kept in the store, and every node reads a bot's cooldown
//! there when it enters (`strikes.rs`).
//! When a table's finished record is stored, its actor tells the scheduler the result (on a
//! `luck_adjusted` ladder with each seat's luck of the cards measured first, see
//! `bete_ladder::luck`), which starts the set's next table or rates the match. Ratings move in the same store transaction that marks
//! the match rated, so a result counts exactly once whatever crashes come between; after a
//! restart every unrated match is picked up from the store where it stood.

mod result;
mod scheduler;
mod strikes;

use std::collections::HashMap;
use std::sync::Arc;

use bete_api::pb;
use bete_ladder::LadderSpec;
use tokio::sync::{broadcast, mpsc, oneshot};

use bete_base::shutdown::Shutdown;
use bete_base::status::ServerError;
use bete_store::{EntryRow, Store};
use bete_table::registry::Tables;

pub use bete_cluster::leadership::Leadership;
pub use result::{FinishedTable, TableResult};
pub use scheduler::HOUSE_OWNER;
pub use scheduler::match_to_pb;

pub use bete_table::report::Decision;

/// What ladder tables tell their ladders: finished tables, and each bot decision.
#[derive(Debug)]
pub struct TableReports {
    pub finished: mpsc::UnboundedReceiver<FinishedTable>,
    pub decisions: mpsc::UnboundedReceiver<Decision>,
}

/// Results kept for a slow WatchLadderResults reader before it skips ahead.
const RESULTS_BUFFER: usize = 256;

/// A request to a ladder's scheduler.
#[derive(Debug)]
pub enum LadderCommand {
    Enter {
        bot: String,
        capacity: u32,
        reply: oneshot::Sender<Result<EntryRow, ServerError>>,
    },
    Leave {
        bot: String,
        reply: oneshot::Sender<Result<EntryRow, ServerError>>,
    },
    /// What a finished table gave (its actor's word, once its record is stored).
    TableResult {
        table: String,
        match_id: String,
        rotation: usize,
        result: result::TableResult,
        /// See [`FinishedTable::announce`].
        announce: Option<oneshot::Sender<()>>,
    },
    /// A bot decided at one of the ladder's tables (in time or not).
    Decided(Decision),
    /// Something may let a new match start (a bot came online, a slot freed).
    Poke,
    /// A match's table could not be created or seated; `stored`: the match itself is in the
    /// store.
    StartFailed { match_id: String, stored: bool },
    /// The rating writer could not store a match rated in `term` (the store failed for good,
    /// or this node no longer leads): memory is ahead of the store, so reload from it.
    RatingLost { match_id: String, term: u64 },
    /// The rating writer stored a match rated in `term`: its entrants' slots are free.
    RatingStored { match_id: String, term: u64 },
    /// Counts for `Ladder.entrants` / `online` / `matches_rated`.
    Counts {
        reply: oneshot::Sender<(u32, u32, u64)>,
    },
}

/// Every ladder of the server.
#[derive(Debug)]
pub struct Ladders {
    specs: Vec<Arc<LadderSpec>>,
    schedulers: HashMap<String, mpsc::UnboundedSender<LadderCommand>>,
    /// Every rated match, for WatchLadderResults.
    pub results: broadcast::Sender<pb::LadderMatch>,
    pub store: Arc<dyn Store>,
}

impl Ladders {
    /// Start a scheduler per ladder (each first recovers its unrated matches from the store)
    /// and route finished ladder tables to them.
    pub async fn start(
        specs: Vec<LadderSpec>,
        store: Arc<dyn Store>,
        tables: Arc<Tables>,
        shutdown: Shutdown,
        reports: TableReports,
        seed: Option<u64>,
        leadership: Arc<Leadership>,
    ) -> Result<Arc<Ladders>, ServerError> {
        let TableReports {
            mut finished,
            mut decisions,
        } = reports;
        let (results, _) = broadcast::channel(RESULTS_BUFFER);
        let mut schedulers = HashMap::new();
        let mut out = Vec::new();
        for spec in specs {
            let spec = Arc::new(spec);
            let tx = scheduler::spawn(
                spec.clone(),
                store.clone(),
                tables.clone(),
                results.clone(),
                shutdown.clone(),
                // Each ladder its own stream of draws.
                seed.map(|s| s ^ fnv(&spec.id)),
                leadership.clone(),
            )
            .await?;
            schedulers.insert(spec.id.clone(), tx);
            out.push(spec);
        }
        let ladders = Arc::new(Ladders {
            specs: out,
            schedulers,
            results,
            store: store.clone(),
        });
        let router = ladders.clone();
        tokio::spawn(async move {
            while let Some(mut f) = finished.recv().await {
                let Some(tx) = router.schedulers.get(&f.ladder.ladder_id).cloned() else {
                    continue;
                };
                let adjusted = router
                    .specs
                    .iter()
                    .any(|s| s.id == f.ladder.ladder_id && s.luck_adjusted);
                // The luck correction takes milliseconds of CPU: measured off this loop, so
                // other tables' results are not held up behind it.
                tokio::spawn(async move {
                    if adjusted {
                        f.result.luck = result::luck(&f.table, f.deals.clone()).await;
                    }
                    let _ = tx.send(LadderCommand::TableResult {
                        table: f.table,
                        match_id: f.ladder.match_id,
                        rotation: usize::from(f.ladder.rotation),
                        result: f.result,
                        announce: f.announce,
                    });
                });
            }
        });
        let router = ladders.clone();
        tokio::spawn(async move {
            while let Some(d) = decisions.recv().await {
                if let Some(tx) = router.schedulers.get(&d.ladder_id) {
                    let _ = tx.send(LadderCommand::Decided(d));
                }
            }
        });
        Ok(ladders)
    }

    pub fn specs(&self) -> &[Arc<LadderSpec>] {
        &self.specs
    }

    pub fn spec(&self, id: &str) -> Result<&Arc<LadderSpec>, ServerError> {
        self.specs
            .iter()
            .find(|s| s.id == id)
            .ok_or_else(|| ServerError::LadderNotFound(id.to_string()))
    }

    pub async fn ask<T>(
        &self,
        ladder: &str,
        make: impl FnOnce(oneshot::Sender<T>) -> LadderCommand,
    ) -> Result<T, ServerError> {
        let tx = self
            .schedulers
            .get(ladder)
            .ok_or_else(|| ServerError::LadderNotFound(ladder.to_string()))?;
        let (reply, rx) = oneshot::channel();
        tx.send(make(reply))
            .map_err(|_| ServerError::ShuttingDown)?;
        rx.await.map_err(|_| ServerError::ShuttingDown)
    }

    /// A bot came online (opened a WatchBot stream): every ladder looks again.
    pub fn poke(&self) {
        for tx in self.schedulers.values() {
            let _ = tx.send(LadderCommand::Poke);
        }
    }
}

/// A stable hash of a ladder id (FNV-1a), to give each ladder its own test seed.
fn fnv(s: &str) -> u64 {
    s.bytes().fold(0xcbf2_9ce4_8422_2325, |h, b| {
        (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
    })
}
