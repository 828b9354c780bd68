//! What a ladder is, as the operator declares it (a TOML file, `--ladders FILE`), and the
//! ladders a server offers without one.
//!
//! ```toml
//! [[ladder]]
//! id = "beste-boer-4"
//! ruleset = "beste-boer"
//! seats = 4
//! deals_per_match = 8          # a multiple of seats: every seat deals equally
//! decision_deadline_ms = 10000
//! duplicate = true             # sets of `seats` tables, one seed, every rotation
//! max_matches_per_day = 1000   # ladder tables a bot may start per rolling 24 hours
//! max_tables_per_bot = 8       # the ceiling of a bot's capacity
//! house_entrants = ["random", "heuristic"]   # or "search", "search-2", ...
//! search_budget_ms = 50        # a search entrant's time per decision (≤ ¼ of the deadline)
//! max_strikes_per_match = 5    # more timed-out decisions at one table: off the ladder at once
//! strike_window = 50           # a bot's last decisions on the ladder, judged together
//! max_strike_share = 0.05      # more of them timed out than this share: off the ladder at once
//! strike_cooldown_ms = 60000   # wait before entering again after the first removal (doubles)
//! house_fill_after_ms = 3000   # a free bot waits this long for outside bots before the house sits in
//! luck_adjusted = false        # rate on nets with the luck of the cards taken out (`luck`);
//!                              # undeclared: true for single tables, false for sets
//! [ladder.config]              # RULES.md section 10 keys of the ruleset
//! fiche_value = 5
//! ```

use std::collections::BTreeMap;

use bete_rules::{Config, RulesetId};
use serde::Deserialize;
use serde_json::{Map, Value};
use thiserror::Error;

/// The house policies a ladder may enter.
pub const HOUSE_POLICIES: &[&str] = &["random", "heuristic", "search"];

/// The policy of a house entrant: `heuristic` for `heuristic` and for a second instance
/// `heuristic-2` (instances let a lone bot fill every seat of a table with the house).
pub fn house_policy(entrant: &str) -> &str {
    entrant.split('-').next().unwrap_or(entrant)
}

fn is_house_entrant(name: &str) -> bool {
    let (policy, instance) = match name.split_once('-') {
        Some((p, i)) => (p, Some(i)),
        None => (name, None),
    };
    HOUSE_POLICIES.contains(&policy)
        && instance
            .is_none_or(|i| !i.is_empty() && i.len() <= 3 && i.bytes().all(|b| b.is_ascii_digit()))
}

/// Bounds of the declared numbers (a typo must not make an endless match or a zero deadline).
pub const MAX_DEALS_PER_MATCH: u32 = 200;
pub const MIN_DEADLINE_MS: u64 = 20;
pub const MAX_DEADLINE_MS: u64 = 3_600_000;
pub const MAX_TABLES_PER_BOT: u32 = 1_000;
/// Bounds of a search entrant's time per decision (the server's CreateTable bounds).
pub const MIN_SEARCH_BUDGET_MS: u32 = 1;
pub const MAX_SEARCH_BUDGET_MS: u32 = 10_000;
/// A search entrant's time per decision when the ladder declares none.
pub const DEFAULT_SEARCH_BUDGET_MS: u32 = 50;
/// How long a free bot waits for outside bots before house entrants fill its table.
pub const DEFAULT_HOUSE_FILL_AFTER_MS: u64 = 3_000;
pub const MAX_HOUSE_FILL_AFTER_MS: u64 = 600_000;
/// A bot's recent decisions judged together for strikes, and the share that may time out.
pub const DEFAULT_STRIKE_WINDOW: u32 = 50;
pub const MAX_STRIKE_WINDOW: u32 = 10_000;
pub const DEFAULT_MAX_STRIKE_SHARE: f64 = 0.05;
/// The wait before entering again after a first removal; each further removal doubles it.
pub const DEFAULT_STRIKE_COOLDOWN_MS: u64 = 60_000;
pub const MIN_STRIKE_COOLDOWN_MS: u64 = 1_000;
pub const MAX_STRIKE_COOLDOWN_MS: u64 = 7 * 24 * 3_600_000;

