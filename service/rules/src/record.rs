//! Game records, `bete-record/1` (RULES.md 11.4): write them from a [`Game`], read them, and
//! replay them action by action.
//!
//! Reading is two steps. [`Record::from_json`] checks everything that can be checked without
//! playing (JSON structure, `format`, `rules_version`, config, seat count, decks, dealers) and
//! fails with a [`RecordError`] naming what is wrong. [`replay`] then plays every action through
//! the engine: an action that does not parse or is refused is a [`ReplayError::Illegal`]; a deal
//! listed after the match ended or stored `balances` that differ are still malformed.
//!
//! Writing ([`Record::from_game`]) always gives the full effective config. A seeded match is
//! written with its `seed` and without `deck`s: the replay derives each deal's deck from the seed
//! (11.5), so the record stays small and still pins every card. [`Record::include_decks`] adds
//! the decks for readers that do not implement the shuffle. A match with explicit decks is
//! written with every deal's deck.

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use thiserror::Error;

use crate::action::Action;
use crate::card::Card;
use crate::config::Config;
use crate::game::{DealSummary, Decks, Game, Setup, SetupError, pack};
use crate::ruleset::{RULES_VERSION, RulesetId};
use crate::seat::Seat;
use crate::shuffle::{Seed, deck_order};

/// The `format` string of this record version.
pub const FORMAT: &str = "bete-record/1";

/// One action of a deal as written in a record. The action stays text here: a record whose
/// action does not parse is still a well-formed record with an illegal action (11.4).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RecordAction {
    /// Kept wide so that a seat out of range is an illegal action, not a structure error.
    pub seat: u64,
    pub action: String,
    /// Played by the server for a seat whose time ran out; written only when true.
    #[serde(default, skip_serializing_if = "is_false")]
    pub auto: bool,
}

fn is_false(b: &bool) -> bool {
    !*b
}

/// One deal of a record.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RecordDeal {
    pub dealer: u64,
    /// Card codes, top of the pack first. Optional when the record has a `seed`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub deck: Option<Vec<String>>,
    pub actions: Vec<RecordAction>,
}

/// A whole record as its JSON says it, after the structure checks of [`Record::from_json`].
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RecordJson {
    pub format: String,
    pub ruleset: String,
    pub rules_version: u64,
    #[serde(default)]
    pub config: Map<String, Value>,
    pub seats: u64,
    pub first_dealer: u64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub seed: Option<String>,
    pub deals: Vec<RecordDeal>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub balances: Option<Vec<i64>>,
}

/// A checked record: its JSON plus what was parsed out of it.
#[derive(Clone, Debug, PartialEq)]
pub struct Record {
    pub json: RecordJson,
    pub ruleset: RulesetId,
    pub config: Config,
    pub seats: u8,
    pub first_dealer: Seat,
    pub seed: Option<Seed>,
    /// Every deal's deck: derived from the seed or given explicitly (then checked).
    pub decks: Vec<Vec<Card>>,
}

/// Why a record is malformed (exit status 2 of `bete replay`). Each message names what is wrong.
#[derive(Clone, Debug, PartialEq, Eq, Error)]
pub enum RecordError {
    #[error("not valid JSON: {0}")]
    Json(String),
    #[error("wrong structure: {0}")]
    Structure(String),
    #[error("wrong format {0:?} (expected \"bete-record/1\")")]
    Format(String),
    #[error("unknown rules_version {0} (this engine knows rules_version 1)")]
    RulesVersion(u64),
    #[error(
        "unknown ruleset {0:?} (expected one of bete, bete-ace-high, beast, beste-boer, lanterlui, bester-bube)"
    )]
    Ruleset(String),
    #[error("config error: {0}")]
    Config(String),
    #[error("seat count: {0}")]
    Seats(String),
    #[error("first_dealer {first_dealer} is not a seat of a {seats}-seat table")]
    FirstDealer { first_dealer: u64, seats: u64 },
    #[error("bad seed: {0}")]
    Seed(String),
    #[error(
        "deal {deal}: dealer is {got}, expected {expected} ((first_dealer + {deal}) mod seats)"
    )]
    Dealer {
        deal: usize,
        got: u64,
        expected: u64,
    },
    #[error("deal {deal}: deck is not a permutation of the {pack_len}-card pack: {why}")]
    Deck {
        deal: usize,
        pack_len: usize,
        why: String,
    },
    #[error(
        "deal {deal}: deck differs from the seed's deck (first difference at position {position}: {got} instead of {expected})"
    )]
    DeckNotSeed {
        deal: usize,
        position: usize,
        got: Card,
        expected: Card,
    },
    #[error("deal {deal}: no deck and the record has no seed")]
    NoDeck { deal: usize },
    #[error("deal {deal} is listed after the match ended")]
    DealAfterEnd { deal: usize },
    #[error(
        "deal {deal} is listed but deal {unfinished} is not finished after its {actions} actions"
    )]
    DealUnfinished {
        deal: usize,
        unfinished: usize,
        actions: usize,
    },
    #[error("stored balances {stored:?} differ from the replay's {replayed:?}")]
    Balances {
        stored: Vec<i64>,
        replayed: Vec<i64>,
    },
}

