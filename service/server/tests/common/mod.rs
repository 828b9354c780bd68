//! Test harness: a real server on 127.0.0.1:0 in this process, real gRPC clients.
#![allow(dead_code, clippy::unwrap_used)]

pub mod ledger;
pub mod pg;
pub mod tls;

use std::net::SocketAddr;
use std::path::PathBuf;
use std::time::Duration;

use bete_api::pb;
use bete_api::pb::bot_service_client::BotServiceClient;
use bete_api::pb::table_service_client::TableServiceClient;
use bete_server::ServerConfig;
use tokio::net::TcpListener;
use tokio::sync::oneshot;
use tokio::task::JoinHandle;
use tonic::metadata::MetadataValue;
use tonic::service::Interceptor;
use tonic::transport::Channel;
use tonic::{Request, Status};

pub struct TestServer {
    pub addr: SocketAddr,
    pub dir: PathBuf,
    stop: Option<oneshot::Sender<()>>,
    join: Option<JoinHandle<Result<(), bete_server::RunError>>>,
}

impl TestServer {
    pub async fn start(dir: PathBuf, tweak: impl FnOnce(&mut ServerConfig)) -> TestServer {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        let mut config = ServerConfig {
            data_dir: dir.clone(),
            heartbeat_interval: Duration::from_secs(2),
            ..ServerConfig::default()
        };
        tweak(&mut config);
        let (stop, stopped) = oneshot::channel::<()>();
        let join = tokio::spawn(bete_server::run(listener, config, async move {
            let _ = stopped.await;
        }));
        TestServer {
            addr,
            dir,
            stop: Some(stop),
            join: Some(join),
        }
    }

    /// [`TestServer::start`] hosting the ladders of `toml` (written into `dir`, the data in
    /// `dir/data`).
    pub async fn with_ladders(
        dir: &std::path::Path,
        toml: &str,
        tweak: impl FnOnce(&mut ServerConfig),
    ) -> TestServer {
        let file = dir.join("ladders.toml");
        std::fs::write(&file, toml).unwrap();
        TestServer::start(dir.join("data"), |c| {
            c.ladders = Some(file);
            tweak(c);
        })
        .await
    }

    /// A channel whose client reads at most a few KiB ahead (to make slow readers visible).
    pub async fn narrow_channel(&self) -> Channel {
        Channel::from_shared(format!("http://{}", self.addr))
            .unwrap()
            .initial_stream_window_size(Some(4096))
            .initial_connection_window_size(Some(65_535))
            .connect()
            .await
            .unwrap()
    }

    pub async fn channel(&self) -> Channel {
        Channel::from_shared(format!("http://{}", self.addr))
            .unwrap()
            .connect()
            .await
            .unwrap()
    }

    pub async fn stop(mut self) {
        if let Some(s) = self.stop.take() {
            let _ = s.send(());
        }
        if let Some(j) = self.join.take() {
            tokio::time::timeout(Duration::from_secs(20), j)
                .await
                .unwrap()
                .unwrap()
                .unwrap();
        }
    }
}

#[derive(Clone)]
pub struct Bearer(pub Option<String>);

impl Interceptor for Bearer {
    fn call(&mut self, mut req: Request<()>) -> Result<Request<()>, Status> {
        if let Some(t) = &self.0 {
            let v: MetadataValue<_> = format!("Bearer {t}").parse().unwrap();
            req.metadata_mut().insert("authorization", v);
        }
        Ok(req)
    }
}

pub type Client =
    TableServiceClient<tonic::service::interceptor::InterceptedService<Channel, Bearer>>;

pub struct Bot {
    pub id: String,
    pub token: String,
    pub client: Client,
}

pub async fn register(ch: &Channel, name: &str) -> Bot {
    let mut bots = BotServiceClient::new(ch.clone());
    let r = bots
        .register_bot(pb::RegisterBotRequest {
            name: name.into(),
            owner: "tests".into(),
            ..Default::default()
        })
        .await
        .unwrap()
        .into_inner();
    let client = TableServiceClient::with_interceptor(ch.clone(), Bearer(Some(r.token.clone())));
    Bot {
        id: r.bot_id,
        token: r.token,
        client,
    }
}

