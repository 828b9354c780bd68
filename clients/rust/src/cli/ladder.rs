//! `bete ladder`: the ladders of a server, their leaderboards and their matches. Every call
//! here is a public read: no token is needed and no bot is registered.

use serde_json::{Value, json};

use crate::render::{self, escape};
use crate::{Client, pb};

use super::common::ServerArgs;

/// The ladders of a server: list them, show a leaderboard or the matches played.
#[derive(Debug, clap::Args)]
#[command(
    after_help = "Examples:\n  bete ladder list\n  bete ladder standings beste-boer-4\n  bete ladder standings beste-boer-4 --json\n  bete ladder matches beste-boer-4 --bot BOT_ID\n  bete ladder crosstable beste-boer-4 --json\n\nPlay on a ladder with `bete bot --ladder beste-boer-4 --strategy heuristic`."
)]
pub struct Args {
    #[command(subcommand)]
    command: LadderCommand,
}

#[derive(Debug, clap::Subcommand)]
pub enum LadderCommand {
    /// Every ladder of the server: game, seats, match length, entrants.
    List {
        #[command(flatten)]
        server: ServerArgs,
        /// Print JSON (`{"ladders": [...]}`) instead of a table.
        #[arg(long)]
        json: bool,
    },
    /// A ladder's leaderboard, best first (by the conservative rating mu - 3 sigma).
    Standings {
        #[command(flatten)]
        server: ServerArgs,
        /// The ladder's id (see `bete ladder list`).
        ladder: String,
        /// Print JSON: an object with an `entries` array, best first.
        #[arg(long)]
        json: bool,
    },
    /// A ladder's matches, newest first, with their tables (whose records `bete verify --table`
    /// checks).
    Matches {
        #[command(flatten)]
        server: ServerArgs,
        /// The ladder's id.
        ladder: String,
        /// Only the matches of this bot (its id).
        #[arg(long)]
        bot: Option<String>,
        /// The most matches to show (0: the server's page size).
        #[arg(long, default_value_t = 20)]
        limit: u32,
        /// Print JSON (`{"matches": [...]}`) instead of text.
        #[arg(long)]
        json: bool,
    },
    /// How every two bots that met fared against each other: their rated matches (sets)
    /// together and the mean net difference per deal, with a 95 % interval.
    Crosstable {
        #[command(flatten)]
        server: ServerArgs,
        /// The ladder's id.
        ladder: String,
        /// Print JSON (`{"ladder_id": ..., "matches_rated": N, "pairs": [...]}`) instead of a
        /// table.
        #[arg(long)]
        json: bool,
    },
}

/// Runs the subcommand.
pub async fn run(args: Args) -> anyhow::Result<()> {
    match args.command {
        LadderCommand::List { server, json } => list(&server.connect_public().await?, json).await,
        LadderCommand::Standings {
            server,
            ladder,
            json,
        } => standings(&server.connect_public().await?, &ladder, json).await,
        LadderCommand::Matches {
            server,
            ladder,
            bot,
            limit,
            json,
        } => {
            let client = server.connect_public().await?;
            matches(&client, &ladder, bot.as_deref(), limit, json).await
        }
        LadderCommand::Crosstable {
            server,
            ladder,
            json,
        } => {
            let table = server
                .connect_public()
                .await?
                .get_crosstable(&ladder)
                .await?;
            if json {
                println!("{:#}", crosstable_json(&table));
            } else {
                print!("{}", crosstable_text(&table));
            }
            Ok(())
        }
    }
}

/// The crosstable as `bete ladder crosstable --json` prints it.
pub fn crosstable_json(t: &pb::GetCrosstableResponse) -> Value {
    json!({
        "ladder_id": t.ladder_id,
        "matches_rated": t.matches_rated,
        "pairs": t.pairs.iter().map(|p| json!({
            "bot_a": p.bot_a,
            "bot_a_name": p.bot_a_name,
            "bot_b": p.bot_b,
            "bot_b_name": p.bot_b_name,
            "meetings": p.meetings,
            "deals": p.deals,
            "a_ahead": p.a_ahead,
            "level": p.level,
            "b_ahead": p.b_ahead,
            "mean_net_difference_per_deal": p.mean_net_difference_per_deal,
            "interval_low": p.interval_low,
            "interval_high": p.interval_high,
        })).collect::<Vec<_>>(),
    })
}

