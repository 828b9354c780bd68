//! The gRPC services: request checking, identity, and routing to table actors.

use std::collections::HashSet;
use std::sync::Arc;
use std::time::Instant;

use bete_api::convert::{self, FieldError};
use bete_api::pb;
use bete_api::pb::bot_service_server::BotService;
use bete_api::pb::table_service_server::TableService;
use bete_rules::{Config, ConfigError, Seed};
use bete_store::fresh_seed;
use prost::Message;
use tokio::sync::mpsc;
use tonic::codegen::BoxFuture;
use tonic::server::ServerStreamingService;
use tonic::{Request, Response, Status};
use tracing::Instrument;

use crate::auth::{self, Auth};
use crate::config::{
    MAX_DEADLINE_MS, MAX_EXTRA_DEALS, MAX_ROUNDS, MAX_SEARCH_BUDGET_MS, MIN_DEADLINE_MS,
    MIN_SEARCH_BUDGET_MS, ServerConfig,
};
use crate::metrics::Metrics;
use crate::now_ms;
use crate::project;
use crate::registry::Tables;
use crate::status::{FieldViolation, ServerError};
use crate::store::{
    BotRow, Occupant, SeatRow, Store, TableFilter, TableRow, TableState, Visibility,
};
use crate::stream::{BotShape, Frame, Frames, MsgStream, TableShape, WatchStream};
use crate::submits::SubmitAnswers;
use crate::table::HousePolicy;
use crate::table::{BotStream, Command, SeatInfo, TableMeta, TableStatus};

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
    pub ladders: Arc<crate::ladder::Ladders>,
    /// Scale-out with a cluster secret: forwards calls for tables peers play.
    pub forward: Option<Arc<crate::forward::Forwarder>>,
}

impl From<FieldError> for ServerError {
    fn from(e: FieldError) -> ServerError {
        ServerError::InvalidArgument(vec![FieldViolation {
            field: e.field,
            description: e.description,
        }])
    }
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

/// The bot id of the anonymous spectator: empty, which no registered bot has (ids are `b_...`),
/// so it holds no seat and created no table.
pub(crate) const SPECTATOR: &str = "";

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

/// The bot id of the operator reading with the admin token (`--admin-token` as the bearer
/// token of a read): no registered bot has it (ids are `b_...`), so it holds no seat, created
/// no table, and is shown the spectator's view; only the privacy checks let it in.
pub(crate) const OPERATOR: &str = "@operator";

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
    /// Whether the store lists table `id` now: a ladder set's tables become listed when the
    /// set is rated, after their actors loaded them private.
    async fn listed_in_store(&self, id: &str) -> Result<bool, ServerError> {
        Ok(self
            .store
            .table(id.to_string())
            .await?
            .is_some_and(|t| t.table.visibility == Visibility::Listed))
    }

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
        &self.tables.deps.limits
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

