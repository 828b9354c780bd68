//! The match: many deals, every pool carried between them, the ledger, and the API a server
//! drives: `legal_actions`, `apply`, `view`, outcomes.

use thiserror::Error;

use crate::card::Card;
use crate::config::{Config, ConfigError};
use crate::ruleset::RulesetId;
use crate::seat::Seat;
use crate::shuffle::Seed;

/// Where each deal's deck order comes from.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Decks {
    /// Derived from the seed and the deal index (11.5).
    Seed(Seed),
    /// Given per deal; when they run out the match waits in `Phase::AwaitingDeck`.
    Explicit(Vec<Vec<Card>>),
}

/// Everything needed to start a match.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Setup {
    pub ruleset: RulesetId,
    pub config: Config,
    pub seats: u8,
    pub first_dealer: Seat,
    pub decks: Decks,
}

/// Why a match cannot start or a deck is refused.
#[derive(Clone, Debug, PartialEq, Eq, Error)]
pub enum SetupError {
    #[error(transparent)]
    Config(#[from] ConfigError),
    #[error("first_dealer {0} is not a seat of this table")]
    FirstDealer(u8),
    #[error("deck of deal {deal} is not a permutation of the {pack_len}-card pack: {why}")]
    Deck {
        deal: u32,
        pack_len: usize,
        why: String,
    },
    #[error("no deck is awaited: {0}")]
    NoDeckAwaited(&'static str),
}

/// Why an action was refused. The state is unchanged whenever `apply` returns one.
#[derive(Clone, Debug, PartialEq, Eq, Error)]
pub enum ActionError {
    #[error("the match is over")]
    MatchOver,
    #[error("no deal is in progress (waiting for a deck)")]
    NoDeal,
    #[error("not your turn: seat {to_act} is to act")]
    NotYourTurn { to_act: Seat },
    #[error("seat {0} is not at this table")]
    NoSuchSeat(Seat),
    #[error("{action} is not an action of {ruleset}")]
    WrongRuleset { action: &'static str, ruleset: RulesetId },
    #[error("{action} is not possible now ({phase})")]
    WrongPhase { action: &'static str, phase: &'static str },
    #[error("{0} is not in your hand")]
    NotInHand(Card),
    #[error("must follow suit: {0}")]
    MustFollowSuit(String),
    #[error("must head the trick: {0}")]
    MustHead(String),
    #[error("must trump: {0}")]
    MustTrump(String),
    #[error("must overtrump: {0}")]
    MustOvertrump(String),
    #[error("must lead the bower: {0}")]
    MustLeadBower(String),
    #[error("must play the bower: {0}")]
    MustPlayBower(String),
    #[error("must lead a trump: {0}")]
    MustLeadTrump(String),
    #[error("must lead face down: holds no trump")]
    MustLeadHidden,
    #[error("a face-down lead is not allowed here: {0}")]
    HiddenNotAllowed(String),
    #[error("talon too short: {asked} cards asked, {left} left")]
    TalonTooShort { asked: u32, left: u32 },
    #[error("cannot drop: {0}")]
    CannotDrop(String),
    #[error("illegal: {0}")]
    Other(String),
}

/// A per-deal summary for replay output and the server (`bete replay` prints these).
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
pub struct DealSummary {
    pub deal: u32,
    pub dealer: u8,
    /// Bête: the declarer, if anyone declared.
    pub declarer: Option<u8>,
    /// Bête: the contrer.
    pub contrer: Option<u8>,
    /// Exchange family: the seats that stayed in (Beast: every seat).
    pub stayers: Vec<u8>,
    /// Tricks taken per seat.
    pub tricks: Vec<u8>,
    /// A short outcome word: "win", "vole", "null", "lose", "all_passed", "played",
    /// "lone_stayer", "carried", "flush", "dealer_takes_pot", "heaps".
    pub outcome: String,
    /// Which pool went to whom: e.g. {"pool": "king", "seat": 2, "amount": 5}.
    pub pools_won: Vec<PoolWon>,
    /// Bêtes made: {"seat": 1, "amount": 10}.
    pub betes: Vec<BeteMade>,
    /// Net change per seat by this deal's settlement.
    pub net: Vec<i64>,
}

#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
pub struct PoolWon {
    pub pool: String,
    pub seat: u8,
    pub amount: i64,
}

#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
pub struct BeteMade {
    pub seat: u8,
    pub amount: i64,
}
