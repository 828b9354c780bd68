//! Every failure of the server, and the one place where it becomes a gRPC status.
//!
//! Each status carries a `google.rpc.ErrorInfo` with domain `bete.v1` and a reason named in
//! `proto/bete/v1/errors.proto` (`ErrorReason` without its prefix); malformed input adds a
//! `google.rpc.BadRequest` naming each bad field.

use std::collections::HashMap;
use std::time::Duration;

use bete_api::pb;
use bete_rules::ActionError;
use thiserror::Error;
use tonic::{Code, Status};
use tonic_types::{ErrorDetails, StatusExt};

use bete_store::StoreError;

/// `google.rpc.ErrorInfo.domain` of every error.
pub const DOMAIN: &str = "bete.v1";

/// One bad field of a request.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FieldViolation {
    /// Path of the field, e.g. `action.cards[1]`.
    pub field: String,
    pub description: String,
}

/// Why a call failed. Messages never name cards hidden from the caller.
#[derive(Clone, Debug, Error, PartialEq, Eq)]
pub enum ServerError {
    #[error("invalid request: {}", join(.0))]
    InvalidArgument(Vec<FieldViolation>),
    #[error("bad config: {message}")]
    BadConfig { field: String, message: String },
    #[error("bad search budget: {field} {message}")]
    SearchBudget { field: String, message: String },
    /// The engine's reason, which only ever names the caller's own cards.
    #[error("{0}")]
    IllegalAction(String),
    #[error("expected_seq {expected} is stale: the table is at seq {last_seq}")]
    StaleSeq { expected: u64, last_seq: u64 },
    #[error("no table has id {0:?}")]
    TableNotFound(String),
    #[error("{0}")]
    Unauthenticated(&'static str),
    #[error("not your turn: seat {to_act} is to act")]
    NotYourSeat { to_act: u8 },
    #[error("nobody is to act now")]
    NobodyToAct,
    #[error("you are not seated at this table, so you cannot act")]
    SpectatorCannotAct,
    #[error("the table has no free seat")]
    TableFull,
    #[error("seat {0} is already taken")]
    SeatTaken(u8),
    #[error("the match is over")]
    TableFinished,
    #[error("you hold no seat at this table")]
    NotSeated,
    /// `table_id`: WatchBot's entry for that table (WatchTable's request names one table).
    #[error("{} {from_seq} is beyond the table's last event {last_seq}", from_seq_field(.table_id.as_deref()))]
    FromSeqOutOfRange {
        from_seq: u64,
        last_seq: u64,
        table_id: Option<String>,
    },
    #[error("the stream fell behind and was cut; resume with from_seq {from_seq}")]
    WatcherTooSlow { table_id: String, from_seq: u64 },
    #[error("the server is shutting down")]
    ShuttingDown,
    #[error("request_id {0:?} was already used for a different action")]
    DuplicateRequestConflict(String),
    #[error("you already sit at seat {0} of this table")]
    AlreadySeated(u8),
    #[error("the table is private and you are not seated at it")]
    TablePrivate,
    #[error("the match is not over yet")]
    TableNotFinished,
    #[error("internal error: {0}")]
    Internal(String),
    /// An administrative call without the operator's admin token.
    #[error("{0}")]
    AdminRequired(&'static str),
    /// Open signup is off: accounts come from the operator, bots from an account token.
    #[error("{0}")]
    SignupClosed(&'static str),
    #[error("no ladder has id {0:?}")]
    LadderNotFound(String),
    #[error("this bot has already entered ladder {0:?}; leave it first to enter again")]
    LadderAlreadyEntered(String),
    #[error("this bot has not entered ladder {0:?}")]
    LadderNotEntered(String),
    /// A bot taken off a ladder for timeouts enters again before its cooldown is over.
    #[error(
        "this bot was taken off ladder {ladder:?} for timed-out decisions ({removals} times): it \
         may enter again in {} s",
        .retry_after.as_secs().max(1)
    )]
    LadderCooldown {
        ladder: String,
        removals: u32,
        retry_after: Duration,
    },
    /// A bot taken off its ladder acts at a ladder table where its seat is auto-played.
    #[error(
        "this bot was taken off the ladder of table {0:?}: its seat is played by auto-moves \
         until the table ends"
    )]
    LadderRemoved(String),
    /// Ladder tables are seated by the scheduler only.
    #[error("table {0:?} is a ladder table: its seats are given by the ladder's scheduler")]
    LadderTable(String),
    #[error("this account already has a bot {name:?} of version {version:?}")]
    BotVersionExists { name: String, version: String },
    #[error("the account has {0} bots, the most it may have")]
    AccountBotLimit(u32),
    /// A record sent to ReplayRecord that is not one, or does not replay; names what is wrong.
    #[error("not a replayable record: {0}")]
    BadRecord(String),
    /// A rate limit (per bot, per client address, per kind of call): retry after the delay.
    #[error("too many {what}: retry in {} ms", .retry_after.as_millis())]
    RateLimited {
        what: &'static str,
        retry_after: Duration,
    },
    /// A budget (of an address, an account or the whole server) is spent: bots, accounts,
    /// waiting tables, failed authentications. `budget` names it (docs/security.md); a retry
    /// after the delay may pass (as tables end or expire, as the rate refills).
    #[error("{what}: the {budget} budget is spent; retry in {} ms", .retry_after.as_millis())]
    BudgetExhausted {
        budget: &'static str,
        what: &'static str,
        retry_after: Duration,
    },
    /// The bot already has `limit` tables of this kind that are not finished.
    #[error("you already have {limit} {what} tables that are not finished (the limit)")]
    TooManyTables { what: &'static str, limit: usize },
    /// A seat change within a deal after seeing another seat's hand.
    #[error(
        "you held seat {held} in this deal and saw its hand: you may come back to seat {held} \
         only, until the deal ends"
    )]
    SeatChangeRefused { held: u8 },
    /// The table was closed without a finished match (by an operator, or it expired waiting).
    #[error("the table was closed ({0}); it has no match to play or record")]
    TableClosed(String),
    /// The server sheds load: too many calls in progress.
    #[error("the server is overloaded: retry in {} ms", .retry_after.as_millis())]
    Overloaded { retry_after: Duration },
    /// The bot has `limit` streams open already.
    #[error("you already have {limit} streams open (the limit)")]
    TooManyStreams { limit: usize },
    /// A page's WebSocket (web_mux.rs) holds `limit` subscriptions (live streams) already.
    #[error(
        "at most {limit} live streams may be open on one page connection (the limit): \
         close a table or ladder page in this tab first"
    )]
    TooManySubscriptions { limit: usize },
    /// The database cannot be reached (PostgreSQL restarting): nothing was applied, or nothing
    /// is known to have been; a retry with the same request id is applied at most once.
    #[error("the server's database is unavailable; retry later with the same request_id")]
    StoreUnavailable,
    /// Another node of the cluster plays the table.
    #[error("table {table} is played by node {node:?} ({addr}); retry")]
    TableElsewhere {
        table: String,
        node: String,
        addr: String,
    },
    /// The token was replaced by BotService.RotateBotToken.
    #[error(
        "this token was revoked by the bot's owner (BotService.RotateBotToken): use the new one"
    )]
    TokenRevoked,
    /// A WatchBot stream ended because the same bot opened one with `exclusive` set.
    #[error(
        "this WatchBot stream was replaced: the bot opened another with `exclusive` set (another \
         process runs this bot); do not reconnect from this one"
    )]
    StreamReplaced,
    /// RotateBotToken by someone other than the bot's owner.
    #[error("{0}")]
    NotBotOwner(&'static str),
    #[error("no bot has id {0:?}")]
    BotNotFound(String),
    /// A call forwarded to the node that plays the table got no answer from it (it died or
    /// cannot be reached): not known to be applied; the table moves to a live node within a
    /// lease, so a retry with the same request_id after `retry_after` is applied once.
    #[error(
        "node {node:?} ({addr}), which plays table {table}, did not answer; retry in {} ms with \
         the same request_id",
        .retry_after.as_millis()
    )]
    OwnerUnreachable {
        table: String,
        node: String,
        addr: String,
        retry_after: Duration,
    },
    /// JoinTable on a private casual table without its invitation code.
    #[error(
        "this table is private: join it with the invitation code its creator got \
         (JoinTableRequest.invitation_code)"
    )]
    InvitationRequired,
    /// JoinTable on a private casual table with a code that is not its own.
    #[error("this invitation code is not the table's: ask the table's creator for it")]
    InvitationWrong,
    /// EnterLadder by a bot whose name looks like the name of a bot of another owner already
    /// entered in the ladder (the entered name is public in the standings).
    #[error(
        "the name looks like {taken:?}, the name of a bot already entered in ladder {ladder:?} \
         (the same letters to the eye): register the bot under a name of its own"
    )]
    NameLooksTaken { ladder: String, taken: String },
    /// The call's deadline (`grpc-timeout`) passed before the server finished it.
    #[error("the call's deadline ({timeout_ms} ms, from its grpc-timeout) passed")]
    DeadlineExceeded { timeout_ms: u64 },
    /// The owner's own answer to a call this node forwarded: passed on as it came (its status
    /// was built by the owner's status.rs).
    #[error("{message}")]
    Relayed {
        code: i32,
        message: String,
        details: Vec<u8>,
    },
}

