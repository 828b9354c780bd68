//! PostgreSQL store (`--database-url postgres://...`): the shared store of several nodes, and
//! the arbiter of which node owns which table.
//!
//! The schema mirrors SQLite's (sqlite.rs `MIGRATIONS`), with each table's log keyed by table id
//! and seq, and three things SQLite has no need of: the `nodes` table (each node's lease, renewed
//! by the node, judged by PostgreSQL's clock so a node's own clock does not matter) and each
//! table's `owner` and `epoch`. A node claims a table by raising its epoch; every append checks
//! the epoch it holds in the same statement as it writes (pg_append.rs, which also takes the
//! row lock a competing claim needs), so a paused or partitioned former owner can never write
//! after another node has claimed the table. The lease and the sessions' timeouts are in
//! pg_lease.rs.
//!
//! Writes go through writer tasks that each take every request pending, apply them all in one
//! transaction, commit, and only then answer (group commit, as the SQLite writer). Two writers
//! take turns, so one batch is collected while the other commits. A table's writes never meet
//! in two batches at once: its actor waits for each before sending the next.

use std::str::FromStr;
use std::sync::atomic::{AtomicI64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use foldhash::HashMap;
use sqlx::postgres::{PgConnectOptions, PgPool, PgPoolOptions, PgRow};
use sqlx::{Connection, Executor, PgConnection, Postgres, Row, Transaction};
use tokio::sync::{mpsc, oneshot};

#[path = "pg_append.rs"]
mod append;
use append::apply_batch;

use crate::pg_lease::{LeaseConn, LocalLease, with_session_timeouts};
use crate::reads::postgres as reads;
use crate::rows::postgres::bot_from_row;
// `update_seats` and `WriteOp` are used by the batch (pg_append.rs) too.
use crate::writes::WriteOp;
use crate::writes::postgres::{self as writes, update_seats};
use crate::{
    BotRow, Claim, LogEntry, Occupant, SeatRow, Store, StoreError, StoreFuture, StoredTable,
    TableRow,
};

/// Most writes folded into one transaction.
const MAX_BATCH: usize = 512;
/// Pending writes before callers wait for the writers.
const WRITE_QUEUE: usize = 4096;
/// Writer tasks: one collects a batch while the other's commit is in flight.
const WRITERS: usize = 2;
/// How long `open` keeps trying to reach PostgreSQL before it gives up.
const CONNECT_PATIENCE: Duration = Duration::from_secs(15);

/// The schema, applied in order; `bete_schema.version` counts the steps already applied.
/// Integers are BIGINT (the store's i64), flags BOOLEAN.
pub(crate) const MIGRATIONS: &[&str] = &[
    r#"
CREATE TABLE bots (
    id          TEXT PRIMARY KEY,
    name        TEXT NOT NULL,
    owner       TEXT NOT NULL,
    token_hash  TEXT NOT NULL UNIQUE,
    created_at  BIGINT NOT NULL,
    account_id  TEXT,
    version     TEXT NOT NULL DEFAULT '1'
);
CREATE UNIQUE INDEX bots_lineage ON bots(account_id, name, version) WHERE account_id IS NOT NULL;
CREATE TABLE accounts (
    id          TEXT PRIMARY KEY,
    name        TEXT NOT NULL,
    token_hash  TEXT NOT NULL UNIQUE,
    created_at  BIGINT NOT NULL
);
CREATE TABLE nodes (
    id           TEXT PRIMARY KEY,
    addr         TEXT NOT NULL,
    incarnation  TEXT NOT NULL,
    lease_until  TIMESTAMPTZ NOT NULL,
    started_at   TIMESTAMPTZ NOT NULL DEFAULT now()
);
CREATE TABLE tables (
    cursor          BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    id              TEXT NOT NULL UNIQUE,
    ruleset         TEXT NOT NULL,
    seats           BIGINT NOT NULL,
    config          TEXT NOT NULL,
    seed            TEXT NOT NULL,
    first_dealer    BIGINT NOT NULL,
    deadline_ms     BIGINT NOT NULL,
    visibility      TEXT NOT NULL,
    state           TEXT NOT NULL,
    last_seq        BIGINT NOT NULL DEFAULT 0,
    created_by      TEXT NOT NULL,
    created_at      BIGINT NOT NULL,
    seed_chosen     BOOLEAN NOT NULL DEFAULT false,
    ladder_id       TEXT,
    ladder_match    TEXT,
    ladder_rotation BIGINT,
    entries         BIGINT NOT NULL DEFAULT 0,
    owner           TEXT,
    epoch           BIGINT NOT NULL DEFAULT 0
);
CREATE INDEX tables_unfinished ON tables(cursor) WHERE state <> 'finished';
CREATE INDEX tables_ladder_match ON tables(ladder_match) WHERE ladder_match IS NOT NULL;
CREATE INDEX tables_owner ON tables(owner) WHERE owner IS NOT NULL;
CREATE TABLE seats (
    table_id  TEXT NOT NULL,
    seat      BIGINT NOT NULL,
    bot_id    TEXT,
    house     TEXT,
    strikes   BIGINT NOT NULL DEFAULT 0,
    PRIMARY KEY (table_id, seat)
);
CREATE INDEX seats_bot ON seats(bot_id);
CREATE TABLE log (
    table_id  TEXT NOT NULL,
    seq       BIGINT NOT NULL,
    payload   TEXT NOT NULL,
    last_seq  BIGINT,
    PRIMARY KEY (table_id, seq)
);
CREATE TABLE records (
    table_id  TEXT PRIMARY KEY,
    record    TEXT NOT NULL
);
CREATE TABLE ratings (
    bot_id   TEXT NOT NULL,
    ruleset  TEXT NOT NULL,
    rating   BIGINT NOT NULL,
    games    BIGINT NOT NULL,
    PRIMARY KEY (bot_id, ruleset)
);
CREATE TABLE ladder_entries (
    ladder_id       TEXT NOT NULL,
    bot_id          TEXT NOT NULL,
    capacity        BIGINT NOT NULL,
    active          BOOLEAN NOT NULL,
    removed_reason  TEXT NOT NULL DEFAULT '',
    entered_at      BIGINT NOT NULL,
    PRIMARY KEY (ladder_id, bot_id)
);
CREATE TABLE ladder_matches (
    cursor      BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    id          TEXT NOT NULL UNIQUE,
    ladder_id   TEXT NOT NULL,
    seed        TEXT NOT NULL,
    duplicate   BOOLEAN NOT NULL,
    entrants    TEXT NOT NULL,
    state       TEXT NOT NULL,
    started_at  BIGINT NOT NULL,
    rated_at    BIGINT,
    rated_seq   BIGINT,
    results     TEXT
);
CREATE INDEX ladder_matches_ladder ON ladder_matches(ladder_id, cursor);
CREATE INDEX ladder_matches_state ON ladder_matches(state);
CREATE TABLE ladder_match_bots (
    match_id  TEXT NOT NULL,
    bot_id    TEXT NOT NULL,
    cursor    BIGINT NOT NULL,
    PRIMARY KEY (bot_id, match_id)
);
CREATE TABLE ladder_ratings (
    ladder_id   TEXT NOT NULL,
    bot_id      TEXT NOT NULL,
    mu          DOUBLE PRECISION NOT NULL,
    sigma       DOUBLE PRECISION NOT NULL,
    matches     BIGINT NOT NULL,
    jetons      BIGINT NOT NULL,
    deals       BIGINT NOT NULL,
    last_net    BIGINT NOT NULL,
    last_place  BIGINT NOT NULL,
    PRIMARY KEY (ladder_id, bot_id)
);
"#,
    // Revoked bot tokens (BotService.RotateBotToken), as SQLite's step 5.
    r#"
CREATE TABLE revoked_tokens (
    token_hash  TEXT PRIMARY KEY,
    bot_id      TEXT NOT NULL,
    revoked_at  BIGINT NOT NULL
);
"#,
    // Ladder scheduling runs on one node at a time: the leader, whose claim holds while its
    // node's lease does (`nodes`); the epoch goes up with each new leader and fences the
    // scheduler's writes. `bots_online`: each node's bots with an open WatchBot stream, so
    // the leader sees entrants online wherever they connected.
    r#"
CREATE TABLE ladder_leader (
    one          BOOLEAN PRIMARY KEY DEFAULT true CHECK (one),
    node         TEXT NOT NULL,
    incarnation  TEXT NOT NULL,
    epoch        BIGINT NOT NULL
);
CREATE TABLE bots_online (
    node    TEXT NOT NULL,
    bot_id  TEXT NOT NULL,
    PRIMARY KEY (node, bot_id)
);
"#,
    // Bots' strike records on ladders, as SQLite's step 6.
    super::strikes::MIGRATION,
];

/// Who this node is among the nodes sharing the database.
#[derive(Clone, Debug)]
pub struct NodeConfig {
    /// Unique among live nodes (a second node with a live node's id is refused).
    pub id: String,
    /// The address peers use to reach this node's gRPC API.
    pub addr: String,
    /// How long a renewed lease lasts; peers claim this node's tables once it lapses.
    pub lease_ttl: Duration,
}

struct WriteReq {
    op: WriteOp,
    done: oneshot::Sender<Result<(), StoreError>>,
}

/// The tables this node holds, with the epoch it claimed each at.
type Held = Arc<Mutex<HashMap<String, i64>>>;

/// The epoch at which this node leads the ladders, -1 when it does not.
type LadderEpoch = Arc<AtomicI64>;

/// The PostgreSQL implementation of [`Store`].
#[derive(Clone)]
pub struct PgStore {
    pool: PgPool,
    writes: mpsc::Sender<WriteReq>,
    node: Arc<NodeConfig>,
    /// This process's registration: a restarted node (same id) has a new one.
    incarnation: Arc<str>,
    held: Held,
    ladder_epoch: LadderEpoch,
    /// Connection settings (with the session timeouts), for the lease's own connection.
    opts: PgConnectOptions,
    /// Until when this node's lease surely runs: no write is made past it.
    lease: Arc<LocalLease>,
}

impl std::fmt::Debug for PgStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PgStore")
            .field("node", &self.node.id)
            .finish_non_exhaustive()
    }
}

