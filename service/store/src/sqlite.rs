//! SQLite store: one file `<data-dir>/bete.sqlite3`, WAL mode.
//!
//! Reads go through a small pool. Writes go through ONE writer task that owns the only write
//! connection: it takes every request pending on its channel, applies them all in one
//! transaction with `synchronous=FULL`, commits, and only then answers each request
//! (group commit). One fsync covers many tables' moves, so durability does not cap throughput.

use foldhash::HashMap;
use std::path::Path;
use std::str::FromStr;
use std::sync::OnceLock;
use std::time::Duration;

use sqlx::sqlite::{
    SqliteConnectOptions, SqliteJournalMode, SqlitePool, SqlitePoolOptions, SqliteRow,
    SqliteSynchronous,
};
use sqlx::{Connection, Executor, Row, SqliteConnection};
use tokio::sync::{mpsc, oneshot};
use tracing::Instrument;

use crate::guard;
use crate::reads::sqlite as reads;
use crate::rows::sqlite::bot_from_row;
use crate::writes::{WriteOp, sqlite as writes};
use crate::{
    BotRow, LogEntry, Occupant, SeatRow, Store, StoreError, StoreFuture, StoredTable, TableRow,
    TableState,
};

/// Most writes folded into one transaction.
const MAX_BATCH: usize = 512;
/// Pending writes before callers wait for the writer.
const WRITE_QUEUE: usize = 4096;

/// The schema, applied in order; `PRAGMA user_version` counts the steps already applied.
const MIGRATIONS: &[&str] = &[
    r#"
CREATE TABLE bots (
    id          TEXT PRIMARY KEY,
    name        TEXT NOT NULL,
    owner       TEXT NOT NULL,
    token_hash  TEXT NOT NULL UNIQUE,
    created_at  INTEGER NOT NULL
);
CREATE TABLE tables (
    cursor       INTEGER PRIMARY KEY AUTOINCREMENT,
    id           TEXT NOT NULL UNIQUE,
    ruleset      TEXT NOT NULL,
    seats        INTEGER NOT NULL,
    config       TEXT NOT NULL,
    seed         TEXT NOT NULL,
    first_dealer INTEGER NOT NULL,
    deadline_ms  INTEGER NOT NULL,
    visibility   TEXT NOT NULL,
    state        TEXT NOT NULL,
    last_seq     INTEGER NOT NULL DEFAULT 0,
    created_by   TEXT NOT NULL,
    created_at   INTEGER NOT NULL
);
CREATE INDEX tables_state ON tables(state);
CREATE TABLE seats (
    table_id  TEXT NOT NULL,
    seat      INTEGER NOT NULL,
    bot_id    TEXT,
    house     TEXT,
    strikes   INTEGER NOT NULL DEFAULT 0,
    PRIMARY KEY (table_id, seat)
);
CREATE INDEX seats_bot ON seats(bot_id);
CREATE TABLE events (
    table_id  TEXT NOT NULL,
    seq       INTEGER NOT NULL,
    payload   TEXT NOT NULL,
    PRIMARY KEY (table_id, seq)
) WITHOUT ROWID;
CREATE TABLE records (
    table_id  TEXT PRIMARY KEY,
    record    TEXT NOT NULL
);
CREATE TABLE ratings (
    bot_id   TEXT NOT NULL,
    ruleset  TEXT NOT NULL,
    rating   INTEGER NOT NULL,
    games    INTEGER NOT NULL,
    PRIMARY KEY (bot_id, ruleset)
);
"#,
    // The table's event seq after each entry. Stored with the entry, so an append writes one row
    // and not also the `tables` row; `tables.last_seq` stays as it was for older logs.
    "ALTER TABLE events ADD COLUMN last_seq INTEGER",
    // The log in the order it was written, not clustered by table: `events` (keyed by table id
    // and seq) put every move of 1,000 active tables on its own table's B-tree leaf, so each
    // group commit wrote about one 4 KiB page per move to the WAL (and the checkpoint wrote it
    // again). `log` rows are appended at the right edge of one B-tree, so a batch fills a few
    // pages. A table's entries are found through its head in `log_heads` (a small row per
    // table, keyed by `tables.cursor`) and each entry's `prev`, the id of the table's entry
    // before it. The trigger keeps every table's chain whole and gap-free: an entry must carry
    // the next seq and point at the current head, and becomes the head. Rows of `events` whose
    // table is unknown were never read (a log is read for a table row) and are not copied.
    r#"
CREATE TABLE log (
    id        INTEGER PRIMARY KEY,
    tbl       INTEGER NOT NULL,
    seq       INTEGER NOT NULL,
    prev      INTEGER,
    payload   TEXT NOT NULL,
    last_seq  INTEGER
);
CREATE TABLE log_heads (
    tbl   INTEGER PRIMARY KEY,
    seq   INTEGER NOT NULL,
    last  INTEGER NOT NULL
);
INSERT INTO log (tbl, seq, payload, last_seq)
    SELECT t.cursor, e.seq, e.payload, e.last_seq FROM events e JOIN tables t ON t.id = e.table_id
    ORDER BY t.cursor, e.seq;
UPDATE log SET prev = id - 1 WHERE tbl = (SELECT p.tbl FROM log p WHERE p.id = log.id - 1);
INSERT INTO log_heads (tbl, seq, last)
    SELECT tbl, seq, id FROM log WHERE id IN (SELECT max(id) FROM log GROUP BY tbl);
DROP TABLE events;
CREATE TRIGGER log_chain AFTER INSERT ON log BEGIN
    SELECT RAISE(ABORT, 'log entry out of sequence')
        WHERE coalesce(
            (SELECT h.seq + 1 = NEW.seq AND h.last IS NEW.prev FROM log_heads h WHERE h.tbl = NEW.tbl),
            NEW.seq = 0 AND NEW.prev IS NULL) IS NOT 1;
    INSERT INTO log_heads (tbl, seq, last) VALUES (NEW.tbl, NEW.seq, NEW.id)
        ON CONFLICT (tbl) DO UPDATE SET seq = excluded.seq, last = excluded.last;
END;
"#,
    // Accounts (the owners of bots), bot versions, provable and ladder tables, and ladders:
    // entries, matches (one table or a duplicate set) with their results, and ratings. A
    // match's ratings are written in the transaction that marks it rated (`rate_match`).
    r#"
CREATE TABLE accounts (
    id          TEXT PRIMARY KEY,
    name        TEXT NOT NULL,
    token_hash  TEXT NOT NULL UNIQUE,
    created_at  INTEGER NOT NULL
);
ALTER TABLE bots ADD COLUMN account_id TEXT;
ALTER TABLE bots ADD COLUMN version TEXT NOT NULL DEFAULT '1';
CREATE UNIQUE INDEX bots_lineage ON bots(account_id, name, version) WHERE account_id IS NOT NULL;
ALTER TABLE tables ADD COLUMN seed_chosen INTEGER NOT NULL DEFAULT 0;
ALTER TABLE tables ADD COLUMN ladder_id TEXT;
ALTER TABLE tables ADD COLUMN ladder_match TEXT;
ALTER TABLE tables ADD COLUMN ladder_rotation INTEGER;
CREATE INDEX tables_ladder_match ON tables(ladder_match) WHERE ladder_match IS NOT NULL;
CREATE TABLE ladder_entries (
    ladder_id       TEXT NOT NULL,
    bot_id          TEXT NOT NULL,
    capacity        INTEGER NOT NULL,
    active          INTEGER NOT NULL,
    removed_reason  TEXT NOT NULL DEFAULT '',
    entered_at      INTEGER NOT NULL,
    PRIMARY KEY (ladder_id, bot_id)
);
CREATE TABLE ladder_matches (
    cursor      INTEGER PRIMARY KEY AUTOINCREMENT,
    id          TEXT NOT NULL UNIQUE,
    ladder_id   TEXT NOT NULL,
    seed        TEXT NOT NULL,
    duplicate   INTEGER NOT NULL,
    entrants    TEXT NOT NULL,
    state       TEXT NOT NULL,
    started_at  INTEGER NOT NULL,
    rated_at    INTEGER,
    rated_seq   INTEGER,
    results     TEXT
);
CREATE INDEX ladder_matches_ladder ON ladder_matches(ladder_id, cursor);
CREATE INDEX ladder_matches_state ON ladder_matches(state);
CREATE TABLE ladder_match_bots (
    match_id  TEXT NOT NULL,
    bot_id    TEXT NOT NULL,
    cursor    INTEGER NOT NULL,
    PRIMARY KEY (bot_id, match_id)
);
CREATE TABLE ladder_ratings (
    ladder_id   TEXT NOT NULL,
    bot_id      TEXT NOT NULL,
    mu          REAL NOT NULL,
    sigma       REAL NOT NULL,
    matches     INTEGER NOT NULL,
    jetons      INTEGER NOT NULL,
    deals       INTEGER NOT NULL,
    last_net    INTEGER NOT NULL,
    last_place  INTEGER NOT NULL,
    PRIMARY KEY (ladder_id, bot_id)
);
"#,
    // Revoked bot tokens (BotService.RotateBotToken), by hash: a call with one is told
    // TOKEN_REVOKED rather than "unknown token", so a bot that missed its rotation knows why.
    // The bot's current hash is in `bots`; this keeps the replaced ones.
    r#"
CREATE TABLE revoked_tokens (
    token_hash  TEXT PRIMARY KEY,
    bot_id      TEXT NOT NULL,
    revoked_at  INTEGER NOT NULL
);
"#,
    // Bots' strike records on ladders: removals and cooldowns outlive a restart.
    super::strikes::MIGRATION,
];

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