    pub(crate) fn check_create(
        &self,
        bot: &BotRow,
        req: pb::CreateTableRequest,
    ) -> Result<(TableRow, Vec<SeatRow>), ServerError> {
        let mut bad = Vec::new();
        let ruleset = convert::ruleset_from_pb(req.ruleset, "ruleset")
            .map_err(|e| bad.push(e))
            .ok();
        // A missing count is malformed (INVALID_ARGUMENT); any other count the ruleset does not
        // allow is BAD_CONFIG, from the ruleset's own check below, however large it is.
        let too_many = req.seats as usize > bete_rules::MAX_SEATS;
        let seats = match u8::try_from(req.seats) {
            Ok(0) => {
                bad.push(FieldError::new("seats", "is required"));
                None
            }
            Ok(n) if !too_many => Some(n),
            _ => None,
        };
        let deadline_ms = match u64::from(req.decision_deadline_ms) {
            0 => self.config.default_deadline_ms,
            ms if (MIN_DEADLINE_MS..=MAX_DEADLINE_MS).contains(&ms) => ms,
            ms => {
                bad.push(FieldError::new(
                    "decision_deadline_ms",
                    format!("{ms} is outside {MIN_DEADLINE_MS}..={MAX_DEADLINE_MS}"),
                ));
                0
            }
        };
        let visibility = match pb::Visibility::try_from(req.visibility) {
            Ok(pb::Visibility::Unspecified | pb::Visibility::Listed) => Visibility::Listed,
            Ok(pb::Visibility::Private) => Visibility::Private,
            Err(_) => {
                bad.push(FieldError::new(
                    "visibility",
                    format!("unknown Visibility number {}", req.visibility),
                ));
                Visibility::Listed
            }
        };
        let seed_chosen = !req.seed.is_empty();
        let seed = if !seed_chosen {
            fresh_seed()?
        } else {
            match req.seed.parse::<Seed>() {
                Ok(s) => s,
                Err(e) => {
                    bad.push(FieldError::new("seed", e.to_string()));
                    Seed([0; 32])
                }
            }
        };
        let n = seats.unwrap_or(u8::MAX);
        if seats.is_some() && req.first_dealer >= u32::from(n) {
            bad.push(FieldError::new(
                "first_dealer",
                format!("{} is not a seat of a {n}-seat table", req.first_dealer),
            ));
        }
        let mut house = vec![None; usize::from(seats.unwrap_or(0))];
        // A search budget out of bounds has a reason of its own, reported after malformed fields.
        let mut budget_bad = None;
        let mut seen = HashSet::new();
        // More entries than any table has seats: one violation, not one per entry.
        let house_bots = if req.house_bots.len() > bete_rules::MAX_SEATS {
            bad.push(FieldError::new(
                "house_bots",
                format!(
                    "has {} entries; a table has at most {} seats",
                    req.house_bots.len(),
                    bete_rules::MAX_SEATS
                ),
            ));
            &req.house_bots[..0]
        } else {
            &req.house_bots[..]
        };
        for (i, h) in house_bots.iter().enumerate() {
            if seats.is_some() && h.seat >= u32::from(n) {
                bad.push(FieldError::new(
                    format!("house_bots[{i}].seat"),
                    format!("{} is not a seat of a {n}-seat table", h.seat),
                ));
                continue;
            }
            if !seen.insert(h.seat) {
                bad.push(FieldError::new(
                    format!("house_bots[{i}].seat"),
                    format!("seat {} is listed twice", h.seat),
                ));
                continue;
            }
            let field = format!("house_bots[{i}].search_budget_ms");
            let policy = match pb::HouseBotPolicy::try_from(h.policy) {
                Ok(p @ (pb::HouseBotPolicy::Random | pb::HouseBotPolicy::Heuristic)) => {
                    if h.search_budget_ms != 0 {
                        budget_bad.get_or_insert(ServerError::SearchBudget {
                            field,
                            message: format!(
                                "is {} but the {} policy does not search (leave it 0)",
                                h.search_budget_ms,
                                p.as_str_name()
                            ),
                        });
                    }
                    if p == pb::HouseBotPolicy::Random {
                        HousePolicy::Random
                    } else {
                        HousePolicy::Heuristic
                    }
                }
                Ok(pb::HouseBotPolicy::Search) => {
                    let ms = h.search_budget_ms;
                    if !(MIN_SEARCH_BUDGET_MS..=MAX_SEARCH_BUDGET_MS).contains(&ms) {
                        budget_bad.get_or_insert(ServerError::SearchBudget {
                            field,
                            message: format!(
                                "{ms} is outside {MIN_SEARCH_BUDGET_MS}..={MAX_SEARCH_BUDGET_MS} \
                                 milliseconds per decision"
                            ),
                        });
                    }
                    HousePolicy::Search { budget_ms: ms }
                }
                Ok(pb::HouseBotPolicy::Unspecified) => {
                    bad.push(FieldError::new(
                        format!("house_bots[{i}].policy"),
                        "is required",
                    ));
                    continue;
                }
                Err(_) => {
                    bad.push(FieldError::new(
                        format!("house_bots[{i}].policy"),
                        format!("unknown HouseBotPolicy number {}", h.policy),
                    ));
                    continue;
                }
            };
            if let Some(slot) = house.get_mut(h.seat as usize) {
                *slot = Some(policy);
            }
        }
        if !bad.is_empty() {
            return Err(ServerError::InvalidArgument(
                bad.into_iter()
                    .map(|e| FieldViolation {
                        field: e.field,
                        description: e.description,
                    })
                    .collect(),
            ));
        }
        if let Some(e) = budget_bad {
            return Err(e);
        }
        if let (Some(ruleset), true) = (ruleset, too_many) {
            return Err(seats_not_allowed(ruleset, req.seats));
        }
        let (Some(ruleset), Some(seats)) = (ruleset, seats) else {
            return Err(ServerError::Internal("unreachable: checked above".into()));
        };
        let config = Config::from_json(ruleset, seats, &convert::config_from_pb(&req.config))
            .map_err(|e| config_error(&e))?;
        // The engine plays any match length section 10 allows; a table on this server may ask
        // for at most MAX_ROUNDS rounds and MAX_EXTRA_DEALS extra deals, so every match ends
        // (`rounds = 4294967295` with house bots in every seat played for ever).
        for (key, value, max) in [
            ("rounds", config.rounds, MAX_ROUNDS),
            ("max_extra_deals", config.max_extra_deals, MAX_EXTRA_DEALS),
        ] {
            if value > max {
                return Err(ServerError::BadConfig {
                    field: format!("config.{key}"),
                    message: format!(
                        "{key} is {value}: a table on this server takes at most {max}"
                    ),
                });
            }
        }
        let config_json = serde_json::Value::Object(config.to_json(ruleset)).to_string();
        let id = format!("t_{}", auth::hex(&rand::random::<[u8; 8]>()));
        let row = TableRow {
            id: id.clone(),
            ruleset: ruleset.id().to_string(),
            seats,
            config_json,
            seed: seed.to_string(),
            first_dealer: req.first_dealer as u8,
            deadline_ms,
            visibility,
            state: TableState::Waiting,
            last_seq: 0,
            created_by: bot.id.clone(),
            created_at_ms: now_ms(),
            seed_chosen,
            ladder: None,
        };
        let seat_rows = house
            .iter()
            .enumerate()
            .map(|(i, p)| SeatRow {
                seat: i as u8,
                occupant: match p {
                    Some(p) => Occupant::House(p.text()),
                    None => Occupant::Empty,
                },
                name: String::new(),
                strikes: 0,
            })
            .collect();
        Ok((row, seat_rows))
    }

