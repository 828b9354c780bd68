//! `bete bot`: run a strategy as a bot at one or more tables.

use crate::{Notice, Runner, Strategy, SubmitVia, pb, render};
use anyhow::Context as _;
use tokio_util::sync::CancellationToken;

use super::common::ServerArgs;

/// Run a built-in strategy as a bot: create tables (the other seats house bots) or join given
/// ones, and play until stopped (Ctrl-C) or until the matches are done.
#[derive(Debug, Clone, clap::Args)]
#[command(
    after_help = "Examples:\n  bete bot --server http://127.0.0.1:50051 --strategy heuristic --tables 4 --ruleset beast --seats 4\n  bete bot --server http://127.0.0.1:50051 --strategy random --join TABLE_ID\n  bete bot --ladder beste-boer-4 --strategy heuristic --name my-bot --capacity 2\n\nWith --ladder the bot enters the ladder and plays the tables its scheduler seats it at, until\nCtrl-C or --matches tables are over, then leaves the ladder. Reuse a bot (and its rating) with\n--token; see the standings with `bete ladder standings LADDER`."
)]
pub struct Args {
    #[command(flatten)]
    pub server: ServerArgs,
    /// How the bot plays.
    #[arg(long, value_enum, default_value_t = Strategy::Heuristic)]
    pub strategy: Strategy,
    /// Play on this ladder (see `bete ladder list`) instead of creating or joining tables.
    #[arg(long, value_name = "LADDER", conflicts_with_all = ["tables", "join", "ruleset", "seats", "deadline_ms"])]
    pub ladder: Option<String>,
    /// With --ladder: ladder tables to play at once (1 .. the ladder's max_tables_per_bot).
    #[arg(long, default_value_t = 1, requires = "ladder")]
    pub capacity: u32,
    /// Tables to play at once (created unless --join is given).
    #[arg(long, default_value_t = 1)]
    pub tables: usize,
    /// Matches (tables) to play in all before stopping; by default as many as --tables (or the
    /// joined tables), and with --ladder until Ctrl-C. New tables are created as matches end.
    #[arg(long)]
    pub matches: Option<usize>,
    /// The game of created tables.
    #[arg(long, default_value = "bete", value_parser = super::common::parse_ruleset)]
    pub ruleset: pb::Ruleset,
    /// Seats of created tables; the seats other than the bot's are house bots.
    #[arg(long, default_value_t = 3)]
    pub seats: u32,
    /// Join these tables (any free seat) instead of creating tables.
    #[arg(long = "join", value_name = "TABLE")]
    pub join: Vec<String>,
    /// With --join: the invitation code of the (private) tables joined, from their creator.
    #[arg(long, value_name = "CODE", requires = "join")]
    pub invitation: Option<String>,
    /// Created tables are private: unlisted, read only by their seated bots, joined only with
    /// the invitation code printed for each (`bete bot --join TABLE --invitation CODE`).
    #[arg(long, conflicts_with = "join")]
    pub private: bool,
    /// Seats of created tables left free for other bots to join (the rest of the seats other
    /// than the bot's are house bots). With --private, give them the printed invitation code.
    #[arg(long, default_value_t = 0, conflicts_with = "join")]
    pub open_seats: u32,
    /// The bot's name when registering (ignored with --token).
    #[arg(long, default_value = "bete-bot")]
    pub name: String,
    /// Milliseconds per decision at created tables (0: the server's default).
    #[arg(long, default_value_t = 0)]
    pub deadline_ms: u32,
    /// How actions are sent: on SubmitActions streams, or one unary SubmitAction call each.
    #[arg(long, value_enum, default_value_t = SubmitVia::Stream)]
    pub submit: SubmitVia,
    /// Be the only process playing this bot: its WatchBot streams are opened `exclusive`, so
    /// the server ends any other process's stream for this token (STREAM_REPLACED), and this
    /// one stops if a later process does the same.
    #[arg(long)]
    pub exclusive: bool,
}

