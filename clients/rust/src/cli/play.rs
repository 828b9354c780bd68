//! `bete play`: a person plays against house bots from the keyboard.

use std::collections::HashMap;
use std::io::Write as _;
use std::time::{Duration, SystemTime};

use crate::board::Board;
use crate::{Client, pb, render};
use anyhow::Context as _;
use pb::ErrorReason;
use tokio::io::AsyncBufReadExt as _;

use super::common::ServerArgs;

/// Sit down at a new table and play a match against house bots: your hand, the legal actions
/// numbered, the deadline counting down, the other seats' plays as they happen.
#[derive(Debug, clap::Args)]
#[command(
    after_help = "Type the number of an action and press Enter (or the action itself, e.g. `card KS`);\n`?` shows the table again. If the deadline passes, the server plays the safe action for you.\n\nExample:\n  bete play --server http://127.0.0.1:50051 --ruleset beste-boer --seats 4"
)]
pub struct Args {
    #[command(flatten)]
    server: ServerArgs,
    /// The game (bete, bete-ace-high, beast, beste-boer, lanterlui, bester-bube, mouche, mistigri, loo, rams).
    #[arg(long, default_value = "bete", value_parser = super::common::parse_ruleset)]
    ruleset: pb::Ruleset,
    /// Seats at the table, you included; the others are house bots.
    #[arg(long, default_value_t = 3)]
    seats: u32,
    /// Seconds you have for each decision.
    #[arg(long, default_value_t = 60)]
    deadline: u32,
    /// How the house bots play.
    #[arg(long, value_enum, default_value_t = crate::Strategy::Heuristic)]
    opponents: crate::Strategy,
    /// Your name at the table.
    #[arg(long, default_value = "you")]
    name: String,
}

/// Reads a person's answer: a 1-based number, or an action's text ("card KS", "KS", "pass").
pub fn parse_choice(input: &str, legal: &[pb::Action]) -> Result<usize, String> {
    let input = input.trim();
    let n = legal.len();
    if input.is_empty() {
        return Err(format!(
            "Type the number of your choice (1-{n}) and press Enter."
        ));
    }
    if let Ok(k) = input.parse::<usize>() {
        return if (1..=n).contains(&k) {
            Ok(k - 1)
        } else {
            Err(format!(
                "There is no choice {k}: type a number from 1 to {n}."
            ))
        };
    }
    // An action in words: an optional verb, then cards in any order ("exchange 9d 8c", "ks").
    let mut words: Vec<String> = input
        .split_whitespace()
        .map(|w| w.to_ascii_uppercase())
        .collect();
    let verb = |a: &pb::Action| {
        a.text
            .split_whitespace()
            .next()
            .unwrap_or("")
            .to_ascii_uppercase()
    };
    let said_verb = words
        .first()
        .filter(|w| legal.iter().any(|a| verb(a) == **w))
        .cloned();
    if said_verb.is_some() {
        words.remove(0);
    }
    words.sort();
    let matches: Vec<usize> = legal
        .iter()
        .enumerate()
        .filter(|(_, a)| {
            let mut cards: Vec<String> = a.cards.iter().map(|c| c.to_ascii_uppercase()).collect();
            cards.sort();
            said_verb.as_ref().is_none_or(|v| *v == verb(a))
                && cards == words
                && (said_verb.is_some() || !words.is_empty())
        })
        .map(|(i, _)| i)
        .collect();
    match matches.as_slice() {
        [one] => Ok(*one),
        [] => Err(format!(
            "{input:?} is not one of your choices: type a number from 1 to {n}, or an action as listed (e.g. `{}`).",
            legal.first().map(|a| a.text.as_str()).unwrap_or("1")
        )),
        _ => Err(format!(
            "{input:?} fits more than one choice: type its number (1-{n})."
        )),
    }
}

fn remaining(view: &pb::SeatView) -> Option<Duration> {
    let deadline = view.deadline.as_ref()?;
    let at = SystemTime::UNIX_EPOCH
        + Duration::from_secs(u64::try_from(deadline.seconds).ok()?)
        + Duration::from_nanos(u64::try_from(deadline.nanos).ok()?);
    Some(
        at.duration_since(SystemTime::now())
            .unwrap_or(Duration::ZERO),
    )
}

fn prompt(view: &pb::SeatView) {
    let left = remaining(view)
        .map(|d| format!(" ({} s left)", d.as_secs()))
        .unwrap_or_default();
    print!("Your choice [1-{}]{left}: ", view.legal_actions.len());
    let _ = std::io::stdout().flush();
}

fn show_decision(board: &Board) {
    let recent: Vec<pb::Event> = Vec::new();
    println!();
    print!(
        "{}",
        render::board(&board.view, board.table.as_ref(), &recent)
    );
    println!("Your turn. Legal actions:");
    print!("{}", render::choices(&board.view));
    prompt(&board.view);
}