    /// Finished table `id` and its record, if `bot` may read it.
    pub(crate) async fn finished_record(
        &self,
        bot: &BotRow,
        id: String,
    ) -> Result<(crate::store::StoredTable, String), ServerError> {
        let t = self
            .store
            .table(id.clone())
            .await?
            .ok_or_else(|| ServerError::TableNotFound(id.clone()))?;
        if !may_read(&t, bot) {
            return Err(ServerError::TablePrivate);
        }
        let mut record = match self.store.record(id).await? {
            Some(r) => r,
            // Finished without a record: closed before its match was over.
            None if t.table.state == TableState::Finished => {
                return Err(ServerError::TableClosed(
                    "closed before its match was over".into(),
                ));
            }
            None => return Err(ServerError::TableNotFinished),
        };
        if let Some(l) = &t.table.ladder {
            // A set's tables share their decks: no record (hence no seed) of one may reach
            // anyone while a later rotation can still be played.
            let rated = self
                .store
                .ladder_match(l.match_id.clone())
                .await?
                .is_some_and(|m| m.rated);
            if !rated {
                return Err(ServerError::TableNotFinished);
            }
            // Every deck listed, so `bete verify` checks each against the seed.
            if let Ok(mut r) = bete_rules::record::Record::from_json(&record) {
                r.include_decks();
                record = r.to_json();
            }
        }
        Ok((t, record))
    }

    pub(crate) async fn status(&self, id: &str) -> Result<TableStatus, ServerError> {
        self.tables
            .call(id, |reply| Command::Status { reply })
            .await
    }

    /// The one submit path of SubmitAction and of each SubmitActions request, after
    /// authentication: the request's checks, then the table actor, which answers once the
    /// action is durable (or with the stored result of an earlier request with this
    /// request_id). The seat is `bot`'s at the table, never a field of the request.
    pub(crate) async fn submit(
        &self,
        bot: &BotRow,
        req: pb::SubmitActionRequest,
    ) -> Result<pb::SubmitActionResponse, ServerError> {
        let id = table_id(&req.table_id)?;
        let action =
            convert::action_from_pb(convert::require(req.action.as_ref(), "action")?, "action")?;
        if req.request_id.chars().count() > MAX_REQUEST_ID_CHARS {
            return Err(ServerError::field(
                "request_id",
                "is longer than 64 characters",
            ));
        }
        let request_id = (!req.request_id.is_empty()).then_some(req.request_id);
        let expected_seq = req.expected_seq;
        let done = self
            .tables
            .call(&id, |reply| Command::Submit {
                bot: bot.id.clone(),
                action,
                expected_seq,
                request_id: request_id.clone(),
                reply,
            })
            .await??;
        Ok(pb::SubmitActionResponse {
            seq: done.seq,
            replayed: done.replayed,
        })
    }
}