async fn migrate(conn: &mut SqliteConnection) -> Result<(), StoreError> {
    let version: i64 = sqlx::query("PRAGMA user_version")
        .fetch_one(&mut *conn)
        .await?
        .try_get(0)?;
    // A newer binary's schema (e.g. after a rollback): its steps may have dropped what this
    // binary reads and writes (step 3 drops `events`), so refuse to start rather than fail on
    // every move.
    crate::refuse_newer_schema(version, MIGRATIONS.len())?;
    for (i, sql) in MIGRATIONS.iter().enumerate().skip(version.max(0) as usize) {
        let mut tx = conn.begin().await?;
        // A step is several statements (a trigger has `;` inside it): run as one script.
        // (Through `Executor`: its boxed future is `Send`, `RawSql::execute`'s is not general.)
        (&mut *tx).execute(sqlx::raw_sql(sql)).await?;
        sqlx::query(&format!("PRAGMA user_version = {}", i + 1))
            .execute(&mut *tx)
            .await?;
        tx.commit().await?;
    }
    Ok(())
}

async fn writer_loop(
    mut conn: SqliteConnection,
    mut rx: mpsc::Receiver<WriteReq>,
    mut watermark: guard::Watermark,
) {
    let mut batch: Vec<WriteReq> = Vec::with_capacity(MAX_BATCH);
    while let Some(first) = rx.recv().await {
        batch.push(first);
        while batch.len() < MAX_BATCH {
            match rx.try_recv() {
                Ok(req) => batch.push(req),
                Err(_) => break,
            }
        }
        let ops: Vec<&WriteOp> = batch.iter().map(|r| &r.op).collect();
        let appends = ops.iter().any(|op| op.appends());
        // One commit makes many callers' writes durable: its own trace, linked to each of them
        // (a move's trace finds its commit through the link).
        let commit =
            tracing::debug_span!(parent: None, "store.commit", writes = batch.len() as i64);
        if !commit.is_disabled() {
            for r in &batch {
                commit.follows_from(&r.span);
            }
        }
        match apply_batch(&mut conn, &ops).instrument(commit).await {
            Ok(()) => {
                // The watermark before the answers: an acknowledged entry is always covered.
                if appends {
                    record_newest(&mut conn, &mut watermark).await;
                }
                for req in batch.drain(..) {
                    let _ = req.done.send(Ok(()));
                }
            }
            Err(err) => {
                // One bad write must not fail its neighbours: retry each alone.
                tracing::warn!(%err, size = batch.len(), "group commit failed; retrying writes one by one");
                let mut intact = no_open_transaction(&mut conn).await;
                for req in batch.drain(..) {
                    if !intact {
                        let _ = req.done.send(Err(StoreError::Closed));
                        continue;
                    }
                    let res = apply_batch(&mut conn, &[&req.op]).await;
                    if res.is_err() {
                        intact = no_open_transaction(&mut conn).await;
                    } else if req.op.appends() {
                        record_newest(&mut conn, &mut watermark).await;
                    }
                    let _ = req.done.send(res);
                }
                if !intact {
                    // Fail-stop: every later write is refused (`Closed`) rather than risk an
                    // acknowledged append that is not durable.
                    tracing::error!(
                        "a failed write left a transaction open; the store stops writing"
                    );
                    return;
                }
            }
        }
    }
}