/// Runs the subcommand.
pub async fn run(args: Args) -> anyhow::Result<()> {
    if let Some(ladder) = args.ladder.clone() {
        return super::ladder_bot::run(super::ladder_bot::Options {
            server: args.server,
            ladder,
            strategy: args.strategy,
            name: args.name,
            capacity: args.capacity,
            matches: args.matches,
            submit: args.submit,
            exclusive: args.exclusive,
        })
        .await;
    }
    let client = args.server.connect(&args.name).await?;
    client.set_exclusive(args.exclusive);
    let strategy = args.strategy;
    let total = args.matches.unwrap_or(if args.join.is_empty() {
        args.tables
    } else {
        args.join.len()
    });
    let cancel = CancellationToken::new();
    let mut runner = Runner::new(client.clone(), move |_seated: &pb::Seated| strategy.bot())
        .submit_via(args.submit)
        .with_cancel(cancel.clone())
        .stop_after(total);
    let mut notices = runner.notifications();
    let running = tokio::spawn(runner.run());

    if args.open_seats >= args.seats {
        anyhow::bail!(
            "--open-seats {} leaves no seat for this bot at a table of {} seats",
            args.open_seats,
            args.seats
        );
    }
    let create = |client: crate::Client| {
        let mut request = super::common::house_table(
            args.ruleset,
            args.seats,
            strategy.house_policy(),
            args.deadline_ms,
        );
        // The open seats are the last ones: house bots keep the seats next to the bot's.
        request
            .house_bots
            .retain(|h| h.seat < args.seats - args.open_seats);
        if args.private {
            request.visibility = pb::Visibility::Private as i32;
        }
        async move {
            let (table, code) = client
                .create_table_invitation(request)
                .await
                .context("could not create a table")?;
            if !code.is_empty() {
                // Printed on stdout, alone on its line after the table id: what a script or a
                // person passes on to the invited bots.
                println!(
                    "table {} invitation {code}",
                    render::escape(&table.table_id)
                );
                eprintln!(
                    "invite bots with: bete bot --join {} --invitation {code}",
                    render::escape(&table.table_id)
                );
            }
            client
                .join_table(&table.table_id, Some(0))
                .await
                .context("could not join the table")?;
            anyhow::Ok(table.table_id)
        }
    };
    let mut started = 0;
    if args.join.is_empty() {
        while started < args.tables.min(total) {
            let id = create(client.clone()).await?;
            started += 1;
            eprintln!(
                "created and joined table {} ({} with {} seats)",
                render::escape(&id),
                render::ruleset(args.ruleset as i32),
                args.seats
            );
        }
    } else {
        for id in &args.join {
            let joined = client
                .join_table_invited(id, None, args.invitation.as_deref().unwrap_or(""))
                .await
                .with_context(|| format!("could not join table {}", render::escape(id)))?;
            started += 1;
            eprintln!(
                "joined table {} at seat {}",
                render::escape(id),
                joined.seat
            );
        }
    }

    let mut done = 0;
    // One listener for the whole loop: a listener made anew each turn misses a Ctrl-C that
    // arrives while a notice is handled (the process has a handler, so it would not even die).
    let ctrl_c = tokio::signal::ctrl_c();
    tokio::pin!(ctrl_c);
    loop {
        tokio::select! {
            _ = &mut ctrl_c => {
                eprintln!("stopping (Ctrl-C)");
                cancel.cancel();
                break;
            }
            notice = notices.recv() => match notice {
                None => break,
                Some(Notice::MatchOver(result)) => {
                    done += 1;
                    let mine = result.balances.get(result.seat as usize).copied().unwrap_or(0);
                    println!("match {done}/{total} over at table {}: seat {} finished {mine:+} (balances {:?})", render::escape(&result.table_id), result.seat, result.balances);
                    if args.join.is_empty() && started < total {
                        let id = create(client.clone()).await?;
                        started += 1;
                        eprintln!("created and joined table {}", render::escape(&id));
                    }
                }
                Some(Notice::Reconnected { .. }) => eprintln!("connection restored; resumed every table"),
                Some(_) => {}
            }
        }
    }
    let report = running.await.context("the runner stopped unexpectedly")??;
    println!(
        "{} matches, {} decisions, {} reconnects",
        report.matches.len(),
        report.decisions,
        report.reconnects
    );
    Ok(())
}