impl Bot {
    /// Creates the table `req` describes; returns its id.
    pub async fn create(&mut self, req: pb::CreateTableRequest) -> String {
        self.client
            .create_table(req)
            .await
            .unwrap()
            .into_inner()
            .table
            .unwrap()
            .table_id
    }

    /// Asks for `seat` (or any free one) at table `id`; the seat taken or the refusal.
    pub async fn join(&mut self, id: &str, seat: Option<u32>) -> Result<u32, Status> {
        self.client
            .join_table(pb::JoinTableRequest {
                invitation_code: String::new(),
                table_id: id.into(),
                seat,
            })
            .await
            .map(|r| r.into_inner().seat)
    }

    /// Takes `seat` at table `id`, which must be free.
    pub async fn sit(&mut self, id: &str, seat: u32) {
        self.join(id, Some(seat)).await.unwrap();
    }

    /// Waits until `seat` must act at table `id`; returns the caller's view.
    pub async fn turn_of(&mut self, id: &str, seat: u32) -> pb::SeatView {
        view_when(&mut self.client, id, "never my turn", |v| {
            v.to_act == Some(seat)
        })
        .await
    }
}

/// Creates the table `req` describes and takes its seat 0 for the caller; returns its id.
pub async fn seated(c: &mut Client, req: pb::CreateTableRequest) -> String {
    let id = c
        .create_table(req)
        .await
        .unwrap()
        .into_inner()
        .table
        .unwrap()
        .table_id;
    c.join_table(pb::JoinTableRequest {
        invitation_code: String::new(),
        table_id: id.clone(),
        seat: Some(0),
    })
    .await
    .unwrap();
    id
}

/// Table `id` as GetTable describes it to `c`.
pub async fn describe(c: &mut Client, id: &str) -> pb::Table {
    c.get_table(pb::GetTableRequest {
        table_id: id.into(),
    })
    .await
    .unwrap()
    .into_inner()
    .table
    .unwrap()
}

/// A `seats`-seat table of `ruleset` with random house bots in every seat but 0, a decision
/// deadline of `deadline_ms` and the fixed seed `seed`.
pub fn against_house(
    ruleset: pb::Ruleset,
    seats: u32,
    deadline_ms: u32,
    seed: u64,
) -> pb::CreateTableRequest {
    pb::CreateTableRequest {
        ruleset: ruleset.into(),
        seats,
        house_bots: (1..seats)
            .map(|s| house(s, pb::HouseBotPolicy::Random))
            .collect(),
        decision_deadline_ms: deadline_ms,
        seed: format!("{seed:064x}"),
        ..Default::default()
    }
}