/// Whether an error means PostgreSQL could not be reached or went away, or ended the
/// statement for taking too long (the call may be retried), rather than that it was wrong.
fn unavailable(e: &sqlx::Error) -> bool {
    match e {
        sqlx::Error::Io(_)
        | sqlx::Error::PoolTimedOut
        | sqlx::Error::PoolClosed
        | sqlx::Error::WorkerCrashed
        | sqlx::Error::Tls(_) => true,
        sqlx::Error::Database(db) => db.code().is_some_and(|c| {
            // 08: connection exception; 57P01-03: shut down by the administrator, crash,
            // cannot connect now (starting up or shutting down); 57014: statement timeout;
            // 55P03: lock timeout; 25P03: idle-in-transaction timeout (a paused node's
            // session ended by PostgreSQL); 53300: too many connections.
            c.starts_with("08")
                || c.starts_with("57P")
                || matches!(c.as_ref(), "57014" | "55P03" | "25P03" | "53300")
        }),
        _ => false,
    }
}

/// A PostgreSQL error as the store reports it: unreachable, or anything else.
pub(crate) fn pg(e: sqlx::Error) -> StoreError {
    if unavailable(&e) {
        StoreError::Unavailable(e.to_string())
    } else {
        StoreError::Sql(e)
    }
}

