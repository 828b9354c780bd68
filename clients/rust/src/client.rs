//! A typed async client over the generated `bete.v1` stubs.
//!
//! One [`Client`] is one HTTP/2 connection (cloning it shares the connection). It adds the
//! `authorization: Bearer` header to every TableService call, gives every action a fresh
//! `request_id` and retries it with the same id while the server is unreachable, and turns a
//! table's event stream into a [`TableWatch`] that resumes by itself after a dropped link.
//! Every call carries the current OpenTelemetry context as a W3C `traceparent` (see trace.rs),
//! so the server's spans of the call join the caller's trace.

use std::collections::HashMap;
use std::sync::{Arc, RwLock};
use std::time::Duration;

use bete_api::pb;
use bete_api::pb::account_service_client::AccountServiceClient;
use bete_api::pb::bot_service_client::BotServiceClient;
use bete_api::pb::ladder_service_client::LadderServiceClient;
use bete_api::pb::table_service_client::TableServiceClient;
use tonic::body::Body;
use tonic::metadata::{AsciiMetadataValue, MetadataValue};
use tonic::service::interceptor::InterceptedService;
use tonic::transport::{Certificate, ClientTlsConfig, Endpoint, Identity};
use tower::ServiceExt as _;
use tower::util::BoxCloneSyncService;

use crate::action_stream::ActionStream;
use crate::error::{Error, Result, RpcError};

/// Any error a transport may return; boxed so tests can wrap the channel in their own layers.
pub type BoxError = Box<dyn std::error::Error + Send + Sync>;

/// A transport failure (connection refused, reset, ...), as the wrapped service reported it.
/// A named type rather than a bare `BoxError` keeps the futures provably `Send`.
#[derive(Debug)]
pub struct TransportError(pub BoxError);

impl std::fmt::Display for TransportError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.0.fmt(f)
    }
}

impl std::error::Error for TransportError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        self.0.source()
    }
}

/// The HTTP service calls go through: a tonic channel, possibly wrapped in tower layers.
pub type Transport = BoxCloneSyncService<http::Request<Body>, http::Response<Body>, TransportError>;

/// Adds `authorization: Bearer <token>` to each request once a token is known. Shared by all
/// clones of a [`Client`], so registering on one clone authorizes them all.
#[derive(Clone, Debug, Default)]
pub struct Auth {
    header: Arc<RwLock<Option<AsciiMetadataValue>>>,
}

impl tonic::service::Interceptor for Auth {
    fn call(
        &mut self,
        mut request: tonic::Request<()>,
    ) -> Result<tonic::Request<()>, tonic::Status> {
        // A poisoned lock only means another thread panicked while swapping the token; the
        // value inside is still a whole header value, so it is safe to keep using it.
        let header = self
            .header
            .read()
            .unwrap_or_else(|p| p.into_inner())
            .clone();
        if let Some(value) = header {
            request.metadata_mut().insert("authorization", value);
        }
        Ok(request)
    }
}

/// Exponential backoff between retries: `initial`, doubled each time up to `max`.
#[derive(Clone, Copy, Debug)]
pub struct Backoff {
    /// The first pause.
    pub initial: Duration,
    /// The longest pause.
    pub max: Duration,
    /// How many attempts a retried call makes in all before it gives up (at least 1).
    pub attempts: u32,
}

impl Default for Backoff {
    fn default() -> Self {
        // About 20 s of retrying in all: long enough to ride out a server restart.
        Backoff {
            initial: Duration::from_millis(50),
            max: Duration::from_secs(2),
            attempts: 16,
        }
    }
}

impl Backoff {
    /// The pause before attempt `n + 1` after `n` failed attempts (n >= 1), with up to 25%
    /// random jitter so many clients do not retry in lockstep.
    pub fn delay(&self, failed: u32) -> Duration {
        let exp = self
            .initial
            .saturating_mul(1u32 << failed.saturating_sub(1).min(16));
        let base = exp.min(self.max);
        let jitter = rand::random::<f64>() * 0.25;
        base.mul_f64(1.0 + jitter)
    }
}

/// A bot's identity as RegisterBot returned it.
#[derive(Clone, Debug)]
pub struct Registered {
    /// The bot's id, shown in tables and records.
    pub bot_id: String,
    /// The secret bearer token; it cannot be shown again by the server.
    pub token: String,
}

