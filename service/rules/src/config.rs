//! Table configuration: the keys of RULES.md section 10, validated on creation.
//!
//! Parsing from JSON (`Config::from_json`) checks every key against the ruleset's column, its
//! JSON type and its allowed values, and names the key and its allowed values on error.

use serde_json::{Map, Value};
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
/// Packet sizes of the deal (B11, BS4, MO7, LO6, RA4).
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum DealPattern {
    ThreeTwo,
    TwoThree,
    TwoTwoOne,
    TwoOneTwo,
    /// Loo: five rounds of one card (LO6).
    OneEach,
}
/// Mouche's pack by seat count (MO2, A36).
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum PackRule {
    Academie,
    Sequential,
}
/// Mouche's dealer ante (MO5, A37).
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum DealerAnte {
    Five,
    PerSeat,
}
/// What the others pay when a mouche is dealt (MO9, A38).
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum DealtMouchePenalty {
    None,
    OthersPay,
}
/// Where mouches go (MO18, A42).
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum MouchePayoff {
    NextBasket,
    QueueLargestFirst,
}
/// The laws of Mistigri (MI3, A43) and of Pam (LO3, A45): a trump like any other, or free.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum TopLaws {
    Trump,
    Free,
}
/// Whether J♣ completes a plain mouche (MI4, A44).
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum MistigriFlush {
    AnySuit,
    TrumpOnly,
}
/// Which card is Pam (LO2).
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Pam {
    JackOfClubs,
    TrumpJack,
}
/// Loo: the trick-1 leader's duty to lead the Ace of trumps (LO11, A49).
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum AceLead {
    FirstTrick,
    None,
}
/// Loo: the amount of a loo (LO13, A50).
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum LooAmount {
    Limited,
    Unlimited,
    Mixed,
}
/// Loo: who pays for a flush, and to whom (LO9, A48).
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum FlushRule {
    Hoyle,
    Pcg,
}
/// Rams: rank order (RA2).
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum RamsRanking {
    AceHigh,
    Ecarte,
}
/// Rams: the rams penalty (RA10).
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum RamsPenalty {
    Five,
    Pool,
}
/// Rams: the duty to undertrump (RA8).
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Undertrump {
    Required,
    Free,
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
    // Part II (section 18).
    pub pack_rule: PackRule,
    pub dealer_ante: DealerAnte,
    pub dealt_mouche_penalty: DealtMouchePenalty,
    pub exchanged_mouche: bool,
    pub mouche_payoff: MouchePayoff,
    pub mistigri_laws: TopLaws,
    pub mistigri_flush: MistigriFlush,
    pub pam: Pam,
    pub pam_laws: TopLaws,
    pub pam_be_civil: bool,
    pub ace_lead: AceLead,
    pub loo_amount: LooAmount,
    pub loo_limit: i64,
    pub flush_rule: FlushRule,
    pub ranking: RamsRanking,
    pub rams_penalty: RamsPenalty,
    pub general_stake: i64,
    pub undertrump: Undertrump,
    pub drop_requires_widow_taken: bool,
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
    /// `deck`, `top_pot`, `direction`: informative rows of section 10, fixed behaviour.
    #[error(
        "config key {key:?} is informative and not settable for {ruleset} (allowed keys: {allowed})"
    )]
    Informative {
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

/// The rows of section 10 that are not keys (giving one is an error).
const INFORMATIVE: [&str; 3] = ["deck", "top_pot", "direction"];

/// The keys of each ruleset, in the order of section 10.
pub fn keys(ruleset: RulesetId) -> &'static [&'static str] {
    match ruleset {
        RulesetId::Bete | RulesetId::BeteAceHigh => &[
            "fiche_value",
            "win_rule",
            "ante_rule",
            "queue_order",
            "must_head_in_suit",
            "contre",
            "max_curieuse",
            "two_players",
            "deal_pattern",
            "enforce_legality",
            "rounds",
            "max_extra_deals",
        ],
        RulesetId::Beast => &["deal_pattern", "rounds", "max_extra_deals"],
        RulesetId::BesteBoer => &[
            "bete_growth",
            "follow_after_trick2",
            "enforce_legality",
            "rounds",
            "max_extra_deals",
        ],
        RulesetId::Lanterlui => &[
            "bete_growth",
            "follow_suit",
            "four_card_flush",
            "short_pack",
            "muss_max_pot",
            "forced_after_muss",
            "enforce_legality",
            "rounds",
            "max_extra_deals",
        ],
        RulesetId::BesterBube => &[
            "follow_suit",
            "per_trick",
            "bete_payoff",
            "enforce_legality",
            "rounds",
            "max_extra_deals",
        ],
        RulesetId::Mouche => &[
            "pack_rule",
            "dealer_ante",
            "deal_pattern",
            "dealt_mouche_penalty",
            "exchanged_mouche",
            "mouche_payoff",
            "must_head_in_suit",
            "enforce_legality",
            "rounds",
            "max_extra_deals",
        ],
        RulesetId::Mistigri => &[
            "pack_rule",
            "dealer_ante",
            "deal_pattern",
            "dealt_mouche_penalty",
            "exchanged_mouche",
            "mouche_payoff",
            "must_head_in_suit",
            "mistigri_laws",
            "mistigri_flush",
            "enforce_legality",
            "rounds",
            "max_extra_deals",
        ],
        RulesetId::Loo => &[
            "deal_pattern",
            "must_head_in_suit",
            "pam",
            "pam_laws",
            "pam_be_civil",
            "ace_lead",
            "loo_amount",
            "loo_limit",
            "flush_rule",
            "enforce_legality",
            "rounds",
            "max_extra_deals",
        ],
        RulesetId::Rams => &[
            "deal_pattern",
            "must_head_in_suit",
            "ranking",
            "rams_penalty",
            "general_stake",
            "undertrump",
            "drop_requires_widow_taken",
            "enforce_legality",
            "rounds",
            "max_extra_deals",
        ],
    }
}

