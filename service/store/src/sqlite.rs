//! SQLite store: one file `<data-dir>/bete.sqlite3`, WAL mode.
//!
//! Reads go through a small pool. Writes go through ONE writer task that owns the only write
//! connection: it takes every request pending on its channel, applies them all in one
//! transaction with `synchronous=FULL`, commits, and only then answers each request
//! (group commit). One fsync covers many tables' moves, so durability does not cap throughput.

use std::path::Path;
use std::str::FromStr;
use std::time::Duration;

use sqlx::sqlite::{
    SqliteConnectOptions, SqliteJournalMode, SqlitePool, SqlitePoolOptions, SqliteRow,
    SqliteSynchronous,
};
use sqlx::{Connection, Row, SqliteConnection};
use tokio::sync::{mpsc, oneshot};

mod batch;
mod schema;

use batch::writer_loop;
use schema::migrate;

use crate::guard;
use crate::reads::sqlite as reads;
use crate::rows::sqlite::bot_from_row;
use crate::writes::{WriteOp, sqlite as writes};
use crate::{BotRow, LogEntry, SeatRow, Store, StoreError, StoreFuture, StoredTable, TableRow};

/// Most writes folded into one transaction.
const MAX_BATCH: usize = 512;
/// Pending writes before callers wait for the writer.
const WRITE_QUEUE: usize = 4096;

struct WriteReq {
    op: WriteOp,
    done: oneshot::Sender<Result<(), StoreError>>,
    /// The writer's span (see trace.rs): the group commit that makes it durable links to it.
    span: tracing::Span,
}

/// The SQLite implementation of [`Store`].
#[derive(Clone)]
pub struct SqliteStore {
    reads: SqlitePool,
    writes: mpsc::Sender<WriteReq>,
}

impl std::fmt::Debug for SqliteStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SqliteStore").finish_non_exhaustive()
    }
}

impl SqliteStore {
    /// Open (creating if needed) `<data_dir>/bete.sqlite3`, apply migrations and start the writer.
    pub async fn open(data_dir: &Path) -> Result<SqliteStore, StoreError> {
        std::fs::create_dir_all(data_dir).map_err(|e| {
            StoreError::Corrupt(format!("cannot create {}: {e}", data_dir.display()))
        })?;
        let path = data_dir.join("bete.sqlite3");
        guard::check_file(&path)?;
        let base = SqliteConnectOptions::from_str("sqlite://")?
            .filename(&path)
            .create_if_missing(true)
            .journal_mode(SqliteJournalMode::Wal)
            .busy_timeout(Duration::from_secs(10));
        // FULL: the WAL is fsynced at every commit, so a committed append survives power loss.
        // Checkpoints run inline in the committing writer, at SQLite's default of 1,000 pages:
        // appends fill the log's right-edge pages, so a checkpoint copies few distinct pages,
        // and the WAL restarts from its start after each one; its blocks are rewritten rather
        // than the file grown (fsyncs that extend the file had a tail twice as long here, and
        // with 16,384 pages the WAL grew for minutes). journal_size_limit truncates the WAL
        // back after a spell of blocked checkpoints. A 32 MiB page cache holds the log's newest
        // pages, the heads and the tables; temp_store=memory keeps the batch's temporary rows
        // and any statement journal off the disk.
        let mut writer = SqliteConnection::connect_with(
            &base
                .clone()
                .synchronous(SqliteSynchronous::Full)
                .pragma("wal_autocheckpoint", "1000")
                .pragma("journal_size_limit", "67108864")
                .pragma("cache_size", "-32768")
                .pragma("temp_store", "memory")
                // Room for the 47 log-insert statements (`row_bucket`) and every other writer
                // statement, so none is evicted and prepared again.
                .statement_cache_capacity(256),
        )
        .await?;
        migrate(&mut writer).await?;
        // A process killed after a commit was written but before its sync leaves WAL frames in
        // the OS page cache, and SQLite's recovery accepts them: recovery would replay those
        // moves and a retried request would be answered as applied, while a power cut could
        // still take them back. Checkpointing now syncs the WAL, copies it into the database
        // and syncs that, before anything is recovered or served.
        sqlx::query("PRAGMA wal_checkpoint(TRUNCATE)")
            .execute(&mut writer)
            .await?;
        let acked = data_dir.join(guard::ACKED_FILE);
        guard::check_database(&mut writer, &acked).await?;
        let watermark = guard::Watermark::open(acked, guard::newest_entry(&mut writer).await?);
        let reads = SqlitePoolOptions::new()
            .max_connections(4)
            .connect_with(base.read_only(true))
            .await?;
        let (tx, rx) = mpsc::channel(WRITE_QUEUE);
        tokio::spawn(writer_loop(writer, rx, watermark));
        Ok(SqliteStore { reads, writes: tx })
    }

    /// This store's reads with a writer that has stopped, as after a fail-stop (tests: this
    /// crate's, and bete-server's through the `test-util` feature).
    #[cfg(any(test, feature = "test-util"))]
    pub fn with_stopped_writer(&self) -> SqliteStore {
        let (writes, rx) = mpsc::channel(1);
        drop(rx);
        SqliteStore {
            reads: self.reads.clone(),
            writes,
        }
    }

