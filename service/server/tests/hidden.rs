//! Hidden information on every outbound path besides events and views (those are checked card
//! by card in `matches.rs`): error texts, table descriptions (no seed before the end), the game
//! record (only after the end), and the server's own logs (no card, no seed, no token).
#![allow(clippy::unwrap_used)]

mod common;

use std::collections::HashSet;
use std::io::Write;
use std::sync::{Arc, Mutex, OnceLock};

use bete_api::pb;
use bete_rules::Card;
use common::*;
use tonic::Code;

/// Everything the server logs in this test binary, at every level of its own crate.
fn log() -> Arc<Mutex<Vec<u8>>> {
    static LOG: OnceLock<Arc<Mutex<Vec<u8>>>> = OnceLock::new();
    LOG.get_or_init(|| {
        let buf = Arc::new(Mutex::new(Vec::new()));
        let sink = buf.clone();
        tracing_subscriber::fmt()
            .with_env_filter(tracing_subscriber::EnvFilter::new(
                "debug,bete_server=trace,bete_base=trace,bete_table=trace,bete_cluster=trace,\
                 bete_ladder_runtime=trace,h2=info,hyper=info,hyper_util=info,tower=info",
            ))
            .with_ansi(false)
            .with_writer(move || Capture(sink.clone()))
            .init();
        buf
    })
    .clone()
}

struct Capture(Arc<Mutex<Vec<u8>>>);