/// Most field violations a status carries: 5,000 bad `house_bots` entries once made a 207 KB
/// trailer, larger than clients accept as metadata, so they saw a transport error instead.
pub const MAX_VIOLATIONS: usize = 16;
/// Longest status message, field path and violation description, in bytes (each may quote the
/// caller's input).
pub const MAX_MESSAGE_BYTES: usize = 1024;
const MAX_FIELD_BYTES: usize = 128;
const MAX_DESCRIPTION_BYTES: usize = 256;
/// When to retry after STORE_UNAVAILABLE: PostgreSQL restarting or failing over is back in
/// seconds, and a retry with the same request id is applied at most once.
const STORE_RETRY_AFTER: Duration = Duration::from_secs(1);

/// `s` cut to at most `max` bytes on a character boundary, with `…` when cut.
pub fn bounded(s: &str, max: usize) -> String {
    if s.len() <= max {
        return s.to_string();
    }
    let mut end = max.saturating_sub('…'.len_utf8());
    while !s.is_char_boundary(end) {
        end -= 1;
    }
    format!("{}…", &s[..end])
}

/// The request field a `from_seq` came from: `from_seq`, or WatchBot's `from_seq[<table id>]`.
fn from_seq_field(table_id: Option<&str>) -> String {
    match table_id {
        Some(t) => format!("from_seq[{t}]"),
        None => "from_seq".to_string(),
    }
}

