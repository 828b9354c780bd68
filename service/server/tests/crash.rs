//! The real binary: kill -9 mid-deal, restart on the same data folder, and the match finishes
//! with every acknowledged move applied exactly once; streams resume; health, metrics and
//! SIGTERM work.
#![allow(clippy::unwrap_used)]

mod common;

use std::net::SocketAddr;
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use bete_api::pb;
use common::*;

struct Proc {
    child: Child,
    addr: SocketAddr,
    metrics: SocketAddr,
}

fn spawn_server(dir: &Path) -> Proc {
    let addr = free_addr();
    let metrics = free_addr();
    let child = Command::new(env!("CARGO_BIN_EXE_bete-server"))
        .args([
            "--listen",
            &addr.to_string(),
            "--metrics-listen",
            &metrics.to_string(),
        ])
        .arg("--data-dir")
        .arg(dir)
        .args(["--log-format", "json"])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    Proc {
        child,
        addr,
        metrics,
    }
}

async fn my_view(c: &mut Client, id: &str) -> pb::SeatView {
    view_when(c, id, "never my turn", |v| {
        v.to_act == Some(0) || v.match_over
    })
    .await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn kill_9_mid_deal_loses_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let mut p = spawn_server(dir.path());
    let ch = connect(p.addr).await;

    // Health: SERVING.
    let mut health = tonic_health::pb::health_client::HealthClient::new(ch.clone());
    let h = health
        .check(tonic_health::pb::HealthCheckRequest {
            service: String::new(),
        })
        .await
        .unwrap()
        .into_inner();
    assert_eq!(
        h.status,
        tonic_health::pb::health_check_response::ServingStatus::Serving as i32
    );

    let me = register(&ch, "crash-bot").await;
    let token = me.token.clone();
    let mut c = me.client;
    let id = seated(
        &mut c,
        pb::CreateTableRequest {
            ruleset: pb::Ruleset::Bete.into(),
            seats: 3,
            house_bots: vec![
                house(1, pb::HouseBotPolicy::Heuristic),
                house(2, pb::HouseBotPolicy::Random),
            ],
            decision_deadline_ms: 60_000,
            seed: format!("{:064x}", 99),
            ..Default::default()
        },
    )
    .await;
    let mut watch = c
        .watch_table(pb::WatchTableRequest {
            table_id: id.clone(),
            from_seq: None,
        })
        .await
        .unwrap()
        .into_inner();

    // Play a few of our turns; remember every acknowledged action.
    let mut acked: Vec<String> = Vec::new();
    let mut last_req = None;
    for i in 0..3 {
        let v = my_view(&mut c, &id).await;
        let a = v.legal_actions[i % v.legal_actions.len()].clone();
        let req = pb::SubmitActionRequest {
            table_id: id.clone(),
            action: Some(a.clone()),
            expected_seq: v.seq,
            request_id: format!("r{i}"),
        };
        c.submit_action(req.clone()).await.unwrap();
        acked.push(a.text);
        last_req = Some(req);
    }
    // What the watcher has seen so far.
    let mut seen = Vec::new();
    let target = c
        .get_table(pb::GetTableRequest {
            table_id: id.clone(),
        })
        .await
        .unwrap()
        .into_inner()
        .table
        .unwrap()
        .last_seq;
    while seen.last().copied().unwrap_or(0) < target {
        if let Some(pb::watch_table_response::Kind::Event(e)) =
            watch.message().await.unwrap().unwrap().kind
        {
            seen.push(e.seq);
        }
    }
    drop(watch);

    // kill -9.
    p.child.kill().unwrap();
    p.child.wait().unwrap();

    let mut p = spawn_server(dir.path());
    let ch = connect(p.addr).await;
    let mut c = client_with(&ch, Some(&token));
    // The retried last request is recognised after the restart.
    let again = c
        .submit_action(last_req.unwrap())
        .await
        .unwrap()
        .into_inner();
    assert!(again.replayed);
    // The stream resumes where it stopped.
    let from = *seen.last().unwrap();
    let mut watch = c
        .watch_table(pb::WatchTableRequest {
            table_id: id.clone(),
            from_seq: Some(from),
        })
        .await
        .unwrap()
        .into_inner();
    let watcher = tokio::spawn(async move {
        let mut seqs = Vec::new();
        while let Some(m) = watch.message().await.unwrap() {
            if let Some(pb::watch_table_response::Kind::Event(e)) = m.kind {
                seqs.push(e.seq);
            }
        }
        seqs
    });
    // Finish the match.
    let mut i = 3;
    loop {
        let v = my_view(&mut c, &id).await;
        if v.match_over {
            break;
        }
        let a = v.legal_actions[i % v.legal_actions.len()].clone();
        match c
            .submit_action(pb::SubmitActionRequest {
                table_id: id.clone(),
                action: Some(a.clone()),
                expected_seq: v.seq,
                request_id: format!("r{i}"),
            })
            .await
        {
            Ok(_) => acked.push(a.text),
            Err(s) if reason(&s) == "STALE_SEQ" || reason(&s) == "TABLE_FINISHED" => continue,
            Err(s) => panic!("{s:?}"),
        }
        i += 1;
    }
    let seqs = timeout(30, watcher).await.unwrap().unwrap();
    let expected: Vec<u64> = (from + 1..=*seqs.last().unwrap()).collect();
    assert_eq!(seqs, expected, "resumed stream has a gap or duplicate");

    // Every acknowledged action of seat 0 is in the record, once, in order.
    let record = c
        .get_game_record(pb::GetGameRecordRequest {
            table_id: id.clone(),
        })
        .await
        .unwrap()
        .into_inner()
        .record_json;
    let json: serde_json::Value = serde_json::from_str(&record).unwrap();
    let mine: Vec<String> = json["deals"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|d| d["actions"].as_array().unwrap().clone())
        .filter(|a| a["seat"] == 0)
        .map(|a| a["action"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(mine, acked);
    bete_rules::record::replay_json(&record).unwrap();

    // Metrics are served on the metrics port, without ids as labels.
    let body = http_get(p.metrics, "/metrics").await;
    assert!(body.contains("bete_moves_total"), "{body}");
    assert!(
        body.contains("bete_rpc_requests_total{method=\"SubmitAction\",code=\"OK\"}"),
        "{body}"
    );
    assert!(!body.contains(&id));

    // SIGTERM: drains and exits cleanly.
    let pid = p.child.id().to_string();
    assert!(
        Command::new("sh")
            .args(["-c", &format!("kill -TERM {pid}")])
            .status()
            .unwrap()
            .success()
    );
    let mut status = None;
    for _ in 0..200 {
        if let Some(s) = p.child.try_wait().unwrap() {
            status = Some(s);
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert!(status.expect("server did not exit after SIGTERM").success());
}

async fn http_get(addr: SocketAddr, path: &str) -> String {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let mut s = tokio::net::TcpStream::connect(addr).await.unwrap();
    s.write_all(format!("GET {path} HTTP/1.1\r\nHost: x\r\n\r\n").as_bytes())
        .await
        .unwrap();
    let mut out = String::new();
    s.read_to_string(&mut out).await.unwrap();
    out
}

/// A decision whose deadline passes while the server is down is not charged to the bot: after
/// the restart the seat has its full deadline again (hole 9 across a kill -9), and a bot that
/// stays absent is still struck once that deadline passes.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_restart_is_not_a_strike() {
    let dir = tempfile::tempdir().unwrap();
    let mut p = spawn_server(dir.path());
    let ch = connect(p.addr).await;
    let me = register(&ch, "absent-bot").await;
    let token = me.token.clone();
    let mut c = me.client;
    let deadline_ms = 3000;
    let id = seated(
        &mut c,
        pb::CreateTableRequest {
            ruleset: pb::Ruleset::Beast.into(),
            seats: 3,
            house_bots: vec![
                house(1, pb::HouseBotPolicy::Random),
                house(2, pb::HouseBotPolicy::Random),
            ],
            decision_deadline_ms: deadline_ms,
            ..Default::default()
        },
    )
    .await;
    let v = my_view(&mut c, &id).await;
    assert_eq!(v.to_act, Some(0));
    p.child.kill().unwrap();
    p.child.wait().unwrap();
    // Down for longer than the deadline.
    tokio::time::sleep(Duration::from_millis(u64::from(deadline_ms) + 500)).await;
    let restarted_at_ms = bete_server::now_ms();
    let mut p = spawn_server(dir.path());
    let ch = connect(p.addr).await;
    let mut c = client_with(&ch, Some(&token));
    // Nothing was played for the bot, and its deadline counts from the restart.
    let after = c
        .get_seat_view(pb::GetSeatViewRequest {
            table_id: id.clone(),
        })
        .await
        .unwrap()
        .into_inner()
        .view
        .unwrap();
    assert_eq!(
        after.seq, v.seq,
        "a move was played for the bot at the restart"
    );
    assert_eq!(after.to_act, Some(0));
    let deadline = after
        .deadline
        .as_ref()
        .map(|t| t.seconds * 1000 + i64::from(t.nanos) / 1_000_000)
        .unwrap();
    assert!(
        deadline >= restarted_at_ms + i64::from(deadline_ms),
        "the deadline {deadline} was not re-armed at the restart ({restarted_at_ms})"
    );
    // An absent bot is still struck, once, when the full deadline passes.
    let mut strikes = 0;
    for _ in 0..300 {
        let t = c
            .get_table(pb::GetTableRequest {
                table_id: id.clone(),
            })
            .await
            .unwrap()
            .into_inner()
            .table
            .unwrap();
        strikes = t.seats[0].strikes;
        if strikes > 0 {
            assert!(t.last_seq > v.seq);
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert_eq!(
        strikes, 1,
        "the absent bot is struck once its deadline passes"
    );
    // Reflection v1alpha answers too (older grpcurl and Python reflection clients use it).
    let mut refl =
        tonic_reflection::pb::v1alpha::server_reflection_client::ServerReflectionClient::new(
            ch.clone(),
        );
    let req = tonic_reflection::pb::v1alpha::ServerReflectionRequest {
        host: String::new(),
        message_request: Some(
            tonic_reflection::pb::v1alpha::server_reflection_request::MessageRequest::ListServices(
                String::new(),
            ),
        ),
    };
    let mut resp = refl
        .server_reflection_info(tokio_stream::iter(vec![req]))
        .await
        .unwrap()
        .into_inner();
    let listed = format!("{:?}", resp.message().await.unwrap().unwrap());
    assert!(listed.contains("bete.v1.TableService"), "{listed}");
    p.child.kill().unwrap();
    p.child.wait().unwrap();
}
