//! `bete watch --once` renders a known position: a table with a fixed seed where three bots we
//! control have made known moves. The output is compared with a committed text file
//! (`tests/expected/`); set `BETE_UPDATE_EXPECTED=1` to rewrite it after an intended change.

mod common;

use std::path::PathBuf;
use std::process::Command;

use bete_client::{Client, pb};
use common::TestServer;

const SEED: &str = "000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f";

/// Plays `moves` decisions of a fixed-seed table, each the first legal action.
async fn known_table(
    server: &TestServer,
    ruleset: pb::Ruleset,
    moves: usize,
) -> (String, Vec<Client>) {
    let creator = server.bot("creator").await;
    let table = creator
        .create_table(pb::CreateTableRequest {
            ruleset: ruleset as i32,
            seats: 3,
            decision_deadline_ms: 600_000,
            seed: SEED.into(),
            ..Default::default()
        })
        .await
        .expect("create");
    let mut seats = Vec::new();
    for (i, name) in ["alice", "bob", "carol"].into_iter().enumerate() {
        let bot = server.bot(name).await;
        bot.join_table(&table.table_id, Some(i as u32))
            .await
            .expect("join");
        seats.push(bot);
    }
    for _ in 0..moves {
        let public = seats[0].get_seat_view(&table.table_id).await.expect("view");
        let Some(to_act) = public.to_act else { break };
        let seat = &seats[to_act as usize];
        let view = seat.get_seat_view(&table.table_id).await.expect("view");
        seat.submit_action(&table.table_id, &view.legal_actions[0], view.seq)
            .await
            .expect("submit");
    }
    (table.table_id, seats)
}

fn bete(args: &[&str]) -> String {
    let output = Command::new(env!("CARGO_BIN_EXE_bete"))
        .args(args)
        .env_remove("BETE_TOKEN")
        .output()
        .expect("run bete");
    assert!(
        output.status.success(),
        "bete {args:?} failed: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    String::from_utf8(output.stdout).expect("utf-8")
}

fn compare(name: &str, actual: &str) {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/expected")
        .join(name);
    if std::env::var_os("BETE_UPDATE_EXPECTED").is_some() || !path.exists() {
        std::fs::write(&path, actual).expect("write expected");
        eprintln!("wrote {}", path.display());
        return;
    }
    let expected = std::fs::read_to_string(&path).expect("read expected");
    assert_eq!(
        actual,
        expected,
        "`bete watch` output differs from {}",
        path.display()
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bete_watch_renders_a_known_position() {
    let server = TestServer::start().await;
    let (table_id, _seats) = known_table(&server, pb::Ruleset::Bete, 9).await;
    let spectator = server.bot("spectator").await;
    let token = spectator.token().expect("token");
    let out = bete(&[
        "watch",
        "--once",
        "--server",
        &server.url,
        "--token",
        &token,
        &table_id,
    ]);
    let out = out.replace(&table_id, "TABLE_ID");
    // A spectator never sees a hand.
    assert!(!out.contains("Your hand"), "{out}");
    assert!(
        out.contains("alice") && out.contains("bob") && out.contains("carol"),
        "{out}"
    );
    compare("watch_bete_9_moves.txt", &out);
    server.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bete_watch_as_a_seat_shows_its_own_hand() {
    let server = TestServer::start().await;
    let (table_id, seats) = known_table(&server, pb::Ruleset::BesteBoer, 6).await;
    // A seat watching its own table sees its hand (and only its own).
    let token = seats[0].token().expect("token");
    let out = bete(&[
        "watch",
        "--once",
        "--server",
        &server.url,
        "--token",
        &token,
        &table_id,
    ]);
    let out = out.replace(&table_id, "TABLE_ID");
    assert!(out.contains("Your hand: "), "{out}");
    compare("watch_beste_boer_seat0_6_moves.txt", &out);
    server.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bete_watch_replays_a_known_match_from_its_first_event() {
    let server = TestServer::start().await;
    let creator = server.bot("creator").await;
    // Heuristic house bots are deterministic, so a fixed seed fixes the whole match.
    let table = creator
        .create_table(pb::CreateTableRequest {
            ruleset: pb::Ruleset::Beast as i32,
            seats: 3,
            seed: SEED.into(),
            house_bots: (0..3)
                .map(|seat| pb::HouseBotSeat {
                    seat,
                    policy: pb::HouseBotPolicy::Heuristic as i32,
                    search_budget_ms: 0,
                })
                .collect(),
            ..Default::default()
        })
        .await
        .expect("create");
    let token = creator.token().expect("token");
    let out = bete(&[
        "watch",
        "--plain",
        "--from-start",
        "--server",
        &server.url,
        "--token",
        &token,
        &table.table_id,
    ]);
    let out = out.replace(&table.table_id, "TABLE_ID");
    assert!(out.contains("match over; final balances"), "{out}");
    assert!(out.contains("Final balances:"), "{out}");
    // The board built from the events agrees with the record's final balances.
    let record: serde_json::Value = serde_json::from_str(
        &creator
            .get_game_record(&table.table_id)
            .await
            .expect("record"),
    )
    .expect("json");
    let balances: Vec<i64> = record["balances"]
        .as_array()
        .expect("balances")
        .iter()
        .map(|b| b.as_i64().expect("int"))
        .collect();
    let line: Vec<String> = balances
        .iter()
        .enumerate()
        .map(|(i, b)| {
            format!(
                "seat {i}: {}",
                if *b > 0 {
                    format!("+{b}")
                } else {
                    b.to_string()
                }
            )
        })
        .collect();
    assert!(
        out.contains(&format!("Final balances: {}", line.join(", "))),
        "{out}"
    );
    compare("watch_beast_match_from_start.txt", &out);
    server.stop().await;
}
