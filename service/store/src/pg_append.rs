//! A group commit on PostgreSQL: every write of a batch in one transaction, and the batch's
//! log entries behind the fence in one statement.
//!
//! The fence, the entry counts and the log rows go in one statement: each table's row is
//! locked and checked (owner, epoch, entries, and this node's lease by PostgreSQL's clock),
//! and only if every table passes are the counts moved on and the entries inserted. A batch of
//! moves alone (the common case) is that one statement, committed on its own: one round trip
//! per group commit, and no row lock outlives it, so a node frozen right after sending it
//! holds up no peer. A batch with other writes (a table created, a seat taken) runs in a
//! transaction, whose locks PostgreSQL frees if the node freezes before committing
//! (`idle_in_transaction_session_timeout`, pg_lease.rs).

use sqlx::{PgConnection, Row};

use super::{LogEntry, StoreError, WriteOp, WriterCtx, apply, pg, update_seats};
use crate::pg_lease::LocalLease;

/// A schema step for the group commits: every commit updates the row of each table it appends
/// to (its entry count), so `tables` keeps half of each page free. An update then stays on its
/// row's page and touches no index (a HOT update): with full pages, a quarter of them moved
/// the row and inserted into each of the table's five indexes, half of all the index work of
/// a run of moves (`pg_waldump --stats`, docs/benchmarks.md). Pages written before this step
/// keep their fill until the table is rewritten (`VACUUM FULL tables`).
pub(super) const MIGRATION: &str = "ALTER TABLE tables SET (fillfactor = 50);";

/// The batch's appends to one table: its first seq, how many, and the newest's `last_seq`.
struct TableRun {
    table: String,
    first: i64,
    n: i64,
    last_seq: i64,
}

/// The appends of a batch, by table and as log rows.
#[derive(Default)]
struct Appends {
    runs: Vec<TableRun>,
    tables: Vec<String>,
    seqs: Vec<i64>,
    payloads: Vec<String>,
    lasts: Vec<i64>,
}

/// The fence and the log rows of a batch, as one statement. `fence` locks each table's row
/// (in id order, so two statements never wait on each other in a cycle); `ok` checks the
/// locked rows (owner, epoch, entries: the newest versions, which PostgreSQL re-reads when it
/// had to wait for a lock) and the lease; the counts move and the rows go in only when every
/// table passed.
///
/// Written for one plan whatever the batch (checked with `EXPLAIN`, docs/benchmarks.md):
/// - every `tables` row is found by `tables_id_key` (`id = ANY(...)`): the owner's test is on
///   the locked rows, not in the scan's `WHERE`, where a planner without statistics (a young
///   database) chose the `tables_owner` index and read every row the node holds, each commit;
/// - the arrays come in through sub-selects, so the planner cannot see their lengths: a plan
///   made for one batch costs what a generic plan costs, and PostgreSQL keeps the generic plan
///   of the prepared statement instead of planning every execution anew (it did, ≈ 0.5 ms a
///   commit, since a custom plan for a small batch looked cheaper than the generic one).
const APPEND: &str = "\
WITH u AS MATERIALIZED ( \
    SELECT * FROM UNNEST((SELECT $1::text[]), (SELECT $2::int8[]), (SELECT $3::int8[]), \
                         (SELECT $4::int8[]), (SELECT $5::int8[])) \
        AS u(id, first, n, last_seq, epoch)), \
fence AS MATERIALIZED ( \
    SELECT t.id, t.owner, t.epoch, t.entries FROM tables t \
    WHERE t.id = ANY(ARRAY(SELECT id FROM u)) \
      AND EXISTS (SELECT 1 FROM nodes me WHERE me.id = $6 AND me.incarnation = $7 \
                  AND me.lease_until > clock_timestamp()) \
    ORDER BY t.id FOR UPDATE OF t), \
ok AS MATERIALIZED ( \
    SELECT count(*) = (SELECT count(*) FROM u) AS whole FROM fence f JOIN u ON u.id = f.id \
    WHERE f.owner = $6 AND f.epoch = u.epoch AND f.entries = u.first), \
moved AS ( \
    UPDATE tables t SET entries = u.first + u.n, last_seq = u.last_seq FROM u, ok \
    WHERE ok.whole AND t.id = ANY(ARRAY(SELECT id FROM u)) AND t.id = u.id), \
logged AS ( \
    INSERT INTO log (table_id, seq, payload, last_seq) \
    SELECT r.table_id, r.seq, r.payload, r.last_seq \
    FROM UNNEST((SELECT $8::text[]), (SELECT $9::int8[]), (SELECT $10::text[]), \
                (SELECT $11::int8[])) AS r(table_id, seq, payload, last_seq), ok \
    WHERE ok.whole) \
SELECT whole FROM ok";

