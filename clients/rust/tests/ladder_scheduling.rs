//! Ladders against a real server: scheduling, duplicate sets, ratings, owner exclusion and
//! provable deals, with real bots on the SDK's runner (the same WatchBot stream every SDK uses).
#![allow(clippy::unwrap_used)]

mod common;

use std::collections::{HashMap, HashSet};
use std::time::Duration;

use bete_client::{Client, Runner, Strategy, pb};
use pb::ladder_service_client::LadderServiceClient;
use tokio_util::sync::CancellationToken;
use tonic::metadata::MetadataValue;
use tonic::service::Interceptor;
use tonic::service::interceptor::InterceptedService;
use tonic::transport::Channel;

#[derive(Clone)]
struct Bearer(Option<String>);

impl Interceptor for Bearer {
    fn call(&mut self, mut req: tonic::Request<()>) -> Result<tonic::Request<()>, tonic::Status> {
        if let Some(t) = &self.0 {
            let v: MetadataValue<_> = format!("Bearer {t}").parse().unwrap();
            req.metadata_mut().insert("authorization", v);
        }
        Ok(req)
    }
}

type Ladders = LadderServiceClient<InterceptedService<Channel, Bearer>>;

struct Server {
    url: String,
    stop: Option<tokio::sync::oneshot::Sender<()>>,
    task: Option<tokio::task::JoinHandle<()>>,
    _dir: tempfile::TempDir,
}

impl Server {
    /// A server hosting exactly the ladders of `toml`, with reproducible ladder seeds.
    async fn start(toml: &str, seed: u64) -> Server {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("ladders.toml");
        std::fs::write(&file, toml).unwrap();
        let config = bete_server::ServerConfig {
            data_dir: dir.path().join("data"),
            heartbeat_interval: Duration::from_millis(500),
            ladders: Some(file),
            ladder_seed: Some(seed),
            ..Default::default()
        };
        let (addr, stop, task) = common::spawn_server(config);
        Server {
            url: format!("http://{addr}"),
            stop: Some(stop),
            task: Some(task),
            _dir: dir,
        }
    }

    async fn ladders(&self, token: Option<String>) -> Ladders {
        let ch = Channel::from_shared(self.url.clone())
            .unwrap()
            .connect()
            .await
            .unwrap();
        LadderServiceClient::with_interceptor(ch, Bearer(token))
    }

    async fn stop(mut self) {
        if let Some(s) = self.stop.take() {
            let _ = s.send(());
        }
        if let Some(t) = self.task.take() {
            let _ = tokio::time::timeout(Duration::from_secs(10), t).await;
        }
    }
}

/// A registered bot playing `strategy` on its WatchBot stream until `cancel`.
async fn online_bot(
    server: &Server,
    name: &str,
    strategy: Strategy,
    cancel: &CancellationToken,
) -> Client {
    let client = common::bot_at(&server.url, name).await;
    let runner = Runner::new(client.clone(), move |_: &pb::Seated| strategy.bot())
        .with_cancel(cancel.clone());
    tokio::spawn(runner.run());
    client
}

async fn enter(server: &Server, bot: &Client, ladder: &str, capacity: u32) -> pb::LadderEntry {
    server
        .ladders(bot.token())
        .await
        .enter_ladder(pb::EnterLadderRequest {
            ladder_id: ladder.into(),
            capacity,
        })
        .await
        .unwrap()
        .into_inner()
        .entry
        .unwrap()
}

/// Waits for `n` rated matches of `ladder` on WatchLadderResults.
async fn rated(server: &Server, ladder: &str, n: usize, secs: u64) -> Vec<pb::LadderMatch> {
    let mut stream = server
        .ladders(None)
        .await
        .watch_ladder_results(pb::WatchLadderResultsRequest {
            ladder_id: ladder.into(),
        })
        .await
        .unwrap()
        .into_inner();
    let mut out = Vec::new();
    tokio::time::timeout(Duration::from_secs(secs), async {
        while out.len() < n {
            let msg = stream.message().await.unwrap().unwrap();
            if let Some(pb::watch_ladder_results_response::Kind::Rated(m)) = msg.kind {
                out.push(m);
            }
        }
    })
    .await
    .unwrap_or_else(|_| panic!("only {} of {n} matches rated in {secs} s", out.len()));
    out
}