/// Writes the newest log entry's id to the watermark (a failed read leaves it behind, which
/// only hides a loss, never invents one).
async fn record_newest(conn: &mut SqliteConnection, watermark: &mut guard::Watermark) {
    if let Ok(newest) = guard::newest_entry(conn).await {
        watermark.record(newest);
    }
}

/// After a failed write: whether the connection is outside any transaction. A failed mixed
/// batch is rolled back (`apply_batch`), but if that ROLLBACK failed too the transaction may
/// still be open, and the next batch of plain appends (an autocommit statement) would run
/// inside it and be answered before anything is durable. `BEGIN` fails inside a transaction,
/// so an empty `BEGIN; COMMIT` that succeeds proves there is none.
async fn no_open_transaction(conn: &mut SqliteConnection) -> bool {
    match sqlx::query("BEGIN").execute(&mut *conn).await {
        Ok(_) => sqlx::query("COMMIT").execute(&mut *conn).await.is_ok(),
        Err(_) => false,
    }
}

/// The log rows of a batch's appends, in one statement whatever the batch size (so that a
/// batch of plain appends is one autocommit transaction; see below). Each row is bound as
/// `(k, table, seq, payload, last_seq, prev)`: ids continue from the newest row, `k` the row's
/// place in the batch. `prev` is the place in the batch of the same table's entry before this
/// one, or null when it is the table's first in the batch: then the entry follows the table's
/// head. (The trigger on `log` makes SQLite run the whole SELECT before the first row goes in,
/// so `base` and the heads it reads are those of before the batch; the trigger checks each row
/// against the head as it stands then.) An unknown table leaves `tbl` null, which NOT NULL
/// refuses. Lower-case `as`: see `READ_LOG`.
///
/// The rows are bound, not passed as one JSON array for `json_each` to take apart: parsing that
/// array (each payload a JSON string inside it) and the `->>` per field were ≈ 4 % of the
/// server's CPU per move. A statement is prepared per row count, so a batch is padded with
/// empty rows (filtered out) to one of [`row_bucket`]'s sizes: 47 statements in all (the
/// writer's statement cache holds them all).
///
/// A batch of plain appends runs this alone, as its own (autocommit) transaction, committed with
/// the connection's `synchronous=FULL` exactly like an explicit COMMIT. Not inside BEGIN …
/// COMMIT: a multi-row insert that may abort midway keeps a statement journal of every page it
/// touches inside an open transaction (SQLite 3.46, ≈ 18 % of the server's CPU per move went
/// with it); as a transaction of its own, an abort rolls the whole batch back with none. A mixed
/// batch runs it inside its transaction.
fn insert_rows_sql(rows: usize) -> String {
    let mut values = String::with_capacity(rows * 16);
    for k in 0..rows {
        if k > 0 {
            values.push(',');
        }
        values.push_str(&format!("({k},?,?,?,?,?)"));
    }
    format!(
        "INSERT INTO log (id, tbl, seq, prev, payload, last_seq) \
         SELECT n.base + r.column1, t.cursor, r.column3, \
           coalesce(n.base + r.column6, (SELECT h.last FROM log_heads h WHERE h.tbl = t.cursor)), \
           r.column4, r.column5 \
         FROM (SELECT coalesce(max(id), 0) + 1 base FROM log) n, (VALUES {values}) r \
           LEFT JOIN tables t ON t.id = r.column2 \
         WHERE r.column2 IS NOT NULL ORDER BY r.column1"
    )
}

/// [`insert_rows_sql`] for a [`row_bucket`] size, each text built once.
/// `None` past [`MAX_BATCH`] rows (the writer never takes more).
fn insert_rows_sql_cached(bucket: usize) -> Option<&'static str> {
    static TEXTS: [OnceLock<String>; 47] = [const { OnceLock::new() }; 47];
    let slot = if bucket <= 16 {
        bucket.checked_sub(1)?
    } else {
        15 + bucket / 16 - 1
    };
    debug_assert_eq!(row_bucket(bucket), bucket, "not a statement size");
    Some(TEXTS.get(slot)?.get_or_init(|| insert_rows_sql(bucket)))
}