fn join(v: &[FieldViolation]) -> String {
    let mut s = v
        .iter()
        .take(MAX_VIOLATIONS)
        .map(|f| {
            format!(
                "{}: {}",
                bounded(&f.field, MAX_FIELD_BYTES),
                bounded(&f.description, MAX_DESCRIPTION_BYTES)
            )
        })
        .collect::<Vec<_>>()
        .join("; ");
    if v.len() > MAX_VIOLATIONS {
        s.push_str(&format!("; and {} more", v.len() - MAX_VIOLATIONS));
    }
    s
}

impl ServerError {
    /// A single bad field.
    pub fn field(field: impl Into<String>, description: impl Into<String>) -> ServerError {
        ServerError::InvalidArgument(vec![FieldViolation {
            field: field.into(),
            description: description.into(),
        }])
    }

    /// The reason sent in ErrorInfo: an `ErrorReason` name without its prefix.
    pub fn reason(&self) -> &'static str {
        match self {
            ServerError::InvalidArgument(_) => "INVALID_ARGUMENT",
            ServerError::BadConfig { .. } => "BAD_CONFIG",
            ServerError::SearchBudget { .. } => "SEARCH_BUDGET_OUT_OF_RANGE",
            ServerError::IllegalAction(_) | ServerError::NobodyToAct => "ILLEGAL_ACTION",
            ServerError::StaleSeq { .. } => "STALE_SEQ",
            ServerError::TableNotFound(_) => "TABLE_NOT_FOUND",
            ServerError::Unauthenticated(_) => "UNAUTHENTICATED",
            ServerError::NotYourSeat { .. } => "NOT_YOUR_SEAT",
            ServerError::SpectatorCannotAct => "SPECTATOR_CANNOT_ACT",
            ServerError::TableFull => "TABLE_FULL",
            ServerError::SeatTaken(_) => "SEAT_TAKEN",
            ServerError::TableFinished => "TABLE_FINISHED",
            ServerError::NotSeated => "NOT_SEATED",
            ServerError::FromSeqOutOfRange { .. } => "FROM_SEQ_OUT_OF_RANGE",
            ServerError::WatcherTooSlow { .. } => "WATCHER_TOO_SLOW",
            ServerError::ShuttingDown => "SHUTTING_DOWN",
            ServerError::DuplicateRequestConflict(_) => "DUPLICATE_REQUEST_CONFLICT",
            ServerError::AlreadySeated(_) => "ALREADY_SEATED",
            ServerError::TablePrivate => "TABLE_PRIVATE",
            ServerError::TableNotFinished => "TABLE_NOT_FINISHED",
            ServerError::Internal(_) => "INTERNAL",
            ServerError::AdminRequired(_) => "ADMIN_REQUIRED",
            ServerError::SignupClosed(_) => "SIGNUP_CLOSED",
            ServerError::LadderNotFound(_) => "LADDER_NOT_FOUND",
            ServerError::LadderAlreadyEntered(_) => "LADDER_ALREADY_ENTERED",
            ServerError::LadderNotEntered(_) => "LADDER_NOT_ENTERED",
            ServerError::LadderCooldown { .. } => "LADDER_COOLDOWN",
            ServerError::LadderRemoved(_) => "LADDER_REMOVED",
            ServerError::LadderTable(_) => "LADDER_TABLE",
            ServerError::BotVersionExists { .. } => "BOT_VERSION_EXISTS",
            ServerError::AccountBotLimit(_) => "ACCOUNT_BOT_LIMIT",
            ServerError::BadRecord(_) => "BAD_RECORD",
            ServerError::RateLimited { .. } => "RATE_LIMITED",
            ServerError::BudgetExhausted { .. } => "BUDGET_EXHAUSTED",
            ServerError::TooManyTables { .. } => "TOO_MANY_TABLES",
            ServerError::SeatChangeRefused { .. } => "SEAT_CHANGE_REFUSED",
            ServerError::TableClosed(_) => "TABLE_CLOSED",
            ServerError::Overloaded { .. } => "OVERLOADED",
            ServerError::TooManyStreams { .. } | ServerError::TooManySubscriptions { .. } => {
                "TOO_MANY_STREAMS"
            }
            ServerError::StoreUnavailable => "STORE_UNAVAILABLE",
            ServerError::TableElsewhere { .. } => "TABLE_ELSEWHERE",
            ServerError::TokenRevoked => "TOKEN_REVOKED",
            ServerError::StreamReplaced => "STREAM_REPLACED",
            ServerError::NotBotOwner(_) => "NOT_BOT_OWNER",
            ServerError::BotNotFound(_) => "BOT_NOT_FOUND",
            ServerError::OwnerUnreachable { .. } => "OWNER_UNREACHABLE",
            ServerError::InvitationRequired => "INVITATION_REQUIRED",
            ServerError::InvitationWrong => "INVITATION_WRONG",
            ServerError::NameLooksTaken { .. } => "NAME_LOOKS_TAKEN",
            ServerError::DeadlineExceeded { .. } => "DEADLINE_EXCEEDED",
            // Logged only: the status is the owner's, with the owner's reason.
            ServerError::Relayed { .. } => "RELAYED",
        }
    }

    pub fn code(&self) -> Code {
        match self {
            ServerError::InvalidArgument(_)
            | ServerError::BadConfig { .. }
            | ServerError::SearchBudget { .. }
            | ServerError::BadRecord(_) => Code::InvalidArgument,
            ServerError::IllegalAction(_)
            | ServerError::NobodyToAct
            | ServerError::SeatTaken(_)
            | ServerError::TableFinished
            | ServerError::NotSeated
            | ServerError::AlreadySeated(_)
            | ServerError::TableNotFinished
            | ServerError::SeatChangeRefused { .. }
            | ServerError::TableClosed(_) => Code::FailedPrecondition,
            ServerError::StaleSeq { .. } => Code::Aborted,
            ServerError::TableNotFound(_) => Code::NotFound,
            ServerError::Unauthenticated(_) => Code::Unauthenticated,
            ServerError::NotYourSeat { .. }
            | ServerError::SpectatorCannotAct
            | ServerError::TablePrivate => Code::PermissionDenied,
            ServerError::TableFull
            | ServerError::WatcherTooSlow { .. }
            | ServerError::RateLimited { .. }
            | ServerError::BudgetExhausted { .. }
            | ServerError::TooManyTables { .. }
            | ServerError::TooManyStreams { .. }
            | ServerError::TooManySubscriptions { .. } => Code::ResourceExhausted,
            ServerError::FromSeqOutOfRange { .. } => Code::OutOfRange,
            ServerError::ShuttingDown
            | ServerError::Overloaded { .. }
            | ServerError::StoreUnavailable
            | ServerError::TableElsewhere { .. } => Code::Unavailable,
            ServerError::DuplicateRequestConflict(_) => Code::AlreadyExists,
            ServerError::Internal(_) => Code::Internal,
            ServerError::AdminRequired(_) | ServerError::SignupClosed(_) => Code::PermissionDenied,
            ServerError::LadderNotFound(_) => Code::NotFound,
            ServerError::LadderAlreadyEntered(_) | ServerError::BotVersionExists { .. } => {
                Code::AlreadyExists
            }
            ServerError::LadderNotEntered(_)
            | ServerError::LadderTable(_)
            | ServerError::LadderCooldown { .. }
            | ServerError::LadderRemoved(_) => Code::FailedPrecondition,
            ServerError::AccountBotLimit(_) => Code::ResourceExhausted,
            ServerError::TokenRevoked => Code::Unauthenticated,
            ServerError::StreamReplaced => Code::Aborted,
            ServerError::NotBotOwner(_) => Code::PermissionDenied,
            ServerError::BotNotFound(_) => Code::NotFound,
            ServerError::OwnerUnreachable { .. } => Code::Unavailable,
            ServerError::InvitationRequired | ServerError::InvitationWrong => {
                Code::PermissionDenied
            }
            ServerError::NameLooksTaken { .. } => Code::AlreadyExists,
            ServerError::DeadlineExceeded { .. } => Code::DeadlineExceeded,
            ServerError::Relayed { code, .. } => Code::from_i32(*code),
        }
    }

    fn metadata(&self) -> HashMap<String, String> {
        let mut m = HashMap::new();
        match self {
            ServerError::StaleSeq { last_seq, .. } => {
                m.insert("last_seq".into(), last_seq.to_string());
            }
            ServerError::FromSeqOutOfRange {
                last_seq, table_id, ..
            } => {
                m.insert("last_seq".into(), last_seq.to_string());
                if let Some(t) = table_id {
                    m.insert("table_id".into(), t.clone());
                }
            }
            ServerError::WatcherTooSlow { table_id, from_seq } => {
                m.insert("table_id".into(), table_id.clone());
                m.insert("from_seq".into(), from_seq.to_string());
            }
            ServerError::NotYourSeat { to_act } => {
                m.insert("to_act".into(), to_act.to_string());
            }
            ServerError::TableNotFound(id)
            | ServerError::LadderTable(id)
            | ServerError::LadderRemoved(id) => {
                m.insert("table_id".into(), bounded(id, MAX_FIELD_BYTES));
            }
            ServerError::TooManyTables { limit, .. }
            | ServerError::TooManyStreams { limit }
            | ServerError::TooManySubscriptions { limit } => {
                m.insert("limit".into(), limit.to_string());
            }
            ServerError::SeatChangeRefused { held } => {
                m.insert("seat".into(), held.to_string());
            }
            ServerError::TableElsewhere { table, node, addr } => {
                m.insert("table_id".into(), bounded(table, MAX_FIELD_BYTES));
                m.insert("node".into(), node.clone());
                m.insert("node_addr".into(), addr.clone());
            }
            ServerError::OwnerUnreachable {
                table,
                node,
                addr,
                retry_after,
            } => {
                m.insert("table_id".into(), bounded(table, MAX_FIELD_BYTES));
                m.insert("node".into(), node.clone());
                m.insert("node_addr".into(), addr.clone());
                m.insert(
                    "retry_after_ms".into(),
                    retry_after.as_millis().max(1).to_string(),
                );
            }
            ServerError::BotNotFound(id) => {
                m.insert("bot_id".into(), bounded(id, MAX_FIELD_BYTES));
            }
            ServerError::LadderNotFound(id)
            | ServerError::LadderAlreadyEntered(id)
            | ServerError::LadderNotEntered(id)
            | ServerError::NameLooksTaken { ladder: id, .. } => {
                m.insert("ladder_id".into(), id.clone());
            }
            ServerError::BudgetExhausted {
                budget,
                retry_after,
                ..
            } => {
                m.insert("budget".into(), (*budget).to_string());
                m.insert(
                    "retry_after_ms".into(),
                    retry_after.as_millis().max(1).to_string(),
                );
            }
            ServerError::LadderCooldown {
                ladder,
                removals,
                retry_after,
            } => {
                m.insert("ladder_id".into(), ladder.clone());
                m.insert("removals".into(), removals.to_string());
                m.insert(
                    "retry_after_ms".into(),
                    retry_after.as_millis().max(1).to_string(),
                );
            }
            ServerError::RateLimited { retry_after, .. }
            | ServerError::Overloaded { retry_after } => {
                // Also here, not only in RetryInfo: a SubmitActions rejection carries metadata.
                m.insert(
                    "retry_after_ms".into(),
                    retry_after.as_millis().max(1).to_string(),
                );
            }
            ServerError::StoreUnavailable => {
                m.insert(
                    "retry_after_ms".into(),
                    STORE_RETRY_AFTER.as_millis().to_string(),
                );
            }
            _ => {}
        }
        m
    }

    /// How long the caller should wait before retrying, for the errors that say so.
    pub fn retry_after(&self) -> Option<Duration> {
        match self {
            ServerError::RateLimited { retry_after, .. }
            | ServerError::BudgetExhausted { retry_after, .. }
            | ServerError::Overloaded { retry_after }
            | ServerError::OwnerUnreachable { retry_after, .. }
            | ServerError::LadderCooldown { retry_after, .. } => Some(*retry_after),
            // The database restarting, failing over or too slow to answer: seconds, typically.
            ServerError::StoreUnavailable => Some(STORE_RETRY_AFTER),
            _ => None,
        }
    }

    /// The gRPC status for this error. Bounded in size whatever the input: at most
    /// [`MAX_VIOLATIONS`] violations (then one saying how many more), each field and
    /// description cut, the message cut to [`MAX_MESSAGE_BYTES`].
    pub fn to_status(&self) -> Status {
        if let ServerError::Relayed {
            code,
            message,
            details,
        } = self
        {
            return Status::with_details(
                Code::from_i32(*code),
                message.clone(),
                details.clone().into(),
            );
        }
        let mut details = ErrorDetails::new();
        details.set_error_info(self.reason(), DOMAIN, self.metadata());
        match self {
            ServerError::InvalidArgument(fields) => {
                for f in fields.iter().take(MAX_VIOLATIONS) {
                    details.add_bad_request_violation(
                        bounded(&f.field, MAX_FIELD_BYTES),
                        bounded(&f.description, MAX_DESCRIPTION_BYTES),
                    );
                }
                if fields.len() > MAX_VIOLATIONS {
                    details.add_bad_request_violation(
                        "(request)",
                        format!("and {} more bad fields", fields.len() - MAX_VIOLATIONS),
                    );
                }
            }
            ServerError::BadConfig { field, message }
            | ServerError::SearchBudget { field, message } => {
                details.add_bad_request_violation(
                    bounded(field, MAX_FIELD_BYTES),
                    bounded(message, MAX_DESCRIPTION_BYTES),
                );
            }
            ServerError::FromSeqOutOfRange { table_id, .. } => {
                details.add_bad_request_violation(
                    from_seq_field(table_id.as_deref()),
                    "is beyond the table's last event (metadata last_seq)",
                );
            }
            _ => {}
        }
        if let Some(delay) = self.retry_after() {
            details.set_retry_info(Some(delay));
        }
        Status::with_error_details(
            self.code(),
            bounded(&self.to_string(), MAX_MESSAGE_BYTES),
            details,
        )
    }

    /// What a SubmitActions stream answers for a refused request: built from the very status
    /// [`ServerError::to_status`] gives the unary SubmitAction, so the two never disagree.
    pub fn to_rejection(&self) -> pb::ActionRejected {
        rejection(&self.to_status())
    }

    /// The engine refused an action (the game is unchanged).
    pub fn from_action(err: &ActionError) -> ServerError {
        match err {
            ActionError::NotYourTurn { to_act } => ServerError::NotYourSeat { to_act: to_act.0 },
            ActionError::MatchOver => ServerError::TableFinished,
            other => ServerError::IllegalAction(other.to_string()),
        }
    }
}