/// What SubmitAction answered.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Submitted {
    /// The table's sequence number after the action's events.
    pub seq: u64,
    /// The server had already applied this request_id (a retry after a lost answer).
    pub replayed: bool,
    /// How many attempts the call took (1 when no retry was needed).
    pub attempts: u32,
}

type TableStub = TableServiceClient<InterceptedService<Transport, Auth>>;
type LadderStub = LadderServiceClient<InterceptedService<Transport, Auth>>;
type AccountStub = AccountServiceClient<InterceptedService<Transport, Auth>>;

/// A connection to a bete server.
#[derive(Clone, Debug)]
pub struct Client {
    transport: Transport,
    tables: TableStub,
    ladders: LadderStub,
    accounts: AccountStub,
    bots: BotServiceClient<Transport>,
    auth: Auth,
    backoff: Backoff,
    /// WatchBot streams are opened with `exclusive` (see [`Client::set_exclusive`]); shared by
    /// the clones, as the token is.
    exclusive: Arc<std::sync::atomic::AtomicBool>,
}

/// The `authorization` header value for `token`.
fn bearer(token: &str) -> Result<AsciiMetadataValue> {
    MetadataValue::try_from(format!("Bearer {token}")).map_err(|_| Error::BadToken)
}

/// A fresh idempotency key for one decision: 128 random bits in hex.
pub fn new_request_id() -> String {
    format!("{:032x}", rand::random::<u128>())
}

/// How to reach a server over TLS (rustls): what to trust and what to present.
#[derive(Clone, Debug, Default)]
pub struct TlsOptions {
    /// PEM certificates of the CA to trust instead of the system's roots (a private CA, a
    /// test certificate).
    pub ca_cert: Option<Vec<u8>>,
    /// A PEM client certificate and its key, for a server that asks for one (`--tls-client-ca`).
    pub identity: Option<(Vec<u8>, Vec<u8>)>,
    /// The name the server's certificate must carry, when it is not the URL's host (a server
    /// dialled by its IP address).
    pub domain: Option<String>,
}

impl TlsOptions {
    fn config(&self) -> ClientTlsConfig {
        let mut config = ClientTlsConfig::new();
        config = match &self.ca_cert {
            Some(pem) => config.ca_certificate(Certificate::from_pem(pem)),
            None => config.with_native_roots(),
        };
        if let Some((cert, key)) = &self.identity {
            config = config.identity(Identity::from_pem(cert, key));
        }
        if let Some(domain) = &self.domain {
            config = config.domain_name(domain.clone());
        }
        config
    }
}

/// `url` with a scheme: a bare `host:port` (as people type it) is `http://host:port`, or
/// `https://` when TLS is asked for; an address with a scheme is left as it is.
pub fn with_scheme(url: &str, tls: bool) -> String {
    if url.contains("://") {
        url.to_string()
    } else if tls {
        format!("https://{url}")
    } else {
        format!("http://{url}")
    }
}

/// The endpoint [`Client::connect_with`] dials: keepalive, windows, and TLS when `tls` says so
/// (an `http://` URL is then dialled as `https://`). Public for tools that need a bare channel.
/// A bare `host:port` is accepted (see [`with_scheme`]).
pub fn endpoint(url: &str, tls: Option<&TlsOptions>) -> Result<Endpoint> {
    let url = with_scheme(url, tls.is_some());
    let url = match (tls, url.strip_prefix("http://")) {
        (Some(_), Some(rest)) => format!("https://{rest}"),
        _ => url,
    };
    let url = url.as_str();
    let endpoint = Endpoint::from_shared(url.to_string())
        .map_err(|e| Error::BadUrl {
            url: url.to_string(),
            detail: e.to_string(),
        })?
        .connect_timeout(Duration::from_secs(5))
        .tcp_nodelay(true)
        // Pings reveal a dead link (e.g. a cut proxy) even on a quiet stream.
        .http2_keep_alive_interval(Duration::from_secs(10))
        .keep_alive_timeout(Duration::from_secs(10))
        .keep_alive_while_idle(true)
        // A bot at many tables gets many small frames on one stream; with h2's default
        // 64 KiB windows a busy connection can be closed with ENHANCE_YOUR_CALM (seen by
        // bete-load at 10,000 tables). Fixed, larger windows keep it open.
        .initial_connection_window_size(32 * 1024 * 1024)
        .initial_stream_window_size(4 * 1024 * 1024);
    match tls {
        Some(tls) => endpoint
            .tls_config(tls.config())
            .map_err(|e| Error::BadUrl {
                url: url.to_string(),
                detail: e.to_string(),
            }),
        None => Ok(endpoint),
    }
}

