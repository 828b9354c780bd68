//! A group commit on PostgreSQL: every write of a batch in one transaction, and the batch's
//! log entries behind the fence in one statement.
//!
//! The fence and the log rows go in one statement: each table's row is locked and checked
//! (owner, epoch, this node's lease by PostgreSQL's clock, and that its log ends right before
//! the batch's first entry), and the entries go in; unless every table passed, the statement
//! aborts and leaves nothing. A batch of moves alone (the common case) is that one statement,
//! committed on its own: one round trip per group commit, and no row lock outlives it, so a
//! node frozen right after sending it holds up no peer. A batch with other writes (a table
//! created, a seat taken) runs in a transaction, whose locks PostgreSQL frees if the node
//! freezes before committing (`idle_in_transaction_session_timeout`, pg_lease.rs).

use sqlx::{PgConnection, Row};

use super::{LogEntry, StoreError, WriteOp, WriterCtx, apply, pg, update_seats};
use crate::pg_lease::LocalLease;

/// A schema step for the group commits as they were until the count moved to the log's own key
/// (below): every commit updated the row of each table it appended to, so `tables` keeps half
/// of each page free. An update then stays on its
/// row's page and touches no index (a HOT update): with full pages, a quarter of them moved
/// the row and inserted into each of the table's five indexes, half of all the index work of
/// a run of moves (`pg_waldump --stats`, docs/benchmarks.md). Pages written before this step
/// keep their fill until the table is rewritten (`VACUUM FULL tables`).
pub(super) const MIGRATION: &str = "ALTER TABLE tables SET (fillfactor = 50);";