/// One ladder.
#[derive(Clone, Debug)]
pub struct LadderSpec {
    pub id: String,
    pub ruleset: RulesetId,
    pub seats: u8,
    /// The tables' config: the declared keys, then `rounds` = deals / seats and
    /// `max_extra_deals` = 0, so every match has exactly `deals_per_match` deals.
    pub config: Config,
    pub deals_per_match: u32,
    pub deadline_ms: u64,
    pub duplicate: bool,
    pub max_matches_per_day: u32,
    pub max_tables_per_bot: u32,
    /// House policies entered, each once.
    pub house_entrants: Vec<String>,
    pub max_strikes_per_match: u32,
    /// How often one exact group may meet per rolling 24 hours.
    pub max_group_meetings_per_day: u32,
    /// Tables (or sets) a house entrant plays at once.
    pub house_capacity: u32,
    /// A `search` entrant's time per decision (ms), capped by the server at a quarter of the deadline.
    pub search_budget_ms: u32,
    /// Whether matches are rated on luck-adjusted nets ([`crate::luck`]) rather than raw nets.
    pub luck_adjusted: bool,
    /// A free bot waits this long (ms) for outside bots before house entrants fill the seats
    /// that outside bots online could take.
    pub house_fill_after_ms: u64,
    /// Decisions of a bot on this ladder judged together for strikes.
    pub strike_window: u32,
    /// More than this share of the window timed out: the bot is taken off at once.
    pub max_strike_share: f64,
    /// The wait before a removed bot may enter again, doubled at each further removal.
    pub strike_cooldown_ms: u64,
}

impl LadderSpec {
    /// Timed-out decisions a window may hold: one more and the bot is taken off.
    pub fn strikes_allowed(&self) -> u32 {
        // Both factors are bounded (window ≤ 10,000, share < 1): the product fits.
        (f64::from(self.strike_window) * self.max_strike_share).floor() as u32
    }
    /// The wait before entering again after the `removals`-th removal (1 for the first).
    pub fn cooldown_ms(&self, removals: u32) -> u64 {
        let doublings = removals.saturating_sub(1).min(30);
        self.strike_cooldown_ms
            .saturating_mul(1u64 << doublings)
            .min(MAX_STRIKE_COOLDOWN_MS.max(self.strike_cooldown_ms))
    }
    /// The effective config as JSON (every key of the ruleset).
    pub fn config_json(&self) -> Map<String, Value> {
        self.config.to_json(self.ruleset)
    }
    /// Tables of one match.
    pub fn tables_per_match(&self) -> usize {
        crate::duplicate::tables_in_match(self.duplicate, usize::from(self.seats))
    }
}