impl Client {
    /// Dials `url` (e.g. `http://127.0.0.1:50051`) and returns an unauthenticated client. An
    /// `https://` URL is dialled over TLS, trusting the system's root certificates.
    pub async fn connect(url: &str) -> Result<Self> {
        let tls = url.starts_with("https://").then(TlsOptions::default);
        Self::connect_with(url, tls.as_ref()).await
    }

    /// [`Client::connect`] over TLS with `tls` (an `http://` URL is dialled as `https://`), or
    /// in plaintext with `None`.
    pub async fn connect_with(url: &str, tls: Option<&TlsOptions>) -> Result<Self> {
        let channel = endpoint(url, tls)?
            .connect()
            .await
            .map_err(|source| Error::Connect {
                url: url.to_string(),
                source,
            })?;
        Ok(Self::from_service(channel))
    }

    /// Builds a client over any HTTP service, e.g. a channel wrapped in a tower layer that
    /// injects faults in tests.
    pub fn from_service<S>(service: S) -> Self
    where
        S: tower::Service<http::Request<Body>, Response = http::Response<Body>>
            + Clone
            + Send
            + Sync
            + 'static,
        S::Error: Into<BoxError>,
        S::Future: Send + 'static,
    {
        let transport: Transport = BoxCloneSyncService::new(
            service
                .map_request(crate::trace::with_traceparent)
                .map_err(|e| TransportError(e.into())),
        );
        let auth = Auth::default();
        Client {
            tables: TableServiceClient::with_interceptor(transport.clone(), auth.clone()),
            ladders: LadderServiceClient::with_interceptor(transport.clone(), auth.clone()),
            accounts: AccountServiceClient::with_interceptor(transport.clone(), auth.clone()),
            bots: BotServiceClient::new(transport.clone()),
            transport,
            auth,
            backoff: Backoff::default(),
            exclusive: Arc::default(),
        }
    }

    /// Uses `token` (from an earlier RegisterBot) for every later call of this client and its
    /// clones.
    pub fn set_token(&self, token: &str) -> Result<()> {
        let value = bearer(token)?;
        *self.auth.header.write().unwrap_or_else(|p| p.into_inner()) = Some(value);
        Ok(())
    }

    /// The bearer token in use, if any (to hand to another connection or process).
    pub fn token(&self) -> Option<String> {
        let header = self
            .auth
            .header
            .read()
            .unwrap_or_else(|p| p.into_inner())
            .clone()?;
        header
            .to_str()
            .ok()?
            .strip_prefix("Bearer ")
            .map(str::to_string)
    }

    /// The same connection with `token` instead, for playing as another bot.
    pub fn with_token(&self, token: &str) -> Result<Self> {
        let auth = Auth::default();
        let mut client = self.clone();
        client.tables = TableServiceClient::with_interceptor(self.transport.clone(), auth.clone());
        client.ladders =
            LadderServiceClient::with_interceptor(self.transport.clone(), auth.clone());
        client.accounts =
            AccountServiceClient::with_interceptor(self.transport.clone(), auth.clone());
        client.auth = auth;
        client.set_token(token)?;
        Ok(client)
    }

    /// Changes how retried calls back off.
    pub fn with_backoff(mut self, backoff: Backoff) -> Self {
        self.backoff = backoff;
        self
    }

    /// The backoff retried calls use.
    pub fn backoff(&self) -> Backoff {
        self.backoff
    }

    /// Registers a new bot (its own owner) and uses its token from now on.
    pub async fn register(&self, name: &str, owner: &str) -> Result<Registered> {
        let request = pb::RegisterBotRequest {
            name: name.into(),
            owner: owner.into(),
            ..Default::default()
        };
        self.register_request(tonic::Request::new(request)).await
    }

    /// Registers a new bot, or a new version of one, owned by the account of `account_token`
    /// (AccountService.CreateAccount), and uses the bot's token from now on. An empty
    /// `version` means "1".
    pub async fn register_owned(
        &self,
        account_token: &str,
        name: &str,
        version: &str,
    ) -> Result<Registered> {
        let mut request = tonic::Request::new(pb::RegisterBotRequest {
            name: name.into(),
            version: version.into(),
            ..Default::default()
        });
        request
            .metadata_mut()
            .insert("authorization", bearer(account_token)?);
        self.register_request(request).await
    }

