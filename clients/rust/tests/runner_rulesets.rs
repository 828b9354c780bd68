//! The runner plays whole matches of every ruleset, all on one connection, against a real
//! server, and never misses a decision (no strikes).

mod common;

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use bete_client::{Bot, Runner, Strategy, pb};
use common::{RULESETS, TestServer, house_table};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn runner_plays_a_full_match_of_every_ruleset_on_one_connection() {
    let server = TestServer::start().await;
    let client = server.bot("runner").await;
    let mut tables = Vec::new();
    for ruleset in RULESETS {
        let table = client
            .create_table(house_table(ruleset, 3, 5_000))
            .await
            .expect("create");
        tables.push(table.table_id);
    }
    let checks = Checks::default();
    let c = checks.clone();
    let runner = Runner::new(client.clone(), move |_: &pb::Seated| Checked {
        inner: Strategy::Heuristic.bot(),
        checks: c.clone(),
    })
    .stop_after(RULESETS.len());
    let running = tokio::spawn(runner.run());
    for id in &tables {
        let joined = client.join_table(id, None).await.expect("join");
        assert_eq!(joined.seat, 0);
    }
    let report = tokio::time::timeout(Duration::from_secs(240), running)
        .await
        .expect("matches finish in time")
        .expect("runner task")
        .expect("runner ok");

    assert_eq!(report.matches.len(), RULESETS.len());
    assert!(report.decisions > 0);
    assert_eq!(
        checks.decisions.load(Ordering::SeqCst) as u64,
        report.decisions
    );
    assert_eq!(
        checks.unreadable.load(Ordering::SeqCst),
        0,
        "every seat view converts to the engine's view"
    );
    assert_eq!(
        checks.illegal.load(Ordering::SeqCst),
        0,
        "the house heuristic chose only legal actions"
    );
    assert!(
        checks.deals.load(Ordering::SeqCst) >= RULESETS.len(),
        "deal hooks ran"
    );
    eprintln!("{report:?}");
    for result in &report.matches {
        assert!(tables.contains(&result.table_id));
        assert_eq!(
            result.balances.len(),
            3,
            "final balances of {}",
            result.table_id
        );
        assert_eq!(
            result.balances.iter().sum::<i64>(),
            0,
            "jetons are conserved at {}",
            result.table_id
        );
    }
    for id in &tables {
        let table = client.get_table(id).await.expect("get table");
        assert_eq!(
            table.state,
            pb::TableState::Finished as i32,
            "table {id} is finished"
        );
        assert_eq!(
            table.seats[0].strikes, 0,
            "the runner missed a decision at {id}"
        );
        let record = client.get_game_record(id).await.expect("record");
        assert!(
            record.contains("\"balances\"") || record.contains("final"),
            "record of {id}: {record:.200}"
        );
    }
    server.stop().await;
}

#[derive(Clone, Default)]
struct Checks {
    decisions: Arc<AtomicUsize>,
    unreadable: Arc<AtomicUsize>,
    illegal: Arc<AtomicUsize>,
    deals: Arc<AtomicUsize>,
}

/// The heuristic, checked: its input view converts and its answer is one of the legal actions.
struct Checked {
    inner: Box<dyn Bot>,
    checks: Checks,
}

impl Bot for Checked {
    fn decide(&mut self, view: &pb::SeatView) -> pb::Action {
        self.checks.decisions.fetch_add(1, Ordering::SeqCst);
        if bete_client::house::view_from_pb(view).is_err() {
            self.checks.unreadable.fetch_add(1, Ordering::SeqCst);
        }
        let action = self.inner.decide(view);
        if !view
            .legal_actions
            .iter()
            .any(|a| a.kind == action.kind && a.cards == action.cards)
        {
            self.checks.illegal.fetch_add(1, Ordering::SeqCst);
        }
        action
    }

    fn on_deal_start(&mut self, deal: &pb::DealStarted) {
        assert_eq!(deal.hand.len(), 5, "a seat is dealt its five cards");
        self.checks.deals.fetch_add(1, Ordering::SeqCst);
    }
}