/// The row count a statement of [`insert_rows_sql`] is prepared for, at least `rows`: exact up
/// to 16, then the next multiple of 16 (47 sizes up to [`MAX_BATCH`]).
fn row_bucket(rows: usize) -> usize {
    if rows <= 16 {
        rows
    } else {
        rows.div_ceil(16) * 16
    }
}

/// A batch's log rows, ready to bind.
struct LogRows<'a> {
    /// `(table, seq, payload, last_seq, prev)`.
    rows: Vec<(&'a str, i64, String, i64, Option<i64>)>,
}

impl LogRows<'_> {
    fn is_empty(&self) -> bool {
        self.rows.is_empty()
    }

    /// Inserts the rows (see [`insert_rows_sql`]).
    async fn insert(&self, conn: &mut SqliteConnection) -> Result<(), sqlx::Error> {
        if self.rows.is_empty() {
            return Ok(());
        }
        let bucket = row_bucket(self.rows.len());
        let sql = insert_rows_sql_cached(bucket).ok_or_else(|| {
            sqlx::Error::Protocol(format!("a batch of {} log rows", self.rows.len()))
        })?;
        let mut q = sqlx::query(sql);
        for (table, seq, payload, last_seq, prev) in &self.rows {
            q = q
                .bind(*table)
                .bind(*seq)
                .bind(payload.as_str())
                .bind(*last_seq)
                .bind(*prev);
        }
        for _ in self.rows.len()..bucket {
            q = q
                .bind(None::<&str>)
                .bind(None::<i64>)
                .bind(None::<&str>)
                .bind(None::<i64>)
                .bind(None::<i64>);
        }
        q.execute(&mut *conn).await.map(drop)
    }
}

async fn apply_batch(conn: &mut SqliteConnection, ops: &[&WriteOp]) -> Result<(), StoreError> {
    let result = if ops.iter().all(|op| op.is_plain_append()) {
        match log_rows(ops) {
            Ok(rows) => rows.insert(conn).await.map_err(StoreError::from),
            Err(e) => return Err(e),
        }
    } else {
        apply_mixed(conn, ops).await
    };
    if result.is_err() {
        // A failed mixed batch left its transaction open (or SQLite already rolled it back); a
        // failed append batch was rolled back by SQLite, and this ROLLBACK is refused harmlessly.
        let _ = sqlx::query("ROLLBACK").execute(&mut *conn).await;
    }
    result
}

/// A batch with other writes than plain appends (table creation, seats, finished matches): each
/// in order, in one transaction, the log rows in one statement at the end.
async fn apply_mixed(conn: &mut SqliteConnection, ops: &[&WriteOp]) -> Result<(), StoreError> {
    sqlx::query("BEGIN IMMEDIATE").execute(&mut *conn).await?;
    for op in ops {
        match op {
            WriteOp::Append { table, entry, .. } => {
                writes::update_seats(conn, table, entry).await?
            }
            other => apply(conn, other).await?,
        }
    }
    let rows = log_rows(ops)?;
    if !rows.is_empty() {
        rows.insert(conn).await?;
    }
    sqlx::query("COMMIT").execute(&mut *conn).await?;
    Ok(())
}

/// The log rows of a batch's appends, as [`LogRows::insert`] binds them.
fn log_rows<'a>(ops: &[&'a WriteOp]) -> Result<LogRows<'a>, StoreError> {
    let encode =
        |e: serde_json::Error| StoreError::Corrupt(format!("cannot encode log entry: {e}"));
    let mut rows = Vec::with_capacity(ops.len());
    // Each table's newest row so far in this batch, by place in `rows`.
    let mut newest: HashMap<&str, usize> = HashMap::default();
    let mut push = |table: &'a str, seq: u64, entry: &LogEntry, last_seq: u64| {
        let payload = serde_json::to_string(entry).map_err(encode)?;
        let prev = newest.insert(table, rows.len());
        rows.push((
            table,
            seq as i64,
            payload,
            last_seq as i64,
            prev.map(|i| i as i64),
        ));
        Ok::<_, StoreError>(())
    };
    for op in ops {
        match op {
            WriteOp::Append {
                table,
                seq,
                entry,
                last_seq,
            } => push(table, *seq, entry, *last_seq)?,
            // A new table's first entries, in the transaction that creates it.
            WriteOp::CreateTable(t, _, log) => {
                for (seq, (entry, last_seq)) in log.iter().enumerate() {
                    push(&t.id, seq as u64, entry, *last_seq)?;
                }
            }
            _ => {}
        }
    }
    Ok(LogRows { rows })
}

