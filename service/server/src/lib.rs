//! # bete-server
//!
//! The gRPC game service: tables as actors, private views, a durable action log and resumable
//! event streams. [`run`] serves everything on one listener; the `bete-server` binary wraps it.

pub mod accounts;
pub mod admin;
mod analysis;
pub mod auth;
pub mod config;
pub mod conn;
pub mod counts;
pub mod deadline;
pub mod edge;
pub mod forward;
pub mod invitation;
pub mod limits;
pub mod replay;
pub mod seated;
pub mod serve;
pub mod server;
pub mod service;
pub mod showcase;
pub mod submits;
pub mod tls;
pub mod web;
mod web_mux;

/// The store and the cluster's clock live in the crate below (bete-store); these names keep
/// the server's paths to them (`crate::store::Store`, `crate::clock::now_ms`).
pub use bete_store as store;
pub use bete_store::clock;

pub use config::ServerConfig;
pub use server::{RunError, run};

/// Wall-clock time in Unix milliseconds, the cluster's (stored with every log entry; deadlines
/// count from it): see [`clock`].
pub fn now_ms() -> i64 {
    clock::now_ms()
}