/// Why a replay stopped.
#[derive(Clone, Debug, PartialEq, Eq, Error)]
pub enum ReplayError {
    /// Exit status 1. The message is exactly the line `bete replay` prints (11.4).
    #[error("illegal action at deal {deal}, action {action} (seat {seat}): {reason}")]
    Illegal {
        deal: usize,
        action: usize,
        seat: u64,
        reason: String,
    },
    /// Exit status 2.
    #[error("malformed record: {0}")]
    Malformed(#[from] RecordError),
}

impl ReplayError {
    /// The exit status of `bete replay` for this error (11.4).
    pub fn exit_code(&self) -> i32 {
        match self {
            ReplayError::Illegal { .. } => 1,
            ReplayError::Malformed(_) => 2,
        }
    }
}

/// Reads a config object of a record or a table (missing keys take the defaults).
pub fn config_from_json(
    ruleset: RulesetId,
    seats: u8,
    config: &Map<String, Value>,
) -> Result<Config, crate::ConfigError> {
    Config::from_json(ruleset, seats, config)
}

/// Writes the full effective config of a table as a JSON object.
pub fn config_to_json(ruleset: RulesetId, config: &Config) -> Map<String, Value> {
    config.to_json(ruleset)
}

impl Record {
    /// Parses and checks a record (everything but the actions and the stored balances, which
    /// only a [`replay`] can check).
    pub fn from_json(text: &str) -> Result<Record, RecordError> {
        let value: Value =
            serde_json::from_str(text).map_err(|e| RecordError::Json(e.to_string()))?;
        Record::from_value(value)
    }

    /// Like [`Record::from_json`], from an already parsed JSON value.
    pub fn from_value(value: Value) -> Result<Record, RecordError> {
        // `format` and `rules_version` are checked before the rest of the structure, so that a
        // record of another format is named as such rather than as a missing field.
        if let Value::Object(m) = &value {
            if let Some(f) = m.get("format") {
                match f.as_str() {
                    Some(FORMAT) => {}
                    Some(other) => return Err(RecordError::Format(other.to_string())),
                    None => {
                        return Err(RecordError::Structure(format!(
                            "format must be a string, got {f}"
                        )));
                    }
                }
            }
            if let Some(v) = m.get("rules_version").and_then(Value::as_u64)
                && v != RULES_VERSION as u64
            {
                return Err(RecordError::RulesVersion(v));
            }
        } else {
            return Err(RecordError::Structure("a record is a JSON object".into()));
        }
        Record::check(structure::record(&value)?)
    }

