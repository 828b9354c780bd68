//! A bot that only answers nonsense does not stall its table: the server refuses the action with
//! ILLEGAL_ACTION or INVALID_ARGUMENT and the runner plays the first legal action instead.

mod common;

use bete_client::{Bot, Runner, pb};
use common::{TestServer, finished, house_table};

/// Answers nonsense every time: a card that does not exist, or a verb out of turn.
struct Sloppy(u32);

impl Bot for Sloppy {
    fn decide(&mut self, _view: &pb::SeatView) -> pb::Action {
        self.0 += 1;
        if self.0.is_multiple_of(2) {
            pb::Action {
                kind: pb::ActionKind::Card as i32,
                cards: vec!["ZZ".into()],
                text: String::new(),
            }
        } else {
            pb::Action {
                kind: pb::ActionKind::Contre as i32,
                cards: vec![],
                text: String::new(),
            }
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_refused_action_is_replaced_by_a_legal_one() {
    let server = TestServer::start().await;
    let client = server.bot("sloppy").await;
    let table = client
        .create_table(house_table(pb::Ruleset::BesterBube, 3, 5_000))
        .await
        .expect("create");
    let runner = Runner::new(client.clone(), |_: &pb::Seated| Sloppy(0)).stop_after(1);
    let running = tokio::spawn(runner.run());
    client
        .join_table(&table.table_id, Some(0))
        .await
        .expect("join");
    let report = finished(running).await;
    assert_eq!(report.matches.len(), 1);
    let table = client.get_table(&table.table_id).await.expect("table");
    assert_eq!(
        table.seats[0].strikes, 0,
        "every refused decision was made again in time"
    );
    assert!(report.decisions >= 2, "decisions were made");
    server.stop().await;
}
