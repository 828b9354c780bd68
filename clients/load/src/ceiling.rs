//! The transport ceiling: how many raw unary round trips (grpc.health.v1 `Check`) the same
//! connections carry at the same concurrency, measured in the same run against the same server.

use std::time::{Duration, Instant};

use tonic::transport::Channel;
use tonic_health::pb::HealthCheckRequest;
use tonic_health::pb::health_client::HealthClient;

use crate::stats::{Latency, Percentiles, new_histogram};

/// What the ceiling measurement found.
#[derive(Clone, Debug, Default, serde::Serialize, serde::Deserialize)]
pub struct Ceiling {
    /// Successful round trips per second.
    pub rps: f64,
    /// Calls in flight.
    pub concurrency: u32,
    /// How long it ran, in seconds.
    pub seconds: f64,
    /// Successful calls.
    pub calls: u64,
    /// Failed calls.
    pub errors: u64,
    /// Round-trip latency.
    pub latency_ms: Percentiles,
    /// The round trips' histogram (the report carries it encoded, in `histograms`).
    #[serde(skip)]
    pub histogram: Option<hdrhistogram::Histogram<u64>>,
}

/// Runs `concurrency` callers spread over `channels` for `duration`.
pub async fn measure(channels: &[Channel], concurrency: u32, duration: Duration) -> Ceiling {
    if channels.is_empty() || duration.is_zero() {
        return Ceiling::default();
    }
    let started = Instant::now();
    let until = started + duration;
    let mut tasks = tokio::task::JoinSet::new();
    for i in 0..concurrency as usize {
        let mut client = HealthClient::new(channels[i % channels.len()].clone());
        tasks.spawn(async move {
            let mut h = new_histogram();
            let (mut ok, mut failed) = (0u64, 0u64);
            while Instant::now() < until {
                let t0 = Instant::now();
                match client
                    .check(HealthCheckRequest {
                        service: String::new(),
                    })
                    .await
                {
                    Ok(_) => {
                        ok += 1;
                        h.saturating_record((t0.elapsed().as_micros() as u64).max(1));
                    }
                    Err(_) => failed += 1,
                }
            }
            (ok, failed, h)
        });
    }
    let latency = Latency::default();
    let (mut calls, mut errors) = (0, 0);
    while let Some(r) = tasks.join_next().await {
        if let Ok((ok, failed, h)) = r {
            calls += ok;
            errors += failed;
            latency.merge(&h);
        }
    }
    let seconds = started.elapsed().as_secs_f64();
    Ceiling {
        rps: calls as f64 / seconds,
        concurrency,
        seconds,
        calls,
        errors,
        latency_ms: latency.summary(),
        histogram: Some(latency.histogram()),
    }
}
