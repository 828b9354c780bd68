//! The gRPC services: request checking, identity, and routing to table actors.

mod bot;
mod ladder;
mod table;
mod tables;
mod watch;

pub use bot::BotApi;
pub use ladder::LadderApi;
pub use table::TableApi;
pub use watch::{WatchBotFrames, WatchTableFrames};

pub(crate) use bete_table::{OPERATOR, SPECTATOR};
use std::sync::Arc;
use std::time::Instant;

use bete_rules::{Config, ConfigError};
use prost::Message;
use tonic::{Request, Response, Status};
use tracing::Instrument;

use crate::auth::Auth;
use crate::config::ServerConfig;
use crate::store::{BotRow, Occupant, Store, Visibility};
use bete_base::metrics::Metrics;
use bete_base::status::ServerError;
use bete_table::registry::Tables;

/// Items buffered per WatchBot stream (shared by all the bot's tables).
pub(crate) const BOT_STREAM_BUFFER: usize = 1024;
/// The "heartbeat" of a peer's internal WatchBot stream: never, in practice.
const PEER_STREAM_QUIET: std::time::Duration = std::time::Duration::from_secs(7 * 24 * 3600);
const MAX_PAGE: u32 = 200;
const DEFAULT_PAGE: u32 = 50;

/// State shared by both services.
#[derive(Debug)]
pub struct Api {
    pub tables: Arc<Tables>,
    pub auth: Arc<Auth>,
    pub store: Arc<dyn Store>,
    pub metrics: Arc<Metrics>,
    pub config: Arc<ServerConfig>,
    pub ladders: Arc<bete_ladder_runtime::Ladders>,
    /// Scale-out with a cluster secret: forwards calls for tables peers play.
    pub forward: Option<Arc<crate::forward::Forwarder>>,
    /// Every limit a caller meets (the tables' actors see the same through `OpenTables`).
    pub limits: Arc<crate::limits::Limits>,
}

fn config_error(e: &ConfigError) -> ServerError {
    let field = match e {
        ConfigError::UnknownKey { key, .. }
        | ConfigError::BadValue { key, .. }
        | ConfigError::Informative { key, .. } => format!("config.{key}"),
        ConfigError::Seats { .. } => "seats".to_string(),
    };
    ServerError::BadConfig {
        field,
        message: e.to_string(),
    }
}

/// BAD_CONFIG for a seat count above any ruleset's (it does not fit the engine's `u8`), worded as
/// the ruleset's own seat check words a smaller one.
fn seats_not_allowed(ruleset: bete_rules::RulesetId, seats: u32) -> ServerError {
    // Any count above MAX_SEATS fails the ruleset's check; u8::MAX stands for larger ones.
    let n = u8::try_from(seats).unwrap_or(u8::MAX);
    let allowed = match Config::defaults(ruleset, n).check_seats(ruleset, n) {
        Err(ConfigError::Seats { allowed, .. }) => allowed,
        _ => format!("at most {}", bete_rules::MAX_SEATS),
    };
    ServerError::BadConfig {
        field: "seats".into(),
        message: format!("{ruleset} does not allow {seats} seats (allowed: {allowed})"),
    }
}

pub(crate) fn spectator() -> Arc<BotRow> {
    Arc::new(BotRow {
        id: SPECTATOR.to_string(),
        name: String::new(),
        owner: String::new(),
        token_hash: String::new(),
        created_at_ms: 0,
        account_id: None,
        version: String::new(),
    })
}

pub(crate) fn operator() -> Arc<BotRow> {
    Arc::new(BotRow {
        id: OPERATOR.to_string(),
        ..(*spectator()).clone()
    })
}

/// Whether `bot` may read `t` (its record, its description): a listed table, or a private one
/// it created or sits at, or any as the operator.
pub(crate) fn may_read(t: &crate::store::StoredTable, bot: &BotRow) -> bool {
    t.table.visibility == Visibility::Listed
        || bot.id == OPERATOR
        || (bot.id != SPECTATOR
            && (t.table.created_by == bot.id
                || t.seats
                    .iter()
                    .any(|s| s.occupant == Occupant::Bot(bot.id.clone()))))
}

/// The longest `request_id` a submit accepts (and a SubmitActions answer echoes).
pub(crate) const MAX_REQUEST_ID_CHARS: usize = 64;

