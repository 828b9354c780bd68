//! A typed async client over the generated `bete.v1` stubs.
//!
//! One [`Client`] is one HTTP/2 connection (cloning it shares the connection). It adds the
//! `authorization: Bearer` header to every TableService call, gives every action a fresh
//! `request_id` and retries it with the same id while the server is unreachable, and turns a
//! table's event stream into a [`TableWatch`] that resumes by itself after a dropped link.
//! Every call carries the current OpenTelemetry context as a W3C `traceparent` (see trace.rs),
//! so the server's spans of the call join the caller's trace.

mod ladder;
mod tables;
mod watch;

pub use watch::{TableWatch, WatchItem};

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
}