/// The crosstable as text: one line per pair, A's edge over B in jetons per deal.
pub fn crosstable_text(t: &pb::GetCrosstableResponse) -> String {
    use std::fmt::Write as _;
    let mut out = String::new();
    if t.pairs.is_empty() {
        let _ = writeln!(
            out,
            "No pair has met on {} yet ({} matches rated).",
            escape(&t.ladder_id),
            t.matches_rated
        );
        return out;
    }
    let _ = writeln!(
        out,
        "{} · {} matches rated · A - B in jetons per deal, 95 % interval",
        escape(&t.ladder_id),
        t.matches_rated
    );
    let _ = writeln!(
        out,
        "{:>8} {:>6} {:>11}  {:>9} {:>8} {:>8}  A vs B",
        "Meetings", "Deals", "A/=/B", "A - B", "low", "high"
    );
    let who = |name: &str, id: &str| {
        if name.is_empty() || name == id {
            escape(id)
        } else {
            format!("{} [{}]", escape(name), escape(id))
        }
    };
    for p in &t.pairs {
        let ahead = format!("{}/{}/{}", p.a_ahead, p.level, p.b_ahead);
        let _ = writeln!(
            out,
            "{:>8} {:>6} {:>11}  {:>+9.3} {:>+8.3} {:>+8.3}  {} vs {}",
            p.meetings,
            p.deals,
            ahead,
            p.mean_net_difference_per_deal,
            p.interval_low,
            p.interval_high,
            who(&p.bot_a_name, &p.bot_a),
            who(&p.bot_b_name, &p.bot_b),
        );
    }
    out
}

async fn list(client: &Client, as_json: bool) -> anyhow::Result<()> {
    let ladders = client.list_ladders().await?;
    if as_json {
        let ladders: Vec<Value> = ladders.iter().map(ladder_json).collect();
        println!("{:#}", json!({ "ladders": ladders }));
        return Ok(());
    }
    if ladders.is_empty() {
        println!("This server hosts no ladders.");
        return Ok(());
    }
    println!(
        "{:<20} {:<14} {:>5} {:>5} {:<9} {:>8} {:>8} {:>6} {:>6} {:<5} {:>6} {:>10} {:>8}  House",
        "Ladder",
        "Ruleset",
        "Seats",
        "Deals",
        "Kind",
        "Deadline",
        "Entrants",
        "Online",
        "Rated",
        "Nets",
        "Fill",
        "Strikes",
        "Cooldown"
    );
    for l in &ladders {
        println!(
            "{:<20} {:<14} {:>5} {:>5} {:<9} {:>6}ms {:>8} {:>6} {:>6} {:<5} {:>6} {:>10} {:>8}  {}",
            escape(&l.ladder_id),
            render::ruleset(l.ruleset),
            l.seat_count,
            l.deals_per_match,
            if l.duplicate { "duplicate" } else { "single" },
            l.decision_deadline_ms,
            l.entrants,
            l.online,
            l.matches_rated,
            if l.luck_adjusted { "luck" } else { "raw" },
            seconds(u64::from(l.house_fill_after_ms)),
            strikes_text(l),
            seconds(l.strike_cooldown_ms),
            house_names(l).join(",")
        );
    }
    println!(
        "{}",
        super::named("\nEnter one with `bete bot --ladder LADDER --strategy heuristic`.")
    );
    Ok(())
}

/// Milliseconds as the list shows them: `3s`, `1.5s`.
fn seconds(ms: u64) -> String {
    if ms.is_multiple_of(1000) {
        format!("{}s", ms / 1000)
    } else {
        format!("{}s", ms as f64 / 1000.0)
    }
}

/// The strike rule in short: at most this share of the last N decisions may time out
/// (`5%/50`).
fn strikes_text(l: &pb::Ladder) -> String {
    // To a tenth of a percent: 0.07 is 7.000000000000001 % in binary.
    let percent = (l.max_strike_share * 1000.0).round() / 10.0;
    format!("{percent}%/{}", l.strike_window)
}

