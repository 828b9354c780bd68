//! # bete-server
//!
//! The gRPC game service: tables as actors, private views, a durable action log and resumable
//! event streams.

pub mod store;
