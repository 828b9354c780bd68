//! The engine's `search` policy as a client-side bot plays whole matches of every ruleset
//! against a real server: every seat view it receives over gRPC converts back to the engine's
//! view and determinizes (samples are drawn from it), and every action it sends is legal.

mod common;

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use bete_client::house::{HouseBot, view_from_pb};
use bete_client::{Bot, Runner, pb};
use bete_rules::bots::Policy;
use bete_rules::determinize::{Determinizer, Seen};
use bete_rules::{Config, Viewer};
use common::{TestServer, house_table};
use rand_chacha::ChaCha8Rng;
use rand_chacha::rand_core::SeedableRng;

/// The rulesets the determinizer models: all ten, Part I's six and Part II's four.
const MODELLED: [pb::Ruleset; 10] = [
    pb::Ruleset::Bete,
    pb::Ruleset::BeteAceHigh,
    pb::Ruleset::Beast,
    pb::Ruleset::BesteBoer,
    pb::Ruleset::Lanterlui,
    pb::Ruleset::BesterBube,
    pb::Ruleset::Mouche,
    pb::Ruleset::Mistigri,
    pb::Ruleset::Loo,
    pb::Ruleset::Rams,
];

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn search_bot_plays_every_modelled_ruleset_from_grpc_views() {
    let server = TestServer::start().await;
    let client = server.bot("searcher").await;
    let mut tables = Vec::new();
    for ruleset in MODELLED {
        let table = client
            .create_table(house_table(ruleset, 3, 10_000))
            .await
            .expect("create");
        tables.push(table.table_id);
    }
    let checks = Checks::default();
    let c = checks.clone();
    let runner = Runner::new(client.clone(), move |_: &pb::Seated| Checked {
        inner: HouseBot::new(Policy::Search(60)),
        checks: c.clone(),
        rng: ChaCha8Rng::seed_from_u64(9),
    })
    .stop_after(MODELLED.len());
    let running = tokio::spawn(runner.run());
    for id in &tables {
        client.join_table(id, None).await.expect("join");
    }
    let report = tokio::time::timeout(Duration::from_secs(600), running)
        .await
        .expect("matches finish in time")
        .expect("runner task")
        .expect("runner ok");
    assert_eq!(report.matches.len(), MODELLED.len());
    let decisions = checks.decisions.load(Ordering::SeqCst);
    assert!(decisions > 0);
    assert_eq!(
        checks.illegal.load(Ordering::SeqCst),
        0,
        "only legal actions"
    );
    assert_eq!(
        checks.undeterminized.load(Ordering::SeqCst),
        0,
        "every view received over gRPC determinizes ({decisions} decisions)"
    );
    for id in &tables {
        let table = client.get_table(id).await.expect("get table");
        assert_eq!(table.state, pb::TableState::Finished as i32);
        assert_eq!(
            table.seats[0].strikes, 0,
            "the search bot missed a decision at {id}"
        );
    }
    server.stop().await;
}

#[derive(Clone, Default)]
struct Checks {
    decisions: Arc<AtomicUsize>,
    undeterminized: Arc<AtomicUsize>,
    illegal: Arc<AtomicUsize>,
}

struct Checked {
    inner: HouseBot,
    checks: Checks,
    rng: ChaCha8Rng,
}

impl Bot for Checked {
    fn decide(&mut self, view: &pb::SeatView) -> pb::Action {
        self.checks.decisions.fetch_add(1, Ordering::SeqCst);
        let sampled = view_from_pb(view).is_ok_and(|v| {
            let config = Config::defaults(v.ruleset, v.seats);
            Determinizer::new(&v, &config, &Seen::default()).is_ok_and(|d| {
                d.sample(&mut self.rng).is_ok_and(|mut g| {
                    g.view(Viewer::Seat(d.seat())) == v && g.play_out_deal(&mut self.rng)
                })
            })
        });
        if !sampled {
            let n = self.checks.undeterminized.fetch_add(1, Ordering::SeqCst);
            if n < 3
                && let Ok(v) = view_from_pb(view)
            {
                let config = Config::defaults(v.ruleset, v.seats);
                match Determinizer::new(&v, &config, &Seen::default()) {
                    Err(e) => eprintln!("DIAG new: {e}"),
                    Ok(d) => match d.sample(&mut self.rng) {
                        Err(e) => eprintln!("DIAG sample: {e}\n{v:#?}"),
                        Ok(g) => {
                            let a = format!("{:#?}", g.view(Viewer::Seat(d.seat())));
                            let b = format!("{v:#?}");
                            for (x, y) in a.lines().zip(b.lines()) {
                                if x != y {
                                    eprintln!("DIAG diff: {x} | {y}");
                                }
                            }
                        }
                    },
                }
            }
        }
        let action = self.inner.decide(view);
        if !view.legal_actions.contains(&action) {
            self.checks.illegal.fetch_add(1, Ordering::SeqCst);
        }
        action
    }
}