/// The house entrants as `bete play --bots` spells them: a search entrant with its budget
/// (`search:50`), since the budget is its strength.
/// The house entrants as the ladders file names them: a policy's second and later instances
/// are `policy-N` (`random`, `heuristic`, `heuristic-2`), a searcher shows its time budget.
fn house_names(l: &pb::Ladder) -> Vec<String> {
    let mut seen: std::collections::HashMap<i32, usize> = std::collections::HashMap::new();
    l.house_entrants
        .iter()
        .map(|p| {
            let n = seen.entry(*p).or_insert(0);
            *n += 1;
            let name = match pb::HouseBotPolicy::try_from(*p) {
                Ok(policy) => policy
                    .as_str_name()
                    .trim_start_matches("HOUSE_BOT_POLICY_")
                    .to_ascii_lowercase(),
                Err(_) => p.to_string(),
            };
            let name = if *n > 1 { format!("{name}-{n}") } else { name };
            if *p == pb::HouseBotPolicy::Search as i32 {
                format!("{name}:{}", l.search_budget_ms)
            } else {
                name
            }
        })
        .collect()
}

fn ladder_json(l: &pb::Ladder) -> Value {
    json!({
        "ladder_id": l.ladder_id,
        "ruleset": render::ruleset(l.ruleset),
        "seat_count": l.seat_count,
        "config": l.config,
        "deals_per_match": l.deals_per_match,
        "decision_deadline_ms": l.decision_deadline_ms,
        "duplicate": l.duplicate,
        "max_matches_per_day": l.max_matches_per_day,
        "max_tables_per_bot": l.max_tables_per_bot,
        "house_entrants": house_names(l),
        "search_budget_ms": l.search_budget_ms,
        "max_strikes_per_match": l.max_strikes_per_match,
        "house_fill_after_ms": l.house_fill_after_ms,
        "strike_window": l.strike_window,
        "max_strike_share": l.max_strike_share,
        "strike_cooldown_ms": l.strike_cooldown_ms,
        "luck_adjusted": l.luck_adjusted,
        "entrants": l.entrants,
        "online": l.online,
        "matches_rated": l.matches_rated,
    })
}

/// One leaderboard line as `bete ladder standings --json` prints it.
pub fn standing_json(s: &pb::Standing) -> Value {
    json!({
        "rank": s.rank,
        "bot_id": s.bot_id,
        "bot_name": s.bot_name,
        "bot_version": s.bot_version,
        "owner_id": s.owner_id,
        "rating": s.rating,
        "mu": s.mu,
        "sigma": s.sigma,
        "matches": s.matches,
        "mean_jetons_per_deal": s.mean_jetons_per_deal,
        "last_net": s.last_net,
        "last_place": s.last_place,
        "house": s.house,
        "active": s.active,
    })
}

async fn standings(client: &Client, ladder: &str, as_json: bool) -> anyhow::Result<()> {
    let lines = client.get_standings(ladder).await?;
    if as_json {
        let entries: Vec<Value> = lines.iter().map(standing_json).collect();
        println!("{:#}", json!({ "ladder_id": ladder, "entries": entries }));
        return Ok(());
    }
    print!("{}", super::named(&standings_text(ladder, &lines)));
    Ok(())
}

/// The leaderboard as text, best first.
pub fn standings_text(ladder: &str, lines: &[pb::Standing]) -> String {
    use std::fmt::Write as _;
    let mut out = String::new();
    if lines.is_empty() {
        let _ = writeln!(
            out,
            "Nobody is rated on {} yet. Enter a bot with `bete bot --ladder {}`.",
            escape(ladder),
            escape(ladder)
        );
        return out;
    }
    let _ = writeln!(
        out,
        "{:>4} {:>8} {:>7} {:>6} {:>7} {:>11} {:>10}  Bot",
        "Rank", "Rating", "mu", "sigma", "Matches", "Jetons/deal", "Last"
    );
    for s in lines {
        let last = if s.matches == 0 {
            "-".to_string()
        } else {
            format!("{:+} ({})", s.last_net, place(s.last_place))
        };
        let mut who = escape(&s.bot_name);
        if !s.house && !s.bot_version.is_empty() && s.bot_version != "1" {
            who.push_str(&format!(" v{}", escape(&s.bot_version)));
        }
        if s.house {
            who.push_str(" (house)");
        } else {
            who.push_str(&format!(" [{}]", escape(&s.bot_id)));
        }
        if !s.active {
            who.push_str(" (left)");
        }
        let _ = writeln!(
            out,
            "{:>4} {:>8.2} {:>7.2} {:>6.2} {:>7} {:>11.2} {:>10}  {}",
            s.rank, s.rating, s.mu, s.sigma, s.matches, s.mean_jetons_per_deal, last, who
        );
    }
    out
}

