//! A node among the nodes sharing the database: its registration and lease, the tables it
//! holds and loses, the peers it sees, the ladders' leadership, and the cluster's clock read
//! from PostgreSQL at each renewal.

use std::sync::atomic::Ordering;
use std::time::Duration;

use sqlx::{PgConnection, PgPool, Row};

use super::{NodeConfig, PgStore, pg};
use crate::StoreError;
use crate::pg_lease::LeaseConn;

impl PgStore {
    /// The lease's own connection (see [`PgStore::renew`]).
    pub fn lease_conn(&self) -> LeaseConn {
        LeaseConn::new(self.opts.clone())
    }

    /// Renew this node's lease on the lease's own connection, within `deadline`. `Ok(false)`:
    /// the registration is gone (another process took the id after this node's lease
    /// lapsed): the node must stop. After renewing, reads PostgreSQL's clock, which corrects
    /// this node's ([`crate::clock`]).
    pub async fn renew(
        &self,
        conn: &mut LeaseConn,
        deadline: Duration,
    ) -> Result<bool, StoreError> {
        let sent = std::time::Instant::now();
        self.lease.renewing(sent, self.node.lease_ttl);
        let renewed = tokio::time::timeout(deadline, self.renew_on(conn)).await;
        let renewed = match renewed {
            Ok(Ok(r)) => r,
            Ok(Err(e)) => {
                conn.reset();
                return Err(e);
            }
            Err(_) => {
                conn.reset();
                return Err(StoreError::Unavailable(format!(
                    "the lease's renewal took longer than {} ms",
                    deadline.as_millis()
                )));
            }
        };
        if renewed {
            self.lease.renewed(sent, self.node.lease_ttl);
        }
        Ok(renewed)
    }

    async fn renew_on(&self, conn: &mut LeaseConn) -> Result<bool, StoreError> {
        let conn = conn.get().await?;
        let done = sqlx::query(
            "UPDATE nodes SET lease_until = now() + $3 * interval '1 millisecond' \
             WHERE id = $1 AND incarnation = $2",
        )
        .bind(&self.node.id)
        .bind(&*self.incarnation)
        .bind(self.node.lease_ttl.as_millis() as i64)
        .execute(&mut *conn)
        .await
        .map_err(pg)?;
        if let Err(e) = read_clock(conn).await {
            tracing::debug!(error = %e, "cannot read PostgreSQL's clock");
        }
        Ok(done.rows_affected() == 1)
    }

    /// Tables this node believes it holds that another node has claimed since (or that were
    /// released): they are forgotten here, and the caller unloads them. Each comes with the
    /// node that holds it now, if another one does (the only case that is a loss).
    pub async fn lost_tables(&self) -> Result<Vec<(String, Option<String>)>, StoreError> {
        let (ids, epochs): (Vec<String>, Vec<i64>) = self
            .held
            .lock()
            .map(|h| h.iter().map(|(k, v)| (k.clone(), *v)).unzip())
            .unwrap_or_default();
        if ids.is_empty() {
            return Ok(Vec::new());
        }
        // A table is held only once its row is committed (see `create`), so a missing row is
        // one gone, not one being created.
        let rows: Vec<(String, i64, Option<String>)> = sqlx::query_as(
            "SELECT u.id, u.epoch, t.owner FROM UNNEST($1::text[], $2::int8[]) u(id, epoch) \
             LEFT JOIN tables t ON t.id = u.id \
             WHERE t.id IS NULL OR t.owner IS DISTINCT FROM $3 OR t.epoch <> u.epoch",
        )
        .bind(&ids)
        .bind(&epochs)
        .bind(&self.node.id)
        .fetch_all(&self.pool)
        .await
        .map_err(pg)?;
        let mut lost = Vec::with_capacity(rows.len());
        if let Ok(mut held) = self.held.lock() {
            for (id, epoch, owner) in rows {
                // Held anew meanwhile (claimed again at a newer epoch): not lost.
                if held.get(&id) != Some(&epoch) {
                    continue;
                }
                held.remove(&id);
                let taken = owner.filter(|o| *o != self.node.id);
                lost.push((id, taken));
            }
        }
        Ok(lost)
    }

