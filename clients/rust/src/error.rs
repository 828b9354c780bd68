//! The client's one error type. A server failure keeps everything the server said: the gRPC
//! code, the `ErrorInfo` reason (typed as [`ErrorReason`]) with its metadata, and the
//! `BadRequest` field violations, so callers branch on the reason, never on message text.

use std::collections::HashMap;

use bete_api::pb;
use bete_api::pb::ErrorReason;
use tonic::Code;
use tonic_types::StatusExt;

/// Everything that can go wrong talking to a bete server.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// The server address is not a URL tonic can dial.
    #[error("bad server address {url:?}: {detail} (expected e.g. http://127.0.0.1:50051)")]
    BadUrl { url: String, detail: String },
    /// The TCP/HTTP2 connection could not be made.
    #[error("cannot reach the server at {url} (is `bete-server` running there?)")]
    Connect {
        url: String,
        #[source]
        source: tonic::transport::Error,
    },
    /// The token is not valid ASCII metadata.
    #[error("the token is not a valid header value; use the token RegisterBot returned")]
    BadToken,
    /// The server answered with a failure status.
    #[error(transparent)]
    Rpc(Box<RpcError>),
    /// A response lacked a field the protocol promises (a server bug or version mismatch).
    #[error("the server's {0} response lacks `{1}`")]
    MissingField(&'static str, &'static str),
    /// The call was given up because the caller cancelled it.
    #[error("cancelled")]
    Cancelled,
}

impl Error {
    /// The server's `ErrorInfo` reason, when the failure came from the server with one.
    pub fn reason(&self) -> Option<ErrorReason> {
        match self {
            Error::Rpc(e) => e.reason,
            _ => None,
        }
    }

    /// The gRPC code, when the failure is a status.
    pub fn code(&self) -> Option<Code> {
        match self {
            Error::Rpc(e) => Some(e.code),
            _ => None,
        }
    }

    /// True when retrying the same call later may succeed: the link broke or the server is
    /// restarting.
    pub fn is_transient(&self) -> bool {
        match self {
            Error::Connect { .. } => true,
            Error::Rpc(e) => e.is_transient(),
            _ => false,
        }
    }

    /// The delay the server asked for before a retry (RATE_LIMITED, OVERLOADED).
    pub fn retry_after(&self) -> Option<std::time::Duration> {
        match self {
            Error::Rpc(e) => e.retry_after,
            _ => None,
        }
    }
}

/// A failure status from the server, decoded.
#[derive(Debug, Clone)]
pub struct RpcError {
    /// The gRPC status code.
    pub code: Code,
    /// The `ErrorInfo` reason as a typed value; `None` when the status carried no ErrorInfo
    /// (e.g. a transport failure tonic turned into a status) or an unknown reason.
    pub reason: Option<ErrorReason>,
    /// The reason text as sent (e.g. "STALE_SEQ"), kept even when it is not a known reason.
    pub reason_text: String,
    /// The status message (for humans and logs).
    pub message: String,
    /// `ErrorInfo.metadata`, e.g. "last_seq" for STALE_SEQ, "from_seq" for WATCHER_TOO_SLOW.
    pub metadata: HashMap<String, String>,
    /// `BadRequest` field violations as (field, description), e.g. ("action.cards[1]", ...).
    pub field_violations: Vec<(String, String)>,
    /// How long the server asked the caller to wait before retrying: the `RetryInfo` detail of
    /// a status, or ErrorInfo metadata "retry_after_ms" (which a SubmitActions rejection
    /// carries too). Retries of this client wait at least this long.
    pub retry_after: Option<std::time::Duration>,
}

/// ErrorInfo metadata "retry_after_ms" as a delay.
fn retry_after_ms(metadata: &HashMap<String, String>) -> Option<std::time::Duration> {
    metadata
        .get("retry_after_ms")
        .and_then(|v| v.parse().ok())
        .map(std::time::Duration::from_millis)
}

impl RpcError {
    /// Decodes a tonic status and its rich details.
    pub fn from_status(status: &tonic::Status) -> Self {
        let info = status.get_details_error_info();
        let (reason_text, metadata) = match info {
            Some(info) => (info.reason, info.metadata),
            None => (String::new(), HashMap::new()),
        };
        let reason = typed_reason(&reason_text);
        let field_violations = status
            .get_details_bad_request()
            .map(|b| {
                b.field_violations
                    .into_iter()
                    .map(|v| (v.field, v.description))
                    .collect()
            })
            .unwrap_or_default();
        let retry_after = status
            .get_details_retry_info()
            .and_then(|r| r.retry_delay)
            .or_else(|| retry_after_ms(&metadata));
        RpcError {
            code: status.code(),
            reason,
            reason_text,
            message: status.message().to_string(),
            metadata,
            field_violations,
            retry_after,
        }
    }