impl Appends {
    fn push(
        &mut self,
        table: &str,
        seq: u64,
        entry: &LogEntry,
        last_seq: u64,
    ) -> Result<(), StoreError> {
        let payload = serde_json::to_string(entry)
            .map_err(|e| StoreError::Corrupt(format!("cannot encode log entry: {e}")))?;
        let (seq, last) = (seq as i64, last_seq as i64);
        match self.runs.iter_mut().find(|r| r.table == table) {
            Some(run) if run.first + run.n == seq => {
                run.n += 1;
                run.last_seq = last;
            }
            Some(_) => {
                return Err(StoreError::Corrupt(format!(
                    "table {table}: log entry {seq} out of sequence in one batch"
                )));
            }
            None => self.runs.push(TableRun {
                table: table.to_string(),
                first: seq,
                n: 1,
                last_seq: last,
            }),
        }
        self.tables.push(table.to_string());
        self.seqs.push(seq);
        self.payloads.push(payload);
        self.lasts.push(last);
        Ok(())
    }

    /// Runs the fenced insert; `Err` when a table's fence refused (nothing was written).
    async fn write(&mut self, ctx: &WriterCtx, conn: &mut PgConnection) -> Result<(), StoreError> {
        if self.runs.is_empty() {
            return Ok(());
        }
        self.runs.sort_by(|a, b| a.table.cmp(&b.table));
        let ids: Vec<&str> = self.runs.iter().map(|r| r.table.as_str()).collect();
        let firsts: Vec<i64> = self.runs.iter().map(|r| r.first).collect();
        let ns: Vec<i64> = self.runs.iter().map(|r| r.n).collect();
        let lasts: Vec<i64> = self.runs.iter().map(|r| r.last_seq).collect();
        let epochs: Vec<i64> = self.runs.iter().map(|r| ctx.epoch(&r.table)).collect();
        let whole: bool = sqlx::query_scalar(APPEND)
            .bind(&ids)
            .bind(&firsts)
            .bind(&ns)
            .bind(&lasts)
            .bind(&epochs)
            .bind(&ctx.node.id)
            .bind(&*ctx.incarnation)
            .bind(&self.tables)
            .bind(&self.seqs)
            .bind(&self.payloads)
            .bind(&self.lasts)
            .fetch_one(&mut *conn)
            .await
            .map_err(pg)?;
        if whole {
            Ok(())
        } else {
            Err(why_refused(ctx, &self.runs, &epochs).await)
        }
    }
}

/// The seats taken by a batch's joins (`update_seats`' `Join`, many at once).
#[derive(Default)]
struct SeatsTaken {
    tables: Vec<String>,
    seats: Vec<i64>,
    bots: Vec<String>,
}

impl SeatsTaken {
    fn push(&mut self, table: &str, seat: u8, bot: &str) {
        self.tables.push(table.to_string());
        self.seats.push(i64::from(seat));
        self.bots.push(bot.to_string());
    }

    async fn write(&self, conn: &mut PgConnection) -> Result<(), StoreError> {
        sqlx::query(
            "UPDATE seats s SET bot_id = v.bot \
             FROM UNNEST($1::text[], $2::int8[], $3::text[]) AS v(table_id, seat, bot) \
             WHERE s.table_id = v.table_id AND s.seat = v.seat",
        )
        .bind(&self.tables)
        .bind(&self.seats)
        .bind(&self.bots)
        .execute(conn)
        .await
        .map_err(pg)?;
        Ok(())
    }
}

