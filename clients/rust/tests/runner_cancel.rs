//! The runner stops cleanly when its cancellation token fires mid-match.

mod common;

use std::time::Duration;

use bete_client::{Notice, Runner, Strategy, pb};
use common::{TestServer, house_table};
use tokio_util::sync::CancellationToken;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cancelling_stops_the_runner_promptly_and_cleanly() {
    let server = TestServer::start().await;
    let client = server.bot("cancelled").await;
    // A long deadline and a slow bot keep the match running when the token fires.
    let table = client
        .create_table(house_table(pb::Ruleset::Lanterlui, 4, 60_000))
        .await
        .expect("create");
    let cancel = CancellationToken::new();
    let mut runner = Runner::new(client.clone(), |_: &pb::Seated| {
        Slow(Strategy::Random.bot())
    })
    .with_cancel(cancel.clone());
    let mut notices = runner.notifications();
    let running = tokio::spawn(runner.run());
    client
        .join_table(&table.table_id, None)
        .await
        .expect("join");
    let mut acted = 0;
    while acted < 3 {
        match tokio::time::timeout(Duration::from_secs(30), notices.recv())
            .await
            .expect("progress")
        {
            Some(Notice::Acted { .. }) => acted += 1,
            Some(Notice::MatchOver(_)) => panic!("the match ended before the test could cancel it"),
            Some(_) => {}
            None => panic!("runner stopped early"),
        }
    }
    cancel.cancel();
    let report = tokio::time::timeout(Duration::from_secs(3), running)
        .await
        .expect("stops within 3 s of cancellation")
        .expect("task")
        .expect("a clean stop is Ok");
    assert!(report.decisions >= 3);
    assert!(report.matches.is_empty(), "the match was not over");
    let table = client.get_table(&table.table_id).await.expect("table");
    assert_eq!(table.state, pb::TableState::Playing as i32);
    server.stop().await;
}

struct Slow(Box<dyn bete_client::Bot>);

impl bete_client::Bot for Slow {
    fn decide(&mut self, view: &pb::SeatView) -> pb::Action {
        std::thread::sleep(Duration::from_millis(30));
        self.0.decide(view)
    }
}