/// The batch's appends to one table: its first seq, and how many.
struct TableRun {
    table: String,
    first: i64,
    n: i64,
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

/// The fence and the log rows of a batch, as one statement. `fence` locks each table's row,
/// found by its id, and keeps those that pass: owned by this node at the epoch it holds, with
/// the entry before the batch's first in its log, while this node's lease is live by
/// PostgreSQL's clock. The rows go in, and unless every table passed, [`REFUSED`] aborts the
/// statement, so that nothing of it stays; an entry whose seq its log has already is refused
/// by the log's key ([`UNIQUE_VIOLATION`]), so the log stays whole without its count.
///
/// A move is a log row and its key, and a lock on its table's row: no table row is updated,
/// so no new row version, no pruning. The entry before is looked up by its whole key: read as
/// the log's last key (`ORDER BY seq DESC LIMIT 1`), PostgreSQL read every entry of the table
/// on the key's last page, a fifth of its CPU in a run (`perf`, docs/benchmarks.md). (A scalar
/// subquery, not `EXISTS`, which the planner hashed: every key of the log, each commit.)
/// Rows are locked in id order (the runs are sorted; the plan visits them in `u`'s order), so
/// two statements never wait on each other in a cycle.
///
/// Written for one plan whatever the statistics (`plans_stay_on_their_keys` checks it): each
/// row, and each entry before, is looked up one key at a time (a lateral subquery the planner
/// can neither turn into a scan nor push the owner's test into). With `id = ANY(...)` or a
/// join on `id`, the generic plan a connection made while `tables` was young (a scan of every
/// row, or of every row the node holds by `tables_owner`) stayed for the life of the
/// connection: most of PostgreSQL's CPU in a run of 1,000 tables (docs/benchmarks.md).
pub(super) const APPEND: &str = "\
WITH u AS MATERIALIZED ( \
    SELECT * FROM UNNEST($1::text[], $2::int8[], $3::int8[]) AS u(id, first, epoch)), \
fence AS MATERIALIZED ( \
    SELECT u.id FROM u CROSS JOIN LATERAL \
        (SELECT t.owner, t.epoch FROM tables t WHERE t.id = u.id OFFSET 0 FOR UPDATE) t \
    WHERE EXISTS (SELECT 1 FROM nodes me WHERE me.id = $4 AND me.incarnation = $5 \
                  AND me.lease_until > clock_timestamp()) \
      AND t.owner = $4 AND t.epoch = u.epoch \
      AND (u.first = 0 OR (SELECT true FROM log l \
                           WHERE l.table_id = u.id AND l.seq = u.first - 1 LIMIT 1))), \
whole AS MATERIALIZED ( \
    SELECT (SELECT count(*) FROM fence) = cardinality($1::text[]) AS whole), \
logged AS ( \
    INSERT INTO log (table_id, seq, payload, last_seq) \
    SELECT r.* FROM UNNEST($6::text[], $7::int8[], $8::text[], $9::int8[]) \
        AS r(table_id, seq, payload, last_seq), whole WHERE whole.whole) \
SELECT CASE WHEN whole THEN true ELSE bete_refused() END FROM whole";

/// A schema step: the group commit's functions (PL/pgSQL, which every PostgreSQL database has).
/// `bete_refused` aborts a refused group commit ([`APPEND`]), raising [`REFUSED`]: SQL alone
/// cannot raise. `bete_take_seats` takes a batch's seats one by one, each by its key: as one
/// `UPDATE ... FROM UNNEST(...)`, the generic plan a connection made while `seats` was young
/// hashed the batch and read every seat of every table, each batch, for the life of the
/// connection (`plans_stay_on_their_keys`).
pub(super) const FUNCTIONS_MIGRATION: &str = "\
CREATE OR REPLACE FUNCTION bete_refused() RETURNS boolean LANGUAGE plpgsql VOLATILE AS $$ \
BEGIN RAISE EXCEPTION 'a group commit refused by its fence' USING ERRCODE = 'BT001'; END $$; \
CREATE OR REPLACE FUNCTION bete_take_seats(at_tables text[], at_seats int8[], by_bots text[]) \
RETURNS void LANGUAGE plpgsql VOLATILE AS $$ \
BEGIN \
    FOR i IN 1 .. cardinality(at_tables) LOOP \
        UPDATE seats SET bot_id = by_bots[i] WHERE table_id = at_tables[i] AND seat = at_seats[i]; \
    END LOOP; \
END $$;";

/// The SQLSTATE of a refused group commit (`bete_refused`).
const REFUSED: &str = "BT001";
/// The SQLSTATE of a key taken: an entry's seq already in its table's log.
const UNIQUE_VIOLATION: &str = "23505";

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
            Some(run) if run.first + run.n == seq => run.n += 1,
            Some(_) => {
                return Err(StoreError::Corrupt(format!(
                    "table {table}: log entry {seq} out of sequence in one batch"
                )));
            }
            None => self.runs.push(TableRun {
                table: table.to_string(),
                first: seq,
                n: 1,
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
        let epochs: Vec<i64> = self.runs.iter().map(|r| ctx.epoch(&r.table)).collect();
        let written = sqlx::query_scalar::<_, bool>(APPEND)
            .bind(&ids)
            .bind(&firsts)
            .bind(&epochs)
            .bind(&ctx.node.id)
            .bind(&*ctx.incarnation)
            .bind(&self.tables)
            .bind(&self.seqs)
            .bind(&self.payloads)
            .bind(&self.lasts)
            .fetch_one(&mut *conn)
            .await;
        match written {
            Ok(_) => Ok(()),
            Err(sqlx::Error::Database(e))
                if matches!(e.code().as_deref(), Some(REFUSED | UNIQUE_VIOLATION)) =>
            {
                Err(why_refused(ctx, &self.runs, &epochs).await)
            }
            Err(e) => Err(pg(e)),
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
        sqlx::query("SELECT bete_take_seats($1, $2, $3)")
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
        let row = sqlx::query(
            "SELECT owner, epoch, (SELECT count(*) FROM log WHERE table_id = $1) AS entries \
             FROM tables WHERE id = $1",
        )
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