    /// Checks a record's fields against the rules (11.4 "Malformed").
    pub fn check(json: RecordJson) -> Result<Record, RecordError> {
        if json.format != FORMAT {
            return Err(RecordError::Format(json.format));
        }
        if json.rules_version != RULES_VERSION as u64 {
            return Err(RecordError::RulesVersion(json.rules_version));
        }
        let ruleset: RulesetId = json
            .ruleset
            .parse()
            .map_err(|_| RecordError::Ruleset(json.ruleset.clone()))?;
        let seats = u8::try_from(json.seats)
            .ok()
            .filter(|&n| n <= crate::MAX_SEATS as u8)
            .ok_or_else(|| {
                RecordError::Seats(format!(
                    "{} seats is not a seat count of {ruleset}",
                    json.seats
                ))
            })?;
        let config = config_from_json(ruleset, seats, &json.config).map_err(|e| match e {
            crate::ConfigError::Seats { .. } => RecordError::Seats(e.to_string()),
            e => RecordError::Config(e.to_string()),
        })?;
        if json.first_dealer >= json.seats {
            return Err(RecordError::FirstDealer {
                first_dealer: json.first_dealer,
                seats: json.seats,
            });
        }
        let first_dealer = Seat(json.first_dealer as u8);
        let seed = match &json.seed {
            Some(s) => Some(
                s.parse::<Seed>()
                    .map_err(|e| RecordError::Seed(e.to_string()))?,
            ),
            None => None,
        };
        let pack = pack(ruleset, &config, seats);
        let mut decks = Vec::with_capacity(json.deals.len());
        for (k, deal) in json.deals.iter().enumerate() {
            let expected = (json.first_dealer + k as u64) % json.seats;
            if deal.dealer != expected {
                return Err(RecordError::Dealer {
                    deal: k,
                    got: deal.dealer,
                    expected,
                });
            }
            let derived = seed.map(|s| deck_order(&s, k as u64, &pack));
            let deck = match (&deal.deck, derived) {
                (Some(given), derived) => {
                    let deck = parse_deck(&pack, given, k)?;
                    if let Some(derived) = derived
                        && let Some(position) = deck.iter().zip(&derived).position(|(a, b)| a != b)
                    {
                        return Err(RecordError::DeckNotSeed {
                            deal: k,
                            position,
                            got: deck[position],
                            expected: derived[position],
                        });
                    }
                    deck
                }
                (None, Some(derived)) => derived,
                (None, None) => return Err(RecordError::NoDeck { deal: k }),
            };
            decks.push(deck);
        }
        if let Some(b) = &json.balances
            && b.len() != seats as usize
        {
            return Err(RecordError::Structure(format!(
                "balances has {} entries for {seats} seats",
                b.len()
            )));
        }
        Ok(Record {
            json,
            ruleset,
            config,
            seats,
            first_dealer,
            seed,
            decks,
        })
    }

    /// The setup that starts this record's match: the seed if there is one, else the decks.
    pub fn setup(&self) -> Setup {
        Setup {
            ruleset: self.ruleset,
            config: self.config.clone(),
            seats: self.seats,
            first_dealer: self.first_dealer,
            decks: match self.seed {
                Some(s) => Decks::Seed(s),
                None => Decks::Explicit(self.decks.clone()),
            },
        }
    }

    /// The record of a match so far: the full effective config, the seed (decks omitted) or
    /// every deck, every action (`auto` only where true) and the current balances.
    pub fn from_game(game: &Game) -> Record {
        let setup = game.setup();
        let seed = match &setup.decks {
            Decks::Seed(s) => Some(*s),
            Decks::Explicit(_) => None,
        };
        let mut decks = Vec::new();
        let deals = game
            .log()
            .iter()
            // A deal still waiting for its deck has nothing to write (explicit decks only).
            .filter(|d| !d.deck.is_empty())
            .map(|d| {
                decks.push(d.deck.clone());
                RecordDeal {
                    dealer: d.dealer.0 as u64,
                    deck: if seed.is_some() {
                        None
                    } else {
                        Some(d.deck.iter().map(Card::to_string).collect())
                    },
                    actions: d
                        .actions
                        .iter()
                        .map(|a| RecordAction {
                            seat: a.seat.0 as u64,
                            action: a.action.to_string(),
                            auto: a.auto,
                        })
                        .collect(),
                }
            })
            .collect();
        let json = RecordJson {
            format: FORMAT.to_string(),
            ruleset: setup.ruleset.id().to_string(),
            rules_version: RULES_VERSION as u64,
            config: config_to_json(setup.ruleset, &setup.config),
            seats: setup.seats as u64,
            first_dealer: setup.first_dealer.0 as u64,
            seed: seed.map(|s| s.to_string()),
            deals,
            balances: Some(game.balances().to_vec()),
        };
        Record {
            json,
            ruleset: setup.ruleset,
            config: setup.config.clone(),
            seats: setup.seats,
            first_dealer: setup.first_dealer,
            seed,
            decks,
        }
    }