/// A string-valued key: its JSON spellings and the values they stand for.
macro_rules! spelled {
    ($t:ty { $($v:ident = $s:literal),+ $(,)? }) => {
        impl $t {
            pub const fn as_str(self) -> &'static str {
                match self { $(<$t>::$v => $s),+ }
            }
            fn parse(s: &str) -> Option<$t> {
                match s { $($s => Some(<$t>::$v),)+ _ => None }
            }
        }
    };
}
spelled!(WinRule { Strict = "strict", Plurality = "plurality" });
spelled!(AnteRule { PotEmpty = "pot_empty", Literal = "literal" });
spelled!(QueueOrder { Fifo = "fifo", LargestFirst = "largest_first" });
spelled!(ContreRule { ModelA = "model_A", Disabled = "disabled" });
spelled!(DealPattern { ThreeTwo = "3+2", TwoThree = "2+3", TwoTwoOne = "2+2+1", TwoOneTwo = "2+1+2", OneEach = "1+1+1+1+1" });
spelled!(BeteGrowth { Plus5 = "plus5", Pot = "pot", Plus5PerBete = "plus5_per_bete" });
spelled!(PerTrick { Fifth = "fifth", One = "one" });
spelled!(BetePayoff { AllAtOnce = "all_at_once", SuccessiveFifo = "successive_fifo" });
spelled!(Legality { Strict = "strict", Lenient = "lenient" });
spelled!(PackRule { Academie = "academie", Sequential = "sequential" });
spelled!(DealerAnte { Five = "five", PerSeat = "per_seat" });
spelled!(DealtMouchePenalty { None = "none", OthersPay = "others_pay" });
spelled!(MouchePayoff { NextBasket = "next_basket", QueueLargestFirst = "queue_largest_first" });
spelled!(TopLaws { Trump = "trump", Free = "free" });
spelled!(MistigriFlush { AnySuit = "any_suit", TrumpOnly = "trump_only" });
spelled!(Pam { JackOfClubs = "jack_of_clubs", TrumpJack = "trump_jack" });
spelled!(AceLead { FirstTrick = "first_trick", None = "none" });
spelled!(LooAmount { Limited = "limited", Unlimited = "unlimited", Mixed = "mixed" });
spelled!(FlushRule { Hoyle = "hoyle", Pcg = "pcg" });
spelled!(RamsRanking { AceHigh = "ace_high", Ecarte = "ecarte" });
spelled!(RamsPenalty { Five = "five", Pool = "pool" });
spelled!(Undertrump { Required = "required", Free = "free" });

