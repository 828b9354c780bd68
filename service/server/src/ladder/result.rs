//! What a finished ladder table gives its match: each seat's net jetons (replayed from the
//! stored record by the engine, the same way for a table just finished and after a restart),
//! its strikes, and the deals played.

use crate::status::ServerError;
use crate::store::{LadderTable, Store, StoredTable};

/// A ladder table's end, as its actor tells the ladder (after the record is stored): the
/// result comes from the live game, so the scheduler reads and replays nothing. Recovery after
/// a restart replays the stored record instead ([`table_result`]), to the same result.
#[derive(Debug)]
pub struct FinishedTable {
    pub table: String,
    pub ladder: LadderTable,
    pub result: TableResult,
    /// Answered (or dropped) once the table's end may be announced: for a match's last table,
    /// when the match's new ratings are stored, so a bot that hears `MatchEnded` reads them.
    pub announce: Option<tokio::sync::oneshot::Sender<()>>,
}

/// One finished table's outcome, by seat.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TableResult {
    pub nets: Vec<i64>,
    pub strikes: Vec<u32>,
    pub deals: u32,
}

pub async fn table_result(
    store: &dyn Store,
    table: &StoredTable,
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
    Ok(TableResult {
        nets: game.balances().to_vec(),
        strikes,
        deals: game.log().len() as u32,
    })
}