/// The start of tonic's message when a request is over its decoding limit
/// (`max_decoding_message_size`): it answers `OUT_OF_RANGE` itself, before any handler runs,
/// and without an `ErrorInfo`.
const TONIC_TOO_LARGE: &str = "Error, decoded message length too large: found ";

/// tonic's bare refusal of a request over the transport limit, as the refusal the request-size
/// gate gives (`INVALID_ARGUMENT` on field `(request)`, with its `ErrorInfo`): one answer for
/// "too large" whatever the size. `limit` is the configured request limit. `None` for every
/// other status.
pub fn over_transport_limit(status: &Status, limit: usize) -> Option<ServerError> {
    if status.code() != Code::OutOfRange || !status.details().is_empty() {
        return None;
    }
    let rest = status.message().strip_prefix(TONIC_TOO_LARGE)?;
    let len: u64 = rest.split(' ').next()?.parse().ok()?;
    Some(ServerError::field(
        "(request)",
        format!("the request is {len} bytes; the limit is {limit}"),
    ))
}

/// A status's code, message, `ErrorInfo` and `BadRequest`, field by field, as an
/// `ActionRejected`.
fn rejection(status: &Status) -> pb::ActionRejected {
    let details = status.get_error_details();
    let (reason, domain, metadata) = match details.error_info() {
        Some(info) => (
            info.reason.clone(),
            info.domain.clone(),
            info.metadata.clone(),
        ),
        None => Default::default(),
    };
    let field_violations = details
        .bad_request()
        .map(|b| {
            b.field_violations
                .iter()
                .map(|v| pb::FieldViolation {
                    field: v.field.clone(),
                    description: v.description.clone(),
                })
                .collect()
        })
        .unwrap_or_default();
    pb::ActionRejected {
        code: status.code() as i32,
        message: status.message().to_string(),
        reason,
        domain,
        metadata,
        field_violations,
    }
}

