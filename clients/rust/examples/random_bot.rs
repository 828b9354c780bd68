//! A complete bot: plays a random legal action at three tables against house bots.
//! Run a server (`bete-server`), then: cargo run -p bete-client --example random_bot
use bete_client::{Bot, Client, Runner, pb};
use rand::seq::IndexedRandom;

struct RandomBot;

impl Bot for RandomBot {
    fn decide(&mut self, view: &pb::SeatView) -> pb::Action {
        view.legal_actions
            .choose(&mut rand::rng())
            .cloned()
            .expect("asked only when there is a choice")
    }
}

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let url = std::env::var("BETE_SERVER").unwrap_or_else(|_| "http://127.0.0.1:50051".into());
    let client = Client::connect(&url).await?;
    client.register("my-random-bot", "me@example.org").await?;
    let runner = tokio::spawn(
        Runner::new(client.clone(), |_: &pb::Seated| RandomBot)
            .stop_after(3)
            .run(),
    );
    for _ in 0..3 {
        let house = (1..4).map(|seat| pb::HouseBotSeat {
            seat,
            policy: pb::HouseBotPolicy::Heuristic as i32,
            search_budget_ms: 0,
        });
        let request = pb::CreateTableRequest {
            ruleset: pb::Ruleset::Bete as i32,
            seats: 4,
            house_bots: house.collect(),
            ..Default::default()
        };
        client
            .join_table(&client.create_table(request).await?.table_id, None)
            .await?;
    }
    for m in runner.await??.matches {
        println!(
            "table {}: seat {} finished with {:+}",
            m.table_id, m.seat, m.balances[m.seat as usize]
        );
    }
    Ok(())
}
