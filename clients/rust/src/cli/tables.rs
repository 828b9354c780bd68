//! `bete tables`: the listed tables of a server.

use crate::{pb, render};

use super::common::ServerArgs;

/// List the tables of a server.
#[derive(Debug, clap::Args)]
#[command(
    after_help = "Example:\n  bete tables --server http://127.0.0.1:50051\n  bete tables --server http://127.0.0.1:50051 --state waiting --ruleset bete"
)]
pub struct Args {
    #[command(flatten)]
    server: ServerArgs,
    /// Only tables of this ruleset (bete, bete-ace-high, beast, beste-boer, lanterlui, bester-bube, mouche, mistigri, loo, rams).
    #[arg(long, value_parser = super::common::parse_ruleset)]
    ruleset: Option<pb::Ruleset>,
    /// Only tables in this state.
    #[arg(long, value_enum)]
    state: Option<State>,
}

#[derive(Debug, Clone, Copy, clap::ValueEnum)]
enum State {
    Waiting,
    Playing,
    Finished,
}

/// Runs the subcommand.
pub async fn run(args: Args) -> anyhow::Result<()> {
    let client = args.server.connect_public().await?;
    let state = match args.state {
        None => pb::TableState::Unspecified,
        Some(State::Waiting) => pb::TableState::Waiting,
        Some(State::Playing) => pb::TableState::Playing,
        Some(State::Finished) => pb::TableState::Finished,
    };
    let tables = client
        .list_tables(args.ruleset.unwrap_or(pb::Ruleset::Unspecified), state)
        .await?;
    if tables.is_empty() {
        println!(
            "{}",
            super::named(&format!(
                "No tables. Create one with `bete bot --server {}` or `bete play --server {}`.",
                args.server.server, args.server.server
            ))
        );
        return Ok(());
    }
    println!(
        "{:<38} {:<14} {:>5} {:<9} {:>6}  Seats",
        "Table", "Ruleset", "Seats", "State", "Seq"
    );
    for t in tables {
        let state = pb::TableState::try_from(t.state)
            .map(|s| {
                s.as_str_name()
                    .trim_start_matches("TABLE_STATE_")
                    .to_ascii_lowercase()
            })
            .unwrap_or_default();
        let seats: Vec<String> = t
            .seats
            .iter()
            .map(|s| {
                if s.bot_name.is_empty() {
                    format!("{}:free", s.seat)
                } else {
                    format!("{}:{}", s.seat, render::escape(&s.bot_name))
                }
            })
            .collect();
        println!(
            "{:<38} {:<14} {:>5} {:<9} {:>6}  {}{}",
            render::escape(&t.table_id),
            render::ruleset(t.ruleset),
            t.seat_count,
            state,
            t.last_seq,
            seats.join(" "),
            marks(&t)
        );
    }
    Ok(())
}

/// The short markers after a table's seats: its ladder, and a seed its creator chose.
fn marks(table: &pb::Table) -> String {
    let mut out = String::new();
    if !table.ladder_id.is_empty() {
        out.push_str(&format!("  [ladder {}]", render::escape(&table.ladder_id)));
    }
    if table.seed_chosen {
        out.push_str("  [chosen seed: not rated]");
    }
    out
}