/// Why a ladder file was refused. Every message names the ladder and the field.
#[derive(Debug, Error)]
pub enum SpecError {
    #[error("ladders file: {0}")]
    Toml(#[from] toml::de::Error),
    #[error("ladder {id:?}: {field}: {message}")]
    Field {
        id: String,
        field: &'static str,
        message: String,
    },
    #[error("ladder id {0:?} is declared twice")]
    Duplicate(String),
    #[error("the ladders file declares no ladder")]
    Empty,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct File {
    #[serde(default)]
    ladder: Vec<Decl>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Decl {
    id: String,
    ruleset: String,
    seats: u8,
    deals_per_match: Option<u32>,
    decision_deadline_ms: Option<u64>,
    duplicate: Option<bool>,
    max_matches_per_day: Option<u32>,
    max_tables_per_bot: Option<u32>,
    house_entrants: Option<Vec<String>>,
    max_strikes_per_match: Option<u32>,
    max_group_meetings_per_day: Option<u32>,
    house_capacity: Option<u32>,
    search_budget_ms: Option<u32>,
    /// Any TOML value, so that a wrong type is refused naming the ladder and the field.
    luck_adjusted: Option<toml::Value>,
    house_fill_after_ms: Option<u64>,
    strike_window: Option<u32>,
    max_strike_share: Option<f64>,
    strike_cooldown_ms: Option<u64>,
    #[serde(default)]
    config: BTreeMap<String, toml::Value>,
}

/// Parse and check a ladders file.
pub fn parse_ladders(text: &str) -> Result<Vec<LadderSpec>, SpecError> {
    let file: File = toml::from_str(text)?;
    if file.ladder.is_empty() {
        return Err(SpecError::Empty);
    }
    let mut out: Vec<LadderSpec> = Vec::new();
    for d in file.ladder {
        let spec = check(d)?;
        if out.iter().any(|l| l.id == spec.id) {
            return Err(SpecError::Duplicate(spec.id));
        }
        out.push(spec);
    }
    Ok(out)
}

/// House entrants enough for a lone bot to get a table: `random`, `heuristic`, then further
/// `heuristic-N` instances up to seats − 1 entrants.
pub fn default_house_entrants(seats: u8) -> Vec<String> {
    let mut v = vec!["random".to_string(), "heuristic".to_string()];
    let mut k = 2;
    while v.len() + 1 < usize::from(seats) {
        v.push(format!("heuristic-{k}"));
        k += 1;
    }
    v
}

/// One ladder per ruleset, `<ruleset>-4`: four seats, the ruleset's default config and match
/// length (two rounds: 8 deals), duplicate sets, house entrants `random`, `heuristic` and
/// `heuristic-2` (so a lone bot gets a table).
pub fn default_ladders() -> Vec<LadderSpec> {
    RulesetId::ALL
        .iter()
        .filter_map(|r| {
            check(Decl {
                id: format!("{}-4", r.id()),
                ruleset: r.id().to_string(),
                seats: 4,
                deals_per_match: None,
                decision_deadline_ms: None,
                duplicate: None,
                max_matches_per_day: None,
                max_tables_per_bot: None,
                house_entrants: None,
                max_strikes_per_match: None,
                max_group_meetings_per_day: None,
                house_capacity: None,
                search_budget_ms: None,
                luck_adjusted: None,
                house_fill_after_ms: None,
                strike_window: None,
                max_strike_share: None,
                strike_cooldown_ms: None,
                config: BTreeMap::new(),
            })
            .ok()
        })
        .collect()
}

fn check(d: Decl) -> Result<LadderSpec, SpecError> {
    let id = d.id.clone();
    let bad = |field: &'static str, message: String| SpecError::Field {
        id: id.clone(),
        field,
        message,
    };
    if d.id.is_empty()
        || d.id.len() > 64
        || !d
            .id
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_' || c == '.')
    {
        return Err(bad(
            "id",
            "must be 1-64 characters of letters, digits, '-', '_' or '.'".into(),
        ));
    }
    let ruleset: RulesetId = d
        .ruleset
        .parse()
        .map_err(|e| bad("ruleset", format!("{e}")))?;
    let (lo, hi) = ruleset.seat_range();
    if d.seats < lo.max(2) || d.seats > hi {
        return Err(bad(
            "seats",
            format!("{} is outside {lo}..={hi} for {}", d.seats, ruleset.id()),
        ));
    }
    let seats = u32::from(d.seats);
    let deals = d.deals_per_match.unwrap_or(2 * seats);
    if deals == 0 || !deals.is_multiple_of(seats) || deals > MAX_DEALS_PER_MATCH {
        return Err(bad(
            "deals_per_match",
            format!(
                "{deals} must be a multiple of the seat count {seats}, at most {MAX_DEALS_PER_MATCH}"
            ),
        ));
    }
    let mut json = Map::new();
    for (k, v) in &d.config {
        if k == "rounds" || k == "max_extra_deals" {
            return Err(bad(
                "config",
                format!(
                    "{k} is set by deals_per_match on a ladder (every match has exactly that many deals)"
                ),
            ));
        }
        let v = serde_json::to_value(v).map_err(|e| bad("config", e.to_string()))?;
        json.insert(k.clone(), v);
    }
    json.insert("rounds".into(), Value::from(deals / seats));
    json.insert("max_extra_deals".into(), Value::from(0));
    let config =
        Config::from_json(ruleset, d.seats, &json).map_err(|e| bad("config", e.to_string()))?;
    let deadline_ms = d.decision_deadline_ms.unwrap_or(10_000);
    if !(MIN_DEADLINE_MS..=MAX_DEADLINE_MS).contains(&deadline_ms) {
        return Err(bad(
            "decision_deadline_ms",
            format!("{deadline_ms} is outside {MIN_DEADLINE_MS}..={MAX_DEADLINE_MS}"),
        ));
    }
    let max_tables_per_bot = d.max_tables_per_bot.unwrap_or(8);
    if max_tables_per_bot == 0 || max_tables_per_bot > MAX_TABLES_PER_BOT {
        return Err(bad(
            "max_tables_per_bot",
            format!("{max_tables_per_bot} is outside 1..={MAX_TABLES_PER_BOT}"),
        ));
    }
    let search_budget_ms = d.search_budget_ms.unwrap_or(DEFAULT_SEARCH_BUDGET_MS);
    if !(MIN_SEARCH_BUDGET_MS..=MAX_SEARCH_BUDGET_MS).contains(&search_budget_ms) {
        return Err(bad(
            "search_budget_ms",
            format!(
                "{search_budget_ms} is outside {MIN_SEARCH_BUDGET_MS}..={MAX_SEARCH_BUDGET_MS}"
            ),
        ));
    }
    let duplicate = d.duplicate.unwrap_or(true);
    // Undeclared: on for single tables, where it ranks the field in fewer tables, off for
    // duplicate sets, whose rotations already cancel the cards and where the correction only
    // adds spread (docs/benchmarks.md, "the luck correction").
    let luck_adjusted = match &d.luck_adjusted {
        None => !duplicate,
        Some(toml::Value::Boolean(b)) => *b,
        Some(other) => {
            return Err(bad(
                "luck_adjusted",
                format!("{other} is not true or false"),
            ));
        }
    };
    let house_fill_after_ms = d.house_fill_after_ms.unwrap_or(DEFAULT_HOUSE_FILL_AFTER_MS);
    if house_fill_after_ms > MAX_HOUSE_FILL_AFTER_MS {
        return Err(bad(
            "house_fill_after_ms",
            format!("{house_fill_after_ms} is outside 0..={MAX_HOUSE_FILL_AFTER_MS}"),
        ));
    }
    let strike_window = d.strike_window.unwrap_or(DEFAULT_STRIKE_WINDOW);
    if strike_window == 0 || strike_window > MAX_STRIKE_WINDOW {
        return Err(bad(
            "strike_window",
            format!("{strike_window} is outside 1..={MAX_STRIKE_WINDOW}"),
        ));
    }
    let max_strike_share = d.max_strike_share.unwrap_or(DEFAULT_MAX_STRIKE_SHARE);
    if !(0.0..1.0).contains(&max_strike_share) {
        return Err(bad(
            "max_strike_share",
            format!("{max_strike_share} is outside 0 (no timeout allowed) ..< 1"),
        ));
    }
    let strike_cooldown_ms = d.strike_cooldown_ms.unwrap_or(DEFAULT_STRIKE_COOLDOWN_MS);
    if !(MIN_STRIKE_COOLDOWN_MS..=MAX_STRIKE_COOLDOWN_MS).contains(&strike_cooldown_ms) {
        return Err(bad(
            "strike_cooldown_ms",
            format!(
                "{strike_cooldown_ms} is outside {MIN_STRIKE_COOLDOWN_MS}..={MAX_STRIKE_COOLDOWN_MS}"
            ),
        ));
    }
    let mut house = Vec::new();
    let seats_n = d.seats;
    for h in d
        .house_entrants
        .unwrap_or_else(|| default_house_entrants(seats_n))
    {
        if !is_house_entrant(&h) {
            return Err(bad(
                "house_entrants",
                format!(
                    "{h:?} is not a house entrant: a policy ({}), or a further instance of one \
                     as policy-N (e.g. heuristic-2)",
                    HOUSE_POLICIES.join(", ")
                ),
            ));
        }
        if house.contains(&h) {
            return Err(bad("house_entrants", format!("{h:?} is listed twice")));
        }
        house.push(h);
    }
    Ok(LadderSpec {
        id: d.id,
        ruleset,
        seats: d.seats,
        config,
        deals_per_match: deals,
        deadline_ms,
        duplicate,
        max_matches_per_day: d.max_matches_per_day.unwrap_or(1_000).max(1),
        max_tables_per_bot,
        house_entrants: house,
        max_strikes_per_match: d.max_strikes_per_match.unwrap_or(5),
        max_group_meetings_per_day: d.max_group_meetings_per_day.unwrap_or(50).max(1),
        house_capacity: d.house_capacity.unwrap_or(64).max(1),
        search_budget_ms,
        luck_adjusted,
        house_fill_after_ms,
        strike_window,
        max_strike_share,
        strike_cooldown_ms,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_defaults_are_one_four_seat_ladder_per_ruleset() {
        let l = default_ladders();
        let ids: Vec<&str> = l.iter().map(|l| l.id.as_str()).collect();
        assert_eq!(
            ids,
            [
                "bete-4",
                "bete-ace-high-4",
                "beast-4",
                "beste-boer-4",
                "lanterlui-4",
                "bester-bube-4",
                "mouche-4",
                "mistigri-4",
                "loo-4",
                "rams-4"
            ]
        );
        for l in &l {
            assert_eq!(l.seats, 4);
            assert!(l.duplicate);
            assert_eq!(l.deals_per_match, 8);
            assert_eq!(l.house_entrants, ["random", "heuristic", "heuristic-2"]);
            let c = l.config_json();
            assert_eq!(c["rounds"], 2);
            assert_eq!(c["max_extra_deals"], 0);
            // Sets cancel the cards already: raw nets.
            assert!(!l.luck_adjusted);
        }
    }

    #[test]
    fn a_file_declares_ladders_with_their_config() {
        let l = parse_ladders(
            r#"
[[ladder]]
id = "bb-3"
ruleset = "beste-boer"
seats = 3
deals_per_match = 6
duplicate = false
house_entrants = ["heuristic"]
[ladder.config]
enforce_legality = "lenient"
"#,
        )
        .unwrap();
        assert_eq!(l.len(), 1);
        assert_eq!(l[0].config_json()["enforce_legality"], "lenient");
        assert_eq!(l[0].config_json()["rounds"], 2);
        assert!(!l[0].duplicate);
        assert_eq!(l[0].tables_per_match(), 1);
        // Single tables: luck-adjusted unless declared otherwise.
        assert!(l[0].luck_adjusted);
    }

    #[test]
    fn a_ladder_may_rate_on_raw_or_luck_adjusted_nets() {
        let text = |v: &str| {
            format!("[[ladder]]\nid=\"a\"\nruleset=\"bete\"\nseats=4\nluck_adjusted={v}\n")
        };
        assert!(parse_ladders(&text("true")).unwrap()[0].luck_adjusted);
        assert!(!parse_ladders(&text("false")).unwrap()[0].luck_adjusted);
        let err = parse_ladders(&text("\"no\"")).unwrap_err().to_string();
        assert!(
            err.contains("\"a\"") && err.contains("luck_adjusted"),
            "{err}"
        );
    }

    #[test]
    fn bad_declarations_name_the_ladder_and_field() {
        let cases = [
            (
                "id = \"x\"\nruleset = \"bete\"\nseats = 4\ndeals_per_match = 6",
                "deals_per_match",
            ),
            ("id = \"x\"\nruleset = \"nope\"\nseats = 4", "ruleset"),
            ("id = \"x\"\nruleset = \"beast\"\nseats = 6", "seats"),
            (
                "id = \"x\"\nruleset = \"bete\"\nseats = 4\n[ladder.config]\nrounds = 9",
                "config",
            ),
            (
                "id = \"x\"\nruleset = \"bete\"\nseats = 4\n[ladder.config]\nbogus = 1",
                "config",
            ),
            (
                "id = \"x\"\nruleset = \"bete\"\nseats = 4\nhouse_entrants = [\"god\"]",
                "house_entrants",
            ),
            ("id = \"x y\"\nruleset = \"bete\"\nseats = 4", "id"),
            (
                "id = \"x\"\nruleset = \"bete\"\nseats = 4\ndecision_deadline_ms = 1",
                "decision_deadline_ms",
            ),
            (
                "id = \"x\"\nruleset = \"bete\"\nseats = 4\nmax_tables_per_bot = 0",
                "max_tables_per_bot",
            ),
            (
                "id = \"x\"\nruleset = \"bete\"\nseats = 4\nluck_adjusted = \"yes\"",
                "luck_adjusted",
            ),
            (
                "id = \"x\"\nruleset = \"bete\"\nseats = 4\nluck_adjusted = 1",
                "luck_adjusted",
            ),
            (
                "id = \"x\"\nruleset = \"bete\"\nseats = 4\nhouse_fill_after_ms = 600001",
                "house_fill_after_ms",
            ),
            (
                "id = \"x\"\nruleset = \"bete\"\nseats = 4\nstrike_window = 0",
                "strike_window",
            ),
            (
                "id = \"x\"\nruleset = \"bete\"\nseats = 4\nmax_strike_share = 1.0",
                "max_strike_share",
            ),
            (
                "id = \"x\"\nruleset = \"bete\"\nseats = 4\nmax_strike_share = -0.1",
                "max_strike_share",
            ),
            (
                "id = \"x\"\nruleset = \"bete\"\nseats = 4\nstrike_cooldown_ms = 5",
                "strike_cooldown_ms",
            ),
        ];
        for (body, field) in cases {
            let err = parse_ladders(&format!("[[ladder]]\n{body}\n")).unwrap_err();
            match err {
                SpecError::Field { field: f, .. } => assert_eq!(f, field, "{body}"),
                other => panic!("{body}: {other}"),
            }
        }
        assert!(matches!(parse_ladders(""), Err(SpecError::Empty)));
        assert!(matches!(
            parse_ladders(
                "[[ladder]]\nid=\"a\"\nruleset=\"bete\"\nseats=4\n[[ladder]]\nid=\"a\"\nruleset=\"bete\"\nseats=3\n"
            ),
            Err(SpecError::Duplicate(_))
        ));
        assert!(matches!(
            parse_ladders("[[ladder]]\nid=\"a\"\nruleset=\"bete\"\nseats=4\ntypo=1\n"),
            Err(SpecError::Toml(_))
        ));
    }
}

#[cfg(test)]
mod deploy_tests {
    /// The Kubernetes base's ladders file parses and declares exactly the server's defaults.
    #[test]
    fn the_deployed_ladders_file_is_the_defaults() {
        let file = super::parse_ladders(include_str!("../../../deploy/base/ladders.toml")).unwrap();
        let defaults = super::default_ladders();
        assert_eq!(file.len(), defaults.len());
        for (f, d) in file.iter().zip(&defaults) {
            assert_eq!(f.id, d.id);
            assert_eq!(f.ruleset, d.ruleset);
            assert_eq!(f.seats, d.seats);
            assert_eq!(f.config_json(), d.config_json());
            assert_eq!(f.deals_per_match, d.deals_per_match);
            assert_eq!(f.deadline_ms, d.deadline_ms);
            assert_eq!(f.duplicate, d.duplicate);
            assert_eq!(f.house_entrants, d.house_entrants);
            assert_eq!(f.max_tables_per_bot, d.max_tables_per_bot);
            assert_eq!(f.max_matches_per_day, d.max_matches_per_day);
            assert_eq!(f.max_strikes_per_match, d.max_strikes_per_match);
            assert_eq!(f.luck_adjusted, d.luck_adjusted);
        }
    }
}

#[cfg(test)]
mod house_tests {
    use super::*;

    #[test]
    fn house_entrants_may_be_further_instances_of_a_policy() {
        assert_eq!(house_policy("heuristic-2"), "heuristic");
        assert_eq!(house_policy("random"), "random");
        assert_eq!(default_house_entrants(3), ["random", "heuristic"]);
        assert_eq!(
            default_house_entrants(5),
            ["random", "heuristic", "heuristic-2", "heuristic-3"]
        );
        let ok = parse_ladders(
            "[[ladder]]\nid=\"a\"\nruleset=\"bete\"\nseats=4\nhouse_entrants=[\"random\",\"random-2\",\"random-3\"]\n",
        )
        .unwrap();
        assert_eq!(ok[0].house_entrants.len(), 3);
        for bad in [
            "\"random-x\"",
            "\"random-\"",
            "\"random-2\", \"random-2\"",
            "\"heuristic-1234\"",
        ] {
            let err = parse_ladders(&format!(
                "[[ladder]]\nid=\"a\"\nruleset=\"bete\"\nseats=4\nhouse_entrants=[{bad}]\n"
            ))
            .unwrap_err();
            assert!(
                matches!(
                    err,
                    SpecError::Field {
                        field: "house_entrants",
                        ..
                    }
                ),
                "{bad}: {err}"
            );
        }
    }
}

#[cfg(test)]
mod search_tests {
    use super::*;

    #[test]
    fn a_ladder_may_enter_search_with_a_bounded_budget() {
        let text = |extra: &str| {
            format!(
                "[[ladder]]\nid=\"a\"\nruleset=\"beste-boer\"\nseats=4\n\
                 house_entrants=[\"search\",\"search-2\",\"heuristic\"]\n{extra}"
            )
        };
        let l = parse_ladders(&text("")).unwrap();
        assert_eq!(l[0].house_entrants, ["search", "search-2", "heuristic"]);
        assert_eq!(house_policy("search-2"), "search");
        assert_eq!(l[0].search_budget_ms, DEFAULT_SEARCH_BUDGET_MS);
        let l = parse_ladders(&text("search_budget_ms = 10000\n")).unwrap();
        assert_eq!(l[0].search_budget_ms, 10_000);
        for bad in [0, 10_001, 3_600_000] {
            let err = parse_ladders(&text(&format!("search_budget_ms = {bad}\n"))).unwrap_err();
            assert!(
                matches!(
                    err,
                    SpecError::Field {
                        field: "search_budget_ms",
                        ..
                    }
                ),
                "{bad}: {err}"
            );
        }
    }
}