fn place(n: u32) -> String {
    let suffix = match (n % 10, n % 100) {
        (_, 11..=13) => "th",
        (1, _) => "st",
        (2, _) => "nd",
        (3, _) => "rd",
        _ => "th",
    };
    format!("{n}{suffix}")
}

fn timestamp(t: &Option<prost_types::Timestamp>) -> Value {
    t.as_ref()
        .map_or(Value::Null, |t| Value::String(t.to_string()))
}

fn state_name(state: i32) -> String {
    pb::LadderMatchState::try_from(state)
        .map(|s| {
            s.as_str_name()
                .trim_start_matches("LADDER_MATCH_STATE_")
                .to_ascii_lowercase()
        })
        .unwrap_or_else(|_| state.to_string())
}

fn match_json(m: &pb::LadderMatch) -> Value {
    json!({
        "match_id": m.match_id,
        "ladder_id": m.ladder_id,
        "state": state_name(m.state),
        "duplicate": m.duplicate,
        "started_at": timestamp(&m.started_at),
        "rated_at": timestamp(&m.rated_at),
        "deals": m.deals,
        "entrants": m.entrants.iter().map(|e| json!({
            "bot_id": e.bot_id,
            "bot_name": e.bot_name,
            "seat": e.seat,
            "net": e.net,
            "place": e.place,
            "mu_before": e.mu_before,
            "sigma_before": e.sigma_before,
            "mu_after": e.mu_after,
            "sigma_after": e.sigma_after,
            "strikes": e.strikes,
        })).collect::<Vec<_>>(),
        "tables": m.tables.iter().map(|t| json!({
            "table_id": t.table_id,
            "rotation": t.rotation,
            "seed_sha256": t.seed_sha256,
            "finished": t.finished,
        })).collect::<Vec<_>>(),
    })
}

async fn matches(
    client: &Client,
    ladder: &str,
    bot: Option<&str>,
    limit: u32,
    as_json: bool,
) -> anyhow::Result<()> {
    let page = client
        .list_ladder_matches(ladder, bot.unwrap_or(""), limit, "")
        .await?;
    if as_json {
        let matches: Vec<Value> = page.matches.iter().map(match_json).collect();
        println!("{:#}", json!({ "ladder_id": ladder, "matches": matches }));
        return Ok(());
    }
    print!("{}", super::named(&matches_text(ladder, &page.matches)));
    Ok(())
}

/// A ladder's matches as text, newest first.
pub fn matches_text(ladder: &str, matches: &[pb::LadderMatch]) -> String {
    use std::fmt::Write as _;
    let mut out = String::new();
    if matches.is_empty() {
        let _ = writeln!(out, "No matches on {} yet.", escape(ladder));
        return out;
    }
    for m in matches {
        let kind = if m.duplicate {
            format!("duplicate set of {} tables", m.entrants.len())
        } else {
            "single table".to_string()
        };
        let when = m
            .rated_at
            .as_ref()
            .or(m.started_at.as_ref())
            .map(|t| t.to_string())
            .unwrap_or_default();
        let _ = writeln!(
            out,
            "match {} · {} · {} · {} deals · {}",
            escape(&m.match_id),
            state_name(m.state),
            kind,
            m.deals,
            when
        );
        let rated = m.state == pb::LadderMatchState::Rated as i32;
        for e in &m.entrants {
            if rated {
                let _ = writeln!(
                    out,
                    "  {:>4} {:>+6}  mu {:.2} -> {:.2}  {} [{}]{}",
                    place(e.place),
                    e.net,
                    e.mu_before,
                    e.mu_after,
                    escape(&e.bot_name),
                    escape(&e.bot_id),
                    strikes(e.strikes)
                );
            } else {
                let _ = writeln!(
                    out,
                    "  seat {}  {} [{}]{}",
                    e.seat,
                    escape(&e.bot_name),
                    escape(&e.bot_id),
                    strikes(e.strikes)
                );
            }
        }
        for t in &m.tables {
            let _ = writeln!(
                out,
                "  table {} (rotation {}, {}) seed sha256 {}",
                escape(&t.table_id),
                t.rotation,
                if t.finished { "finished" } else { "playing" },
                escape(&t.seed_sha256)
            );
        }
    }
    if matches
        .iter()
        .any(|m| m.state == pb::LadderMatchState::Rated as i32)
    {
        let _ = writeln!(
            out,
            "\nCheck a rated table's deals with `bete verify --table TABLE_ID`."
        );
    }
    out
}