    /// Writes every deal's deck into the JSON (for readers without the shuffle of 11.5).
    pub fn include_decks(&mut self) {
        for (d, deck) in self.json.deals.iter_mut().zip(&self.decks) {
            d.deck = Some(deck.iter().map(Card::to_string).collect());
        }
    }

    /// Keeps only the first `n` deals. The stored balances are dropped, since they described
    /// the longer record (a replay recomputes them).
    pub fn truncate_deals(&mut self, n: usize) {
        if n < self.json.deals.len() {
            self.json.deals.truncate(n);
            self.decks.truncate(n);
            self.json.balances = None;
        }
    }

    /// The record as compact JSON.
    pub fn to_json(&self) -> String {
        // Serializing plain data with string keys cannot fail.
        serde_json::to_string(&self.json).unwrap_or_default()
    }

    /// The record as readable JSON: one top-level field a line, one deal's header and each
    /// action on a line of its own (still plain JSON, for any reader).
    pub fn to_json_pretty(&self) -> String {
        // Every value below is plain data with string keys, so serialization cannot fail.
        let j = &self.json;
        let mut out = String::from("{\n");
        let mut field = |name: &str, value: String| {
            out.push_str(&format!("  {}: {value},\n", compact(name)));
        };
        field("format", compact(&j.format));
        field("ruleset", compact(&j.ruleset));
        field("rules_version", compact(&j.rules_version));
        field("config", compact(&j.config));
        field("seats", compact(&j.seats));
        field("first_dealer", compact(&j.first_dealer));
        if let Some(seed) = &j.seed {
            field("seed", compact(seed));
        }
        if let Some(b) = &j.balances {
            field("balances", compact(b));
        }
        out.push_str("  \"deals\": [");
        for (i, d) in j.deals.iter().enumerate() {
            out.push_str(if i == 0 { "\n" } else { ",\n" });
            out.push_str(&format!("    {{\"dealer\": {}", d.dealer));
            if let Some(deck) = &d.deck {
                out.push_str(&format!(",\n     \"deck\": {}", compact(deck)));
            }
            out.push_str(",\n     \"actions\": [");
            for (k, a) in d.actions.iter().enumerate() {
                out.push_str(if k == 0 { "\n" } else { ",\n" });
                out.push_str(&format!("       {}", compact(a)));
            }
            out.push_str(if d.actions.is_empty() {
                "]}"
            } else {
                "\n     ]}"
            });
        }
        out.push_str(if j.deals.is_empty() {
            "]\n}"
        } else {
            "\n  ]\n}"
        });
        out
    }
}

/// Reading a record's JSON by hand, so that every structure error names the field by its path
/// (`deals[2].actions[5].seat`), which serde's own messages do not.
mod structure {
    use serde_json::{Map, Value};

    use super::{RecordAction, RecordDeal, RecordError, RecordJson};

    fn err(msg: String) -> RecordError {
        RecordError::Structure(msg)
    }