/// The person pressed Ctrl-C and the seat was left; the process exits with status 130.
#[derive(Debug, thiserror::Error)]
#[error("interrupted")]
pub struct Interrupted;

/// Runs the subcommand.
pub async fn run(args: Args) -> anyhow::Result<()> {
    let client = args.server.connect(&args.name).await?;
    let request = super::common::house_table(
        args.ruleset,
        args.seats,
        args.opponents.house_policy(),
        args.deadline * 1000,
    );
    let table = client
        .create_table(request)
        .await
        .context("could not create the table (check --ruleset and --seats)")?;
    let mut stream = client.open_watch_bot(HashMap::new()).await?;
    let joined = client.join_table(&table.table_id, Some(0)).await?;
    let table = joined.table.unwrap_or(table);
    println!(
        "You sit at seat {} of table {} ({}, {} seats); the other seats are house bots. You have {} s per decision.",
        joined.seat,
        table.table_id,
        render::ruleset(table.ruleset),
        table.seat_count,
        args.deadline
    );
    play(&client, table, &mut stream).await
}

/// Reopens the stream after a drop, continuing after the last event shown, and asks for the
/// view again so a decision requested meanwhile is not missed.
async fn resume(
    client: &Client,
    table_id: &str,
    stream: &mut tonic::Streaming<pb::WatchBotResponse>,
    board: &mut Board,
    pending: &mut bool,
) -> anyhow::Result<()> {
    println!("\n(connection lost; reconnecting…)");
    let backoff = client.backoff();
    let mut failed = 0;
    let from_seq = HashMap::from([(table_id.to_string(), board.view.seq)]);
    *stream = loop {
        match client.open_watch_bot(from_seq.clone()).await {
            Ok(s) => break s,
            Err(e) if e.is_transient() && failed + 1 < backoff.attempts => {
                failed += 1;
                tokio::time::sleep(backoff.delay(failed)).await;
            }
            Err(e) => {
                return Err(e).context("cannot reach the server again; your seat stays yours: rerun `bete play` later with --token");
            }
        }
    };
    let view = client.get_seat_view(table_id).await?;
    let ours =
        view.to_act.is_some() && view.to_act == view.viewer_seat && !view.legal_actions.is_empty();
    board.set_view(view);
    println!("(reconnected)");
    *pending = ours;
    if ours {
        show_decision(board);
    }
    Ok(())
}