    async fn register_request(
        &self,
        request: tonic::Request<pb::RegisterBotRequest>,
    ) -> Result<Registered> {
        let response = self.bots.clone().register_bot(request).await?.into_inner();
        self.set_token(&response.token)?;
        Ok(Registered {
            bot_id: response.bot_id,
            token: response.token,
        })
    }

    /// Replaces bot `bot_id`'s token (BotService.RotateBotToken) and returns the new one; the
    /// old token is revoked at once (its streams end with TOKEN_REVOKED). `owner_token` is the
    /// bot's account token; `None` rotates this client's own token (a bot without an account),
    /// which this client then uses.
    pub async fn rotate_token(&self, bot_id: &str, owner_token: Option<&str>) -> Result<String> {
        let caller = match owner_token {
            Some(t) => t.to_string(),
            None => self.token().ok_or(Error::BadToken)?,
        };
        let mut request = tonic::Request::new(pb::RotateBotTokenRequest {
            bot_id: bot_id.into(),
        });
        request
            .metadata_mut()
            .insert("authorization", bearer(&caller)?);
        let response = self
            .bots
            .clone()
            .rotate_bot_token(request)
            .await?
            .into_inner();
        if owner_token.is_none() {
            self.set_token(&response.token)?;
        }
        Ok(response.token)
    }

    /// Uses `token` when given, otherwise registers a new bot named `name`.
    pub async fn authenticate(
        &self,
        token: Option<&str>,
        name: &str,
    ) -> Result<Option<Registered>> {
        match token {
            Some(token) => {
                self.set_token(token)?;
                Ok(None)
            }
            None => Ok(Some(self.register(name, "bete-cli").await?)),
        }
    }

    /// Retries an idempotent TableService call while it fails transiently.
    async fn retrying<T, F, Fut>(&self, call: F) -> Result<T>
    where
        F: FnMut(TableStub) -> Fut,
        Fut: std::future::Future<Output = Result<tonic::Response<T>, tonic::Status>>,
    {
        self.retrying_on(&self.tables, call).await
    }

    /// Retries an idempotent call on `stub` while it fails transiently.
    async fn retrying_on<S, T, F, Fut>(&self, stub: &S, mut call: F) -> Result<T>
    where
        S: Clone,
        F: FnMut(S) -> Fut,
        Fut: std::future::Future<Output = Result<tonic::Response<T>, tonic::Status>>,
    {
        let mut failed = 0;
        loop {
            match call(stub.clone()).await {
                Ok(response) => return Ok(response.into_inner()),
                Err(status) => {
                    let error = RpcError::from_status(&status);
                    failed += 1;
                    if !error.is_transient() || failed >= self.backoff.attempts.max(1) {
                        return Err(error.into());
                    }
                    tracing::debug!(%error, failed, "retrying");
                    // Never sooner than the server asked (RetryInfo of RATE_LIMITED, OVERLOADED).
                    let delay = self
                        .backoff
                        .delay(failed)
                        .max(error.retry_after.unwrap_or_default());
                    tokio::time::sleep(delay).await;
                }
            }
        }
    }

    /// Creates a table (not retried: a retry could create a second one).
    pub async fn create_table(&self, request: pb::CreateTableRequest) -> Result<pb::Table> {
        Ok(self.create_table_invitation(request).await?.0)
    }

    /// [`Client::create_table`], with the invitation code of a private table (empty for a
    /// listed one): the code other bots need to join it.
    pub async fn create_table_invitation(
        &self,
        request: pb::CreateTableRequest,
    ) -> Result<(pb::Table, String)> {
        let response = self
            .tables
            .clone()
            .create_table(request)
            .await?
            .into_inner();
        let table = response
            .table
            .ok_or(Error::MissingField("CreateTable", "table"))?;
        Ok((table, response.invitation_code))
    }

    /// One table with its seats.
    pub async fn get_table(&self, table_id: &str) -> Result<pb::Table> {
        let request = pb::GetTableRequest {
            table_id: table_id.into(),
        };
        let response = self.retrying(|mut s| {
            let request = request.clone();
            async move { s.get_table(request).await }
        });
        response
            .await?
            .table
            .ok_or(Error::MissingField("GetTable", "table"))
    }