/// A write of a mixed batch: SQLite's own (a table and its seats; a finished table), or one the
/// dialects share (`writes.rs`).
async fn apply(conn: &mut SqliteConnection, op: &WriteOp) -> Result<(), StoreError> {
    match op {
        WriteOp::CreateTable(t, seats, _) => {
            writes::bind_table(
                sqlx::query(
                    "INSERT INTO tables (id, ruleset, seats, config, seed, first_dealer, deadline_ms, \
                     visibility, state, created_by, created_at, seed_chosen, ladder_id, ladder_match, \
                     ladder_rotation) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15)",
                ),
                t,
            )
            .execute(&mut *conn)
            .await?;
            for s in seats {
                let (bot, house) = match &s.occupant {
                    Occupant::Empty => (None, None),
                    Occupant::Bot(b) => (Some(b.as_str()), None),
                    Occupant::House(h) => (None, Some(h.as_str())),
                };
                sqlx::query("INSERT INTO seats (table_id, seat, bot_id, house, strikes) VALUES (?, ?, ?, ?, ?)")
                    .bind(&t.id)
                    .bind(i64::from(s.seat))
                    .bind(bot)
                    .bind(house)
                    .bind(i64::from(s.strikes))
                    .execute(&mut *conn)
                    .await?;
            }
        }
        WriteOp::Finish {
            table,
            record,
            ratings,
        } => {
            writes::set_state(conn, table, TableState::Finished).await?;
            writes::store_result(conn, table, record, ratings).await?;
        }
        other => writes::apply(conn, other).await?,
    }
    Ok(())
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

    fn create_table(&self, table: TableRow, seats: Vec<SeatRow>) -> StoreFuture<'_, ()> {
        Box::pin(self.write(WriteOp::CreateTable(table, seats, Vec::new())))
    }

    fn create_seated_table(
        &self,
        table: TableRow,
        seats: Vec<SeatRow>,
        log: Vec<(LogEntry, u64)>,
    ) -> StoreFuture<'_, ()> {
        Box::pin(self.write(WriteOp::CreateTable(table, seats, log)))
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
mod tests {
    use super::*;
    use crate::{TableFilter, Visibility};

    /// A migrated database in `dir` and one connection to it, as the writer has; the options
    /// open it again.
    async fn writer_connection(
        dir: &tempfile::TempDir,
    ) -> (SqliteConnectOptions, SqliteConnection) {
        let opts = SqliteConnectOptions::from_str("sqlite://")
            .unwrap()
            .filename(dir.path().join("bete.sqlite3"))
            .create_if_missing(true)
            .journal_mode(SqliteJournalMode::Wal);
        let mut conn = SqliteConnection::connect_with(&opts).await.unwrap();
        migrate(&mut conn).await.unwrap();
        (opts, conn)
    }

    fn table(id: &str, vis: Visibility) -> TableRow {
        TableRow {
            id: id.into(),
            ruleset: "bete".into(),
            seats: 3,
            config_json: "{}".into(),
            seed: "00".repeat(32),
            first_dealer: 0,
            deadline_ms: 10_000,
            visibility: vis,
            state: TableState::Waiting,
            last_seq: 0,
            created_by: "b1".into(),
            created_at_ms: 1,
            seed_chosen: false,
            ladder: None,
        }
    }

    fn seats() -> Vec<SeatRow> {
        vec![
            SeatRow {
                seat: 0,
                occupant: Occupant::Empty,
                name: String::new(),
                strikes: 0,
            },
            SeatRow {
                seat: 1,
                occupant: Occupant::House("random".into()),
                name: String::new(),
                strikes: 0,
            },
            SeatRow {
                seat: 2,
                occupant: Occupant::Empty,
                name: String::new(),
                strikes: 0,
            },
        ]
    }

    /// A client's `pass` at seat 0 as the writer receives it.
    fn pass_append(table: &str, seq: u64, time_ms: i64) -> WriteOp {
        WriteOp::Append {
            table: table.into(),
            seq,
            entry: pass(time_ms),
            last_seq: seq + 1,
        }
    }

    fn pass(time_ms: i64) -> LogEntry {
        LogEntry::Action {
            seat: 0,
            action: "pass".into(),
            auto: false,
            request_id: None,
            time_ms,
        }
    }

    /// Creates the tables, in one batch, on the writer's connection.
    async fn create_tables(conn: &mut SqliteConnection, ids: &[&str]) {
        let ops: Vec<WriteOp> = ids
            .iter()
            .map(|id| WriteOp::CreateTable(table(id, Visibility::Listed), seats(), Vec::new()))
            .collect();
        apply_batch(conn, &ops.iter().collect::<Vec<_>>())
            .await
            .unwrap();
    }

    async fn log_rows_count(conn: &mut SqliteConnection) -> Result<i64, sqlx::Error> {
        sqlx::query_scalar("SELECT count(*) FROM log")
            .fetch_one(conn)
            .await
    }

    /// A batch of plain appends runs as one autocommit statement: when one row conflicts,
    /// none of the batch's rows stays (the writer then retries each alone), and no transaction
    /// is left open for the next batch.
    #[tokio::test]
    async fn a_failed_append_batch_leaves_none_of_its_rows() {
        let dir = tempfile::tempdir().unwrap();
        let (opts, mut conn) = writer_connection(&dir).await;
        create_tables(&mut conn, &["t1", "t2"]).await;
        let (a, dup, b) = (
            pass_append("t1", 0, 1),
            pass_append("t1", 0, 2),
            pass_append("t2", 0, 3),
        );
        assert!(apply_batch(&mut conn, &[&a, &dup, &b]).await.is_err());
        assert_eq!(log_rows_count(&mut conn).await.unwrap(), 0);
        // A padded batch (20 rows: a statement of 32) whose last row is out of sequence.
        let mut big: Vec<WriteOp> = (0..19).map(|i| pass_append("t2", i, i as i64)).collect();
        big.push(pass_append("t1", 5, 99));
        assert!(
            apply_batch(&mut conn, &big.iter().collect::<Vec<_>>())
                .await
                .is_err()
        );
        assert_eq!(log_rows_count(&mut conn).await.unwrap(), 0);
        apply_batch(&mut conn, &[&a, &b]).await.unwrap();
        assert_eq!(log_rows_count(&mut conn).await.unwrap(), 2);
        drop(conn);
        // Committed, not left in an open transaction.
        let mut conn = SqliteConnection::connect_with(&opts).await.unwrap();
        assert_eq!(log_rows_count(&mut conn).await.unwrap(), 2);
    }