/// Where the URL points, without its password (for messages).
fn describe(opts: &PgConnectOptions) -> String {
    format!(
        "{}:{}/{}",
        opts.get_host(),
        opts.get_port(),
        opts.get_database().unwrap_or("")
    )
}

impl PgStore {
    /// Connect (retrying for a bounded time), migrate, register this node (refused while a
    /// live node holds its id), and start the writers.
    pub async fn open(url: &str, node: NodeConfig) -> Result<PgStore, StoreError> {
        let opts = PgConnectOptions::from_str(url)
            .map_err(|e| StoreError::Unavailable(format!("bad --database-url: {e}")))?;
        let opts = with_session_timeouts(opts, node.lease_ttl);
        let pool = Self::connect(&opts).await?;
        migrate(&pool).await?;
        let incarnation: Arc<str> = Arc::from(new_incarnation().as_str());
        let lease = Arc::new(LocalLease::default());
        let sent = std::time::Instant::now();
        register(&pool, &node, &incarnation).await?;
        lease.renewed(sent, node.lease_ttl);
        {
            let mut conn = pool.acquire().await.map_err(pg)?;
            read_clock(&mut conn).await?;
        }
        let (tx, rx) = mpsc::channel(WRITE_QUEUE);
        let rx = Arc::new(tokio::sync::Mutex::new(rx));
        let store = PgStore {
            pool,
            writes: tx,
            node: Arc::new(node),
            incarnation,
            held: Arc::default(),
            ladder_epoch: Arc::new(AtomicI64::new(-1)),
            opts,
            lease,
        };
        for _ in 0..WRITERS {
            tokio::spawn(writer_loop(store.clone_for_writer(), rx.clone()));
        }
        Ok(store)
    }