pub(crate) fn table_id(id: &str) -> Result<String, ServerError> {
    if id.is_empty() {
        return Err(ServerError::field("table_id", "is required"));
    }
    if id.len() > 64 {
        return Err(ServerError::field(
            "table_id",
            "is longer than 64 characters",
        ));
    }
    Ok(id.to_string())
}

impl Api {
    /// [`Api::begin`] for the other services.
    pub(crate) async fn begin_call<T: Message>(
        &self,
        req: &Request<T>,
    ) -> Result<Arc<BotRow>, ServerError> {
        self.begin(req).await
    }

    /// Common start of every call: refuse while draining, refuse oversized requests,
    /// authenticate.
    async fn begin<T: Message>(&self, req: &Request<T>) -> Result<Arc<BotRow>, ServerError> {
        self.gate(req)?;
        let bot = self.auth.authenticate(req.metadata(), peer(req)).await?;
        self.check_call(req, &bot)?;
        Ok(bot)
    }

    /// The per-bot call rate, counted once per call: at the node the caller reached (a call
    /// forwarded by a peer, or looked up again here, was counted already).
    fn check_call<T>(&self, req: &Request<T>, bot: &BotRow) -> Result<(), ServerError> {
        if req.extensions().get::<crate::forward::Counted>().is_some()
            || self.forwarded_by(req.metadata()).is_some()
        {
            return Ok(());
        }
        self.limits().check_call(bot)
    }

    pub(crate) fn limits(&self) -> &crate::limits::Limits {
        &self.limits
    }

    /// [`Api::begin`] for the read-only calls a spectator may make without a token (the web
    /// page): no `authorization` metadata gives the anonymous spectator, [`SPECTATOR`]; a token,
    /// if sent, must still be valid. Only listed tables are shown to the anonymous spectator
    /// (the checks on `bot.id` refuse private ones, as for any bot not seated there).
    pub(crate) async fn begin_read<T: Message>(
        &self,
        req: &Request<T>,
    ) -> Result<Arc<BotRow>, ServerError> {
        self.gate(req)?;
        if req.metadata().get("authorization").is_none() {
            return Ok(spectator());
        }
        // The operator reads any table (a private one included) with the admin token; it is
        // checked before the bot tokens so it never counts as a failed authentication.
        if self.auth.is_admin(req.metadata()) {
            return Ok(operator());
        }
        let bot = self.auth.authenticate(req.metadata(), peer(req)).await?;
        self.check_call(req, &bot)?;
        Ok(bot)
    }

    pub(crate) fn gate<T: Message>(&self, req: &Request<T>) -> Result<(), ServerError> {
        self.gate_message(req.get_ref())
    }

    /// [`Api::gate`] for one message (each request of a SubmitActions stream goes through it).
    pub(crate) fn gate_message<T: Message>(&self, msg: &T) -> Result<(), ServerError> {
        if self.tables.deps.shutdown.is_cancelled() {
            return Err(ServerError::ShuttingDown);
        }
        let len = msg.encoded_len();
        if len > self.config.max_request_bytes {
            return Err(ServerError::field(
                "(request)",
                format!(
                    "the request is {len} bytes; the limit is {}",
                    self.config.max_request_bytes
                ),
            ));
        }
        Ok(())
    }

    /// Runs one RPC in its span, logs a failure by reason only, turns a `ServerError` into a
    /// status (status.rs) and counts it in the RPC metrics. Every method goes through here.
    pub(crate) async fn call<T>(
        &self,
        method: &'static str,
        rpc: impl Future<Output = Result<T, ServerError>>,
    ) -> Result<Response<T>, Status> {
        let started = Instant::now();
        let r = rpc
            .instrument(tracing::info_span!(
                "rpc",
                otel.name = method,
                rpc.method = method
            ))
            .await;
        if let Err(e) = &r {
            // The reason only: a message may quote the caller's input (cards, seeds), and logs
            // carry no card, seed or token.
            tracing::debug!(method, code = ?e.code(), reason = e.reason(), "call failed");
        }
        let r = r.map(Response::new).map_err(|e| e.to_status());
        let code = match &r {
            Ok(_) => tonic::Code::Ok,
            Err(s) => s.code(),
        };
        self.metrics.observe_rpc(method, code, started);
        r
    }
}

/// The client address of a call (the TCP peer; `None` when not over TCP).
pub(crate) fn peer<T>(req: &Request<T>) -> Option<std::net::IpAddr> {
    req.remote_addr().map(|a| a.ip())
}