    /// Unfinished tables whose owner is gone (no owner, or its lease lapsed): claimable.
    pub async fn orphans(&self, limit: i64) -> Result<Vec<String>, StoreError> {
        sqlx::query_scalar(
            "SELECT t.id FROM tables t WHERE t.state <> 'finished' AND (t.owner IS NULL OR \
             NOT EXISTS (SELECT 1 FROM nodes n WHERE n.id = t.owner AND n.lease_until > now())) \
             ORDER BY t.cursor LIMIT $1",
        )
        .bind(limit)
        .fetch_all(&self.pool)
        .await
        .map_err(pg)
    }

    /// The other nodes whose lease is live, as (id, address): where a bot's tables may be played.
    pub async fn live_peers(&self) -> Result<Vec<(String, String)>, StoreError> {
        let rows = sqlx::query(
            "SELECT id, addr FROM nodes WHERE lease_until > now() AND id <> $1 ORDER BY id",
        )
        .bind(&self.node.id)
        .fetch_all(&self.pool)
        .await
        .map_err(pg)?;
        rows.iter()
            .map(|r| Ok((r.try_get("id")?, r.try_get("addr")?)))
            .collect()
    }

    /// Lead the ladders if no live node does (or this one does already): the epoch this node
    /// leads at, or `None` while another node leads. The claim rides on the node's lease, so a
    /// leader that dies or pauses loses it when its lease lapses.
    pub async fn lead_ladders(&self) -> Result<Option<i64>, StoreError> {
        let taken: Option<i64> = sqlx::query_scalar(
            "INSERT INTO ladder_leader (one, node, incarnation, epoch) \
             SELECT true, $1, $2, 1 WHERE EXISTS (SELECT 1 FROM nodes me WHERE me.id = $1 \
               AND me.incarnation = $2 AND me.lease_until > now()) \
             ON CONFLICT (one) DO UPDATE SET node = excluded.node, \
               incarnation = excluded.incarnation, epoch = ladder_leader.epoch + 1 \
             WHERE NOT (ladder_leader.node = excluded.node \
                        AND ladder_leader.incarnation = excluded.incarnation) \
               AND NOT EXISTS (SELECT 1 FROM nodes n WHERE n.id = ladder_leader.node \
                 AND n.incarnation = ladder_leader.incarnation AND n.lease_until > now()) \
             RETURNING epoch",
        )
        .bind(&self.node.id)
        .bind(&*self.incarnation)
        .fetch_optional(&self.pool)
        .await
        .map_err(pg)?;
        let epoch = match taken {
            Some(e) => Some(e),
            None => {
                let row: Option<(String, String, i64)> =
                    sqlx::query_as("SELECT node, incarnation, epoch FROM ladder_leader")
                        .fetch_optional(&self.pool)
                        .await
                        .map_err(pg)?;
                row.filter(|(node, inc, _)| *node == self.node.id && **inc == *self.incarnation)
                    .map(|(_, _, e)| e)
            }
        };
        self.ladder_epoch
            .store(epoch.unwrap_or(-1), Ordering::Release);
        Ok(epoch)
    }

    /// Nodes whose lease runs now (this one included, if its own does).
    pub async fn live_nodes(&self) -> Result<i64, StoreError> {
        sqlx::query_scalar("SELECT count(*) FROM nodes WHERE lease_until > now()")
            .fetch_one(&self.pool)
            .await
            .map_err(pg)
    }

    /// Let go of every table this node holds and of its lease, so that peers take them at
    /// once (after a drain, when no more writes come): the number of tables released.
    pub async fn release(&self) -> Result<u64, StoreError> {
        let mut tx = self.pool.begin().await.map_err(pg)?;
        let released = sqlx::query("UPDATE tables SET owner = NULL WHERE owner = $1")
            .bind(&self.node.id)
            .execute(&mut *tx)
            .await
            .map_err(pg)?
            .rows_affected();
        sqlx::query("UPDATE nodes SET lease_until = now() WHERE id = $1 AND incarnation = $2")
            .bind(&self.node.id)
            .bind(&*self.incarnation)
            .execute(&mut *tx)
            .await
            .map_err(pg)?;
        tx.commit().await.map_err(pg)?;
        if let Ok(mut held) = self.held.lock() {
            held.clear();
        }
        self.lease.ended();
        self.ladder_epoch.store(-1, Ordering::Release);
        tracing::info!(node = %self.node.id, tables = released, "released this node's tables");
        Ok(released)
    }