    async fn connect(opts: &PgConnectOptions) -> Result<PgPool, StoreError> {
        let started = tokio::time::Instant::now();
        loop {
            let attempt = PgPoolOptions::new()
                .max_connections(16)
                .acquire_timeout(Duration::from_secs(5))
                // A connection in steady use is not pinged before each batch (a round trip
                // per commit); one idle for a while is (PostgreSQL may have restarted).
                .test_before_acquire(false)
                .before_acquire(|conn, meta| {
                    Box::pin(async move {
                        if meta.idle_for > Duration::from_secs(1) {
                            conn.ping().await?;
                        }
                        Ok(true)
                    })
                })
                .connect_with(opts.clone())
                .await;
            match attempt {
                Ok(pool) => return Ok(pool),
                Err(e) if unavailable(&e) && started.elapsed() < CONNECT_PATIENCE => {
                    tracing::warn!(database = %describe(opts), error = %e, "PostgreSQL not reachable yet; retrying");
                    tokio::time::sleep(Duration::from_millis(500)).await;
                }
                Err(e) => {
                    return Err(StoreError::Unavailable(format!(
                        "cannot reach PostgreSQL at {} (tried for {} s): {e}",
                        describe(opts),
                        started.elapsed().as_secs()
                    )));
                }
            }
        }
    }

    /// The writers' view: the pool and the node, without the sending end (so that the channel
    /// closes, and `writer_stopped` resolves, when every `PgStore` handle is gone).
    fn clone_for_writer(&self) -> WriterCtx {
        WriterCtx {
            pool: self.pool.clone(),
            node: self.node.clone(),
            held: self.held.clone(),
            ladder_epoch: self.ladder_epoch.clone(),
            incarnation: self.incarnation.clone(),
            lease: self.lease.clone(),
        }
    }

    pub fn node(&self) -> &NodeConfig {
        &self.node
    }

    async fn write(&self, op: WriteOp) -> Result<(), StoreError> {
        let (done, wait) = oneshot::channel();
        self.writes
            .send(WriteReq { op, done })
            .await
            .map_err(|_| StoreError::Closed)?;
        wait.await.map_err(|_| StoreError::Closed)?
    }

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
    fn held_epoch(&self, table: &str) -> i64 {
        self.held
            .lock()
            .ok()
            .and_then(|h| h.get(table).copied())
            .unwrap_or(-1)
    }

    fn hold(&self, table: &str, epoch: i64) {
        if let Ok(mut held) = self.held.lock() {
            held.insert(table.to_string(), epoch);
        }
    }
}