impl From<ServerError> for Status {
    fn from(e: ServerError) -> Status {
        e.to_status()
    }
}

/// A field the protobuf conversions refused (bete-api) is a bad argument naming that field.
impl From<bete_api::convert::FieldError> for ServerError {
    fn from(e: bete_api::convert::FieldError) -> ServerError {
        ServerError::InvalidArgument(vec![FieldViolation {
            field: e.field,
            description: e.description,
        }])
    }
}

impl From<StoreError> for ServerError {
    /// SQLite's own wording stays in the server's log: it names files, statements and
    /// constraints, none of which a client can act on.
    fn from(e: StoreError) -> ServerError {
        match e {
            StoreError::Closed => ServerError::ShuttingDown,
            StoreError::Unavailable(why) => {
                tracing::warn!(%why, "the database is unavailable");
                ServerError::StoreUnavailable
            }
            StoreError::LadderFenced { leader } => {
                tracing::warn!(%leader, "a ladder write of a former leader was fenced");
                ServerError::StoreUnavailable
            }
            StoreError::Random(why) => {
                ServerError::Internal(format!("the OS random source failed: {why}"))
            }
            StoreError::Fenced { table, owner } => ServerError::TableElsewhere {
                table,
                node: owner,
                addr: String::new(),
            },
            other => {
                tracing::error!(error = %other, "store error");
                ServerError::Internal("the store failed; retrying later is safe".into())
            }
        }
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests;
