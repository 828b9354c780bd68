//! Bots that play under faults and the ledger they keep: every acknowledged move (by request
//! id) and every refusal, so a test can look each acknowledgement up in PostgreSQL afterwards
//! (tests/faults.rs, tests/pg_failover.rs).
#![allow(dead_code, clippy::unwrap_used)]

use std::collections::HashMap;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use bete_api::pb;
use tokio_util::sync::CancellationToken;
use tonic::Code;

use super::pg::db;
use super::*;

/// A refusal a player saw: when, of which call, its code, its ErrorInfo reason and whether it
/// carried RetryInfo. A call the player gave up waiting for is recorded with
/// [`GAVE_UP`] as its reason.
#[derive(Clone, Debug)]
pub struct Refusal {
    pub at: Instant,
    pub call: &'static str,
    pub code: Code,
    pub reason: String,
    pub retry_info: bool,
    pub message: String,
}

/// The reason recorded for a call not answered within [`CALL_BOUND`].
pub const GAVE_UP: &str = "(no answer)";

/// How long a player waits for any one answer: far longer than any wait of the server's own
/// (a connection from the pool, a lock, a statement), so a call not answered by then hangs.
pub const CALL_BOUND: Duration = Duration::from_secs(30);

/// What the players saw.
#[derive(Default)]
pub struct Ledger {
    /// Acknowledged request ids, per table.
    pub acked: HashMap<String, Vec<String>>,
    pub refusals: Vec<Refusal>,
}

pub type SharedLedger = Arc<Mutex<Ledger>>;

impl Ledger {
    pub fn acked_count(&self) -> usize {
        self.acked.values().map(Vec::len).sum()
    }

    pub fn refusals_since(&self, t: Instant) -> Vec<Refusal> {
        self.refusals
            .iter()
            .filter(|r| r.at >= t)
            .cloned()
            .collect()
    }
}

fn refused(ledger: &SharedLedger, call: &'static str, s: &tonic::Status) {
    use tonic_types::StatusExt;
    let retry_info = s.get_error_details().retry_info().is_some();
    ledger.lock().unwrap().refusals.push(Refusal {
        at: Instant::now(),
        call,
        code: s.code(),
        reason: reason(s),
        retry_info,
        message: s.message().to_string(),
    });
}

fn gave_up(ledger: &SharedLedger, call: &'static str) {
    ledger.lock().unwrap().refusals.push(Refusal {
        at: Instant::now(),
        call,
        code: Code::DeadlineExceeded,
        reason: GAVE_UP.into(),
        retry_info: false,
        message: String::new(),
    });
}

/// Plays seat 0 of `id` through `via` until stopped or the match ends, each move with a
/// request id of its own (table and seq), sent again with the same id after any failure until
/// it is answered; every answer is kept in the ledger.
pub async fn player(
    via: SocketAddr,
    token: String,
    id: String,
    ledger: SharedLedger,
    stop: CancellationToken,
) {
    let ch = connect(via).await;
    let mut c = client_with(&ch, Some(&token));
    while !stop.is_cancelled() {
        let view = tokio::time::timeout(
            CALL_BOUND,
            c.get_seat_view(pb::GetSeatViewRequest {
                table_id: id.clone(),
            }),
        )
        .await;
        let v = match view {
            Ok(Ok(v)) => v.into_inner().view.unwrap(),
            Ok(Err(s)) => {
                refused(&ledger, "GetSeatView", &s);
                tokio::time::sleep(Duration::from_millis(100)).await;
                continue;
            }
            Err(_) => {
                gave_up(&ledger, "GetSeatView");
                continue;
            }
        };
        if v.match_over {
            return;
        }
        if v.to_act != Some(0) || v.legal_actions.is_empty() {
            tokio::time::sleep(Duration::from_millis(20)).await;
            continue;
        }
        let req = pb::SubmitActionRequest {
            table_id: id.clone(),
            action: Some(v.legal_actions[v.seq as usize % v.legal_actions.len()].clone()),
            expected_seq: v.seq,
            request_id: format!("{id}-{}", v.seq),
        };
        while !stop.is_cancelled() {
            match tokio::time::timeout(CALL_BOUND, c.submit_action(req.clone())).await {
                Ok(Ok(_)) => {
                    ledger
                        .lock()
                        .unwrap()
                        .acked
                        .entry(id.clone())
                        .or_default()
                        .push(req.request_id.clone());
                    break;
                }
                // Moved on already (the view was old): nothing of ours was applied.
                Ok(Err(s)) if reason(&s) == "STALE_SEQ" || reason(&s) == "NOT_YOUR_TURN" => {
                    break;
                }
                Ok(Err(s)) => {
                    refused(&ledger, "SubmitAction", &s);
                    tokio::time::sleep(Duration::from_millis(100)).await;
                }
                Err(_) => gave_up(&ledger, "SubmitAction"),
            }
        }
    }
}

/// `count` tables created on each of `nodes` (so owned by it), each with a bot of its own at
/// seat 0 and two house bots. Returns (table id, the bot's token, the owner's index).
pub async fn tables_on(nodes: &[SocketAddr], count: usize) -> Vec<(String, String, usize)> {
    let mut tables = Vec::new();
    for (n, addr) in nodes.iter().enumerate() {
        let ch = connect(*addr).await;
        for i in 0..count {
            let bot = register(&ch, &format!("n{n}p{i}")).await;
            let mut creator = client_with(&ch, Some(&bot.token));
            let id = super::pg::new_table(&mut creator).await;
            tables.push((id, bot.token, n));
        }
    }
    tables
}

