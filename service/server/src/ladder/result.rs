//! What a finished ladder table gives its match: each seat's net jetons (replayed from the
//! stored record by the engine, the same way for a table just finished and after a restart),
//! its strikes, the deals played, and, on a `luck_adjusted` ladder, each seat's luck of the
//! cards (`bete_ladder::luck`), which the match's places and ratings take out of the nets.

use std::sync::{Arc, LazyLock};

use bete_rules::{DealLog, Setup};
use tokio::sync::Semaphore;

use crate::status::ServerError;
use crate::store::{LadderTable, Store, StoredTable};

/// A ladder table's end, as its actor tells the ladder (after the record is stored): the
/// result comes from the live game, so the scheduler reads and replays nothing. Recovery after
/// a restart replays the stored record instead ([`table_result`]), to the same result.
#[derive(Clone, Debug)]
pub struct FinishedTable {
    pub table: String,
    pub ladder: LadderTable,
    pub result: TableResult,
    /// The table's setup and deals, for the luck correction of a `luck_adjusted` ladder.
    pub deals: Arc<(Setup, Vec<DealLog>)>,
}

/// One finished table's outcome, by seat.
#[derive(Clone, Debug, PartialEq)]
pub struct TableResult {
    pub nets: Vec<i64>,
    pub strikes: Vec<u32>,
    pub deals: u32,
    /// Each seat's luck of the cards in jetons, when the ladder rates luck-adjusted nets.
    pub luck: Option<Vec<f64>>,
}

/// Luck corrections computed at once: each is a CPU-bound replay of a table with heuristic
/// playouts (docs/benchmarks.md, "the luck correction"), run off the async threads; one at a
/// time, so that however many tables finish together they take at most one core from play.
static LUCK_PERMITS: LazyLock<Semaphore> = LazyLock::new(|| Semaphore::new(1));

/// Each seat's luck at table `table` (its id keys the baseline decks, so every node and every
/// restart gets the same). An error (a record that does not replay) is logged and gives None:
/// the match is then rated on raw nets.
pub async fn luck(table: &str, deals: Arc<(Setup, Vec<DealLog>)>) -> Option<Vec<f64>> {
    let _permit = LUCK_PERMITS.acquire().await.ok()?;
    let key = table.to_string();
    let out = tokio::task::spawn_blocking(move || {
        bete_ladder::luck::table_luck(&deals.0, &deals.1, key.as_bytes())
    })
    .await;
    match out {
        Ok(Ok(l)) => Some(l),
        Ok(Err(e)) => {
            tracing::error!(%table, error = %e, "cannot measure a ladder table's luck: rated on raw nets");
            None
        }
        Err(e) => {
            tracing::error!(%table, error = %e, "the luck correction failed: rated on raw nets");
            None
        }
    }
}

pub async fn table_result(
    store: &dyn Store,
    table: &StoredTable,
    luck_adjusted: bool,
) -> Result<TableResult, ServerError> {
    let id = &table.table.id;
    let record = store
        .record(id.clone())
        .await?
        .ok_or_else(|| ServerError::Internal(format!("ladder table {id} has no record")))?;
    let game = bete_rules::record::replay_json(&record)
        .map_err(|e| ServerError::Internal(format!("ladder table {id}: record: {e}")))?;
    let seats = usize::from(table.table.seats);
    let mut strikes = vec![0u32; seats];
    for s in &table.seats {
        if let Some(x) = strikes.get_mut(usize::from(s.seat)) {
            *x = s.strikes;
        }
    }
    let luck = if luck_adjusted {
        luck(id, Arc::new((game.setup().clone(), game.log().to_vec()))).await
    } else {
        None
    };
    Ok(TableResult {
        nets: game.balances().to_vec(),
        strikes,
        deals: game.log().len() as u32,
        luck,
    })
}
