//! `bete bot --ladder`: enter a ladder and play the tables its scheduler seats the bot at.
//!
//! The scheduler seats only bots that hold a WatchBot stream, and ladder tables arrive on that
//! stream like any other table, so the ordinary [`Runner`] plays them. With `--matches N` the
//! bot leaves the ladder as soon as it has been seated at N ladder tables (so no more are
//! scheduled for it), plays them to the end and stops; otherwise it plays until Ctrl-C.

use anyhow::Context as _;
use tokio_util::sync::CancellationToken;

use crate::render::escape;
use crate::{Client, Notice, Runner, Strategy, SubmitVia, pb};

use super::common::ServerArgs;

/// What `bete bot --ladder` was asked to do.
#[derive(Debug, Clone)]
pub struct Options {
    pub server: ServerArgs,
    pub ladder: String,
    pub strategy: Strategy,
    pub name: String,
    pub capacity: u32,
    pub matches: Option<usize>,
    pub submit: SubmitVia,
    /// Open WatchBot `exclusive` (see `bete bot --exclusive`).
    pub exclusive: bool,
}

/// Runs the bot on the ladder.
pub async fn run(options: Options) -> anyhow::Result<()> {
    let client = options.server.dial().await?;
    client.set_exclusive(options.exclusive);
    let registered = client
        .authenticate(options.server.token.as_deref(), &options.name)
        .await
        .context("could not authenticate; check --token or omit it to register a new bot")?;
    if let Some(r) = &registered {
        eprintln!(
            "registered bot {} (id {}); to play as this bot again (and keep its rating), pass --token {}",
            escape(&options.name),
            escape(&r.bot_id),
            r.token
        );
    }
    let ladder = client
        .get_ladder(&options.ladder)
        .await
        .with_context(|| {
            format!(
                "no ladder {}; see `bete ladder list`",
                escape(&options.ladder)
            )
        })?
        .ladder
        .ok_or_else(|| anyhow::anyhow!("the server's GetLadder response lacks `ladder`"))?;
    let entry = enter(&client, &options).await?;
    eprintln!(
        "entered ladder {} ({}, {} seats, {} deals per match{}) as bot {} with capacity {}; waiting for the scheduler to seat it",
        escape(&ladder.ladder_id),
        crate::render::ruleset(ladder.ruleset),
        ladder.seat_count,
        ladder.deals_per_match,
        if ladder.duplicate {
            ", duplicate sets"
        } else {
            ""
        },
        escape(&entry.bot_id),
        entry.capacity
    );

    let strategy = options.strategy;
    let cancel = CancellationToken::new();
    let mut runner = Runner::new(client.clone(), move |_seated: &pb::Seated| strategy.bot())
        .submit_via(options.submit)
        .with_cancel(cancel.clone());
    if let Some(n) = options.matches {
        runner = runner.stop_after(n);
    }
    let mut notices = runner.notifications();
    let running = tokio::spawn(runner.run());

    let mut seated = 0usize;
    let mut done = 0usize;
    let mut left = false;
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
                Some(Notice::Seated { table_id, seat, ladder_id }) => {
                    if ladder_id == options.ladder {
                        seated += 1;
                    }
                    eprintln!("seated at table {} (seat {seat}{})", escape(&table_id), if ladder_id.is_empty() { String::new() } else { format!(", ladder {}", escape(&ladder_id)) });
                    if !left && options.matches.is_some_and(|n| seated >= n) {
                        // Enough tables are under way: take no more, finish these.
                        leave(&client, &options.ladder).await;
                        left = true;
                    }
                }
                Some(Notice::MatchOver(result)) => {
                    done += 1;
                    let mine = result.balances.get(result.seat as usize).copied().unwrap_or(0);
                    let of = options.matches.map(|n| format!("/{n}")).unwrap_or_default();
                    println!(
                        "table {done}{of} over: {} seat {} finished {mine:+} (balances {:?})",
                        escape(&result.table_id), result.seat, result.balances
                    );
                }
                Some(Notice::Reconnected { .. }) => eprintln!("connection restored; resumed every table"),
                Some(Notice::Acted { .. }) => {}
            }
        }
    }
    let report = running.await.context("the runner stopped unexpectedly")?;
    if !left {
        leave(&client, &options.ladder).await;
    }
    let report = report?;
    println!(
        "{}",
        super::named(&format!(
            "{} tables, {} decisions, {} reconnects; see `bete ladder standings {}`",
            report.matches.len(),
            report.decisions,
            report.reconnects,
            escape(&options.ladder)
        ))
    );
    Ok(())
}

/// Enters the ladder; a bot that is already entered (e.g. a run that was killed) just goes on.
async fn enter(client: &Client, options: &Options) -> anyhow::Result<pb::LadderEntry> {
    match client.enter_ladder(&options.ladder, options.capacity).await {
        Ok(entry) => Ok(entry),
        Err(e) if e.reason() == Some(pb::ErrorReason::LadderAlreadyEntered) => {
            let entry = client
                .get_ladder(&options.ladder)
                .await?
                .entry
                .ok_or_else(|| anyhow::anyhow!("already entered, but the server shows no entry"))?;
            eprintln!("the bot had already entered this ladder; playing on");
            Ok(entry)
        }
        Err(e) => {
            Err(e).with_context(|| format!("could not enter ladder {}", escape(&options.ladder)))
        }
    }
}

/// Leaves the ladder, saying so; a failure is reported, not fatal (the matches still count).
async fn leave(client: &Client, ladder: &str) {
    match client.leave_ladder(ladder).await {
        Ok(_) => eprintln!("left ladder {}", escape(ladder)),
        Err(e) if e.reason() == Some(pb::ErrorReason::LadderNotEntered) => {
            eprintln!(
                "the bot was no longer entered in ladder {} (taken off by the server?)",
                escape(ladder)
            );
        }
        Err(e) => eprintln!(
            "could not leave ladder {}: {}",
            escape(ladder),
            escape(&e.to_string())
        ),
    }
}