    fn object<'a>(v: &'a Value, path: &str) -> Result<&'a Map<String, Value>, RecordError> {
        v.as_object()
            .ok_or_else(|| err(format!("{path} must be an object, got {v}")))
    }

    fn get<'a>(m: &'a Map<String, Value>, key: &str, path: &str) -> Result<&'a Value, RecordError> {
        m.get(key)
            .ok_or_else(|| err(format!("missing field {path}{key}")))
    }

    fn uint(v: &Value, path: &str) -> Result<u64, RecordError> {
        v.as_u64()
            .ok_or_else(|| err(format!("{path} must be a non-negative integer, got {v}")))
    }

    fn string(v: &Value, path: &str) -> Result<String, RecordError> {
        v.as_str()
            .map(str::to_string)
            .ok_or_else(|| err(format!("{path} must be a string, got {v}")))
    }

    fn array<'a>(v: &'a Value, path: &str) -> Result<&'a Vec<Value>, RecordError> {
        v.as_array()
            .ok_or_else(|| err(format!("{path} must be an array, got {v}")))
    }

    fn only(m: &Map<String, Value>, allowed: &[&str], path: &str) -> Result<(), RecordError> {
        match m.keys().find(|k| !allowed.contains(&k.as_str())) {
            Some(k) => Err(err(format!(
                "unknown field {path}{k} (allowed: {})",
                allowed.join(", ")
            ))),
            None => Ok(()),
        }
    }

    pub(super) fn record(v: &Value) -> Result<RecordJson, RecordError> {
        let m = object(v, "the record")?;
        only(
            m,
            &[
                "format",
                "ruleset",
                "rules_version",
                "config",
                "seats",
                "first_dealer",
                "seed",
                "deals",
                "balances",
            ],
            "",
        )?;
        let config = match m.get("config") {
            Some(c) => object(c, "config")?.clone(),
            None => Map::new(),
        };
        let seed = match m.get("seed") {
            Some(s) => Some(string(s, "seed")?),
            None => None,
        };
        let balances = match m.get("balances") {
            Some(b) => Some(
                array(b, "balances")?
                    .iter()
                    .enumerate()
                    .map(|(i, x)| {
                        x.as_i64().ok_or_else(|| {
                            err(format!("balances[{i}] must be an integer, got {x}"))
                        })
                    })
                    .collect::<Result<Vec<i64>, _>>()?,
            ),
            None => None,
        };
        let mut deals = Vec::new();
        for (i, d) in array(get(m, "deals", "")?, "deals")?.iter().enumerate() {
            let p = format!("deals[{i}]");
            let dm = object(d, &p)?;
            only(dm, &["dealer", "deck", "actions"], &format!("{p}."))?;
            let deck = match dm.get("deck") {
                Some(deck) => Some(
                    array(deck, &format!("{p}.deck"))?
                        .iter()
                        .enumerate()
                        .map(|(k, c)| string(c, &format!("{p}.deck[{k}]")))
                        .collect::<Result<Vec<String>, _>>()?,
                ),
                None => None,
            };
            let mut actions = Vec::new();
            for (j, a) in array(
                get(dm, "actions", &format!("{p}."))?,
                &format!("{p}.actions"),
            )?
            .iter()
            .enumerate()
            {
                let ap = format!("{p}.actions[{j}]");
                let am = object(a, &ap)?;
                only(am, &["seat", "action", "auto"], &format!("{ap}."))?;
                actions.push(RecordAction {
                    seat: uint(get(am, "seat", &format!("{ap}."))?, &format!("{ap}.seat"))?,
                    action: string(
                        get(am, "action", &format!("{ap}."))?,
                        &format!("{ap}.action"),
                    )?,
                    auto: match am.get("auto") {
                        Some(b) => b.as_bool().ok_or_else(|| {
                            err(format!("{ap}.auto must be true or false, got {b}"))
                        })?,
                        None => false,
                    },
                });
            }
            deals.push(RecordDeal {
                dealer: uint(get(dm, "dealer", &format!("{p}."))?, &format!("{p}.dealer"))?,
                deck,
                actions,
            });
        }
        Ok(RecordJson {
            format: string(get(m, "format", "")?, "format")?,
            ruleset: string(get(m, "ruleset", "")?, "ruleset")?,
            rules_version: uint(get(m, "rules_version", "")?, "rules_version")?,
            config,
            seats: uint(get(m, "seats", "")?, "seats")?,
            first_dealer: uint(get(m, "first_dealer", "")?, "first_dealer")?,
            seed,
            deals,
            balances,
        })
    }
}

/// Compact JSON of a value (for the pretty writer).
fn compact<T: Serialize + ?Sized>(v: &T) -> String {
    // Plain data with string keys: serialization cannot fail.
    serde_json::to_string(v).unwrap_or_default()
}

fn parse_deck(pack: &[Card], given: &[String], deal: usize) -> Result<Vec<Card>, RecordError> {
    let err = |why: String| RecordError::Deck {
        deal,
        pack_len: pack.len(),
        why,
    };
    let mut deck = Vec::with_capacity(given.len());
    let want: crate::CardSet = pack.iter().copied().collect();
    let mut seen = crate::CardSet::EMPTY;
    for t in given {
        let c: Card = t
            .parse()
            .map_err(|e: crate::ParseCardError| err(e.to_string()))?;
        if !want.contains(c) {
            return Err(err(format!("{c} is not in the pack")));
        }
        if seen.contains(c) {
            return Err(err(format!("{c} appears twice")));
        }
        seen.insert(c);
        deck.push(c);
    }
    if deck.len() != pack.len() {
        let missing: crate::CardSet = want.minus(seen);
        return Err(err(format!(
            "it has {} cards, missing {missing}",
            deck.len()
        )));
    }
    Ok(deck)
}