fn strikes(n: u32) -> String {
    if n == 0 {
        String::new()
    } else {
        format!(" ({n} timed-out decisions)")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_search_entrant_is_listed_with_its_budget() {
        let l = pb::Ladder {
            house_entrants: vec![
                pb::HouseBotPolicy::Search.into(),
                pb::HouseBotPolicy::Random.into(),
            ],
            search_budget_ms: 50,
            ..Default::default()
        };
        assert_eq!(house_names(&l), ["search:50", "random"]);
    }

    #[test]
    fn the_strike_rule_and_waits_read_short() {
        let l = pb::Ladder {
            strike_window: 50,
            max_strike_share: 0.05,
            ..Default::default()
        };
        assert_eq!(strikes_text(&l), "5%/50");
        let l = pb::Ladder {
            strike_window: 40,
            max_strike_share: 0.07,
            ..Default::default()
        };
        assert_eq!(strikes_text(&l), "7%/40");
        assert_eq!(seconds(3_000), "3s");
        assert_eq!(seconds(1_500), "1.5s");
        assert_eq!(seconds(60_000), "60s");
    }

    fn standing(rank: u32, name: &str, rating: f64) -> pb::Standing {
        pb::Standing {
            rank,
            bot_id: format!("id-{name}"),
            bot_name: name.into(),
            bot_version: "1".into(),
            rating,
            mu: rating + 3.0,
            sigma: 1.0,
            matches: 3,
            active: true,
            ..Default::default()
        }
    }

    #[test]
    fn standings_json_has_the_documented_fields() {
        let v = standing_json(&standing(1, "ace", 20.5));
        for key in ["bot_name", "bot_id", "rating", "mu", "sigma", "matches"] {
            assert!(v.get(key).is_some(), "{key} in {v}");
        }
        assert_eq!(v["rating"], 20.5);
        assert_eq!(v["bot_name"], "ace");
    }

    #[test]
    fn names_from_the_network_are_escaped() {
        let text = standings_text("l", &[standing(1, "evil\u{1b}[2J\u{202e}name", 1.0)]);
        assert!(!text.contains('\u{1b}'), "{text:?}");
        assert!(!text.contains('\u{202e}'), "{text:?}");
        assert!(text.contains("evil\\u{001b}[2J\\u{202e}name"), "{text}");
    }

    #[test]
    fn places_read_as_ordinals() {
        assert_eq!(
            [1, 2, 3, 4, 11, 12, 13, 21, 22].map(place),
            [
                "1st", "2nd", "3rd", "4th", "11th", "12th", "13th", "21st", "22nd"
            ]
        );
    }

    #[test]
    fn house_entrants_are_named_as_in_the_ladders_file() {
        let l = pb::Ladder {
            house_entrants: vec![
                pb::HouseBotPolicy::Random as i32,
                pb::HouseBotPolicy::Heuristic as i32,
                pb::HouseBotPolicy::Heuristic as i32,
                pb::HouseBotPolicy::Search as i32,
            ],
            search_budget_ms: 50,
            ..Default::default()
        };
        assert_eq!(
            house_names(&l),
            ["random", "heuristic", "heuristic-2", "search:50"]
        );
    }
}