/// Whether an entry changes more than the log (the seats, or the table's state).
fn touches_more(entry: &LogEntry) -> bool {
    !matches!(entry, LogEntry::Action { auto: false, .. })
}

/// Applies a batch and commits it (see the module's doc).
pub(super) async fn apply_batch(ctx: &WriterCtx, ops: &[&WriteOp]) -> Result<(), StoreError> {
    // Woken after the lease lapsed (a pause): write nothing. PostgreSQL checks the lease too,
    // in the fence, for a pause that begins after this.
    if !ctx.lease.live() {
        return Err(LocalLease::lapsed());
    }
    let mut appends = Appends::default();
    let mut alone = true;
    for op in ops {
        match op {
            WriteOp::Append {
                table,
                seq,
                entry,
                last_seq,
            } => {
                appends.push(table, *seq, entry, *last_seq)?;
                alone &= !touches_more(entry);
            }
            _ => alone = false,
        }
    }
    if alone {
        let mut conn = ctx.pool.acquire().await.map_err(pg)?;
        if !appends.runs.is_empty() {
            freeze_point(Freeze::Statement);
        }
        return appends.write(ctx, &mut conn).await;
    }
    let mut tx = ctx.pool.begin().await.map_err(pg)?;
    // The seats taken, in one statement after the batch's other writes, when no table has two
    // entries in the batch (a table's actor sends one write at a time, so it never has): the
    // order between tables does not matter, and a table created in the batch has its seats
    // by then. Otherwise each in its turn.
    let joins = appends.tables.len() == appends.runs.len();
    let mut taken = SeatsTaken::default();
    for op in ops {
        match op {
            WriteOp::Append {
                table,
                entry: LogEntry::Join { seat, bot, .. },
                ..
            } if joins => taken.push(table, *seat, bot),
            WriteOp::Append { table, entry, .. } => update_seats(&mut tx, table, entry).await?,
            other => apply(ctx, &mut tx, other).await?,
        }
    }
    if !taken.tables.is_empty() {
        taken.write(&mut tx).await?;
    }
    appends.write(ctx, &mut tx).await?;
    if !appends.runs.is_empty() {
        freeze_point(Freeze::Transaction);
    }
    tx.commit().await.map_err(pg)?;
    Ok(())
}

/// Where a test may stop a node inside a group commit (tests/freeze.rs).
#[derive(Clone, Copy, PartialEq, Eq)]
enum Freeze {
    /// A batch of moves alone, one statement: stopped after the node's own lease check, with
    /// the statement about to be sent, so that PostgreSQL evaluates its fence (the lease, by
    /// PostgreSQL's clock) only when the node wakes. A single statement holds no lock between
    /// round trips: this is as far "inside" such a commit as a node can be stopped.
    Statement,
    /// A batch with other writes, in a transaction: stopped after the fence has locked its
    /// tables' rows and before the commit, the transaction open and its locks held.
    Transaction,
}

/// A fault-injection point for the tests of a node frozen mid-commit: with
/// `BETE_TEST_FREEZE_IN_COMMIT` naming a file that exists, the process removes the file and
/// stops itself (SIGSTOP) here. The file says where: `statement` for [`Freeze::Statement`],
/// anything else (empty) for [`Freeze::Transaction`].
/// Unset in production: one environment lookup per batch with appends.
fn freeze_point(here: Freeze) {
    let Some(path) = std::env::var_os("BETE_TEST_FREEZE_IN_COMMIT") else {
        return;
    };
    let Ok(wanted) = std::fs::read_to_string(&path) else {
        return;
    };
    let wanted = if wanted.trim() == "statement" {
        Freeze::Statement
    } else {
        Freeze::Transaction
    };
    if wanted == here && std::fs::remove_file(&path).is_ok() {
        tracing::warn!("BETE_TEST_FREEZE_IN_COMMIT: stopping this process mid-commit");
        let _ = std::process::Command::new("kill")
            .args(["-STOP", &std::process::id().to_string()])
            .status();
    }
}

