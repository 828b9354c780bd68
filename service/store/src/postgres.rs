//! PostgreSQL store (`--database-url postgres://...`): the shared store of several nodes, and
//! the arbiter of which node owns which table.
//!
//! The schema (postgres/schema.rs) mirrors SQLite's (sqlite/schema.rs), with each table's log
//! keyed by table id and seq, and three things SQLite has no need of: the `nodes` table (each node's lease, renewed
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
use std::sync::atomic::AtomicI64;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use foldhash::HashMap;
use sqlx::postgres::{PgConnectOptions, PgPool, PgPoolOptions, PgRow};
use sqlx::{Connection, Row};
use tokio::sync::{mpsc, oneshot};

#[path = "pg_append.rs"]
mod append;
mod cluster;
#[cfg(test)]
#[path = "pg_plans.rs"]
mod plans;
mod schema;
mod writer;

// The batch (pg_append.rs) reaches these through this module.
use cluster::{new_incarnation, read_clock, register};
use schema::migrate;
use writer::{WriterCtx, apply, writer_loop};

use crate::pg_lease::{LocalLease, with_session_timeouts};
use crate::reads::postgres as reads;
use crate::rows::postgres::bot_from_row;
// `update_seats` and `WriteOp` are used by the batch (pg_append.rs) too.
use crate::writes::WriteOp;
use crate::writes::postgres::{self as writes, update_seats};
use crate::{
    BotRow, Claim, LogEntry, SeatRow, Store, StoreError, StoreFuture, StoredTable, TableRow,
};

/// Most writes folded into one transaction.
const MAX_BATCH: usize = 512;
/// Pending writes before callers wait for the writers.
const WRITE_QUEUE: usize = 4096;
/// Writer tasks. One: while its commit is in flight the next batch gathers in the queue, so a
/// batch grows with the load. Two (one collecting while the other commits) halved the batches,
/// and a commit costs PostgreSQL about 0.3 ms of CPU whatever its size: with one, 1,000 tables
/// cost 29 µs of PostgreSQL CPU a move against 37, at more moves a second and a lower p50
/// (docs/benchmarks.md).
const WRITERS: usize = 1;
/// How long `open` keeps trying to reach PostgreSQL before it gives up.
const CONNECT_PATIENCE: Duration = Duration::from_secs(15);

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
}

pub(crate) fn table_from_row(row: &PgRow) -> Result<(i64, TableRow), StoreError> {
    super::rows::postgres::table_from_row(row, row.try_get("latest_seq")?)
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

/// The tables a bot sits at, unfinished or named. Its seats by `seats_bot`, and each seat's
/// table by `tables_id_key`, one at a time (a bot sits at most once at a table): a lateral
/// lookup, which no plan turns into a scan. Joined, or as `id = ANY(...)`, the generic plan a
/// connection made while `tables` was young read every row of it, each seat taken, for the
/// life of the connection (docs/benchmarks.md; `plans` tests it).
pub(crate) const TABLES_OF_BOT: &str = "\
SELECT t.id FROM seats s CROSS JOIN LATERAL \
    (SELECT t.id, t.cursor FROM tables t WHERE t.id = s.table_id \
       AND (t.state <> 'finished' OR t.id = ANY($2)) OFFSET 0) t \
WHERE s.bot_id = $1 ORDER BY t.cursor";

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

    fn tables_of_bot(&self, bot: String, resume: Vec<String>) -> StoreFuture<'_, Vec<String>> {
        Box::pin(async move {
            sqlx::query_scalar(TABLES_OF_BOT)
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
            // skipped, never waited for: the claim is tried again on a later pass. Back from a
            // lapse of its own, a node leaves lapsed peers their tables for a lease ($5).
            let patient = self.lease.patient();
            let epoch: Option<i64> = sqlx::query_scalar(
                "WITH c AS (SELECT t.id FROM tables t WHERE t.id = $1 \
                   AND EXISTS (SELECT 1 FROM nodes me WHERE me.id = $2 AND me.incarnation = $3 \
                               AND me.lease_until > now()) \
                   AND (t.owner IS NULL OR t.owner = $2 OR (NOT $5 AND NOT EXISTS (SELECT 1 \
                        FROM nodes n WHERE n.id = t.owner AND n.lease_until > now()))) \
                   FOR UPDATE SKIP LOCKED) \
                 UPDATE tables t SET owner = $2, epoch = CASE WHEN t.owner = $2 AND t.epoch = $4 \
                 THEN t.epoch ELSE t.epoch + 1 END FROM c WHERE t.id = c.id \
                 RETURNING t.epoch",
            )
            .bind(&table)
            .bind(&self.node.id)
            .bind(&*self.incarnation)
            .bind(self.held_epoch(&table))
            .bind(patient)
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
                // A lapsed peer given the time to renew is treated as live: the call goes to
                // it (if it is gone, the caller is told to retry, and the table is claimed
                // once the patience ends).
                Some(node) if (live || patient) && node != self.node.id => Ok(Claim::Elsewhere {
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