    /// Every listed table matching the filters (UNSPECIFIED = any), newest first, all pages.
    pub async fn list_tables(
        &self,
        ruleset: pb::Ruleset,
        state: pb::TableState,
    ) -> Result<Vec<pb::Table>> {
        let mut tables = Vec::new();
        let mut page_token = String::new();
        loop {
            let request = pb::ListTablesRequest {
                page_size: 200,
                page_token: page_token.clone(),
                ruleset: ruleset as i32,
                state: state as i32,
            };
            let page = self
                .retrying(|mut s| {
                    let request = request.clone();
                    async move { s.list_tables(request).await }
                })
                .await?;
            tables.extend(page.tables);
            if page.next_page_token.is_empty() {
                return Ok(tables);
            }
            page_token = page.next_page_token;
        }
    }

    /// Takes the named seat, or the lowest free one.
    pub async fn join_table(
        &self,
        table_id: &str,
        seat: Option<u32>,
    ) -> Result<pb::JoinTableResponse> {
        self.join_table_invited(table_id, seat, "").await
    }

    /// [`Client::join_table`] at a private table, with the invitation code its creator got
    /// (empty: none).
    pub async fn join_table_invited(
        &self,
        table_id: &str,
        seat: Option<u32>,
        invitation_code: &str,
    ) -> Result<pb::JoinTableResponse> {
        let request = pb::JoinTableRequest {
            table_id: table_id.into(),
            seat,
            invitation_code: invitation_code.into(),
        };
        Ok(self.tables.clone().join_table(request).await?.into_inner())
    }

    /// Gives up this bot's seat.
    pub async fn leave_table(&self, table_id: &str) -> Result<pb::Table> {
        let request = pb::LeaveTableRequest {
            table_id: table_id.into(),
        };
        let response = self.tables.clone().leave_table(request).await?.into_inner();
        response
            .table
            .ok_or(Error::MissingField("LeaveTable", "table"))
    }

    /// This bot's view of a table (the spectator view when it has no seat there).
    pub async fn get_seat_view(&self, table_id: &str) -> Result<pb::SeatView> {
        let request = pb::GetSeatViewRequest {
            table_id: table_id.into(),
        };
        let response = self.retrying(|mut s| {
            let request = request.clone();
            async move { s.get_seat_view(request).await }
        });
        response
            .await?
            .view
            .ok_or(Error::MissingField("GetSeatView", "view"))
    }

    /// The finished match's `bete-record/1` JSON.
    pub async fn get_game_record(&self, table_id: &str) -> Result<String> {
        let request = pb::GetGameRecordRequest {
            table_id: table_id.into(),
        };
        let response = self.retrying(|mut s| {
            let request = request.clone();
            async move { s.get_game_record(request).await }
        });
        Ok(response.await?.record_json)
    }

    /// Submits an action under a fresh `request_id`, checked against `expected_seq` (0 skips
    /// the check). While the server is unreachable the call is retried with the same id, so it
    /// is applied at most once however often the answer is lost.
    ///
    /// That holds only inside this call. A caller that gives up on it (a timeout, a dropped
    /// future) or gets a transient error cannot tell whether the action was applied: to try
    /// again it must use [`Client::submit_action_with_id`] with the SAME `request_id` (choose
    /// it up front, e.g. with [`new_request_id`]). A fresh id can apply the action twice when
    /// `expected_seq` is 0; with a real `expected_seq` the second try is refused as stale
    /// instead of answered with the first result.
    pub async fn submit_action(
        &self,
        table_id: &str,
        action: &pb::Action,
        expected_seq: u64,
    ) -> Result<Submitted> {
        self.submit_action_with_id(table_id, action, expected_seq, &new_request_id())
            .await
    }

    /// [`Client::submit_action`] with a caller-chosen `request_id` (to retry a decision across
    /// restarts of the caller).
    pub async fn submit_action_with_id(
        &self,
        table_id: &str,
        action: &pb::Action,
        expected_seq: u64,
        request_id: &str,
    ) -> Result<Submitted> {
        // The server fills `text` itself and ignores it on input; sending only the verb and
        // cards keeps the request minimal.
        let action = pb::Action {
            kind: action.kind,
            cards: action.cards.clone(),
            text: String::new(),
        };
        let request = pb::SubmitActionRequest {
            table_id: table_id.into(),
            action: Some(action),
            expected_seq,
            request_id: request_id.into(),
        };
        let mut attempts = 0;
        let response = self
            .retrying(|mut s| {
                attempts += 1;
                let request = request.clone();
                async move { s.submit_action(request).await }
            })
            .await?;
        Ok(Submitted {
            seq: response.seq,
            replayed: response.replayed,
            attempts,
        })
    }