/// The owner and epoch of each of `ids` (finished or not).
pub async fn owner_of(url: &str, ids: &[String]) -> HashMap<String, (String, i64)> {
    let rows: Vec<(String, String, i64)> =
        sqlx::query_as("SELECT id, owner, epoch FROM tables WHERE id = ANY($1)")
            .bind(ids)
            .fetch_all(&mut db(url).await)
            .await
            .unwrap();
    rows.into_iter().map(|(id, o, e)| (id, (o, e))).collect()
}

/// Each table's log entries, in order, as the JSON the store keeps.
pub async fn log_entries(url: &str, ids: &[String]) -> HashMap<String, Vec<serde_json::Value>> {
    let rows: Vec<(String, String)> = sqlx::query_as(
        "SELECT table_id, payload FROM log WHERE table_id = ANY($1) ORDER BY table_id, seq",
    )
    .bind(ids)
    .fetch_all(&mut db(url).await)
    .await
    .unwrap();
    let mut out: HashMap<String, Vec<serde_json::Value>> =
        ids.iter().map(|id| (id.clone(), vec![])).collect();
    for (id, payload) in rows {
        out.get_mut(&id)
            .unwrap()
            .push(serde_json::from_str(&payload).unwrap());
    }
    out
}

/// The request ids of each table's logged moves, in order.
pub async fn logs(url: &str, ids: &[String]) -> HashMap<String, Vec<String>> {
    log_entries(url, ids)
        .await
        .into_iter()
        .map(|(id, entries)| {
            let rids = entries
                .iter()
                .filter_map(|e| e["request_id"].as_str().map(str::to_string))
                .collect();
            (id, rids)
        })
        .collect()
}

/// Every acknowledged move of the ledger is in its table's log exactly once, and no request id
/// is in a log twice. Returns how many acknowledgements were checked.
pub async fn assert_each_ack_once(url: &str, ids: &[String], ledger: &Ledger) -> usize {
    let logs = logs(url, ids).await;
    let mut total = 0;
    for id in ids {
        let mut seen: HashMap<&str, usize> = HashMap::new();
        for rid in &logs[id] {
            *seen.entry(rid.as_str()).or_default() += 1;
        }
        for (rid, n) in &seen {
            assert_eq!(*n, 1, "{id}: {rid} applied {n} times");
        }
        for rid in ledger.acked.get(id).into_iter().flatten() {
            assert!(
                seen.contains_key(rid.as_str()),
                "{id}: acknowledged {rid} lost"
            );
            total += 1;
        }
    }
    total
}

/// Polls until every one of `ids` has at least `n` more acknowledged moves than `since` (or
/// its match is over), for at most `within`; panics saying which did not.
pub async fn wait_for_acks(
    ledger: &SharedLedger,
    ids: &[String],
    since: &HashMap<String, usize>,
    n: usize,
    url: &str,
    within: Duration,
) {
    let started = Instant::now();
    loop {
        let behind: Vec<String> = {
            let l = ledger.lock().unwrap();
            ids.iter()
                .filter(|id| {
                    let now = l.acked.get(*id).map_or(0, Vec::len);
                    now < since.get(*id).copied().unwrap_or(0) + n
                })
                .cloned()
                .collect()
        };
        let over = finished(url, &behind).await;
        let behind: Vec<&String> = behind.iter().filter(|id| !over.contains(id)).collect();
        if behind.is_empty() {
            return;
        }
        assert!(
            started.elapsed() < within,
            "tables that did not play on within {within:?}: {behind:?}"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

/// Acknowledged moves so far, per table.
pub fn ack_counts(ledger: &SharedLedger) -> HashMap<String, usize> {
    ledger
        .lock()
        .unwrap()
        .acked
        .iter()
        .map(|(id, v)| (id.clone(), v.len()))
        .collect()
}

/// Which of `ids` are finished.
pub async fn finished(url: &str, ids: &[String]) -> Vec<String> {
    sqlx::query_scalar("SELECT id FROM tables WHERE id = ANY($1) AND state = 'finished'")
        .bind(ids)
        .fetch_all(&mut db(url).await)
        .await
        .unwrap()
}

/// A counter of a node's Prometheus endpoint, summed over its labels (0 when absent).
pub async fn counter(metrics: SocketAddr, name: &str) -> i64 {
    let text = http_get(metrics, "/metrics").await;
    text.lines()
        .filter(|l| !l.starts_with('#'))
        .filter(|l| {
            l.strip_prefix(name)
                .is_some_and(|rest| rest.starts_with(' ') || rest.starts_with('{'))
        })
        .filter_map(|l| l.rsplit(' ').next()?.parse::<f64>().ok())
        .sum::<f64>() as i64
}

/// A scenario bounded in time: it fails rather than hangs (a call to a stopped process or a
/// database that never comes back would wait forever), its nodes killed as it is dropped.
pub async fn bounded(secs: u64, scenario: impl std::future::Future<Output = ()>) {
    if tokio::time::timeout(Duration::from_secs(secs), scenario)
        .await
        .is_err()
    {
        panic!("the scenario did not finish within {secs} s");
    }
}
