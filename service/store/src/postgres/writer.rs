//! The writer tasks: each takes every request pending, applies them all in one transaction
//! (the batch, pg_append.rs), commits, and only then answers (group commit); PostgreSQL's own
//! writes (a table owned from its creation, a fenced finish) and the fence of the ladders'
//! writes.

use std::sync::Arc;
use std::sync::atomic::Ordering;

use sqlx::{PgConnection, PgPool, Postgres, Transaction};
use tokio::sync::mpsc;

use super::append::apply_batch;
use super::{Held, LadderEpoch, MAX_BATCH, NodeConfig, WriteReq, pg, writes};
use crate::pg_lease::LocalLease;
use crate::writes::WriteOp;
use crate::{Occupant, StoreError};

/// What a writer task needs.
pub(super) struct WriterCtx {
    pub(super) pool: PgPool,
    pub(super) node: Arc<NodeConfig>,
    pub(super) held: Held,
    pub(super) ladder_epoch: LadderEpoch,
    pub(super) incarnation: Arc<str>,
    pub(super) lease: Arc<LocalLease>,
}

impl WriterCtx {
    pub(super) fn epoch(&self, table: &str) -> i64 {
        self.held
            .lock()
            .ok()
            .and_then(|h| h.get(table).copied())
            .unwrap_or(-1)
    }
}

pub(super) async fn writer_loop(
    ctx: WriterCtx,
    rx: Arc<tokio::sync::Mutex<mpsc::Receiver<WriteReq>>>,
) {
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
pub(super) async fn apply(
    ctx: &WriterCtx,
    tx: &mut Transaction<'_, Postgres>,
    op: &WriteOp,
) -> Result<(), StoreError> {
    let conn: &mut PgConnection = tx;
    match op {
        WriteOp::CreateTable(t, seats, log) => {
            // The creating node owns the table from the start, at epoch 1; its first entries
            // (the seats the server filled) go in with it. `entries` and `last_seq` are the
            // row's as created: the fence reads the log itself (pg_append.rs), and reads take a
            // table's latest seq from its log.
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
