//! Table configuration: the keys of RULES.md section 10, validated on creation.
//!
//! Parsing from JSON (`Config::from_json`) checks every key against the ruleset's column, its
//! JSON type and its allowed values, and names the key and its allowed values on error.

use thiserror::Error;

use crate::ruleset::RulesetId;

#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum WinRule {
    Strict,
    Plurality,
}
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum AnteRule {
    PotEmpty,
    Literal,
}
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum QueueOrder {
    Fifo,
    LargestFirst,
}
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum ContreRule {
    ModelA,
    Disabled,
}
/// Packet sizes of the deal (B11, BS4).
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum DealPattern {
    ThreeTwo,
    TwoThree,
    TwoTwoOne,
    TwoOneTwo,
}
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum BeteGrowth {
    Plus5,
    Pot,
    Plus5PerBete,
}
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum PerTrick {
    Fifth,
    One,
}
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum BetePayoff {
    AllAtOnce,
    SuccessiveFifo,
}
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Legality {
    Strict,
    Lenient,
}

/// The effective config of a table: every key with its value (defaults filled in). Keys that
/// do not apply to the ruleset hold their defaults and are ignored by it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Config {
    pub fiche_value: i64,
    pub win_rule: WinRule,
    pub ante_rule: AnteRule,
    pub queue_order: QueueOrder,
    pub must_head_in_suit: bool,
    pub contre: ContreRule,
    pub max_curieuse: u8,
    pub two_players: bool,
    pub deal_pattern: DealPattern,
    pub bete_growth: BeteGrowth,
    pub follow_after_trick2: bool,
    pub follow_suit: bool,
    pub four_card_flush: bool,
    pub short_pack: bool,
    pub muss_max_pot: i64,
    pub forced_after_muss: bool,
    pub per_trick: PerTrick,
    pub bete_payoff: BetePayoff,
    pub enforce_legality: Legality,
    pub rounds: u32,
    pub max_extra_deals: u32,
}

/// A config that the ruleset does not allow. The message names the key and its allowed values.
#[derive(Clone, Debug, PartialEq, Eq, Error)]
pub enum ConfigError {
    #[error("unknown config key {key:?} for {ruleset} (allowed keys: {allowed})")]
    UnknownKey {
        key: String,
        ruleset: RulesetId,
        allowed: String,
    },
    #[error("config key {key:?} has a bad value {value} (allowed: {allowed})")]
    BadValue {
        key: String,
        value: String,
        allowed: String,
    },
    #[error("{ruleset} does not allow {seats} seats (allowed: {allowed})")]
    Seats {
        ruleset: RulesetId,
        seats: u8,
        allowed: String,
    },
}