    /// Several entries of one table in one batch, among other tables' entries, chain up in
    /// order, and the next batch continues each chain from its head.
    #[tokio::test]
    async fn entries_of_one_table_in_one_batch_keep_their_order() {
        let dir = tempfile::tempdir().unwrap();
        let (_, mut conn) = writer_connection(&dir).await;
        create_tables(&mut conn, &["t1", "t2"]).await;
        let ops = [
            pass_append("t1", 0, 10),
            pass_append("t2", 0, 20),
            pass_append("t1", 1, 11),
            pass_append("t1", 2, 12),
            pass_append("t2", 1, 21),
        ];
        apply_batch(&mut conn, &ops.iter().collect::<Vec<_>>())
            .await
            .unwrap();
        let more = [pass_append("t2", 2, 22), pass_append("t1", 3, 13)];
        apply_batch(&mut conn, &more.iter().collect::<Vec<_>>())
            .await
            .unwrap();
        // A mixed batch (a table created, a seat taken) appends inside its transaction.
        let mixed = [
            WriteOp::CreateTable(table("t3", Visibility::Listed), seats(), Vec::new()),
            pass_append("t3", 0, 30),
            pass_append("t1", 4, 14),
            WriteOp::Append {
                table: "t1".into(),
                seq: 5,
                entry: LogEntry::Join {
                    seat: 2,
                    bot: "b1".into(),
                    name: "alice".into(),
                    time_ms: 15,
                },
                last_seq: 6,
            },
        ];
        apply_batch(&mut conn, &mixed.iter().collect::<Vec<_>>())
            .await
            .unwrap();
        drop(conn);
        let s = SqliteStore::open(dir.path()).await.unwrap();
        let mut t1: Vec<LogEntry> = [10, 11, 12, 13, 14].map(pass).into();
        t1.push(LogEntry::Join {
            seat: 2,
            bot: "b1".into(),
            name: "alice".into(),
            time_ms: 15,
        });
        assert_eq!(s.log("t1".into()).await.unwrap(), t1);
        assert_eq!(s.log("t2".into()).await.unwrap(), [20, 21, 22].map(pass));
        assert_eq!(s.log("t3".into()).await.unwrap(), [pass(30)]);
        let t = s.table("t1".into()).await.unwrap().unwrap();
        assert_eq!(t.table.last_seq, 6);
        assert_eq!(t.seats[2].occupant, Occupant::Bot("b1".into()));
        assert!(s.log("nope".into()).await.unwrap().is_empty());
    }

    /// A batch whose size is not a statement size is padded with empty rows: none of them is
    /// written, and the real rows (three tables interleaved) chain up in order.
    #[tokio::test]
    async fn a_padded_batch_writes_exactly_its_rows() {
        let dir = tempfile::tempdir().unwrap();
        let (_, mut conn) = writer_connection(&dir).await;
        create_tables(&mut conn, &["t1", "t2", "t3"]).await;
        let tables = ["t1", "t2", "t3"];
        let mut seqs = [0u64; 3];
        for size in [37, 1, 16, 17] {
            assert_eq!(row_bucket(size) != size, size > 16, "{size} is padded");
            let ops: Vec<WriteOp> = (0..size)
                .map(|i| {
                    let t = (i * 7 + size) % 3;
                    seqs[t] += 1;
                    pass_append(tables[t], seqs[t] - 1, (t * 1000) as i64 + seqs[t] as i64)
                })
                .collect();
            apply_batch(&mut conn, &ops.iter().collect::<Vec<_>>())
                .await
                .unwrap();
        }
        assert_eq!(log_rows_count(&mut conn).await.unwrap(), 37 + 1 + 16 + 17);
        drop(conn);
        let s = SqliteStore::open(dir.path()).await.unwrap();
        for (t, id) in tables.iter().enumerate() {
            let want: Vec<LogEntry> = (1..=seqs[t])
                .map(|n| pass((t * 1000) as i64 + n as i64))
                .collect();
            assert_eq!(s.log((*id).into()).await.unwrap(), want, "{id}");
        }
    }

    /// Every batch size up to the writer's limit has its statement; none past it.
    #[test]
    fn every_batch_size_has_a_statement() {
        let mut sizes = std::collections::BTreeSet::new();
        for rows in 1..=MAX_BATCH {
            let bucket = row_bucket(rows);
            assert!(bucket >= rows && bucket - rows < 16, "{rows} -> {bucket}");
            let sql = insert_rows_sql_cached(bucket).unwrap();
            assert_eq!(sql.matches('?').count(), 5 * bucket);
            sizes.insert(bucket);
        }
        assert_eq!(sizes.len(), 47);
        assert!(insert_rows_sql_cached(row_bucket(MAX_BATCH + 1)).is_none());
        assert!(insert_rows_sql_cached(0).is_none());
    }

    /// The log refuses what would break a table's chain: a seq already taken, a gap, an entry
    /// of a table that does not exist, an entry not pointing at the head. Each fails alone.
    #[tokio::test]
    async fn the_log_refuses_entries_out_of_sequence() {
        let dir = tempfile::tempdir().unwrap();
        let (_, mut conn) = writer_connection(&dir).await;
        create_tables(&mut conn, &["t1"]).await;
        apply_batch(&mut conn, &[&pass_append("t1", 0, 1)])
            .await
            .unwrap();
        for bad in [
            pass_append("t1", 0, 2),
            pass_append("t1", 2, 2),
            pass_append("nope", 0, 2),
        ] {
            assert!(apply_batch(&mut conn, &[&bad]).await.is_err());
        }
        // Straight SQL, as a bug in the writer could write it: seq right, prev wrong.
        let forged = "INSERT INTO log (tbl, seq, prev, payload) \
             SELECT cursor, 1, NULL, '{}' FROM tables WHERE id = 't1'";
        assert!(sqlx::query(forged).execute(&mut conn).await.is_err());
        assert_eq!(log_rows_count(&mut conn).await.unwrap(), 1);
        apply_batch(&mut conn, &[&pass_append("t1", 1, 3)])
            .await
            .unwrap();
        drop(conn);
        let s = SqliteStore::open(dir.path()).await.unwrap();
        assert_eq!(s.log("t1".into()).await.unwrap(), [pass(1), pass(3)]);
    }

