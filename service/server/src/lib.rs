//! # bete-server
//!
//! The gRPC game service: tables as actors, private views, a durable action log and resumable
//! event streams.

pub mod metrics;
pub mod status;
pub mod store;
pub mod table;

/// Wall-clock time in Unix milliseconds (stored with every log entry; deadlines count from it).
pub fn now_ms() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_millis() as i64)
        .unwrap_or(0)
}