fn stored_status(t: &crate::store::StoredTable) -> Result<TableStatus, ServerError> {
    let meta = Arc::new(TableMeta::from_row(&t.table)?);
    let seats = (0..t.table.seats)
        .map(|i| match t.seats.iter().find(|s| s.seat == i) {
            Some(s) => SeatInfo {
                occupant: s.occupant.clone(),
                name: s.name.clone(),
                strikes: s.strikes,
            },
            None => SeatInfo {
                occupant: Occupant::Empty,
                name: String::new(),
                strikes: 0,
            },
        })
        .collect();
    Ok(TableStatus {
        meta,
        seats,
        state: t.table.state,
        last_seq: t.table.last_seq,
    })
}

/// `TableService`.
#[derive(Clone, Debug)]
pub struct TableApi(pub Arc<Api>);

/// `BotService`.
#[derive(Clone, Debug)]
pub struct BotApi(pub Arc<Api>);

#[tonic::async_trait]
impl BotService for BotApi {
    async fn register_bot(
        &self,
        request: Request<pb::RegisterBotRequest>,
    ) -> Result<Response<pb::RegisterBotResponse>, Status> {
        let api = &self.0;
        api.call("RegisterBot", async {
            api.gate(&request)?;
            // A client that presented a certificate of the client CA (a trusted bot farm,
            // `--tls-client-ca`) is not held to the per-address limit: it may sit behind one
            // address with many bots. rustls verified the certificate before any call.
            if request.peer_certs().is_none() {
                api.limits()
                    .check_registration(request.remote_addr().map(|a| a.ip()))?;
            }
            let from = peer(&request);
            let (md, _, req) = request.into_parts();
            crate::accounts::register_bot(api, &md, from, req).await
        })
        .await
    }

    async fn rotate_bot_token(
        &self,
        request: Request<pb::RotateBotTokenRequest>,
    ) -> Result<Response<pb::RotateBotTokenResponse>, Status> {
        let api = &self.0;
        api.call("RotateBotToken", async {
            api.gate(&request)?;
            let from = peer(&request);
            let (md, _, req) = request.into_parts();
            crate::accounts::rotate_bot_token(api, &md, from, req).await
        })
        .await
    }
}

#[tonic::async_trait]
impl TableService for TableApi {
    async fn create_table(
        &self,
        request: Request<pb::CreateTableRequest>,
    ) -> Result<Response<pb::CreateTableResponse>, Status> {
        let api = &self.0;
        api.call("CreateTable", async {
            let bot = api.begin(&request).await?;
            api.limits().check_creation(&bot)?;
            let from = peer(&request);
            let (row, seats) = api.check_create(&bot, request.into_inner())?;
            let id = row.id.clone();
            api.limits().reserve_table(&bot, &id, from)?;
            if let Err(e) = api.store.create_table(row, seats).await {
                api.limits().table_done(&bot.id, &id);
                return Err(e.into());
            }
            let status = api.status(&id).await?;
            tracing::info!(table = %id, "table created");
            Ok(pb::CreateTableResponse {
                table: Some(project::table_to_pb(&status)),
                invitation_code: crate::invitation::code_for(&status.meta).unwrap_or_default(),
            })
        })
        .await
    }

    async fn get_table(
        &self,
        request: Request<pb::GetTableRequest>,
    ) -> Result<Response<pb::GetTableResponse>, Status> {
        let api = &self.0;
        let local = |request: Request<pb::GetTableRequest>| async move {
            let bot = api.begin_read(&request).await?;
            let id = table_id(&request.get_ref().table_id)?;
            let status = api.status(&id).await?;
            // A private table's seats, bot ids, strikes and config are for its creator, its
            // seats and the operator (JoinTable by id needs no GetTable). A ladder table is
            // private while its set is unrated (its tables share their decks): then only its
            // seated bots and the operator read it; anyone once the store lists it (rated).
            // The actor's copy of the visibility is the one it loaded, so a private answer is
            // checked in the store.
            let private = status.meta.visibility == Visibility::Private;
            let own = bot.id == OPERATOR
                || (bot.id != SPECTATOR && status.meta.created_by == bot.id)
                || status
                    .seats
                    .iter()
                    .any(|s| s.occupant == Occupant::Bot(bot.id.clone()));
            if private
                && !own
                && !api
                    .store
                    .table(id.clone())
                    .await?
                    .is_some_and(|t| t.table.visibility == Visibility::Listed)
            {
                return Err(ServerError::TablePrivate);
            }
            Ok(pb::GetTableResponse {
                table: Some(project::table_to_pb(&status)),
            })
        };
        api.forwardable("GetTable", request, true, local, |mut c, r| {
            Box::pin(async move { c.get_table(r).await })
        })
        .await
    }