/// Formats allowed string values as section 10 writes them: `"a", "b"`.
fn quoted(values: &[&str]) -> String {
    values
        .iter()
        .map(|v| format!("{v:?}"))
        .collect::<Vec<_>>()
        .join(", ")
}

impl Config {
    /// Every key at its default for `ruleset` at a table of `seats` (section 10).
    pub fn defaults(ruleset: RulesetId, seats: u8) -> Config {
        Config {
            fiche_value: 5,
            win_rule: WinRule::Strict,
            ante_rule: AnteRule::PotEmpty,
            queue_order: QueueOrder::Fifo,
            must_head_in_suit: true,
            contre: ContreRule::ModelA,
            max_curieuse: 1,
            two_players: false,
            // Loo deals one card at a time by default (LO6).
            deal_pattern: if ruleset == RulesetId::Loo {
                DealPattern::OneEach
            } else {
                DealPattern::ThreeTwo
            },
            // The one key whose default differs by ruleset (A2).
            bete_growth: if ruleset == RulesetId::Lanterlui {
                BeteGrowth::Pot
            } else {
                BeteGrowth::Plus5
            },
            follow_after_trick2: false,
            follow_suit: true,
            four_card_flush: false,
            short_pack: false,
            muss_max_pot: 5,
            forced_after_muss: false,
            per_trick: PerTrick::Fifth,
            bete_payoff: BetePayoff::AllAtOnce,
            enforce_legality: Legality::Strict,
            rounds: 2,
            max_extra_deals: 2 * seats as u32,
            pack_rule: PackRule::Academie,
            dealer_ante: DealerAnte::Five,
            dealt_mouche_penalty: DealtMouchePenalty::None,
            exchanged_mouche: true,
            mouche_payoff: MouchePayoff::NextBasket,
            mistigri_laws: TopLaws::Trump,
            mistigri_flush: MistigriFlush::AnySuit,
            pam: Pam::JackOfClubs,
            pam_laws: TopLaws::Free,
            pam_be_civil: true,
            ace_lead: AceLead::FirstTrick,
            loo_amount: LooAmount::Limited,
            loo_limit: 25,
            flush_rule: FlushRule::Hoyle,
            ranking: RamsRanking::AceHigh,
            rams_penalty: RamsPenalty::Five,
            general_stake: 5,
            undertrump: Undertrump::Required,
            drop_requires_widow_taken: false,
        }
    }

    /// Reads a table's or a record's `config` object: missing keys take their defaults; every
    /// given key is checked against the ruleset, its JSON type and its allowed values; then the
    /// seat count is checked (two seats only for Bête with `two_players = true`).
    pub fn from_json(
        ruleset: RulesetId,
        seats: u8,
        json: &Map<String, Value>,
    ) -> Result<Config, ConfigError> {
        let mut c = Config::defaults(ruleset, seats);
        for (key, value) in json {
            c.set(ruleset, key, value)?;
        }
        c.check_seats(ruleset, seats)?;
        Ok(c)
    }

    /// `--config k=v` pairs of the command line: a value is read as JSON if it parses
    /// (`5`, `true`, `"strict"`), else as a plain string (`strict`, `3+2`).
    pub fn from_pairs(
        ruleset: RulesetId,
        seats: u8,
        pairs: &[(String, String)],
    ) -> Result<Config, ConfigError> {
        let mut map = Map::new();
        for (k, v) in pairs {
            let value =
                serde_json::from_str::<Value>(v).unwrap_or_else(|_| Value::String(v.clone()));
            map.insert(k.clone(), value);
        }
        Config::from_json(ruleset, seats, &map)
    }