    /// Decodes a SubmitActions rejection: the same fields as [`RpcError::from_status`] gives
    /// for the status SubmitAction would have returned (the server builds both from one status).
    pub fn from_rejection(r: pb::ActionRejected) -> Self {
        RpcError {
            code: Code::from_i32(r.code),
            reason: typed_reason(&r.reason),
            reason_text: r.reason,
            message: r.message,
            retry_after: retry_after_ms(&r.metadata),
            metadata: r.metadata,
            field_violations: r
                .field_violations
                .into_iter()
                .map(|v| (v.field, v.description))
                .collect(),
        }
    }

    /// True for failures where the same call may succeed later (UNAVAILABLE, or a connection
    /// that broke mid-call, which tonic reports as UNKNOWN/CANCELLED without an ErrorInfo).
    pub fn is_transient(&self) -> bool {
        if matches!(
            self.reason,
            Some(ErrorReason::RateLimited | ErrorReason::Overloaded)
        ) {
            return true;
        }
        match self.code {
            Code::Unavailable => true,
            Code::Unknown | Code::Cancelled => self.reason.is_none(),
            Code::Internal => self.reason == Some(ErrorReason::Internal),
            _ => false,
        }
    }

    /// A metadata value parsed as a sequence number ("last_seq", "from_seq").
    pub fn seq_metadata(&self, key: &str) -> Option<u64> {
        self.metadata.get(key).and_then(|v| v.parse().ok())
    }

    /// What the user should do next, in one sentence, for the reasons a person meets.
    pub fn hint(&self) -> Option<&'static str> {
        use ErrorReason as R;
        Some(match self.reason? {
            R::TableNotFound => "check the id with `bete tables --server URL`",
            R::Unauthenticated => {
                "pass a token from RegisterBot with --token (or omit it to register a new bot)"
            }
            R::TableFull => "pick another table (`bete tables`) or create one",
            R::SeatTaken => "omit the seat to take the lowest free one",
            R::TableFinished => "the match is over; save it with `bete record --server URL TABLE`",
            R::TableNotFinished => "wait until the match is over, or follow it with `bete watch`",
            R::TablePrivate => {
                "only the bots seated at a private table (and its creator) may read it"
            }
            R::InvitationRequired | R::InvitationWrong => {
                "a private table is joined with the code its creator got: `bete bot --join TABLE --invitation CODE`"
            }
            R::BadConfig => "see RULES.md section 10 for the allowed keys and values",
            R::ShuttingDown => "the server is restarting; try again in a moment",
            R::RateLimited => "slow down and retry after the delay the server gave",
            R::Overloaded => "the server is busy; retry after the delay it gave",
            R::TooManyTables => "finish or leave one of your tables first",
            R::TooManyStreams => "close one of your open streams first",
            R::SeatChangeRefused => "come back to the seat you held in this deal",
            R::TableClosed => "the table was closed without a match; pick another one",
            R::StaleSeq => "refresh the view and decide again",
            R::IllegalAction => "choose one of the legal actions",
            R::StreamReplaced => {
                "another process runs this bot with --exclusive; stop this one (it must not reconnect)"
            }
            _ => return None,
        })
    }
}

/// An `ErrorInfo` reason as sent (e.g. "STALE_SEQ") as a typed value, if it is a known one.
fn typed_reason(text: &str) -> Option<ErrorReason> {
    if text.is_empty() {
        None
    } else {
        ErrorReason::from_str_name(&format!("ERROR_REASON_{text}"))
    }
}

impl std::fmt::Display for RpcError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if self.reason_text.is_empty() {
            write!(f, "{:?}: {}", self.code, self.message)?;
        } else {
            write!(f, "{}: {}", self.reason_text, self.message)?;
        }
        for (field, description) in &self.field_violations {
            // Servers often repeat the violation in the message; say it once.
            if !self.message.contains(description.as_str()) {
                write!(f, "; {field}: {description}")?;
            }
        }
        if let Some(hint) = self.hint() {
            write!(f, " ({hint})")?;
        }
        Ok(())
    }
}

impl std::error::Error for RpcError {}

impl From<tonic::Status> for Error {
    fn from(status: tonic::Status) -> Self {
        Error::Rpc(Box::new(RpcError::from_status(&status)))
    }
}

impl From<RpcError> for Error {
    fn from(error: RpcError) -> Self {
        Error::Rpc(Box::new(error))
    }
}

/// The result type of this crate.
pub type Result<T, E = Error> = std::result::Result<T, E>;
