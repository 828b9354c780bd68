//! `bete watch`: a live spectator view of a table.

use std::io::{IsTerminal as _, Write as _};
use std::time::Duration;

use crate::board::Board;
use crate::{Client, WatchItem, pb, render};

use super::common::ServerArgs;

/// Watch a table live as a spectator: seats, pools, turn-up, current trick, tricks won, and
/// the events as they come.
#[derive(Debug, clap::Args)]
#[command(
    after_help = "Examples:\n  bete tables --server http://127.0.0.1:50051\n  bete watch --server http://127.0.0.1:50051 TABLE_ID\n  bete watch --server http://127.0.0.1:50051 --from-start --plain TABLE_ID > match.txt"
)]
pub struct Args {
    #[command(flatten)]
    server: ServerArgs,
    /// The table's id (see `bete tables`).
    table: String,
    /// Print the table once and exit.
    #[arg(long)]
    once: bool,
    /// Replay the match from its first event instead of starting at the table as it is now.
    #[arg(long)]
    from_start: bool,
    /// Print one line per event instead of redrawing the screen (the default when the output is
    /// not a terminal).
    #[arg(long)]
    plain: bool,
}

/// How to show a followed table.
#[derive(Debug, Clone, Copy)]
pub struct Follow {
    /// Replay from event 1 instead of starting at a snapshot of now.
    pub from_start: bool,
    /// Pause after each event (to make a fast match watchable).
    pub pace: Duration,
    /// Redraw the whole board after each event; otherwise print event lines.
    pub redraw: bool,
}

/// Runs the subcommand.
pub async fn run(args: Args) -> anyhow::Result<()> {
    let client = args.server.connect_public().await?;
    let table = client.get_table(&args.table).await?;
    if args.once {
        let view = client.get_seat_view(&args.table).await?;
        print!("{}", render::board(&view, Some(&table), &[]));
        return Ok(());
    }
    let redraw = !args.plain && std::io::stdout().is_terminal();
    follow(
        &client,
        table,
        Follow {
            from_start: args.from_start,
            pace: Duration::ZERO,
            redraw,
        },
    )
    .await?;
    Ok(())
}

fn draw(board: &Board, redraw: bool) {
    let recent: Vec<pb::Event> = board.recent.iter().cloned().collect();
    let text = render::board(&board.view, board.table.as_ref(), &recent);
    let mut out = std::io::stdout().lock();
    if redraw {
        // Clear the screen and home the cursor, then draw the whole picture.
        let _ = write!(out, "\x1b[2J\x1b[H{text}");
    } else {
        let _ = write!(out, "{text}");
    }
    let _ = out.flush();
}

/// Follows `table` until its match is over, drawing as it goes; returns the final board.
pub async fn follow(client: &Client, table: pb::Table, how: Follow) -> anyhow::Result<Board> {
    let table_id = table.table_id.clone();
    let mut board = Board::empty(&table);
    let mut watch = client.watch_table(&table_id, how.from_start.then_some(0));
    let names = Some(table.clone());
    let marks = render::table_marks(&table);
    if !how.redraw && !marks.is_empty() {
        // Event lines alone would not say it; the board says it again when drawn.
        println!("Table {}: {}", render::escape(&table_id), marks.join(" · "));
    }
    loop {
        let Some(item) = watch.next().await? else {
            break;
        };
        match item {
            WatchItem::Snapshot(view) => {
                board.set_view(view);
                draw(&board, how.redraw);
            }
            WatchItem::Event(event) => {
                board.apply(&event);
                if matches!(
                    event.body,
                    Some(pb::event::Body::SeatTaken(_)) | Some(pb::event::Body::SeatLeft(_))
                ) && let Ok(t) = client.get_table(&table_id).await
                {
                    board.table = Some(t);
                }
                if how.redraw {
                    // Live: the server's view also says whose turn it is, which events do not.
                    if !how.from_start
                        && let Ok(view) = client.get_seat_view(&table_id).await
                        && view.seq >= board.view.seq
                    {
                        board.set_view(view);
                    }
                    draw(&board, true);
                } else {
                    println!(
                        "{}",
                        render::describe(&event, board.table.as_ref().or(names.as_ref()))
                    );
                }
                if !how.pace.is_zero() {
                    tokio::time::sleep(how.pace).await;
                }
            }
            WatchItem::Heartbeat(_) => {}
            WatchItem::Resumed { from_seq } => {
                eprintln!(
                    "(connection restored; resuming after event {})",
                    from_seq.unwrap_or(0)
                );
            }
        }
    }
    // The match is over: show the server's final view (it reveals what is public now).
    if !how.from_start
        && let Ok(view) = client.get_seat_view(&table_id).await
        && view.seq >= board.view.seq
    {
        board.set_view(view);
    }
    if !how.redraw {
        println!();
    }
    draw(&board, how.redraw);
    Ok(board)
}