    /// A handle that submits this bot's actions on SubmitActions streams: the same results
    /// and errors as [`Client::submit_action`], cheaper per move for the server. Streams open
    /// on first use.
    pub fn action_stream(&self) -> ActionStream {
        ActionStream::new(self.clone())
    }

    /// Opens one SubmitActions stream that sends `requests` (see [`ActionStream`]).
    pub(crate) async fn open_submit_actions(
        &self,
        requests: tokio_stream::wrappers::ReceiverStream<pb::SubmitActionsRequest>,
    ) -> Result<tonic::Streaming<pb::SubmitActionsResponse>> {
        Ok(self
            .tables
            .clone()
            .submit_actions(requests)
            .await?
            .into_inner())
    }

    /// Opens one WatchTable stream (no automatic resume; see [`Client::watch_table`]).
    pub async fn open_watch_table(
        &self,
        table_id: &str,
        from_seq: Option<u64>,
    ) -> Result<tonic::Streaming<pb::WatchTableResponse>> {
        let request = pb::WatchTableRequest {
            table_id: table_id.into(),
            from_seq,
        };
        Ok(self.tables.clone().watch_table(request).await?.into_inner())
    }

    /// Opens one WatchBot stream for every table this bot sits at; `from_seq` resumes tables
    /// where the caller left off.
    pub async fn open_watch_bot(
        &self,
        from_seq: HashMap<String, u64>,
    ) -> Result<tonic::Streaming<pb::WatchBotResponse>> {
        let request = pb::WatchBotRequest {
            from_seq,
            exclusive: self.exclusive.load(std::sync::atomic::Ordering::Relaxed),
        };
        Ok(self.tables.clone().watch_bot(request).await?.into_inner())
    }

    /// Opens every later WatchBot stream of this client (and its clones) with `exclusive`:
    /// the server then ends the bot's other WatchBot streams (ABORTED / STREAM_REPLACED), so
    /// only this process plays the bot. A runner whose stream is replaced stops with that error.
    pub fn set_exclusive(&self, exclusive: bool) {
        self.exclusive
            .store(exclusive, std::sync::atomic::Ordering::Relaxed);
    }

    /// Creates an account; its token registers bots owned by it ([`Client::register_owned`]).
    /// Not retried: a retry could create a second account.
    pub async fn create_account(&self, name: &str) -> Result<pb::CreateAccountResponse> {
        let request = pb::CreateAccountRequest { name: name.into() };
        Ok(self
            .accounts
            .clone()
            .create_account(request)
            .await?
            .into_inner())
    }

    /// The bots of the account whose token this client carries (see [`Client::set_token`]).
    pub async fn list_account_bots(&self) -> Result<pb::ListAccountBotsResponse> {
        self.retrying_on(&self.accounts, |mut s| async move {
            s.list_account_bots(pb::ListAccountBotsRequest {}).await
        })
        .await
    }

    /// Every ladder of the server.
    pub async fn list_ladders(&self) -> Result<Vec<pb::Ladder>> {
        let response = self
            .retrying_on(&self.ladders, |mut s| async move {
                s.list_ladders(pb::ListLaddersRequest {}).await
            })
            .await?;
        Ok(response.ladders)
    }

    /// One ladder, with this bot's entry when it entered.
    pub async fn get_ladder(&self, ladder_id: &str) -> Result<pb::GetLadderResponse> {
        let request = pb::GetLadderRequest {
            ladder_id: ladder_id.into(),
        };
        self.retrying_on(&self.ladders, |mut s| {
            let request = request.clone();
            async move { s.get_ladder(request).await }
        })
        .await
    }

    /// Enters this bot in a ladder, to play `capacity` ladder tables at once (0 means 1).
    /// The scheduler seats it only while it holds a WatchBot stream (a [`crate::Runner`]).
    pub async fn enter_ladder(&self, ladder_id: &str, capacity: u32) -> Result<pb::LadderEntry> {
        let request = pb::EnterLadderRequest {
            ladder_id: ladder_id.into(),
            capacity,
        };
        let response = self
            .ladders
            .clone()
            .enter_ladder(request)
            .await?
            .into_inner();
        response
            .entry
            .ok_or(Error::MissingField("EnterLadder", "entry"))
    }