    /// The full effective config of a ruleset: every key it allows, with its value.
    pub fn to_json(&self, ruleset: RulesetId) -> Map<String, Value> {
        let mut m = Map::new();
        for &key in keys(ruleset) {
            let v: Value = match key {
                "fiche_value" => self.fiche_value.into(),
                "win_rule" => self.win_rule.as_str().into(),
                "ante_rule" => self.ante_rule.as_str().into(),
                "queue_order" => self.queue_order.as_str().into(),
                "must_head_in_suit" => self.must_head_in_suit.into(),
                "contre" => self.contre.as_str().into(),
                "max_curieuse" => self.max_curieuse.into(),
                "two_players" => self.two_players.into(),
                "deal_pattern" => self.deal_pattern.as_str().into(),
                "bete_growth" => self.bete_growth.as_str().into(),
                "follow_after_trick2" => self.follow_after_trick2.into(),
                "follow_suit" => self.follow_suit.into(),
                "four_card_flush" => self.four_card_flush.into(),
                "short_pack" => self.short_pack.into(),
                "muss_max_pot" => self.muss_max_pot.into(),
                "forced_after_muss" => self.forced_after_muss.into(),
                "per_trick" => self.per_trick.as_str().into(),
                "bete_payoff" => self.bete_payoff.as_str().into(),
                "enforce_legality" => self.enforce_legality.as_str().into(),
                "rounds" => self.rounds.into(),
                "max_extra_deals" => self.max_extra_deals.into(),
                "pack_rule" => self.pack_rule.as_str().into(),
                "dealer_ante" => self.dealer_ante.as_str().into(),
                "dealt_mouche_penalty" => self.dealt_mouche_penalty.as_str().into(),
                "exchanged_mouche" => self.exchanged_mouche.into(),
                "mouche_payoff" => self.mouche_payoff.as_str().into(),
                "mistigri_laws" => self.mistigri_laws.as_str().into(),
                "mistigri_flush" => self.mistigri_flush.as_str().into(),
                "pam" => self.pam.as_str().into(),
                "pam_laws" => self.pam_laws.as_str().into(),
                "pam_be_civil" => self.pam_be_civil.into(),
                "ace_lead" => self.ace_lead.as_str().into(),
                "loo_amount" => self.loo_amount.as_str().into(),
                "loo_limit" => self.loo_limit.into(),
                "flush_rule" => self.flush_rule.as_str().into(),
                "ranking" => self.ranking.as_str().into(),
                "rams_penalty" => self.rams_penalty.as_str().into(),
                "general_stake" => self.general_stake.into(),
                "undertrump" => self.undertrump.as_str().into(),
                "drop_requires_widow_taken" => self.drop_requires_widow_taken.into(),
                _ => continue,
            };
            m.insert(key.to_string(), v);
        }
        m
    }

    /// The seat counts of 11.1 (and B1's two-seat game).
    pub fn check_seats(&self, ruleset: RulesetId, seats: u8) -> Result<(), ConfigError> {
        let (lo, hi) = ruleset.seat_range();
        if (lo..=hi).contains(&seats) {
            return Ok(());
        }
        if ruleset.is_bete_family() {
            if seats == 2 && self.two_players {
                return Ok(());
            }
            return Err(ConfigError::Seats {
                ruleset,
                seats,
                allowed: format!("{lo}-{hi}, or 2 with two_players = true"),
            });
        }
        Err(ConfigError::Seats {
            ruleset,
            seats,
            allowed: format!("{lo}-{hi}"),
        })
    }