    async fn list_tables(
        &self,
        request: Request<pb::ListTablesRequest>,
    ) -> Result<Response<pb::ListTablesResponse>, Status> {
        let api = &self.0;
        api.call("ListTables", async {
            api.begin_read(&request).await?;
            let req = request.into_inner();
            let limit = match req.page_size {
                0 => DEFAULT_PAGE,
                n => n.min(MAX_PAGE),
            };
            let before = if req.page_token.is_empty() {
                0
            } else {
                req.page_token
                    .strip_prefix("c")
                    .and_then(|c| c.parse::<i64>().ok())
                    .filter(|c| *c > 0)
                    .ok_or_else(|| {
                        ServerError::field("page_token", "is not a token this server returned")
                    })?
            };
            let ruleset = match req.ruleset {
                0 => None,
                r => Some(convert::ruleset_from_pb(r, "ruleset")?.id().to_string()),
            };
            let state = match pb::TableState::try_from(req.state) {
                Ok(pb::TableState::Unspecified) => None,
                Ok(pb::TableState::Waiting) => Some(TableState::Waiting),
                Ok(pb::TableState::Playing) => Some(TableState::Playing),
                Ok(pb::TableState::Finished) => Some(TableState::Finished),
                Err(_) => {
                    return Err(ServerError::field(
                        "state",
                        format!("unknown TableState number {}", req.state),
                    ));
                }
            };
            let rows = api
                .store
                .list_tables(TableFilter {
                    ruleset,
                    state,
                    viewer_bot: None,
                    before,
                    limit: limit + 1,
                })
                .await?;
            let more = rows.len() > limit as usize;
            let rows = &rows[..rows.len().min(limit as usize)];
            let mut tables = Vec::with_capacity(rows.len());
            for t in rows {
                let mut status = stored_status(t)?;
                if let Some(h) = api.tables.loaded(&t.table.id) {
                    status.last_seq = h.shared.last_seq();
                    status.state = h.shared.state();
                }
                tables.push(project::table_to_pb(&status));
            }
            let next_page_token = match (more, rows.last()) {
                (true, Some(last)) => format!("c{}", last.cursor),
                _ => String::new(),
            };
            Ok(pb::ListTablesResponse {
                tables,
                next_page_token,
            })
        })
        .await
    }

    async fn join_table(
        &self,
        request: Request<pb::JoinTableRequest>,
    ) -> Result<Response<pb::JoinTableResponse>, Status> {
        let api = &self.0;
        let local = |request: Request<pb::JoinTableRequest>| async move {
            let bot = api.begin(&request).await?;
            let req = request.into_inner();
            let id = table_id(&req.table_id)?;
            let limit = api.limits().config.seats_per_bot;
            if limit > 0 {
                let seated = api.store.tables_of_bot(bot.id.clone(), Vec::new()).await?;
                if seated.len() >= limit && !seated.contains(&id) {
                    return Err(ServerError::TooManyTables {
                        what: "seated",
                        limit,
                    });
                }
            }
            let seat =
                match req.seat {
                    None => None,
                    Some(s) => Some(u8::try_from(s).map_err(|_| {
                        ServerError::field("seat", format!("seat {s} does not exist"))
                    })?),
                };
            let table = api.status(&id).await?;
            crate::invitation::check_join(&table.meta, &bot.id, &req.invitation_code)?;
            let (seat, status) = api
                .tables
                .call(&id, |reply| Command::Join {
                    bot: bot.id.clone(),
                    name: bot.name.clone(),
                    seat,
                    by_ladder: false,
                    reply,
                })
                .await??;
            api.tables.attach_bot_streams(&bot.id, &id).await;
            tracing::info!(table = %id, seat, "seat taken");
            Ok(pb::JoinTableResponse {
                seat: u32::from(seat),
                table: Some(project::table_to_pb(&status)),
            })
        };
        // Sent again after a silent owner only if it named its seat: a second "any seat" could
        // take a second seat.
        let idempotent = request.get_ref().seat.is_some();
        api.forwardable("JoinTable", request, idempotent, local, |mut c, r| {
            Box::pin(async move { c.join_table(r).await })
        })
        .await
    }

