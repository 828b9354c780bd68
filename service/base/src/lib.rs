//! # bete-base
//!
//! The bottom layer of the bete service, under the table runtime, the cluster, the ladder
//! runtime and the edge: every failure and its one mapping to a gRPC status (`status`), ids,
//! observability (`metrics`, `trace`, `progress`), names, the shutdown signal, and the
//! connection's write coalescing. It imports nothing of the crates above it.

pub mod coalesce;
pub mod ids;
pub mod metrics;
pub mod names;
pub mod progress;
pub mod shutdown;
pub mod status;
pub mod trace;