/// A fresh random id for this process's registration.
fn new_incarnation() -> String {
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
async fn read_clock(conn: &mut PgConnection) -> Result<(), StoreError> {
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
async fn register(pool: &PgPool, node: &NodeConfig, incarnation: &str) -> Result<(), StoreError> {
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

async fn migrate(pool: &PgPool) -> Result<(), StoreError> {
    let mut conn = pool.acquire().await.map_err(pg)?;
    let mut tx = conn.begin().await.map_err(pg)?;
    // A node waits for another's migration as long as it takes (not the sessions' timeouts).
    sqlx::query("SET LOCAL lock_timeout = 0")
        .execute(&mut *tx)
        .await
        .map_err(pg)?;
    sqlx::query("SET LOCAL statement_timeout = 0")
        .execute(&mut *tx)
        .await
        .map_err(pg)?;
    // Nodes starting together migrate one at a time (the lock ends with the transaction).
    sqlx::query("SELECT pg_advisory_xact_lock(7451)")
        .execute(&mut *tx)
        .await
        .map_err(pg)?;
    sqlx::query("CREATE TABLE IF NOT EXISTS bete_schema (version BIGINT NOT NULL)")
        .execute(&mut *tx)
        .await
        .map_err(pg)?;
    let version: Option<i64> = sqlx::query_scalar("SELECT max(version) FROM bete_schema")
        .fetch_one(&mut *tx)
        .await
        .map_err(pg)?;
    let version = version.unwrap_or(0);
    crate::refuse_newer_schema(version, MIGRATIONS.len())?;
    for (i, sql) in MIGRATIONS.iter().enumerate().skip(version.max(0) as usize) {
        (&mut *tx).execute(sqlx::raw_sql(sql)).await.map_err(pg)?;
        sqlx::query("INSERT INTO bete_schema (version) VALUES ($1)")
            .bind(i as i64 + 1)
            .execute(&mut *tx)
            .await
            .map_err(pg)?;
    }
    tx.commit().await.map_err(pg)?;
    Ok(())
}

/// What a writer task needs.
struct WriterCtx {
    pool: PgPool,
    node: Arc<NodeConfig>,
    held: Held,
    ladder_epoch: LadderEpoch,
    incarnation: Arc<str>,
    lease: Arc<LocalLease>,
}

impl WriterCtx {
    fn epoch(&self, table: &str) -> i64 {
        self.held
            .lock()
            .ok()
            .and_then(|h| h.get(table).copied())
            .unwrap_or(-1)
    }
}

async fn writer_loop(ctx: WriterCtx, rx: Arc<tokio::sync::Mutex<mpsc::Receiver<WriteReq>>>) {
    let mut batch: Vec<WriteReq> = Vec::with_capacity(MAX_BATCH);
    loop {
        {
            let mut rx = rx.lock().await;
            match rx.recv().await {
                Some(first) => batch.push(first),
                None => return,
            }
            while batch.len() < MAX_BATCH {
                match rx.try_recv() {
                    Ok(req) => batch.push(req),
                    Err(_) => break,
                }
            }
        }
        let ops: Vec<&WriteOp> = batch.iter().map(|r| &r.op).collect();
        match apply_batch(&ctx, &ops).await {
            Ok(()) => {
                for req in batch.drain(..) {
                    let _ = req.done.send(Ok(()));
                }
            }
            Err(StoreError::Unavailable(why)) => {
                // Not committed, or not known to be: every caller hears UNAVAILABLE, none an
                // OK. (A commit whose answer was lost may have landed; the table rebuilds
                // from the store and a retried request is recognised by its request id.)
                tracing::warn!(%why, size = batch.len(), "PostgreSQL unavailable; the batch failed");
                for req in batch.drain(..) {
                    let _ = req.done.send(Err(StoreError::Unavailable(why.clone())));
                }
            }
            Err(err) if batch.len() == 1 => {
                if let Some(req) = batch.pop() {
                    let _ = req.done.send(Err(err));
                }
            }
            Err(err) => {
                // One bad write must not fail its neighbours: retry each alone.
                tracing::warn!(%err, size = batch.len(), "group commit failed; retrying writes one by one");
                for req in batch.drain(..) {
                    let res = apply_batch(&ctx, &[&req.op]).await;
                    let _ = req.done.send(res);
                }
            }
        }
    }
}

/// The fence of the ladder scheduler's writes (a new match, a rating): they commit only while
/// this node leads the ladders at the epoch it believes, checked under a share lock on the
/// leader row, which a new leader's takeover must wait for. A paused former leader that wakes
/// up can thus never start a match (and double-book a bot) or overwrite ratings.
async fn fence_ladder(ctx: &WriterCtx, conn: &mut PgConnection) -> Result<(), StoreError> {
    let row: Option<(String, i64)> =
        sqlx::query_as("SELECT node, epoch FROM ladder_leader FOR SHARE")
            .fetch_optional(&mut *conn)
            .await
            .map_err(pg)?;
    let held = ctx.ladder_epoch.load(Ordering::Acquire);
    match row {
        Some((node, epoch)) if node == ctx.node.id && epoch == held => Ok(()),
        other => Err(StoreError::LadderFenced {
            leader: other.map(|(node, _)| node).unwrap_or_default(),
        }),
    }
}

/// A write of a batch: PostgreSQL's own (a table owned from its creation, a fenced finish), the
/// ladders' writes behind their fence, or one the dialects share (`writes.rs`).
async fn apply(
    ctx: &WriterCtx,
    tx: &mut Transaction<'_, Postgres>,
    op: &WriteOp,
) -> Result<(), StoreError> {
    let conn: &mut PgConnection = tx;
    match op {
        WriteOp::CreateTable(t, seats, log) => {
            // The creating node owns the table from the start, at epoch 1; its first entries
            // (the seats the server filled) go in with it.
            writes::bind_table(
                sqlx::query(
                    "INSERT INTO tables (id, ruleset, seats, config, seed, first_dealer, deadline_ms, \
                     visibility, state, created_by, created_at, seed_chosen, ladder_id, ladder_match, \
                     ladder_rotation, owner, epoch, entries, last_seq) \
                     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, 1, \
                     $17, $18)",
                ),
                t,
            )
            .bind(&ctx.node.id)
            .bind(log.len() as i64)
            .bind(log.last().map_or(0, |(_, last)| *last as i64))
            .execute(&mut *conn)
            .await
            .map_err(pg)?;
            if !log.is_empty() {
                let mut payloads = Vec::with_capacity(log.len());
                for (entry, _) in log {
                    payloads.push(serde_json::to_string(entry).map_err(|e| {
                        StoreError::Corrupt(format!("cannot encode log entry: {e}"))
                    })?);
                }
                let seqs: Vec<i64> = (0..log.len() as i64).collect();
                let lasts: Vec<i64> = log.iter().map(|(_, last)| *last as i64).collect();
                sqlx::query(
                    "INSERT INTO log (table_id, seq, payload, last_seq) \
                     SELECT $1, * FROM UNNEST($2::int8[], $3::text[], $4::int8[])",
                )
                .bind(&t.id)
                .bind(&seqs)
                .bind(&payloads)
                .bind(&lasts)
                .execute(&mut *conn)
                .await
                .map_err(pg)?;
            }
            let mut seat_no = Vec::with_capacity(seats.len());
            let mut bots = Vec::with_capacity(seats.len());
            let mut houses = Vec::with_capacity(seats.len());
            let mut strikes = Vec::with_capacity(seats.len());
            for s in seats {
                seat_no.push(i64::from(s.seat));
                let (bot, house) = match &s.occupant {
                    Occupant::Empty => (None, None),
                    Occupant::Bot(b) => (Some(b.clone()), None),
                    Occupant::House(h) => (None, Some(h.clone())),
                };
                bots.push(bot);
                houses.push(house);
                strikes.push(i64::from(s.strikes));
            }
            sqlx::query(
                "INSERT INTO seats (table_id, seat, bot_id, house, strikes) \
                 SELECT $1, * FROM UNNEST($2::int8[], $3::text[], $4::text[], $5::int8[])",
            )
            .bind(&t.id)
            .bind(&seat_no)
            .bind(&bots)
            .bind(&houses)
            .bind(&strikes)
            .execute(&mut *conn)
            .await
            .map_err(pg)?;
        }
        WriteOp::Finish {
            table,
            record,
            ratings,
        } => {
            // Fenced like an append: a former owner that replayed to the end must not fold
            // the match into ratings a second time after the new owner did.
            let done = sqlx::query(
                "UPDATE tables SET state = 'finished' WHERE id = $1 AND owner = $2 AND epoch = $3",
            )
            .bind(table)
            .bind(&ctx.node.id)
            .bind(ctx.epoch(table))
            .execute(&mut *conn)
            .await
            .map_err(pg)?;
            if done.rows_affected() != 1 {
                let owner: Option<Option<String>> =
                    sqlx::query_scalar("SELECT owner FROM tables WHERE id = $1")
                        .bind(table)
                        .fetch_optional(&mut *conn)
                        .await
                        .map_err(pg)?;
                return Err(StoreError::Fenced {
                    table: table.clone(),
                    owner: owner.flatten().unwrap_or_default(),
                });
            }
            writes::store_result(conn, table, record, ratings).await?;
        }
        WriteOp::PutStrikes(_) | WriteOp::CreateMatch(_) | WriteOp::RateMatch { .. } => {
            fence_ladder(ctx, conn).await?;
            writes::apply(conn, op).await?;
        }
        other => writes::apply(conn, other).await?,
    }
    Ok(())
}

pub(crate) fn table_from_row(row: &PgRow) -> Result<(i64, TableRow), StoreError> {
    super::rows::postgres::table_from_row(row, row.try_get("last_seq")?)
}

impl PgStore {
    async fn create(
        &self,
        table: TableRow,
        seats: Vec<SeatRow>,
        log: Vec<(LogEntry, u64)>,
    ) -> Result<(), StoreError> {
        let id = table.id.clone();
        // Held once its row is committed, at epoch 1 (no write of the table comes before:
        // its actor waits for the creation), so a cluster pass in between never takes a
        // table being created for one lost.
        let res = self.write(WriteOp::CreateTable(table, seats, log)).await;
        if res.is_ok() {
            self.hold(&id, 1);
        } else {
            // Not created by this call; but the table may exist and be held here already (a
            // second creation of a ladder table's fixed id while the first plays): then it
            // must stay held at its epoch, or its next append would be fenced.
            let held: Option<(Option<String>, i64)> =
                sqlx::query_as("SELECT owner, epoch FROM tables WHERE id = $1")
                    .bind(&id)
                    .fetch_optional(&self.pool)
                    .await
                    .map_err(pg)?;
            match held {
                Some((Some(owner), epoch)) if owner == self.node.id => self.hold(&id, epoch),
                _ => self.forget(&id),
            }
        }
        res
    }
}

impl Store for PgStore {
    crate::reads::store_methods!(dialect = postgres, err = pg, pool = pool);

    fn bots(&self, ids: Vec<String>) -> StoreFuture<'_, Vec<BotRow>> {
        Box::pin(async move {
            let rows = sqlx::query("SELECT * FROM bots WHERE id = ANY($1)")
                .bind(ids)
                .fetch_all(&self.pool)
                .await
                .map_err(pg)?;
            rows.iter().map(bot_from_row).collect()
        })
    }

    fn create_table(&self, table: TableRow, seats: Vec<SeatRow>) -> StoreFuture<'_, ()> {
        Box::pin(self.create(table, seats, Vec::new()))
    }

    fn create_seated_table(
        &self,
        table: TableRow,
        seats: Vec<SeatRow>,
        log: Vec<(LogEntry, u64)>,
    ) -> StoreFuture<'_, ()> {
        Box::pin(self.create(table, seats, log))
    }

    fn tables_of_bot(&self, bot: String, resume: Vec<String>) -> StoreFuture<'_, Vec<String>> {
        Box::pin(async move {
            sqlx::query_scalar(
                "SELECT t.id FROM seats s JOIN tables t ON t.id = s.table_id \
                 WHERE s.bot_id = $1 AND (t.state <> 'finished' OR t.id = ANY($2)) \
                 ORDER BY t.cursor",
            )
            .bind(bot)
            .bind(resume)
            .fetch_all(&self.pool)
            .await
            .map_err(pg)
        })
    }

    fn unfinished_tables(&self) -> StoreFuture<'_, Vec<String>> {
        // This node's own (from before a restart) and those nobody holds: a live peer's
        // tables stay with it.
        Box::pin(async move {
            sqlx::query_scalar(
                "SELECT t.id FROM tables t WHERE t.state <> 'finished' AND (t.owner IS NULL \
                 OR t.owner = $1 OR NOT EXISTS (SELECT 1 FROM nodes n WHERE n.id = t.owner \
                 AND n.lease_until > now())) ORDER BY t.cursor",
            )
            .bind(&self.node.id)
            .fetch_all(&self.pool)
            .await
            .map_err(pg)
        })
    }

    fn claim(&self, table: String) -> StoreFuture<'_, Claim> {
        Box::pin(async move {
            // Only with a live lease of this process's own, and only from no owner, from itself
            // (after a restart) or from a node whose lease lapsed; the epoch goes up, which
            // fences every write the former owner still has in flight (unless this process
            // holds the table at its current epoch already: a table it just created). A row
            // locked by a transaction (a frozen former owner's, until PostgreSQL ends it) is
            // skipped, never waited for: the claim is tried again on a later pass.
            let epoch: Option<i64> = sqlx::query_scalar(
                "WITH c AS (SELECT t.id FROM tables t WHERE t.id = $1 \
                   AND EXISTS (SELECT 1 FROM nodes me WHERE me.id = $2 AND me.incarnation = $3 \
                               AND me.lease_until > now()) \
                   AND (t.owner IS NULL OR t.owner = $2 OR NOT EXISTS (SELECT 1 FROM nodes n \
                        WHERE n.id = t.owner AND n.lease_until > now())) \
                   FOR UPDATE SKIP LOCKED) \
                 UPDATE tables t SET owner = $2, epoch = CASE WHEN t.owner = $2 AND t.epoch = $4 \
                 THEN t.epoch ELSE t.epoch + 1 END FROM c WHERE t.id = c.id \
                 RETURNING t.epoch",
            )
            .bind(&table)
            .bind(&self.node.id)
            .bind(&*self.incarnation)
            .bind(self.held_epoch(&table))
            .fetch_optional(&self.pool)
            .await
            .map_err(pg)?;
            if let Some(epoch) = epoch {
                self.hold(&table, epoch);
                return Ok(Claim::Held);
            }
            let row = sqlx::query(
                "SELECT t.owner, n.addr, coalesce(n.lease_until > now(), false) AS live, \
                 EXISTS (SELECT 1 FROM nodes me WHERE me.id = $2 AND me.incarnation = $3 \
                         AND me.lease_until > now()) AS me_live \
                 FROM tables t LEFT JOIN nodes n ON n.id = t.owner WHERE t.id = $1",
            )
            .bind(&table)
            .bind(&self.node.id)
            .bind(&*self.incarnation)
            .fetch_optional(&self.pool)
            .await
            .map_err(pg)?;
            let Some(row) = row else {
                return Ok(Claim::Held);
            };
            let owner: Option<String> = row.try_get("owner")?;
            let addr: Option<String> = row.try_get("addr")?;
            let live: bool = row.try_get("live")?;
            let me_live: bool = row.try_get("me_live")?;
            match owner {
                Some(node) if live && node != self.node.id => Ok(Claim::Elsewhere {
                    node,
                    addr: addr.unwrap_or_default(),
                }),
                _ if !me_live => Err(LocalLease::lapsed()),
                _ => Err(StoreError::Unavailable(format!(
                    "table {table} is still locked by a transaction of its former owner; \
                     PostgreSQL ends it within {} ms and the table is claimed then",
                    super::pg_lease::Timeouts::of(self.node.lease_ttl)
                        .idle_in_transaction
                        .as_millis()
                ))),
            }
        })
    }

    fn release_all(&self) -> StoreFuture<'_, ()> {
        Box::pin(async move { self.release().await.map(|_| ()) })
    }

    fn finished_match_tables(&self, match_ids: Vec<String>) -> StoreFuture<'_, Vec<StoredTable>> {
        Box::pin(async move {
            let rows = sqlx::query(&format!(
                "{} WHERE t.ladder_match = ANY($1) AND t.state = 'finished' \
                 ORDER BY t.ladder_match, t.ladder_rotation",
                reads::TABLES
            ))
            .bind(match_ids)
            .fetch_all(&self.pool)
            .await
            .map_err(pg)?;
            reads::with_seats(&self.pool, &rows).await
        })
    }
}