impl Write for Capture {
    fn write(&mut self, b: &[u8]) -> std::io::Result<usize> {
        self.0.lock().unwrap().extend_from_slice(b);
        Ok(b.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// Card codes written as words anywhere in `text` (`KS`, `TH`, ...).
fn card_words(text: &str) -> Vec<String> {
    text.split(|c: char| !c.is_ascii_alphanumeric())
        .filter(|w| {
            let b = w.as_bytes();
            b.len() == 2 && b"23456789TJQKA".contains(&b[0]) && b"SHDC".contains(&b[1])
        })
        .map(str::to_string)
        .collect()
}

fn all_cards() -> Vec<Card> {
    let mut out = Vec::new();
    for r in "23456789TJQKA".chars() {
        for s in "SHDC".chars() {
            out.push(format!("{r}{s}").parse().unwrap());
        }
    }
    out
}

/// A refused action names no card but the ones the caller sent: for every card the caller cannot
/// see (other hands, the talon, the rest of the deck), playing, exchanging or discarding it is
/// refused with a text that names that card alone. Every ruleset, at the caller's first turn.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn refusals_name_no_hidden_card() {
    let _ = log();
    let dir = tempfile::tempdir().unwrap();
    let srv = TestServer::start(dir.path().to_path_buf(), |_| {}).await;
    let ch = srv.channel().await;
    let mut me = register(&ch, "probe-bot").await;
    for ruleset in ALL_RULESETS {
        let id = me
            .client
            .create_table(pb::CreateTableRequest {
                ruleset: ruleset.into(),
                seats: 3,
                house_bots: vec![
                    house(1, pb::HouseBotPolicy::Random),
                    house(2, pb::HouseBotPolicy::Random),
                ],
                decision_deadline_ms: 60_000,
                ..Default::default()
            })
            .await
            .unwrap()
            .into_inner()
            .table
            .unwrap()
            .table_id;
        me.sit(&id, 0).await;
        let view = me.turn_of(&id, 0).await;
        let visible: HashSet<Card> = cards_in(&view).into_iter().collect();
        let mut refused = 0;
        for card in all_cards().into_iter().filter(|c| !visible.contains(c)) {
            for kind in [
                pb::ActionKind::Card,
                pb::ActionKind::Hidden,
                pb::ActionKind::Exchange,
                pb::ActionKind::Discard,
            ] {
                let action = pb::Action {
                    kind: kind.into(),
                    cards: vec![card.to_string()],
                    text: String::new(),
                };
                let err = me
                    .client
                    .submit_action(pb::SubmitActionRequest {
                        table_id: id.clone(),
                        action: Some(action),
                        expected_seq: view.seq,
                        request_id: String::new(),
                    })
                    .await
                    .expect_err("an action with a card the seat does not hold is refused");
                assert!(
                    matches!(err.code(), Code::FailedPrecondition | Code::InvalidArgument),
                    "{err:?}"
                );
                let named = card_words(err.message());
                assert!(
                    named.iter().all(|w| *w == card.to_string()),
                    "{ruleset:?} {kind:?} {card}: {:?}",
                    err.message()
                );
                refused += 1;
            }
        }
        assert!(
            refused >= 4 * (32 - 15),
            "{ruleset:?}: only {refused} probes"
        );
    }
    srv.stop().await;
}

/// A whole match with a server-drawn seed: nothing a bot receives before the end (table
/// descriptions, listings, joins, streams, views) carries the seed, and the record (which does)
/// is refused until the end. Then the log of the whole binary holds no card, seed or token.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn no_seed_before_the_end_and_clean_logs() {
    let log = log();
    let dir = tempfile::tempdir().unwrap();
    let srv = TestServer::start(dir.path().to_path_buf(), |_| {}).await;
    let ch = srv.channel().await;
    let mut me = register(&ch, "seed-bot").await;
    let mut other = register(&ch, "spectator").await;
    let mut seen: Vec<String> = Vec::new();
    let created = me
        .client
        .create_table(pb::CreateTableRequest {
            ruleset: pb::Ruleset::Lanterlui.into(),
            seats: 3,
            house_bots: vec![
                house(1, pb::HouseBotPolicy::Heuristic),
                house(2, pb::HouseBotPolicy::Random),
            ],
            decision_deadline_ms: 60_000,
            ..Default::default()
        })
        .await
        .unwrap()
        .into_inner();
    seen.push(format!("{created:?}"));
    let id = created.table.unwrap().table_id;
    let mut spec = other
        .client
        .watch_table(pb::WatchTableRequest {
            table_id: id.clone(),
            from_seq: None,
        })
        .await
        .unwrap()
        .into_inner();
    let mut stream = me
        .client
        .watch_bot(pb::WatchBotRequest::default())
        .await
        .unwrap()
        .into_inner();
    let joined = me
        .client
        .join_table(pb::JoinTableRequest {
            invitation_code: String::new(),
            table_id: id.clone(),
            seat: Some(0),
        })
        .await
        .unwrap()
        .into_inner();
    seen.push(format!("{joined:?}"));
    let mut probed = false;
    let mut refused_once = false;
    loop {
        let m = timeout(60, stream.message())
            .await
            .unwrap()
            .unwrap()
            .unwrap();
        seen.push(format!("{m:?}"));
        use pb::watch_bot_response::Kind;
        match m.kind.unwrap() {
            Kind::Event(e) if matches!(e.body, Some(pb::event::Body::MatchEnded(_))) => break,
            Kind::Decision(d) => {
                if !probed {
                    probed = true;
                    // Mid-match: descriptions and listings, and the record is refused.
                    for c in [&mut me.client, &mut other.client] {
                        let t = c
                            .get_table(pb::GetTableRequest {
                                table_id: id.clone(),
                            })
                            .await
                            .unwrap()
                            .into_inner();
                        seen.push(format!("{t:?}"));
                        let l = c
                            .list_tables(pb::ListTablesRequest::default())
                            .await
                            .unwrap()
                            .into_inner();
                        seen.push(format!("{l:?}"));
                        let v = c
                            .get_seat_view(pb::GetSeatViewRequest {
                                table_id: id.clone(),
                            })
                            .await
                            .unwrap()
                            .into_inner();
                        seen.push(format!("{v:?}"));
                        let err = c
                            .get_game_record(pb::GetGameRecordRequest {
                                table_id: id.clone(),
                            })
                            .await
                            .unwrap_err();
                        assert_eq!(reason(&err), "TABLE_NOT_FINISHED");
                        seen.push(err.message().to_string());
                    }
                }
                let v = d.view.unwrap();
                let with_card = v.legal_actions.iter().map(|a| a.kind).find(|k| {
                    [pb::ActionKind::Card as i32, pb::ActionKind::Exchange as i32].contains(k)
                });
                if let (false, Some(kind)) = (refused_once, with_card) {
                    // A refusal naming a card the seat does not hold: the log must not repeat it.
                    refused_once = true;
                    let visible: HashSet<Card> = cards_in(&v).into_iter().collect();
                    let card = all_cards()
                        .into_iter()
                        .find(|c| !visible.contains(c))
                        .unwrap();
                    let action = pb::Action {
                        kind,
                        cards: vec![card.to_string()],
                        text: String::new(),
                    };
                    let err = me
                        .client
                        .submit_action(pb::SubmitActionRequest {
                            table_id: id.clone(),
                            action: Some(action),
                            expected_seq: d.seq,
                            request_id: String::new(),
                        })
                        .await
                        .unwrap_err();
                    assert!(
                        err.message().contains(&card.to_string()),
                        "the caller is told which card: {err:?}"
                    );
                }
                me.client
                    .submit_action(pb::SubmitActionRequest {
                        table_id: id.clone(),
                        action: Some(v.legal_actions[0].clone()),
                        expected_seq: d.seq,
                        request_id: String::new(),
                    })
                    .await
                    .unwrap();
            }
            _ => {}
        }
    }
    assert!(probed && refused_once);
    while let Some(m) = timeout(20, spec.message()).await.unwrap().unwrap() {
        seen.push(format!("{m:?}"));
    }
    let record = me
        .client
        .get_game_record(pb::GetGameRecordRequest {
            table_id: id.clone(),
        })
        .await
        .unwrap()
        .into_inner()
        .record_json;
    let record: serde_json::Value = serde_json::from_str(&record).unwrap();
    let seed = record["seed"]
        .as_str()
        .expect("the record carries the seed")
        .to_string();
    assert_eq!(seed.len(), 64);
    for text in &seen {
        assert!(
            !text.contains(&seed),
            "the seed went out before the end: {text}"
        );
    }
    srv.stop().await;

    let text = String::from_utf8(log.lock().unwrap().clone()).unwrap();
    assert!(text.contains("table created"), "the capture works");
    assert!(!text.contains(&seed), "the seed is in the log");
    for token in [&me.token, &other.token] {
        assert!(!text.contains(token.as_str()), "a token is in the log");
    }
    let cards = card_words(&text);
    assert!(cards.is_empty(), "card codes in the log: {cards:?}");
}
