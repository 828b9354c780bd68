//! What a finished ladder table gives its match: each seat's net jetons (replayed from the
//! stored record by the engine, the same way for a table just finished and after a restart),
//! its strikes, the deals played, and, on a `luck_adjusted` ladder, each seat's luck of the
//! cards (`bete_ladder::luck`), which the match's places and ratings take out of the nets.

use std::sync::{Arc, LazyLock};

use bete_rules::{DealLog, Setup};
use tokio::sync::Semaphore;

use bete_base::status::ServerError;
use bete_store::{Store, StoredTable};

pub use bete_table::report::{FinishedTable, TableResult};

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

/// Each entrant's luck over a match's tables (entrant order), when the ladder is luck-adjusted
/// and every table's luck was measured; None rates the match on raw nets.
pub(super) fn match_luck(done: &[TableResult], seats: usize, adjusted: bool) -> Option<Vec<f64>> {
    if !adjusted {
        return None;
    }
    let mut total = vec![0.0; seats];
    for (r, t) in done.iter().enumerate() {
        for (seat, l) in t.luck.as_ref()?.iter().enumerate() {
            if let Some(x) = total.get_mut(bete_ladder::duplicate::entrant_at(seat, r, seats)) {
                *x += l;
            }
        }
    }
    Some(total)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn result(luck: Option<Vec<f64>>) -> TableResult {
        TableResult {
            nets: vec![0; 3],
            strikes: vec![0; 3],
            deals: 3,
            luck,
        }
    }

    /// A set's luck is each entrant's total over the rotations (entrant i at seat (i + r) mod
    /// n); a table without its luck, or a ladder that is not adjusted, rates on raw nets.
    #[test]
    fn a_match_luck_follows_the_entrants_round_the_seats() {
        let done = vec![
            result(Some(vec![1.0, 2.0, 4.0])),
            result(Some(vec![10.0, 20.0, 40.0])),
        ];
        // Rotation 1: seat 0 holds entrant 2, seat 1 entrant 0, seat 2 entrant 1.
        assert_eq!(
            match_luck(&done, 3, true),
            Some(vec![1.0 + 20.0, 2.0 + 40.0, 4.0 + 10.0])
        );
        assert_eq!(match_luck(&done, 3, false), None);
        let missing = vec![result(Some(vec![1.0, 2.0, 4.0])), result(None)];
        assert_eq!(match_luck(&missing, 3, true), None);
    }
}