/// Replays a record to the state it describes, checking every action and the stored balances.
pub fn replay(record: &Record) -> Result<Game, ReplayError> {
    let (mut game, _) = Game::new(record.setup()).map_err(setup_error)?;
    for (i, deal) in record.json.deals.iter().enumerate() {
        let current = game.deal_index() as usize;
        if game.is_over() && i > current {
            return Err(RecordError::DealAfterEnd { deal: i }.into());
        }
        if current < i {
            return Err(RecordError::DealUnfinished {
                deal: i,
                unfinished: current,
                actions: record.json.deals[current].actions.len(),
            }
            .into());
        }
        // `current > i` happens when deal i settled without any action (a Lanterlui flush
        // shown in a Muss): then any action listed for it comes after its end.
        for (j, a) in deal.actions.iter().enumerate() {
            let illegal = |reason: String| ReplayError::Illegal {
                deal: i,
                action: j,
                seat: a.seat,
                reason,
            };
            if game.is_over() || game.deal_index() as usize != i {
                return Err(illegal(format!("deal {i} has ended")));
            }
            let action: Action = a
                .action
                .parse()
                .map_err(|e: crate::ParseActionError| illegal(e.to_string()))?;
            let seat = u8::try_from(a.seat)
                .ok()
                .filter(|&s| s < record.seats)
                .ok_or_else(|| illegal(format!("seat {} is not at this table", a.seat)))?;
            game.apply_recorded(Seat(seat), action, a.auto)
                .map_err(|e| illegal(e.to_string()))?;
        }
    }
    if let Some(stored) = &record.json.balances
        && stored.as_slice() != game.balances()
    {
        return Err(RecordError::Balances {
            stored: stored.clone(),
            replayed: game.balances().to_vec(),
        }
        .into());
    }
    Ok(game)
}

/// Parses and replays a record's JSON text.
pub fn replay_json(text: &str) -> Result<Game, ReplayError> {
    replay(&Record::from_json(text)?)
}

fn setup_error(e: SetupError) -> ReplayError {
    ReplayError::Malformed(match e {
        SetupError::Config(crate::ConfigError::Seats { .. }) => RecordError::Seats(e.to_string()),
        SetupError::Config(c) => RecordError::Config(c.to_string()),
        SetupError::FirstDealer(d) => {
            RecordError::Structure(format!("first_dealer {d} is not a seat"))
        }
        SetupError::Deck {
            deal,
            pack_len,
            why,
        } => RecordError::Deck {
            deal: deal as usize,
            pack_len,
            why,
        },
        SetupError::NoDeckAwaited(why) => RecordError::Structure(why.to_string()),
    })
}

/// What `bete replay` prints: the state a record replays to.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Report {
    pub ruleset: String,
    pub seats: u8,
    /// Net jetons per seat.
    pub balances: Vec<i64>,
    /// Everything still on the table (0 once the match is over).
    pub on_table: i64,
    pub match_over: bool,
    /// Index of the deal in progress (or the last deal, once the match is over).
    pub deal: u32,
    /// One summary per settled deal.
    pub deals: Vec<DealSummary>,
}

impl Report {
    pub fn of(game: &Game) -> Report {
        Report {
            ruleset: game.ruleset().id().to_string(),
            seats: game.seats(),
            balances: game.balances().to_vec(),
            on_table: game.on_table(),
            match_over: game.is_over(),
            deal: game.deal_index(),
            deals: game.summaries().to_vec(),
        }
    }