    fn set(&mut self, ruleset: RulesetId, key: &str, value: &Value) -> Result<(), ConfigError> {
        let allowed_keys = || keys(ruleset).join(", ");
        if !keys(ruleset).contains(&key) {
            return Err(if INFORMATIVE.contains(&key) {
                ConfigError::Informative {
                    key: key.to_string(),
                    ruleset,
                    allowed: allowed_keys(),
                }
            } else {
                ConfigError::UnknownKey {
                    key: key.to_string(),
                    ruleset,
                    allowed: allowed_keys(),
                }
            });
        }
        let bad = |allowed: String| ConfigError::BadValue {
            key: key.to_string(),
            value: value.to_string(),
            allowed,
        };
        // A string key: its value must be one of `spellings`, exactly.
        fn pick<T: Copy>(
            value: &Value,
            spellings: &[&str],
            parse: fn(&str) -> Option<T>,
        ) -> Result<T, String> {
            let allowed = quoted(spellings);
            match value.as_str() {
                Some(s) if spellings.contains(&s) => parse(s).ok_or(allowed),
                _ => Err(allowed),
            }
        }
        let boolean = || value.as_bool().ok_or_else(|| bad("true, false".into()));
        let int_in = |values: &[u64]| {
            let list = values
                .iter()
                .map(u64::to_string)
                .collect::<Vec<_>>()
                .join(", ");
            value
                .as_u64()
                .filter(|v| values.contains(v))
                .ok_or_else(|| bad(list))
        };
        match key {
            "fiche_value" => self.fiche_value = int_in(&[5, 10])? as i64,
            "win_rule" => {
                self.win_rule =
                    pick(value, &["strict", "plurality"], WinRule::parse).map_err(bad)?
            }
            "ante_rule" => {
                self.ante_rule =
                    pick(value, &["pot_empty", "literal"], AnteRule::parse).map_err(bad)?
            }
            "queue_order" => {
                self.queue_order =
                    pick(value, &["fifo", "largest_first"], QueueOrder::parse).map_err(bad)?
            }
            "must_head_in_suit" => self.must_head_in_suit = boolean()?,
            "contre" => {
                self.contre =
                    pick(value, &["model_A", "disabled"], ContreRule::parse).map_err(bad)?
            }
            "max_curieuse" => self.max_curieuse = int_in(&[0, 1, 2, 3])? as u8,
            "two_players" => self.two_players = boolean()?,
            "deal_pattern" => {
                let spellings: &[&str] = match ruleset {
                    RulesetId::Beast
                    | RulesetId::Mouche
                    | RulesetId::Mistigri
                    | RulesetId::Rams => &["3+2", "2+3"],
                    RulesetId::Loo => &["1+1+1+1+1", "3+2", "2+3"],
                    _ => &["3+2", "2+3", "2+2+1", "2+1+2"],
                };
                self.deal_pattern = pick(value, spellings, DealPattern::parse).map_err(bad)?
            }
            "bete_growth" => {
                let spellings: &[&str] = if ruleset == RulesetId::BesteBoer {
                    &["plus5", "pot", "plus5_per_bete"]
                } else {
                    &["pot", "plus5"]
                };
                self.bete_growth = pick(value, spellings, BeteGrowth::parse).map_err(bad)?
            }
            "follow_after_trick2" => self.follow_after_trick2 = boolean()?,
            "follow_suit" => self.follow_suit = boolean()?,
            "four_card_flush" => self.four_card_flush = boolean()?,
            "short_pack" => self.short_pack = boolean()?,
            "muss_max_pot" => self.muss_max_pot = int_in(&[5, 10])? as i64,
            "forced_after_muss" => self.forced_after_muss = boolean()?,
            "per_trick" => {
                self.per_trick = pick(value, &["fifth", "one"], PerTrick::parse).map_err(bad)?
            }
            "bete_payoff" => {
                self.bete_payoff = pick(
                    value,
                    &["all_at_once", "successive_fifo"],
                    BetePayoff::parse,
                )
                .map_err(bad)?
            }
            "enforce_legality" => {
                // RC5, A53: no lenient mode in the four rulesets of Part II.
                let spellings: &[&str] = if ruleset.is_pool_family() {
                    &["strict"]
                } else {
                    &["strict", "lenient"]
                };
                self.enforce_legality = pick(value, spellings, Legality::parse).map_err(bad)?
            }
            "pack_rule" => {
                self.pack_rule =
                    pick(value, &["academie", "sequential"], PackRule::parse).map_err(bad)?
            }
            "dealer_ante" => {
                self.dealer_ante =
                    pick(value, &["five", "per_seat"], DealerAnte::parse).map_err(bad)?
            }
            "dealt_mouche_penalty" => {
                self.dealt_mouche_penalty =
                    pick(value, &["none", "others_pay"], DealtMouchePenalty::parse).map_err(bad)?
            }
            "exchanged_mouche" => self.exchanged_mouche = boolean()?,
            "mouche_payoff" => {
                self.mouche_payoff = pick(
                    value,
                    &["next_basket", "queue_largest_first"],
                    MouchePayoff::parse,
                )
                .map_err(bad)?
            }
            "mistigri_laws" => {
                self.mistigri_laws = pick(value, &["trump", "free"], TopLaws::parse).map_err(bad)?
            }
            "mistigri_flush" => {
                self.mistigri_flush =
                    pick(value, &["any_suit", "trump_only"], MistigriFlush::parse).map_err(bad)?
            }
            "pam" => {
                self.pam = pick(value, &["jack_of_clubs", "trump_jack"], Pam::parse).map_err(bad)?
            }
            "pam_laws" => {
                self.pam_laws = pick(value, &["free", "trump"], TopLaws::parse).map_err(bad)?
            }
            "pam_be_civil" => self.pam_be_civil = boolean()?,
            "ace_lead" => {
                self.ace_lead =
                    pick(value, &["first_trick", "none"], AceLead::parse).map_err(bad)?
            }
            "loo_amount" => {
                self.loo_amount = pick(value, &["limited", "unlimited", "mixed"], LooAmount::parse)
                    .map_err(bad)?
            }
            "loo_limit" => {
                // A50: a positive multiple of 5, whatever `loo_amount` says.
                self.loo_limit = value
                    .as_u64()
                    .filter(|&v| v >= 5 && v % 5 == 0 && v <= i64::MAX as u64 / 2)
                    .ok_or_else(|| bad("a multiple of 5, 5 or more".into()))?
                    as i64
            }
            "flush_rule" => {
                self.flush_rule = pick(value, &["hoyle", "pcg"], FlushRule::parse).map_err(bad)?
            }
            "ranking" => {
                self.ranking =
                    pick(value, &["ace_high", "ecarte"], RamsRanking::parse).map_err(bad)?
            }
            "rams_penalty" => {
                self.rams_penalty =
                    pick(value, &["five", "pool"], RamsPenalty::parse).map_err(bad)?
            }
            "general_stake" => {
                self.general_stake = value
                    .as_u64()
                    .filter(|&v| v <= i64::MAX as u64 / 64)
                    .ok_or_else(|| bad("an integer, 0 or more".into()))?
                    as i64
            }
            "undertrump" => {
                self.undertrump =
                    pick(value, &["required", "free"], Undertrump::parse).map_err(bad)?
            }
            "drop_requires_widow_taken" => self.drop_requires_widow_taken = boolean()?,
            "rounds" => {
                self.rounds = value
                    .as_u64()
                    .filter(|&v| (1..=u32::MAX as u64).contains(&v))
                    .ok_or_else(|| bad("an integer, 1 or more".into()))?
                    as u32
            }
            "max_extra_deals" => {
                self.max_extra_deals = value
                    .as_u64()
                    .filter(|&v| v <= u32::MAX as u64)
                    .ok_or_else(|| bad("an integer, 0 or more".into()))?
                    as u32
            }
            // `keys(ruleset)` lists only the keys matched above.
            _ => return Err(bad(String::new())),
        }
        Ok(())
    }
}