    /// The writer's check after a failed write tells an open transaction from none, and leaves
    /// none open itself.
    #[tokio::test]
    async fn an_open_transaction_is_detected_after_a_failed_write() {
        let dir = tempfile::tempdir().unwrap();
        let (_, mut conn) = writer_connection(&dir).await;
        assert!(no_open_transaction(&mut conn).await);
        assert!(
            no_open_transaction(&mut conn).await,
            "the check commits what it opens"
        );
        sqlx::query("BEGIN").execute(&mut conn).await.unwrap();
        assert!(!no_open_transaction(&mut conn).await);
        sqlx::query("ROLLBACK").execute(&mut conn).await.unwrap();
        assert!(no_open_transaction(&mut conn).await);
    }

    #[tokio::test]
    async fn a_log_written_before_rows_carried_last_seq_keeps_it() {
        let dir = tempfile::tempdir().unwrap();
        {
            // The schema of the first migration, as an older server left it.
            let mut conn = SqliteConnection::connect_with(
                &SqliteConnectOptions::new()
                    .filename(dir.path().join("bete.sqlite3"))
                    .create_if_missing(true)
                    .journal_mode(SqliteJournalMode::Wal),
            )
            .await
            .unwrap();
            for stmt in MIGRATIONS[0]
                .split(';')
                .map(str::trim)
                .filter(|s| !s.is_empty())
            {
                sqlx::query(stmt).execute(&mut conn).await.unwrap();
            }
            sqlx::query("PRAGMA user_version = 1")
                .execute(&mut conn)
                .await
                .unwrap();
            sqlx::query(
                "INSERT INTO tables (id, ruleset, seats, config, seed, first_dealer, deadline_ms, \
                 visibility, state, last_seq, created_by, created_at) \
                 VALUES ('t1', 'bete', 3, '{}', ?, 0, 10000, 'listed', 'playing', 7, 'b1', 1)",
            )
            .bind("00".repeat(32))
            .execute(&mut conn)
            .await
            .unwrap();
            let pass = r#"{"kind":"action","seat":0,"action":"pass","auto":false,"time_ms":1}"#;
            sqlx::query("INSERT INTO events (table_id, seq, payload) VALUES ('t1', 0, ?)")
                .bind(pass)
                .execute(&mut conn)
                .await
                .unwrap();
            conn.close().await.unwrap();
        }
        let s = SqliteStore::open(dir.path()).await.unwrap();
        let t = s.table("t1".into()).await.unwrap().unwrap();
        assert_eq!(t.table.last_seq, 7);
        let pass = LogEntry::Action {
            seat: 1,
            action: "pass".into(),
            auto: false,
            request_id: None,
            time_ms: 2,
        };
        s.append("t1".into(), 1, pass.clone(), 9).await.unwrap();
        let listed = s
            .list_tables(TableFilter {
                limit: 10,
                ..Default::default()
            })
            .await
            .unwrap();
        assert_eq!(listed[0].table.last_seq, 9);
        assert_eq!(s.log("t1".into()).await.unwrap()[1], pass);
    }

    /// A database of the schema before `log` (user_version 2, the log in `events` keyed by
    /// table id) opens: every table's log is moved over in order and replays as it was, and
    /// appends continue each table's chain.
    #[tokio::test]
    async fn a_log_kept_in_events_is_moved_to_the_log() {
        let dir = tempfile::tempdir().unwrap();
        let join = |seat: u8, bot: &str, t: i64| LogEntry::Join {
            seat,
            bot: bot.into(),
            name: bot.into(),
            time_ms: t,
        };
        let t1 = vec![join(0, "b1", 1), pass(2), pass(3)];
        let t2 = vec![join(2, "b2", 4), pass(5)];
        {
            let mut conn = SqliteConnection::connect_with(
                &SqliteConnectOptions::new()
                    .filename(dir.path().join("bete.sqlite3"))
                    .create_if_missing(true)
                    .journal_mode(SqliteJournalMode::Wal),
            )
            .await
            .unwrap();
            for step in &MIGRATIONS[..2] {
                sqlx::raw_sql(step).execute(&mut conn).await.unwrap();
            }
            sqlx::query("PRAGMA user_version = 2")
                .execute(&mut conn)
                .await
                .unwrap();
            for id in ["t1", "t2", "t3"] {
                sqlx::query(
                    "INSERT INTO tables (id, ruleset, seats, config, seed, first_dealer, \
                     deadline_ms, visibility, state, last_seq, created_by, created_at) \
                     VALUES (?, 'bete', 3, '{}', ?, 0, 10000, 'listed', 'playing', 0, 'b1', 1)",
                )
                .bind(id)
                .bind("00".repeat(32))
                .execute(&mut conn)
                .await
                .unwrap();
            }
            // Interleaved as the tables played, plus a row of a table that does not exist.
            let rows = [
                ("t2", 0, &t2[0]),
                ("t1", 0, &t1[0]),
                ("ghost", 0, &t1[0]),
                ("t1", 1, &t1[1]),
                ("t2", 1, &t2[1]),
                ("t1", 2, &t1[2]),
            ];
            for (table, seq, entry) in rows {
                sqlx::query(
                    "INSERT INTO events (table_id, seq, payload, last_seq) VALUES (?, ?, ?, ?)",
                )
                .bind(table)
                .bind(seq)
                .bind(serde_json::to_string(entry).unwrap())
                .bind(10 * seq + 10)
                .execute(&mut conn)
                .await
                .unwrap();
            }
            conn.close().await.unwrap();
        }
        let s = SqliteStore::open(dir.path()).await.unwrap();
        assert_eq!(s.log("t1".into()).await.unwrap(), t1);
        assert_eq!(s.log("t2".into()).await.unwrap(), t2);
        assert!(s.log("t3".into()).await.unwrap().is_empty());
        assert!(s.log("ghost".into()).await.unwrap().is_empty());
        assert_eq!(
            s.table("t1".into()).await.unwrap().unwrap().table.last_seq,
            30
        );
        assert_eq!(
            s.table("t2".into()).await.unwrap().unwrap().table.last_seq,
            20
        );
        assert_eq!(
            s.table("t3".into()).await.unwrap().unwrap().table.last_seq,
            0
        );
        // The chains go on from the moved heads; a seq already taken is still refused.
        assert!(s.append("t1".into(), 2, pass(6), 31).await.is_err());
        s.append("t1".into(), 3, pass(6), 40).await.unwrap();
        s.append("t3".into(), 0, pass(7), 1).await.unwrap();
        drop(s);
        let s = SqliteStore::open(dir.path()).await.unwrap();
        let mut more = t1.clone();
        more.push(pass(6));
        assert_eq!(s.log("t1".into()).await.unwrap(), more);
        assert_eq!(s.log("t2".into()).await.unwrap(), t2);
        assert_eq!(s.log("t3".into()).await.unwrap(), [pass(7)]);
        assert_eq!(
            s.table("t1".into()).await.unwrap().unwrap().table.last_seq,
            40
        );
    }