    async fn leave_table(
        &self,
        request: Request<pb::LeaveTableRequest>,
    ) -> Result<Response<pb::LeaveTableResponse>, Status> {
        let api = &self.0;
        let local = |request: Request<pb::LeaveTableRequest>| async move {
            let bot = api.begin(&request).await?;
            let id = table_id(&request.get_ref().table_id)?;
            let status = api
                .tables
                .call(&id, |reply| Command::Leave {
                    bot: bot.id.clone(),
                    reply,
                })
                .await??;
            Ok(pb::LeaveTableResponse {
                table: Some(project::table_to_pb(&status)),
            })
        };
        // Leaving twice is refused (NOT_SEATED), never applied twice.
        api.forwardable("LeaveTable", request, true, local, |mut c, r| {
            Box::pin(async move { c.leave_table(r).await })
        })
        .await
    }

    async fn submit_action(
        &self,
        request: Request<pb::SubmitActionRequest>,
    ) -> Result<Response<pb::SubmitActionResponse>, Status> {
        let api = &self.0;
        let local = |request: Request<pb::SubmitActionRequest>| async move {
            let bot = api.begin(&request).await?;
            api.submit(&bot, request.into_inner()).await
        };
        // A request_id makes a resend safe: the owner (or the table's next owner, replaying its
        // log) answers it with the first result.
        let idempotent = !request.get_ref().request_id.is_empty();
        api.forwardable("SubmitAction", request, idempotent, local, |mut c, r| {
            Box::pin(async move { c.submit_action(r).await })
        })
        .await
    }

    type SubmitActionsStream = SubmitAnswers;

    async fn submit_actions(
        &self,
        request: Request<tonic::Streaming<pb::SubmitActionsRequest>>,
    ) -> Result<Response<Self::SubmitActionsStream>, Status> {
        crate::submits::open(self.0.clone(), request).await
    }

    async fn get_seat_view(
        &self,
        request: Request<pb::GetSeatViewRequest>,
    ) -> Result<Response<pb::GetSeatViewResponse>, Status> {
        let api = &self.0;
        let local = |request: Request<pb::GetSeatViewRequest>| async move {
            let bot = api.begin_read(&request).await?;
            let id = table_id(&request.get_ref().table_id)?;
            let handle = api.tables.get(&id).await?;
            let view = |listed| {
                let bot = bot.id.clone();
                api.tables.call(&id, move |reply| Command::View {
                    bot: bot.clone(),
                    listed,
                    reply,
                })
            };
            let snap = match view(false).await? {
                // A ladder set rated since the actor loaded it is listed in the store.
                Err(ServerError::TablePrivate) if api.listed_in_store(&id).await? => {
                    view(true).await??
                }
                r => r?,
            };
            Ok(pb::GetSeatViewResponse {
                view: Some(project::snapshot_to_pb(&handle.shared.meta, &snap)),
            })
        };
        api.forwardable("GetSeatView", request, true, local, |mut c, r| {
            Box::pin(async move { c.get_seat_view(r).await })
        })
        .await
    }

    type WatchTableStream = MsgStream<TableShape>;

    /// Served by [`WatchTableFrames`] (see `server.rs`); this is the same stream as messages.
    async fn watch_table(
        &self,
        request: Request<pb::WatchTableRequest>,
    ) -> Result<Response<Self::WatchTableStream>, Status> {
        let r = self.0.watch_table(request).await?;
        Ok(r.map(MsgStream))
    }

    type WatchBotStream = MsgStream<BotShape>;

    /// Served by [`WatchBotFrames`] (see `server.rs`); this is the same stream as messages.
    async fn watch_bot(
        &self,
        request: Request<pb::WatchBotRequest>,
    ) -> Result<Response<Self::WatchBotStream>, Status> {
        let r = self.0.watch_bot(request).await?;
        Ok(r.map(MsgStream))
    }