/// Polls the caller's seat view of table `id` (every 10 ms, at most 5 s) until `ready` holds;
/// panics with `what` if it never does.
pub async fn view_when(
    c: &mut Client,
    id: &str,
    what: &str,
    ready: impl Fn(&pb::SeatView) -> bool,
) -> pb::SeatView {
    for _ in 0..500 {
        let v = c
            .get_seat_view(pb::GetSeatViewRequest {
                table_id: id.into(),
            })
            .await
            .unwrap()
            .into_inner()
            .view
            .unwrap();
        if ready(&v) {
            return v;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    panic!("{what}");
}

pub fn client_with(ch: &Channel, token: Option<&str>) -> Client {
    TableServiceClient::with_interceptor(ch.clone(), Bearer(token.map(str::to_string)))
}

pub fn house(seat: u32, policy: pb::HouseBotPolicy) -> pb::HouseBotSeat {
    pb::HouseBotSeat {
        seat,
        policy: policy.into(),
        search_budget_ms: 0,
    }
}

pub const ALL_RULESETS: [pb::Ruleset; 10] = [
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

/// The ErrorInfo reason of a status.
/// The call failed with `code` and the ErrorInfo reason `why`; returns its status.
pub fn expect(r: Result<impl std::fmt::Debug, Status>, code: tonic::Code, why: &str) -> Status {
    let s = r.expect_err("the call should fail");
    assert_eq!(s.code(), code, "{s:?}");
    assert_eq!(reason(&s), why, "{s:?}");
    s
}

pub fn reason(s: &Status) -> String {
    use tonic_types::StatusExt;
    s.get_error_details()
        .error_info()
        .map(|i| i.reason.clone())
        .unwrap_or_default()
}

pub fn bad_fields(s: &Status) -> Vec<String> {
    use tonic_types::StatusExt;
    s.get_error_details()
        .bad_request()
        .map(|b| b.field_violations.iter().map(|v| v.field.clone()).collect())
        .unwrap_or_default()
}

/// Every card code mentioned anywhere in a message (any string field, any word of it).
pub fn cards_in(msg: &impl std::fmt::Debug) -> Vec<bete_rules::Card> {
    let text = format!("{msg:?}");
    let mut out = Vec::new();
    for (i, quoted) in text.split('"').enumerate() {
        if i % 2 == 1 {
            for word in quoted.split(' ') {
                if word.len() == 2
                    && let Ok(c) = word.parse::<bete_rules::Card>()
                {
                    out.push(c);
                }
            }
        }
    }
    out
}

pub fn timeout<F: std::future::Future>(secs: u64, f: F) -> tokio::time::Timeout<F> {
    tokio::time::timeout(Duration::from_secs(secs), f)
}

/// A loopback address nobody listens on yet, for a server started after this returns (a child
/// process, a metrics endpoint).
///
/// Taken below the kernel's ephemeral range (32768 and up here): a port the kernel handed out
/// for `bind(:0)` is free again once dropped, and any outgoing connection of the machine (a
/// pool's, a client's) may take it as its own port before the server binds it; the server then
/// dies at start with "address in use", resetting whatever connected meanwhile. Below the range
/// only a test of another process picking the same random port can collide: a port is handed
/// out once in this process (two tests running at once handed the same port would have one's
/// server answer the other's calls: a web listener that failed to bind is only seen at stop).
pub fn free_addr() -> SocketAddr {
    static GIVEN: std::sync::Mutex<Vec<u16>> = std::sync::Mutex::new(Vec::new());
    loop {
        let mut b = [0u8; 2];
        getrandom::fill(&mut b).unwrap();
        let port = 10_000 + u16::from_le_bytes(b) % 20_000;
        let mut given = GIVEN.lock().unwrap();
        if given.contains(&port) {
            continue;
        }
        if let Ok(l) = std::net::TcpListener::bind(("127.0.0.1", port)) {
            given.push(port);
            return l.local_addr().unwrap();
        }
    }
}

/// The body of a plain HTTP/1.1 GET (the metrics endpoint).
pub async fn http_get(addr: SocketAddr, path: &str) -> String {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let mut s = tokio::net::TcpStream::connect(addr).await.unwrap();
    s.write_all(format!("GET {path} HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n").as_bytes())
        .await
        .unwrap();
    let mut out = String::new();
    s.read_to_string(&mut out).await.unwrap();
    out
}

/// The value of an unlabelled metric on `/metrics`.
pub async fn gauge(metrics: SocketAddr, name: &str) -> i64 {
    let body = http_get(metrics, "/metrics").await;
    body.lines()
        .find_map(|l| l.strip_prefix(name).and_then(|rest| rest.strip_prefix(' ')))
        .unwrap_or_else(|| panic!("{name} missing from /metrics:\n{body}"))
        .trim()
        .parse()
        .unwrap()
}

/// Polls the metric for up to 5 s until it reads `want`.
pub async fn wait_for_gauge(metrics: SocketAddr, name: &str, want: i64) {
    let mut seen = i64::MIN;
    for _ in 0..100 {
        seen = gauge(metrics, name).await;
        if seen == want {
            return;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    panic!("{name} stayed at {seen}, expected {want}");
}

/// `message` as a peer node `peer` forwards it: marked with the forwarding node and, when
/// given, the cluster secret (a mark without the right secret is anyone's forgery).
pub fn from_peer<T>(message: T, peer: &'static str, secret: Option<&'static str>) -> Request<T> {
    let mut req = Request::new(message);
    req.metadata_mut()
        .insert("x-bete-forwarded-by", MetadataValue::from_static(peer));
    if let Some(secret) = secret {
        req.metadata_mut()
            .insert("x-bete-cluster-secret", MetadataValue::from_static(secret));
    }
    req
}

/// A channel to the server at `addr`, once it accepts connections (up to 20 s).
pub async fn connect(addr: SocketAddr) -> Channel {
    for _ in 0..400 {
        // Bounded: a stopped server accepts the TCP connection but never answers HTTP/2.
        let endpoint = Channel::from_shared(format!("http://{addr}")).unwrap();
        if let Ok(Ok(ch)) = tokio::time::timeout(Duration::from_secs(5), endpoint.connect()).await {
            return ch;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    panic!("server at {addr} did not come up");
}

/// A bot written against the schema alone: it answers every decision its WatchBot stream on
/// `addr` brings with the first legal action, after `think` (so a match lasts long enough to be
/// interrupted in the middle), with request id = table and seq (a decision seen twice is one
/// move), and reconnects whenever the server goes away. Runs until aborted.
pub async fn play_forever(addr: SocketAddr, token: String, think: Duration) {
    loop {
        let Ok(ch) = Channel::from_shared(format!("http://{addr}"))
            .unwrap()
            .connect()
            .await
        else {
            tokio::time::sleep(Duration::from_millis(50)).await;
            continue;
        };
        let mut c = client_with(&ch, Some(&token));
        let Ok(stream) = c.watch_bot(pb::WatchBotRequest::default()).await else {
            tokio::time::sleep(Duration::from_millis(50)).await;
            continue;
        };
        let mut stream = stream.into_inner();
        while let Ok(Some(msg)) = stream.message().await {
            let view = match msg.kind {
                Some(pb::watch_bot_response::Kind::Decision(d)) => d.view,
                Some(pb::watch_bot_response::Kind::Snapshot(v)) if !v.legal_actions.is_empty() => {
                    Some(v)
                }
                _ => None,
            };
            let Some(view) = view else { continue };
            let Some(action) = view.legal_actions.first().cloned() else {
                continue;
            };
            tokio::time::sleep(think).await;
            let _ = c
                .submit_action(pb::SubmitActionRequest {
                    table_id: view.table_id.clone(),
                    action: Some(action),
                    expected_seq: view.seq,
                    request_id: format!("{}-{}", view.table_id, view.seq),
                })
                .await;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// A three-seat duplicate ladder `id` of Bête with a random and a heuristic house entrant.
pub fn duplicate_ladder(id: &str) -> String {
    format!(
        "[[ladder]]\nid = \"{id}\"\nruleset = \"bete\"\nseats = 3\ndeals_per_match = 3\n\
         decision_deadline_ms = 10000\nduplicate = true\n\
         house_entrants = [\"random\", \"heuristic\"]\n"
    )
}

pub type Ladders = pb::ladder_service_client::LadderServiceClient<
    tonic::service::interceptor::InterceptedService<Channel, Bearer>,
>;

/// A LadderService client sending `token` (public reads without one).
pub fn ladder_client(ch: &Channel, token: Option<&str>) -> Ladders {
    pb::ladder_service_client::LadderServiceClient::with_interceptor(
        ch.clone(),
        Bearer(token.map(str::to_string)),
    )
}

/// The matches of `ladder`, newest first (the first page of 50).
pub async fn ladder_matches(ch: &Channel, ladder: &str) -> Vec<pb::LadderMatch> {
    ladder_client(ch, None)
        .list_ladder_matches(pb::ListLadderMatchesRequest {
            ladder_id: ladder.into(),
            page_size: 50,
            ..Default::default()
        })
        .await
        .unwrap()
        .into_inner()
        .matches
}