    /// `writer_stopped` stays pending while the writer runs and resolves once it has stopped
    /// (here: its task ended, as after a fail-stop), when writes fail with `Closed`.
    #[tokio::test]
    async fn writer_stopped_resolves_only_when_the_writer_ends() {
        let dir = tempfile::tempdir().unwrap();
        let s = SqliteStore::open(dir.path()).await.unwrap();
        let pending = tokio::time::timeout(Duration::from_millis(100), s.writer_stopped()).await;
        assert!(pending.is_err(), "a running writer has not stopped");
        s.create_table(table("t1", Visibility::Listed), seats())
            .await
            .unwrap();
        // A store whose writer task has ended, as `writer_loop` ends on a fail-stop.
        let stopped = s.with_stopped_writer();
        tokio::time::timeout(Duration::from_secs(5), stopped.writer_stopped())
            .await
            .expect("resolves")
            .unwrap();
        assert!(matches!(
            stopped.append("t1".into(), 0, pass(1), 1).await,
            Err(StoreError::Closed)
        ));
    }

    /// A database written by a newer bete-server (a schema step this binary does not know)
    /// is refused at open, naming both versions, instead of failing on every move.
    #[tokio::test]
    async fn a_newer_schema_is_refused_at_open() {
        let dir = tempfile::tempdir().unwrap();
        drop(SqliteStore::open(dir.path()).await.unwrap());
        {
            let (_, mut conn) = writer_connection(&dir).await;
            sqlx::query(&format!("PRAGMA user_version = {}", MIGRATIONS.len() + 1))
                .execute(&mut conn)
                .await
                .unwrap();
            conn.close().await.unwrap();
        }
        let Err(err) = SqliteStore::open(dir.path()).await else {
            panic!("a newer schema must be refused");
        };
        let text = err.to_string();
        assert!(
            text.contains(&format!("version {}", MIGRATIONS.len() + 1))
                && text.contains(&format!("this bete-server's {}", MIGRATIONS.len())),
            "{text}"
        );
    }

    /// A `prev` damaged to point at another table's row ends the chain there: the log reads as
    /// corrupt (it does not start at seq 0) instead of taking in the other table's entries.
    #[tokio::test]
    async fn a_chain_pointing_into_another_table_reads_as_corrupt() {
        let dir = tempfile::tempdir().unwrap();
        let s = SqliteStore::open(dir.path()).await.unwrap();
        for id in ["t1", "t2"] {
            s.create_table(table(id, Visibility::Listed), seats())
                .await
                .unwrap();
        }
        s.append("t1".into(), 0, pass(1), 1).await.unwrap();
        s.append("t2".into(), 0, pass(2), 1).await.unwrap();
        s.append("t2".into(), 1, pass(3), 2).await.unwrap();
        drop(s);
        {
            let (_, mut conn) = writer_connection(&dir).await;
            // t2's second entry now claims t1's first as its predecessor.
            sqlx::query(
                "UPDATE log SET prev = (SELECT l.id FROM log l JOIN tables t ON t.cursor = l.tbl \
                 WHERE t.id = 't1' AND l.seq = 0) \
                 WHERE id = (SELECT h.last FROM log_heads h JOIN tables t ON t.cursor = h.tbl \
                 WHERE t.id = 't2')",
            )
            .execute(&mut conn)
            .await
            .unwrap();
            conn.close().await.unwrap();
        }
        let s = SqliteStore::open(dir.path()).await.unwrap();
        assert_eq!(s.log("t1".into()).await.unwrap(), [pass(1)]);
        assert!(
            matches!(s.log("t2".into()).await, Err(StoreError::Corrupt(_))),
            "t2's log must not take in t1's entry"
        );
    }
}