    /// One line of JSON.
    pub fn to_json(&self) -> String {
        // Plain data with string keys: serialization cannot fail.
        serde_json::to_string(self).unwrap_or_default()
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use crate::{Viewer, bots::Bots, bots::Policy};

    fn seeded(ruleset: RulesetId, seats: u8) -> Game {
        let seed = Seed([9; 32]);
        let setup = Setup {
            ruleset,
            config: Config::defaults(ruleset, seats),
            seats,
            first_dealer: Seat(1),
            decks: Decks::Seed(seed),
        };
        Game::new(setup).unwrap().0
    }

    #[test]
    fn auto_actions_survive_the_round_trip_and_are_written_only_when_true() {
        let mut g = seeded(RulesetId::BesterBube, 4);
        let seat = g.to_act().unwrap();
        g.apply_timeout(seat).unwrap();
        let seat = g.to_act().unwrap();
        let a = g.legal_actions(seat)[0];
        g.apply(seat, a).unwrap();
        let text = Record::from_game(&g).to_json();
        assert_eq!(text.matches("\"auto\"").count(), 1, "{text}");
        let r = replay_json(&text).unwrap();
        assert_eq!(r.log(), g.log());
        assert!(r.log()[0].actions[0].auto && !r.log()[0].actions[1].auto);
        assert_eq!(r.view(Viewer::Spectator), g.view(Viewer::Spectator));
    }

    #[test]
    fn compact_and_pretty_forms_read_back_the_same() {
        let mut g = seeded(RulesetId::Bete, 5);
        Bots::new(&[Policy::Heuristic, Policy::Random], 5, &Seed([9; 32]))
            .play(&mut g, Some(3))
            .unwrap();
        let mut rec = Record::from_game(&g);
        let a = Record::from_json(&rec.to_json()).unwrap();
        let b = Record::from_json(&rec.to_json_pretty()).unwrap();
        assert_eq!(a, b);
        assert_eq!(
            a.json.deals.len(),
            4,
            "three settled deals and the fourth just dealt"
        );
        rec.include_decks();
        let c = Record::from_json(&rec.to_json_pretty()).unwrap();
        assert_eq!(c.decks, a.decks);
        assert!(c.json.deals.iter().all(|d| d.deck.is_some()));
        assert_eq!(replay(&c).unwrap().balances(), g.balances());
    }

    #[test]
    fn a_record_read_in_may_omit_default_config_keys() {
        let g = seeded(RulesetId::Lanterlui, 3);
        let mut rec = Record::from_game(&g);
        rec.json.config.clear();
        rec.json
            .config
            .insert("short_pack".into(), Value::Bool(true));
        let back = Record::from_json(&rec.to_json()).unwrap();
        assert!(back.config.short_pack);
        assert_eq!(back.config.rounds, 2);
        assert_eq!(back.decks[0].len(), 44, "short pack for three seats");
    }

    #[test]
    fn structure_errors_name_the_field() {
        let g = seeded(RulesetId::Beast, 3);
        let mut v: Value = serde_json::from_str(&Record::from_game(&g).to_json()).unwrap();
        v["deals"][0]["actions"] = serde_json::json!([{"seat": 0, "action": 5}]);
        let e = Record::from_value(v.clone()).unwrap_err().to_string();
        assert!(
            e.contains("deals[0].actions[0].action must be a string"),
            "{e}"
        );
        v["deals"][0]["actions"] = serde_json::json!([{"seat": -1, "action": "card KS"}]);
        let e = Record::from_value(v.clone()).unwrap_err().to_string();
        assert!(
            e.contains("deals[0].actions[0].seat must be a non-negative integer"),
            "{e}"
        );
        v["deals"][0]["actions"] = serde_json::json!([{"seat": 0, "action": "card KS", "when": 3}]);
        let e = Record::from_value(v.clone()).unwrap_err().to_string();
        assert!(e.contains("unknown field deals[0].actions[0].when"), "{e}");
        v["deals"][0]["actions"] = serde_json::json!([]);
        v["seed"] = Value::String("xyz".into());
        let e = Record::from_value(v).unwrap_err().to_string();
        assert!(e.contains("bad seed") && e.contains("xyz"), "{e}");
        assert!(matches!(
            Record::from_json("[1, 2]"),
            Err(RecordError::Structure(_))
        ));
    }

    #[test]
    fn illegal_action_lines_follow_rules_11_4() {
        let e = ReplayError::Illegal {
            deal: 2,
            action: 7,
            seat: 3,
            reason: "must follow suit: hearts were led".into(),
        };
        assert_eq!(
            e.to_string(),
            "illegal action at deal 2, action 7 (seat 3): must follow suit: hearts were led"
        );
        assert_eq!(e.exit_code(), 1);
        assert_eq!(
            ReplayError::Malformed(RecordError::RulesVersion(9)).exit_code(),
            2
        );
    }
}
