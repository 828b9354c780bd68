//! # bete-cluster
//!
//! A node's part in a cluster on PostgreSQL: it renews its lease, leads the ladders when no
//! live node does, shares which bots are online here, drops the tables another node has claimed
//! from it, and claims (and replays) the tables of nodes whose lease lapsed.
//!
//! Safety does not rest on this loop's timing: every append is fenced by the epoch in the store
//! (store/postgres.rs). The loop only makes a paused node let go promptly and a lost node's
//! tables move within a lease and one pass.

use std::sync::Arc;
use std::time::Duration;

use tokio_util::sync::CancellationToken;

pub mod leadership;

use crate::leadership::Leadership;
use bete_store::PgStore;
use bete_table::registry::Tables;

/// Orphaned tables claimed per pass (the rest on the next passes).
const CLAIMS_PER_PASS: i64 = 200;

/// Why the node must stop serving.
#[derive(Debug, thiserror::Error)]
#[error("this node's registration was taken over by another process with the same node id")]
pub struct RegistrationLost;

/// Runs until `stop`; returns an error when the node's registration is gone.
///
/// Two loops: the lease's renewal, in a task of its own on a connection of its own with a
/// deadline of its own (pg_lease.rs), so that nothing the other loop waits for (a slow
/// statement, a claim, a peer's locks) can make this node lose its tables; and the passes
/// that lead the ladders, drop lost tables and claim orphaned ones.
pub async fn run(
    store: PgStore,
    tables: Arc<Tables>,
    leadership: Arc<Leadership>,
    stop: CancellationToken,
) -> Result<(), RegistrationLost> {
    let renewing = tokio::spawn(renew_loop(
        store.clone(),
        tables.deps.metrics.clone(),
        stop.clone(),
    ));
    let aborts = renewing.abort_handle();
    let result = tokio::select! {
        r = renewing => r.unwrap_or(Ok(())),
        () = passes(store, tables, leadership, stop) => Ok(()),
    };
    aborts.abort();
    result
}

/// Renews the lease every pass interval, each renewal within half a lease.
async fn renew_loop(
    store: PgStore,
    metrics: Arc<bete_base::metrics::Metrics>,
    stop: CancellationToken,
) -> Result<(), RegistrationLost> {
    let every = pass_interval(store.node().lease_ttl);
    let mut tick = tokio::time::interval(every);
    tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    let mut conn = store.lease_conn();
    loop {
        tokio::select! {
            () = stop.cancelled() => return Ok(()),
            _ = tick.tick() => {}
        }
        // Half a lease: a renewal stuck that long is given up for one on a fresh connection,
        // which still has the other half to land in.
        match store.renew(&mut conn, store.node().lease_ttl / 2).await {
            Ok(true) => {
                renewed(&metrics, "ok");
                metrics
                    .clock_correction
                    .set(bete_store::clock::correction_ms() as f64 / 1000.0);
            }
            Ok(false) => {
                renewed(&metrics, "failed");
                return Err(RegistrationLost);
            }
            Err(e) => {
                // PostgreSQL away or slow: nothing can be written past the lease anyway;
                // tables stay fenced.
                renewed(&metrics, "failed");
                tracing::warn!(error = %e, "cannot renew the node's lease");
            }
        }
    }
}

/// The cluster's passes, every pass interval, until `stop`.
async fn passes(
    store: PgStore,
    tables: Arc<Tables>,
    leadership: Arc<Leadership>,
    stop: CancellationToken,
) {
    let every = pass_interval(store.node().lease_ttl);
    let mut tick = tokio::time::interval(every);
    tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        tokio::select! {
            () = stop.cancelled() => return,
            _ = tick.tick() => {}
        }
        let metrics = &tables.deps.metrics;
        match store.live_nodes().await {
            Ok(n) => {
                metrics.nodes_live.set(n);
            }
            Err(e) => tracing::warn!(error = %e, "cannot count the live nodes"),
        }
        // Ladder scheduling: lead if no live node does; learn who is online anywhere.
        match store.lead_ladders().await {
            Ok(epoch) => {
                leadership.set(epoch);
                metrics.ladder_leader.set(i64::from(epoch.is_some()));
            }
            Err(e) => tracing::warn!(error = %e, "cannot check the ladder leader"),
        }
        match store.sync_online(tables.online_bots()).await {
            Ok(bots) => leadership.set_online(bots),
            Err(e) => tracing::warn!(error = %e, "cannot share the bots online"),
        }
        match store.lost_tables().await {
            Ok(lost) => {
                for (id, taken_by) in lost {
                    // Counted only when a peer really took it (not a table released).
                    if let Some(peer) = &taken_by {
                        metrics.tables_lost.inc();
                        tracing::warn!(table = %id, to = %peer, "a peer took this node's table");
                    }
                    tables.moved(&id, taken_by.as_deref().unwrap_or("")).await;
                }
            }
            Err(e) => tracing::warn!(error = %e, "cannot check the tables held"),
        }
        if stop.is_cancelled() {
            return;
        }
        match store.orphans(CLAIMS_PER_PASS).await {
            Ok(ids) => {
                for id in ids {
                    if stop.is_cancelled() {
                        return;
                    }
                    claim(&store, &tables, &id).await;
                }
            }
            Err(e) => tracing::warn!(error = %e, "cannot list orphaned tables"),
        }
    }
}

fn renewed(metrics: &bete_base::metrics::Metrics, result: &'static str) {
    metrics
        .lease_renewals
        .get_or_create(&bete_base::metrics::ResultLabels { result })
        .inc();
}

/// A third of the lease: two passes may fail before the lease lapses.
pub fn pass_interval(lease_ttl: Duration) -> Duration {
    (lease_ttl / 3).max(Duration::from_millis(100))
}

/// Claims a table whose owner is gone and replays it (the load attaches this node's WatchBot
/// streams of its seated bots: registry.rs).
async fn claim(store: &PgStore, tables: &Tables, id: &str) {
    match tables.get(id).await {
        Ok(_) => {
            tracing::info!(table = %id, node = %store.node().id, "claimed a table from a lapsed node");
        }
        // Another node claimed it first.
        Err(e) => tracing::debug!(table = %id, error = %e, "not claimed"),
    }
}