    /// Publish the bots with a WatchBot stream on this node, and learn those online on every
    /// live node (this one included).
    pub async fn sync_online(&self, here: Vec<String>) -> Result<Vec<String>, StoreError> {
        let mut tx = self.pool.begin().await.map_err(pg)?;
        sqlx::query("DELETE FROM bots_online WHERE node = $1 AND NOT (bot_id = ANY($2))")
            .bind(&self.node.id)
            .bind(&here)
            .execute(&mut *tx)
            .await
            .map_err(pg)?;
        sqlx::query(
            "INSERT INTO bots_online (node, bot_id) SELECT $1, * FROM UNNEST($2::text[]) \
             ON CONFLICT DO NOTHING",
        )
        .bind(&self.node.id)
        .bind(&here)
        .execute(&mut *tx)
        .await
        .map_err(pg)?;
        let all: Vec<String> = sqlx::query_scalar(
            "SELECT DISTINCT b.bot_id FROM bots_online b JOIN nodes n ON n.id = b.node \
             WHERE n.lease_until > now()",
        )
        .fetch_all(&mut *tx)
        .await
        .map_err(pg)?;
        tx.commit().await.map_err(pg)?;
        Ok(all)
    }

    /// Forget a table held here (it was unloaded after being lost).
    pub fn forget(&self, table: &str) {
        if let Ok(mut held) = self.held.lock() {
            held.remove(table);
        }
    }

    /// The epoch this node holds a table at, -1 for none.
    pub(super) fn held_epoch(&self, table: &str) -> i64 {
        self.held
            .lock()
            .ok()
            .and_then(|h| h.get(table).copied())
            .unwrap_or(-1)
    }

    pub(super) fn hold(&self, table: &str, epoch: i64) {
        if let Ok(mut held) = self.held.lock() {
            held.insert(table.to_string(), epoch);
        }
    }
}

/// A fresh random id for this process's registration.
pub(super) fn new_incarnation() -> String {
    let mut bytes = [0u8; 16];
    // Uniqueness only (not a secret): a failing OS generator falls back to the clock.
    if getrandom::fill(&mut bytes).is_err() {
        let t = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos());
        bytes = t.to_le_bytes();
    }
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// Reads PostgreSQL's clock (at start, so the node's first deadlines are the cluster's, and
/// with each renewal). The connection is taken first and the statement commits nothing, so the
/// round trip timed is the query's alone and the clock is read about its middle.
pub(super) async fn read_clock(conn: &mut PgConnection) -> Result<(), StoreError> {
    let before = crate::clock::system_ms();
    let ms: i64 =
        sqlx::query_scalar("SELECT (extract(epoch FROM clock_timestamp()) * 1000)::bigint")
            .fetch_one(conn)
            .await
            .map_err(pg)?;
    crate::clock::observe(before, ms, crate::clock::system_ms());
    Ok(())
}

/// Registers the node: takes its id unless a live node holds it. A node restarted at once
/// after a crash finds its own former lease still running and waits for it to lapse (at most
/// one lease), since nothing tells a crashed predecessor from a live twin.
pub(super) async fn register(
    pool: &PgPool,
    node: &NodeConfig,
    incarnation: &str,
) -> Result<(), StoreError> {
    let give_up = tokio::time::Instant::now() + node.lease_ttl + Duration::from_secs(1);
    loop {
        let done = sqlx::query(
            "INSERT INTO nodes (id, addr, incarnation, lease_until) \
             VALUES ($1, $2, $3, now() + $4 * interval '1 millisecond') \
             ON CONFLICT (id) DO UPDATE SET addr = excluded.addr, \
               incarnation = excluded.incarnation, lease_until = excluded.lease_until, \
               started_at = now() \
             WHERE nodes.lease_until < now()",
        )
        .bind(&node.id)
        .bind(&node.addr)
        .bind(incarnation)
        .bind(node.lease_ttl.as_millis() as i64)
        .execute(pool)
        .await
        .map_err(pg)?;
        if done.rows_affected() == 1 {
            return Ok(());
        }
        if tokio::time::Instant::now() >= give_up {
            let addr: Option<String> = sqlx::query_scalar("SELECT addr FROM nodes WHERE id = $1")
                .bind(&node.id)
                .fetch_optional(pool)
                .await
                .map_err(pg)?;
            return Err(StoreError::NodeIdInUse {
                id: node.id.clone(),
                addr: addr.unwrap_or_default(),
            });
        }
        tracing::warn!(node = %node.id, "node id held by a live lease; waiting for it to lapse");
        tokio::time::sleep(Duration::from_millis(250)).await;
    }
}