async fn play(
    client: &Client,
    table: pb::Table,
    stream: &mut tonic::Streaming<pb::WatchBotResponse>,
) -> anyhow::Result<()> {
    use pb::watch_bot_response::Kind;
    let table_id = table.table_id.clone();
    let mut board = Board::empty(&table);
    let mut lines = tokio::io::BufReader::new(tokio::io::stdin()).lines();
    let mut pending = false;
    let mut warned: Vec<u64> = Vec::new();
    let mut tick = tokio::time::interval(Duration::from_millis(500));
    // One Ctrl-C listener for the whole loop (one made anew each turn misses a Ctrl-C arriving
    // while an event is shown). Without it Ctrl-C killed the process and the seat stayed taken,
    // its turns timing out one deadline at a time.
    let ctrl_c = tokio::signal::ctrl_c();
    tokio::pin!(ctrl_c);
    loop {
        tokio::select! {
            _ = &mut ctrl_c => {
                println!("\nCtrl-C: leaving the table.");
                return match client.leave_table(&table_id).await {
                    Ok(_) => {
                        println!("Left seat {} of table {table_id}; the match goes on without you.", board.view.viewer_seat.unwrap_or(0));
                        Err(anyhow::Error::new(Interrupted))
                    }
                    Err(e) => Err(e).context("Ctrl-C: could not leave the table"),
                };
            }
            message = stream.message() => {
                let message = match message {
                    Ok(Some(message)) => message,
                    Ok(None) => {
                        resume(client, &table_id, stream, &mut board, &mut pending).await?;
                        continue;
                    }
                    Err(status) => {
                        let error = crate::Error::from(status);
                        if !error.is_transient() {
                            return Err(error).context("lost the table's stream");
                        }
                        resume(client, &table_id, stream, &mut board, &mut pending).await?;
                        continue;
                    }
                };
                if message.table_id != table_id && !message.table_id.is_empty() {
                    continue;
                }
                match message.kind {
                    Some(Kind::Seated(seated)) => {
                        if let Some(t) = seated.table {
                            board.table = Some(t);
                        }
                    }
                    Some(Kind::Snapshot(view)) => board.set_view(view),
                    Some(Kind::Event(event)) => {
                        board.apply(&event);
                        if pending {
                            println!();
                        }
                        println!("{}", render::describe(&event, board.table.as_ref()));
                        if matches!(event.body, Some(pb::event::Body::SeatTaken(_)))
                            && let Ok(t) = client.get_table(&table_id).await {
                                board.table = Some(t);
                            }
                        if let Some(pb::event::Body::MatchEnded(ended)) = &event.body {
                            println!();
                            print!("{}", render::board(&board.view, board.table.as_ref(), &[]));
                            let seat = board.view.viewer_seat.unwrap_or(0) as usize;
                            println!("Match over. Your final balance: {:+}", ended.balances.get(seat).copied().unwrap_or(0));
                            println!("{}", super::named(&format!("Save the record with: `bete record --server URL {table_id} --out match.json`")));
                            return Ok(());
                        }
                        if pending {
                            pending = false;
                        }
                    }
                    Some(Kind::Decision(decision)) => {
                        if let Some(mut view) = decision.view {
                            view.seq = view.seq.max(decision.seq);
                            if pending && board.view.seq >= view.seq {
                                continue; // already shown (re-sent after a reconnect)
                            }
                            board.set_view(view);
                            pending = true;
                            warned.clear();
                            show_decision(&board);
                        }
                    }
                    Some(Kind::Resync(_)) => resume(client, &table_id, stream, &mut board, &mut pending).await?,
                    Some(Kind::Heartbeat(_)) | None => {}
                }
            }
            line = lines.next_line() => {
                let Some(line) = line? else {
                    println!("\nInput closed; leaving the table.");
                    let _ = client.leave_table(&table_id).await;
                    return Ok(());
                };
                if !pending {
                    if !line.trim().is_empty() {
                        println!("It is not your turn yet; wait for the prompt.");
                    }
                    continue;
                }
                if line.trim() == "?" {
                    show_decision(&board);
                    continue;
                }
                match parse_choice(&line, &board.view.legal_actions) {
                    Err(why) => {
                        println!("{why}");
                        prompt(&board.view);
                    }
                    Ok(i) => {
                        let action = board.view.legal_actions[i].clone();
                        match client.submit_action(&table_id, &action, board.view.seq).await {
                            Ok(_) => pending = false,
                            Err(e) => match e.reason() {
                                Some(ErrorReason::IllegalAction) => {
                                    println!("The server refused {}: {}", render::action(&action), render::escape(&e.to_string()));
                                    prompt(&board.view);
                                }
                                Some(ErrorReason::StaleSeq) | Some(ErrorReason::NotYourSeat) => {
                                    println!("Too late: the table moved on (the deadline may have passed).");
                                    pending = false;
                                }
                                _ => return Err(e).context("could not submit your action"),
                            },
                        }
                    }
                }
            }
            _ = tick.tick(), if pending => {
                if let Some(left) = remaining(&board.view) {
                    let secs = left.as_secs();
                    if left.is_zero() {
                        println!("\nTime is up: the server plays the safe action for you.");
                        pending = false;
                    } else if [30, 10, 5, 3, 2, 1].contains(&secs) && !warned.contains(&secs) {
                        warned.push(secs);
                        println!("\n⏳ {secs} s left");
                        prompt(&board.view);
                    }
                }
            }
        }
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    fn act(kind: pb::ActionKind, text: &str, cards: &[&str]) -> pb::Action {
        pb::Action {
            kind: kind as i32,
            cards: cards.iter().map(|c| c.to_string()).collect(),
            text: text.into(),
        }
    }

    #[test]
    fn choices_by_number_text_or_cards() {
        let legal = vec![
            act(pb::ActionKind::Stand, "stand", &[]),
            act(pb::ActionKind::Exchange, "exchange 9D 8C", &["9D", "8C"]),
            act(pb::ActionKind::Exchange, "exchange 8C", &["8C"]),
        ];
        assert_eq!(parse_choice("2", &legal), Ok(1));
        assert_eq!(parse_choice(" stand ", &legal), Ok(0));
        assert_eq!(parse_choice("exchange 8c 9d", &legal), Ok(1));
        assert_eq!(parse_choice("8c", &legal), Ok(2));
        assert!(
            parse_choice("4", &legal)
                .unwrap_err()
                .contains("There is no choice 4")
        );
        assert!(
            parse_choice("0", &legal)
                .unwrap_err()
                .contains("from 1 to 3")
        );
        assert!(
            parse_choice("fold", &legal)
                .unwrap_err()
                .contains("is not one of your choices")
        );
        assert!(
            parse_choice("", &legal)
                .unwrap_err()
                .contains("Type the number")
        );
        assert!(parse_choice("exchange", &legal).is_err());
    }
}