async fn standings(server: &Server, ladder: &str) -> Vec<pb::Standing> {
    server
        .ladders(None)
        .await
        .get_standings(pb::GetStandingsRequest {
            ladder_id: ladder.into(),
            page_size: 100,
            page_token: String::new(),
        })
        .await
        .unwrap()
        .into_inner()
        .standings
}

const SOLO: &str = r#"
[[ladder]]
id = "solo-3"
ruleset = "bete"
seats = 3
deals_per_match = 3
decision_deadline_ms = 5000
house_entrants = ["random", "heuristic"]
"#;

/// One bot and the two house entrants: the scheduler seats the bot at a duplicate set (three
/// tables, one per rotation, one seed), deals the same decks at every rotation, rates the set
/// once for all three, and every table's record proves its seed against the published
/// commitment.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_lone_bot_plays_duplicate_sets_against_the_house() {
    let server = Server::start(SOLO, 7).await;
    let cancel = CancellationToken::new();
    let bot = online_bot(&server, "solo", Strategy::Heuristic, &cancel).await;
    let watching = tokio::spawn({
        let url = server.url.clone();
        async move {
            let s = Server {
                url,
                stop: None,
                task: None,
                _dir: tempfile::tempdir().unwrap(),
            };
            rated(&s, "solo-3", 2, 120).await
        }
    });
    tokio::time::sleep(Duration::from_millis(200)).await;
    let entry = enter(&server, &bot, "solo-3", 1).await;
    assert!(entry.active);
    let sets = watching.await.unwrap();
    cancel.cancel();

    let me = bot.token().unwrap();
    let client = bot.with_token(&me).unwrap();
    for set in &sets {
        assert_eq!(set.state, pb::LadderMatchState::Rated as i32);
        assert!(set.duplicate);
        assert_eq!(set.tables.len(), 3, "{set:?}");
        assert_eq!(set.deals, 9, "three tables of three deals");
        let ids: HashSet<&str> = set.entrants.iter().map(|e| e.bot_id.as_str()).collect();
        assert!(ids.contains("house:random") && ids.contains("house:heuristic"));
        // The set's nets sum to zero (chips are conserved at every table).
        assert_eq!(set.entrants.iter().map(|e| e.net).sum::<i64>(), 0);
        let mine = set
            .entrants
            .iter()
            .position(|e| !e.bot_id.starts_with("house:"))
            .unwrap();
        let mut decks = Vec::new();
        for t in &set.tables {
            let table = client.get_table(&t.table_id).await.unwrap();
            assert_eq!(table.ladder_id, "solo-3");
            assert_eq!(table.ladder_match_id, set.match_id);
            assert!(!table.seed_chosen);
            assert_eq!(table.seed_sha256, t.seed_sha256);
            // Entrant i sits at seat (i + rotation) mod 3.
            let seat = (mine + t.rotation as usize) % 3;
            assert_eq!(table.seats[seat].bot_id, entry.bot_id, "{table:?}");
            let record = client.get_game_record(&t.table_id).await.unwrap();
            let rec = bete_rules::record::Record::from_json(&record).unwrap();
            let seed = rec.seed.unwrap();
            assert_eq!(
                seed.commitment(),
                t.seed_sha256,
                "the record's seed is the committed one"
            );
            // Ladder records list every deck (checked against the seed when parsed).
            let json: serde_json::Value = serde_json::from_str(&record).unwrap();
            assert!(
                json["deals"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .all(|d| d["deck"].is_array())
            );
            decks.push(format!("{:?}", rec.decks));
        }
        assert!(
            decks.windows(2).all(|w| w[0] == w[1]),
            "every rotation deals the same decks"
        );
    }
    let lines = standings(&server, "solo-3").await;
    assert_eq!(lines.len(), 3);
    for l in &lines {
        assert_eq!(l.matches, 2, "{l:?}");
        assert!((l.rating - (l.mu - 3.0 * l.sigma)).abs() < 1e-9);
    }
    assert!(
        lines.windows(2).all(|w| w[0].rating >= w[1].rating),
        "best first"
    );
    server.stop().await;
}