    /// Takes this bot off a ladder; matches it is playing go on and count.
    pub async fn leave_ladder(&self, ladder_id: &str) -> Result<pb::LadderEntry> {
        let request = pb::LeaveLadderRequest {
            ladder_id: ladder_id.into(),
        };
        let response = self
            .ladders
            .clone()
            .leave_ladder(request)
            .await?
            .into_inner();
        response
            .entry
            .ok_or(Error::MissingField("LeaveLadder", "entry"))
    }

    /// One page of a ladder's leaderboard, best first (`page_size` 0 means the server's 50).
    pub async fn get_standings_page(
        &self,
        ladder_id: &str,
        page_size: u32,
        page_token: &str,
    ) -> Result<pb::GetStandingsResponse> {
        let request = pb::GetStandingsRequest {
            ladder_id: ladder_id.into(),
            page_size,
            page_token: page_token.into(),
        };
        self.retrying_on(&self.ladders, |mut s| {
            let request = request.clone();
            async move { s.get_standings(request).await }
        })
        .await
    }

    /// A ladder's crosstable: every pair of bots that met in its rated matches (sets), with
    /// the mean net difference per deal between them and its 95 % interval.
    pub async fn get_crosstable(&self, ladder_id: &str) -> Result<pb::GetCrosstableResponse> {
        let request = pb::GetCrosstableRequest {
            ladder_id: ladder_id.into(),
        };
        self.retrying_on(&self.ladders, |mut s| {
            let request = request.clone();
            async move { s.get_crosstable(request).await }
        })
        .await
    }

    /// A ladder's whole leaderboard, best first (every page).
    pub async fn get_standings(&self, ladder_id: &str) -> Result<Vec<pb::Standing>> {
        let mut standings = Vec::new();
        let mut token = String::new();
        loop {
            let page = self.get_standings_page(ladder_id, 500, &token).await?;
            standings.extend(page.standings);
            if page.next_page_token.is_empty() {
                return Ok(standings);
            }
            token = page.next_page_token;
        }
    }

    /// One page of a ladder's matches, newest first, of one bot when `bot_id` is not empty.
    pub async fn list_ladder_matches(
        &self,
        ladder_id: &str,
        bot_id: &str,
        page_size: u32,
        page_token: &str,
    ) -> Result<pb::ListLadderMatchesResponse> {
        let request = pb::ListLadderMatchesRequest {
            ladder_id: ladder_id.into(),
            bot_id: bot_id.into(),
            page_size,
            page_token: page_token.into(),
        };
        self.retrying_on(&self.ladders, |mut s| {
            let request = request.clone();
            async move { s.list_ladder_matches(request).await }
        })
        .await
    }

    /// Opens a stream of rated ladder matches (of one ladder, or all when `ladder_id` is
    /// empty), with heartbeats while idle. No automatic resume.
    pub async fn watch_ladder_results(
        &self,
        ladder_id: &str,
    ) -> Result<tonic::Streaming<pb::WatchLadderResultsResponse>> {
        let request = pb::WatchLadderResultsRequest {
            ladder_id: ladder_id.into(),
        };
        Ok(self
            .ladders
            .clone()
            .watch_ladder_results(request)
            .await?
            .into_inner())
    }

    /// Follows a table from a fresh snapshot (`from_seq` None) or after event `from_seq`,
    /// reconnecting with backoff whenever the link drops.
    pub fn watch_table(&self, table_id: &str, from_seq: Option<u64>) -> TableWatch {
        TableWatch {
            client: self.clone(),
            table_id: table_id.into(),
            last_seq: from_seq,
            stream: None,
            failed: 0,
            ended: false,
            idle_timeout: Duration::from_secs(45),
        }
    }
}

/// One item of a [`TableWatch`].
#[derive(Clone, Debug)]
pub enum WatchItem {
    /// The viewer's whole view; the first item unless the watch started from a sequence number,
    /// and again after a resume that could not continue from the last event.
    Snapshot(pb::SeatView),
    /// The next event, in sequence order, never repeated.
    Event(pb::Event),
    /// The table is quiet; `last_seq` is the table's latest sequence number.
    Heartbeat(pb::Heartbeat),
    /// The link dropped and the watch continues after event `from_seq` (for status lines).
    Resumed { from_seq: Option<u64> },
}

