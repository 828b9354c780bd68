//! A table's events: the engine's events plus the table's own (seats, start, strikes), each
//! with its sequence number. Kept unprojected; `project` turns one into a recipient's message.

use bete_rules::Event;

use bete_store::Occupant;

/// What happened. Events live behind an `Arc`, so the size of the engine variant is no cost.
#[allow(clippy::large_enum_variant)]
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Body {
    /// An engine event (public part, private parts per seat, spectators' reveal).
    Game(Event),
    /// A seat was taken by a bot or, at creation, by a house bot.
    SeatTaken {
        seat: u8,
        occupant: Occupant,
        name: String,
    },
    /// A bot left its seat.
    SeatLeft { seat: u8, bot: String },
    /// Every seat is taken; the first `DealStarted` follows.
    MatchStarted,
    /// A seat's decision timed out (just before the auto action's events).
    StrikeCounted { seat: u8, strikes: u32 },
}

/// One event of a table.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TableEvent {
    /// 1 for the first event of the table, then +1 with no gap.
    pub seq: u64,
    /// When the command that caused it was stored (Unix milliseconds).
    pub time_ms: i64,
    /// Caused by an action the server played for a seat whose deadline passed.
    pub auto: bool,
    pub body: Body,
}
