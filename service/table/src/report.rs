//! What a ladder table reports to its ladder: each bot decision and the table's end. The table
//! runtime sends these; the ladder runtime above it receives them.

use std::sync::Arc;

use bete_rules::{DealLog, Setup};

use bete_store::LadderTable;

/// A finished table's setup and deals, for the luck correction of a `luck_adjusted` ladder.
pub type Deals = Arc<(Setup, Vec<DealLog>)>;

/// A bot's decision at a ladder table, as the table's actor reports it once durable.
#[derive(Clone, Debug)]
pub struct Decision {
    pub ladder_id: String,
    pub table: String,
    pub bot: String,
    /// The deadline passed and the server auto-moved (a strike).
    pub timed_out: bool,
    /// The seat's strikes at this table so far.
    pub table_strikes: u32,
}

/// A ladder table's end, as its actor tells the ladder (after the record is stored): the
/// result comes from the live game, so the scheduler reads and replays nothing. Recovery after
/// a restart replays the stored record instead (`ladder::result::table_result`), to the same
/// result.
#[derive(Debug)]
pub struct FinishedTable {
    pub table: String,
    pub ladder: LadderTable,
    pub result: TableResult,
    /// Answered (or dropped) once the table's end may be announced: for a match's last table,
    /// when the match's new ratings are stored, so a bot that hears `MatchEnded` reads them.
    pub announce: Option<tokio::sync::oneshot::Sender<()>>,
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