    async fn get_game_record(
        &self,
        request: Request<pb::GetGameRecordRequest>,
    ) -> Result<Response<pb::GetGameRecordResponse>, Status> {
        let api = &self.0;
        api.call("GetGameRecord", async {
            let bot = api.begin_read(&request).await?;
            let id = table_id(&request.get_ref().table_id)?;
            let (t, record) = api.finished_record(&bot, id).await?;
            let seed_sha256 = t
                .table
                .seed
                .parse::<bete_rules::Seed>()
                .map(|s| s.commitment())
                .unwrap_or_default();
            Ok(pb::GetGameRecordResponse {
                record_json: record,
                seed_chosen: t.table.seed_chosen,
                seed_sha256,
            })
        })
        .await
    }
}

impl Api {
    async fn watch_table(
        self: &Arc<Self>,
        request: Request<pb::WatchTableRequest>,
    ) -> Result<Response<Frames<TableShape>>, Status> {
        let api = self;
        api.call("WatchTable", async {
            let bot = api.begin_read(&request).await?;
            // A peer's proxy of a caller's stream (forward.rs) was counted at its edge.
            let from_peer = api.forwarded_by(request.metadata()).is_some();
            // The anonymous spectators share no bot's count (they are bounded by the
            // connection cap and the streams per connection).
            let permit = if bot.id == SPECTATOR || from_peer {
                None
            } else {
                Some(api.limits().open_stream(&bot.id)?)
            };
            let (md, _, req) = request.into_parts();
            let id = table_id(&req.table_id)?;
            let from_seq = req.from_seq;
            let watch = |listed| {
                let bot = bot.id.clone();
                api.tables.call(&id, move |reply| Command::Watch {
                    bot: bot.clone(),
                    from_seq,
                    listed,
                    reply,
                })
            };
            let watched = match watch(false).await.and_then(|r| r) {
                // A ladder set rated since the actor loaded it is listed in the store.
                Err(ServerError::TablePrivate) if api.listed_in_store(&id).await? => {
                    watch(true).await.and_then(|r| r)
                }
                r => r,
            };
            match watched {
                Ok((rx, shared)) => Ok(Box::pin(
                    api.table_stream(&bot, rx, shared, from_seq, permit),
                ) as Frames<TableShape>),
                // A peer plays it: its stream, through this node (forward.rs).
                Err(ServerError::TableElsewhere { addr, .. })
                    if api.forward.is_some() && !from_peer && !addr.is_empty() =>
                {
                    Ok(crate::forward::watch_table_elsewhere(
                        api.clone(),
                        md,
                        bot,
                        id,
                        from_seq,
                        addr,
                        permit,
                    ))
                }
                Err(e) => Err(e),
            }
        })
        .await
    }

    /// This node's WatchTable stream of a table it plays, from the actor's channel.
    pub(crate) fn table_stream(
        &self,
        bot: &BotRow,
        rx: mpsc::Receiver<crate::table::Outbound>,
        shared: Arc<crate::table::Shared>,
        from_seq: Option<u64>,
        permit: Option<crate::limits::StreamPermit>,
    ) -> WatchStream<TableShape> {
        let stream = WatchStream::<TableShape>::new(
            rx,
            self.config.heartbeat_interval,
            self.tables.deps.shutdown.stopped(),
            from_seq.unwrap_or(0),
            None,
            Some(Box::new(move || {
                drop(permit);
                shared.watcher_left.notify_one()
            })),
        );
        // The anonymous spectator has no token to revoke, nor the operator a bot's.
        if bot.id == SPECTATOR || bot.id == OPERATOR {
            stream
        } else {
            stream.revocable(self.auth.revocation(&bot.token_hash))
        }
    }

