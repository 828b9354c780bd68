//! The writer: ONE task owns the only write connection, takes every request pending on its
//! channel, applies them all in one transaction (a batch of plain appends: one statement),
//! commits with `synchronous=FULL`, and only then answers each request (group commit).

use std::sync::OnceLock;

use foldhash::HashMap;
use sqlx::SqliteConnection;
use tokio::sync::mpsc;
use tracing::Instrument;

use super::{MAX_BATCH, WriteReq, writes};
use crate::writes::WriteOp;
use crate::{LogEntry, Occupant, StoreError, TableState, guard};

pub(super) async fn writer_loop(
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
pub(super) async fn record_newest(conn: &mut SqliteConnection, watermark: &mut guard::Watermark) {
    if let Ok(newest) = guard::newest_entry(conn).await {
        watermark.record(newest);
    }
}

/// After a failed write: whether the connection is outside any transaction. A failed mixed
/// batch is rolled back (`apply_batch`), but if that ROLLBACK failed too the transaction may
/// still be open, and the next batch of plain appends (an autocommit statement) would run
/// inside it and be answered before anything is durable. `BEGIN` fails inside a transaction,
/// so an empty `BEGIN; COMMIT` that succeeds proves there is none.
pub(super) async fn no_open_transaction(conn: &mut SqliteConnection) -> bool {
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
pub(super) fn insert_rows_sql(rows: usize) -> String {
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
pub(super) fn insert_rows_sql_cached(bucket: usize) -> Option<&'static str> {
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
pub(super) fn row_bucket(rows: usize) -> usize {
    if rows <= 16 {
        rows
    } else {
        rows.div_ceil(16) * 16
    }
}

/// A batch's log rows, ready to bind.
pub(super) struct LogRows<'a> {
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

pub(super) async fn apply_batch(
    conn: &mut SqliteConnection,
    ops: &[&WriteOp],
) -> Result<(), StoreError> {
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
pub(super) async fn apply_mixed(
    conn: &mut SqliteConnection,
    ops: &[&WriteOp],
) -> Result<(), StoreError> {
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
pub(super) fn log_rows<'a>(ops: &[&'a WriteOp]) -> Result<LogRows<'a>, StoreError> {
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
pub(super) async fn apply(conn: &mut SqliteConnection, op: &WriteOp) -> Result<(), StoreError> {
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