/// A WatchTable stream that resumes from the last sequence number after a dropped link, so
/// the caller sees every event exactly once. Ends after MatchEnded.
#[derive(Debug)]
pub struct TableWatch {
    client: Client,
    table_id: String,
    last_seq: Option<u64>,
    stream: Option<tonic::Streaming<pb::WatchTableResponse>>,
    failed: u32,
    ended: bool,
    idle_timeout: Duration,
}

impl TableWatch {
    /// The sequence number of the last event or snapshot delivered.
    pub fn last_seq(&self) -> Option<u64> {
        self.last_seq
    }

    /// Treat the link as dead after this long without any message (heartbeats included).
    pub fn with_idle_timeout(mut self, idle: Duration) -> Self {
        self.idle_timeout = idle;
        self
    }

    /// The next item, or `None` after the match ended. Errors only for failures a retry cannot
    /// fix (unknown table, private table, bad token) or after the backoff's attempts are spent.
    pub async fn next(&mut self) -> Result<Option<WatchItem>> {
        loop {
            if self.ended {
                return Ok(None);
            }
            let Some(stream) = self.stream.as_mut() else {
                match self
                    .client
                    .open_watch_table(&self.table_id, self.last_seq)
                    .await
                {
                    Ok(stream) => {
                        self.stream = Some(stream);
                        if self.failed > 0 {
                            self.failed = 0;
                            return Ok(Some(WatchItem::Resumed {
                                from_seq: self.last_seq,
                            }));
                        }
                    }
                    Err(error) => self.recover(error).await?,
                }
                continue;
            };
            let message = match tokio::time::timeout(self.idle_timeout, stream.message()).await {
                Ok(message) => message,
                Err(_) => Err(tonic::Status::unavailable(
                    "no message within the idle timeout",
                )),
            };
            match message {
                Ok(Some(pb::WatchTableResponse { kind: Some(kind) })) => {
                    use pb::watch_table_response::Kind;
                    match kind {
                        Kind::Snapshot(view) => {
                            self.last_seq = Some(view.seq);
                            self.ended = view.match_over;
                            return Ok(Some(WatchItem::Snapshot(view)));
                        }
                        Kind::Event(event) => {
                            // A resumed stream starts after last_seq; anything older is a duplicate.
                            if self.last_seq.is_some_and(|last| event.seq <= last) {
                                continue;
                            }
                            self.last_seq = Some(event.seq);
                            if matches!(event.body, Some(pb::event::Body::MatchEnded(_))) {
                                self.ended = true;
                            }
                            return Ok(Some(WatchItem::Event(event)));
                        }
                        Kind::Heartbeat(beat) => return Ok(Some(WatchItem::Heartbeat(beat))),
                        Kind::Resync(resync) => {
                            tracing::debug!(from_seq = resync.from_seq, reason = %resync.reason, "resync");
                            self.last_seq = Some(resync.from_seq);
                            self.stream = None;
                            self.failed = 1;
                        }
                    }
                }
                Ok(Some(pb::WatchTableResponse { kind: None })) => continue,
                Ok(None) => {
                    // The server ends a stream only after MatchEnded or when it shuts down.
                    self.stream = None;
                    self.recover(Error::from(tonic::Status::unavailable(
                        "stream ended before the match did",
                    )))
                    .await?;
                }
                Err(status) => {
                    self.stream = None;
                    self.recover(status.into()).await?;
                }
            }
        }
    }

    /// Decides whether a failure is worth a reconnect, and waits the backoff if so.
    async fn recover(&mut self, error: Error) -> Result<()> {
        use pb::ErrorReason as R;
        match error.reason() {
            Some(R::FromSeqOutOfRange) => {
                // The server no longer keeps those events: start over from a snapshot.
                self.last_seq = None;
            }
            Some(R::WatcherTooSlow) => {
                if let Error::Rpc(e) = &error
                    && let Some(from) = e.seq_metadata("from_seq")
                {
                    self.last_seq = Some(from);
                }
            }
            _ if error.is_transient() => {}
            _ => return Err(error),
        }
        self.failed += 1;
        if self.failed >= self.client.backoff.attempts.max(1) {
            return Err(error);
        }
        tracing::debug!(%error, failed = self.failed, "watch dropped; resuming");
        tokio::time::sleep(self.client.backoff.delay(self.failed)).await;
        Ok(())
    }
}