/// Why the appends of a batch were refused: this node's lease lapsed, a table claimed by
/// another node (fenced), or an entry out of sequence.
async fn why_refused(ctx: &WriterCtx, runs: &[TableRun], epochs: &[i64]) -> StoreError {
    let live: Result<bool, _> = sqlx::query_scalar(
        "SELECT EXISTS (SELECT 1 FROM nodes WHERE id = $1 AND incarnation = $2 \
         AND lease_until > clock_timestamp())",
    )
    .bind(&ctx.node.id)
    .bind(&*ctx.incarnation)
    .fetch_one(&ctx.pool)
    .await;
    match live {
        Ok(false) => return LocalLease::lapsed(),
        Ok(true) => {}
        Err(e) => return pg(e),
    }
    for (run, epoch) in runs.iter().zip(epochs) {
        let row = sqlx::query("SELECT owner, epoch, entries FROM tables WHERE id = $1")
            .bind(&run.table)
            .fetch_optional(&ctx.pool)
            .await;
        let row = match row {
            Ok(Some(row)) => row,
            Ok(None) => {
                return StoreError::Corrupt(format!("log entry of unknown table {}", run.table));
            }
            Err(e) => return pg(e),
        };
        let owner: Option<String> = row.try_get("owner").unwrap_or(None);
        let now: i64 = row.try_get("epoch").unwrap_or(-1);
        let entries: i64 = row.try_get("entries").unwrap_or(-1);
        if owner.as_deref() != Some(ctx.node.id.as_str()) || now != *epoch {
            if let Ok(mut held) = ctx.held.lock() {
                held.remove(&run.table);
            }
            return StoreError::Fenced {
                table: run.table.clone(),
                owner: owner.unwrap_or_default(),
            };
        }
        if entries != run.first {
            return StoreError::Corrupt(format!(
                "table {}: log entry {} out of sequence (the log has {entries})",
                run.table, run.first
            ));
        }
    }
    // Every table passes now: it was a lock or the lease that changed meanwhile.
    StoreError::Unavailable("an append batch was refused by its fence; retry".into())
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use std::time::Duration;

    use super::*;
    use crate::suite::{fresh_database, pass, seats, table, two_nodes};
    use crate::{Claim, Store, Visibility};

    fn append(table: &str) -> WriteOp {
        WriteOp::Append {
            table: table.into(),
            seq: 0,
            entry: pass(1),
            last_seq: 1,
        }
    }

    /// One group commit of two tables, one of them claimed by a peer meanwhile: the statement
    /// leaves nothing (not the other table's entry, nor its count), the refusal names the
    /// claimed table and its new owner, and the other table's entry then goes in alone.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_fenced_table_refuses_its_whole_group_commit() {
        let Some(url) = fresh_database().await else {
            return;
        };
        let ttl = Duration::from_millis(800);
        let (a, b) = two_nodes(&url, ttl).await;
        for id in ["t1", "t2"] {
            a.create_table(table(id, Visibility::Listed), seats())
                .await
                .unwrap();
        }
        // `a` pauses past its lease; `b` claims t2; `a` wakes and renews, holding t1 still.
        tokio::time::sleep(ttl + Duration::from_millis(300)).await;
        assert_eq!(b.claim("t2".into()).await.unwrap(), Claim::Held);
        assert!(
            a.renew(&mut a.lease_conn(), Duration::from_secs(5))
                .await
                .unwrap()
        );
        let ctx = a.clone_for_writer();
        let (t1, t2) = (append("t1"), append("t2"));
        let refused = apply_batch(&ctx, &[&t1, &t2]).await.unwrap_err();
        assert!(
            matches!(refused, StoreError::Fenced { ref table, ref owner } if table == "t2" && owner == "b"),
            "{refused:?}"
        );
        assert!(a.log("t1".into()).await.unwrap().is_empty());
        assert!(b.log("t2".into()).await.unwrap().is_empty());
        apply_batch(&ctx, &[&t1]).await.unwrap();
        assert_eq!(a.log("t1".into()).await.unwrap(), [pass(1)]);
        // `b`, the owner now, appends to t2 from the log as it stands.
        b.append("t2".into(), 0, pass(2), 1).await.unwrap();
        assert_eq!(b.log("t2".into()).await.unwrap(), [pass(2)]);
    }
}