    /// A table, its seats and its first entries, in one write (`Store::create_seated_table`).
    async fn create(
        &self,
        table: TableRow,
        seats: Vec<SeatRow>,
        log: Vec<(LogEntry, u64)>,
    ) -> Result<(), StoreError> {
        self.write(WriteOp::CreateTable(table, seats, log)).await
    }

    async fn write(&self, op: WriteOp) -> Result<(), StoreError> {
        let (done, wait) = oneshot::channel();
        self.writes
            .send(WriteReq {
                op,
                done,
                span: crate::trace::caller(),
            })
            .await
            .map_err(|_| StoreError::Closed)?;
        wait.await.map_err(|_| StoreError::Closed)?
    }
}

/// A table's log, oldest first: from its head back along `prev` (each step to a smaller id of
/// the same table, so a damaged chain can neither loop nor splice in another table's rows). A broken chain shows as a log not starting at seq 0, which
/// `log` reports. (Lower-case `as`: sqlx logs statements at debug, and the log
/// check of tests/hidden.rs reads any two-letter word like `AS` as a card code.)
pub(crate) const READ_LOG: &str = "WITH RECURSIVE chain(id, prev, tbl, seq, payload) as ( \
       SELECT l.id, l.prev, l.tbl, l.seq, l.payload FROM tables t \
         JOIN log_heads h ON h.tbl = t.cursor JOIN log l ON l.id = h.last WHERE t.id = $1 \
       UNION ALL \
       SELECT l.id, l.prev, l.tbl, l.seq, l.payload FROM chain c JOIN log l ON l.id = c.prev \
         WHERE l.id < c.id AND l.tbl = c.tbl) \
     SELECT seq, payload FROM chain ORDER BY seq";

pub(crate) fn table_from_row(row: &SqliteRow) -> Result<(i64, TableRow), StoreError> {
    // The newest log row's, or the table's own for logs written before rows carried it.
    let last_seq: i64 = match row.try_get::<Option<i64>, _>("latest_seq")? {
        Some(seq) => seq,
        None => row.try_get("last_seq")?,
    };
    super::rows::sqlite::table_from_row(row, last_seq)
}

impl Store for SqliteStore {
    crate::reads::store_methods!(dialect = sqlite, err = StoreError::Sql, pool = reads);

    fn bots(&self, ids: Vec<String>) -> StoreFuture<'_, Vec<BotRow>> {
        Box::pin(async move {
            // One statement whatever the count: the ids as one JSON array.
            let ids = serde_json::to_string(&ids)
                .map_err(|e| StoreError::Corrupt(format!("cannot encode bot ids: {e}")))?;
            let rows =
                sqlx::query("SELECT * FROM bots WHERE id IN (SELECT value FROM json_each($1))")
                    .bind(ids)
                    .fetch_all(&self.reads)
                    .await?;
            rows.iter().map(bot_from_row).collect()
        })
    }

    fn tables_of_bot(&self, bot: String, resume: Vec<String>) -> StoreFuture<'_, Vec<String>> {
        Box::pin(async move {
            // The resume ids travel as one JSON array (no statement text built from input).
            let resume = serde_json::Value::from(resume).to_string();
            let ids = sqlx::query_scalar(
                "SELECT t.id FROM seats s JOIN tables t ON t.id = s.table_id \
                 WHERE s.bot_id = ?1 AND (t.state != 'finished' \
                      OR t.id IN (SELECT value FROM json_each(?2))) ORDER BY t.cursor",
            )
            .bind(bot)
            .bind(resume)
            .fetch_all(&self.reads)
            .await?;
            Ok(ids)
        })
    }

    fn unfinished_tables(&self) -> StoreFuture<'_, Vec<String>> {
        Box::pin(async move {
            let ids = sqlx::query_scalar(
                "SELECT id FROM tables WHERE state != 'finished' ORDER BY cursor",
            )
            .fetch_all(&self.reads)
            .await?;
            Ok(ids)
        })
    }

    fn finished_match_tables(&self, match_ids: Vec<String>) -> StoreFuture<'_, Vec<StoredTable>> {
        Box::pin(async move {
            // The ids as one JSON array: SQLite binds no lists.
            let ids = serde_json::to_string(&match_ids)
                .map_err(|e| StoreError::Corrupt(format!("match ids: {e}")))?;
            let rows = sqlx::query(&format!(
                "{} WHERE t.ladder_match IN (SELECT value FROM json_each($1)) \
                 AND t.state = 'finished' ORDER BY t.ladder_match, t.ladder_rotation",
                reads::TABLES
            ))
            .bind(ids)
            .fetch_all(&self.reads)
            .await?;
            reads::with_seats(&self.reads, &rows).await
        })
    }
}

/// Compile-time check: opening the store can run inside `tokio::spawn` (sqlx executors are
/// easy to make non-`Send` by accident).
#[allow(dead_code)]
fn assert_send() {
    fn is_send<T: Send>(_: T) {}
    is_send(SqliteStore::open(Path::new("x")));
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests;