    async fn watch_bot(
        &self,
        request: Request<pb::WatchBotRequest>,
    ) -> Result<Response<Frames<BotShape>>, Status> {
        let api = self;
        api.call("WatchBot", async {
            let bot = api.begin(&request).await?;
            // Taken at once: a rotation while the bot's tables load still ends the stream.
            let revoked = api.auth.revocation(&bot.token_hash);
            // A peer's stream (the tables this node plays, for the bot's stream on that peer):
            // counted there.
            let from_peer = api.forwarded_by(request.metadata()).is_some();
            let permit = (!from_peer)
                .then(|| api.limits().open_stream(&bot.id))
                .transpose()?;
            let (md, _, req) = request.into_parts();
            let (tx, rx) = mpsc::channel(BOT_STREAM_BUFFER);
            let stream = BotStream::new(api.tables.new_stream_id(), tx);
            // Register first, then list: a join racing with this call attaches the stream either way.
            api.tables.add_bot_stream(&bot.id, stream.clone());
            // `exclusive`: this stream is the bot's only one; the older ones end and their
            // tables let go of them (this one follows the tables below).
            if req.exclusive {
                for old in api.tables.take_other_bot_streams(&bot.id, stream.id) {
                    old.replace();
                }
            }
            let resume = req.from_seq.keys().cloned().collect();
            let mut following = Vec::new();
            for id in api.store.tables_of_bot(bot.id.clone(), resume).await? {
                if let Ok(handle) = api.tables.get_unattached(&id).await {
                    following.push((id, handle));
                }
            }
            // A resume point beyond a table's last event fails the whole stream at open, as
            // WatchTable does, before any table is told of it: such a seq never came from that
            // table (another table's seq, a table restored from an older backup), and a silent
            // fresh snapshot would hide the bug. Entries for tables the bot does not sit at are
            // ignored. The published seq is never behind what a stream was sent.
            let beyond = following.iter().find_map(|(id, handle)| {
                let from_seq = req.from_seq.get(id).copied()?;
                let last_seq = handle.shared.last_seq();
                (from_seq > last_seq).then(|| ServerError::FromSeqOutOfRange {
                    from_seq,
                    last_seq,
                    table_id: Some(id.clone()),
                })
            });
            if let Some(e) = beyond {
                api.tables.remove_bot_stream(&bot.id, stream.id);
                return Err(e);
            }
            for (id, handle) in following {
                handle
                    .tell(Command::WatchBot {
                        bot: bot.id.clone(),
                        stream: stream.clone(),
                        from_seq: req.from_seq.get(&id).copied(),
                    })
                    .await;
            }
            // An entered bot is online now: its ladders may seat it at once.
            api.ladders.poke();
            let tables = api.tables.clone();
            let (bot_id, stream_id, following) = (bot.id.clone(), stream.id, stream.tables.clone());
            // A peer's stream sends no heartbeats: the bot's own node sends them on the merged
            // stream (peers' would be dropped there), and HTTP/2 pings on the peer channels
            // notice a lost peer. Idle, such streams cost the cluster nothing but memory.
            let every = if from_peer {
                PEER_STREAM_QUIET
            } else {
                api.config.heartbeat_interval
            };
            let here = WatchStream::<BotShape>::new(
                rx,
                every,
                api.tables.deps.shutdown.stopped(),
                0,
                Some(stream.cut.clone()),
                Some(Box::new(move || {
                    drop(permit);
                    tables.remove_bot_stream(&bot_id, stream_id);
                    BotStream::ring_closed(&following);
                })),
            )
            .revocable(revoked)
            .replaceable(stream.replaced.stopped());
            // The bot's tables that peers play come through their streams (forward.rs).
            Ok(match (&api.forward, from_peer) {
                (Some(fw), false) => {
                    crate::forward::watch_bot_everywhere(fw.clone(), md, here, req.from_seq)
                }
                _ => Box::pin(here) as Frames<BotShape>,
            })
        })
        .await
    }
}

/// TableService.WatchTable as the server serves it: frames through `FrameCodec`, so an event's
/// shared encoding goes out as is.
#[derive(Clone, Debug)]
pub struct WatchTableFrames(pub Arc<Api>);

impl ServerStreamingService<pb::WatchTableRequest> for WatchTableFrames {
    type Response = Frame<pb::WatchTableResponse>;
    type ResponseStream = Frames<TableShape>;
    type Future = BoxFuture<Response<Self::ResponseStream>, Status>;
    fn call(&mut self, request: Request<pb::WatchTableRequest>) -> Self::Future {
        let api = self.0.clone();
        Box::pin(async move { api.watch_table(request).await })
    }
}

/// TableService.WatchBot as the server serves it (see [`WatchTableFrames`]).
#[derive(Clone, Debug)]
pub struct WatchBotFrames(pub Arc<Api>);

impl ServerStreamingService<pb::WatchBotRequest> for WatchBotFrames {
    type Response = Frame<pb::WatchBotResponse>;
    type ResponseStream = Frames<BotShape>;
    type Future = BoxFuture<Response<Self::ResponseStream>, Status>;
    fn call(&mut self, request: Request<pb::WatchBotRequest>) -> Self::Future {
        let api = self.0.clone();
        Box::pin(async move { api.watch_bot(request).await })
    }
}

/// The client address of a call (the TCP peer; `None` when not over TCP).
pub(crate) fn peer<T>(req: &Request<T>) -> Option<std::net::IpAddr> {
    req.remote_addr().map(|a| a.ip())
}
