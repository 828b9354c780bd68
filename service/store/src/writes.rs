//! The writes both back ends queue and apply alike, written once: the requests their writer
//! tasks take ([`WriteOp`]), and the statements of every write whose text the dialects share
//! (SQLite reads PostgreSQL's `$1` parameters, and both know `ON CONFLICT ... DO UPDATE`). Each
//! back end keeps what it does its own way: creating a table and appending to its log (SQLite's
//! chained log rows, PostgreSQL's fenced batch), finishing it (fenced on PostgreSQL), and
//! PostgreSQL's fence of the ladders' writes.

use crate::{
    AccountRow, BotRow, EntrantResult, EntryRow, LogEntry, MatchRow, RatingDelta, RatingRow,
    SeatRow, StrikeRecord, TableRow, TableState,
};

/// A write, as a back end's writer task takes it from its queue.
pub(crate) enum WriteOp {
    CreateBot(BotRow),
    /// A table, its seats, and the first entries of its log (with their `last_seq`), which
    /// the seats already reflect.
    CreateTable(TableRow, Vec<SeatRow>, Vec<(LogEntry, u64)>),
    Append {
        table: String,
        seq: u64,
        entry: LogEntry,
        last_seq: u64,
    },
    SetState {
        table: String,
        state: TableState,
    },
    Finish {
        table: String,
        record: String,
        ratings: Vec<RatingDelta>,
    },
    CreateAccount(AccountRow),
    /// The bot's token hash replaced; the old one recorded as revoked.
    RotateToken {
        bot: String,
        new_hash: String,
        at_ms: i64,
    },
    PutEntry(EntryRow),
    PutStrikes(StrikeRecord),
    CreateMatch(MatchRow),
    RateMatch {
        match_id: String,
        results: Vec<EntrantResult>,
        ratings: Vec<RatingRow>,
        rated_at_ms: i64,
    },
}

impl WriteOp {
    /// Whether it writes log entries (SQLite's watermark then moves).
    pub(crate) fn appends(&self) -> bool {
        match self {
            WriteOp::Append { .. } => true,
            WriteOp::CreateTable(_, _, log) => !log.is_empty(),
            _ => false,
        }
    }

    /// An append that changes nothing but the log (a client's move): the bulk of all writes.
    pub(crate) fn is_plain_append(&self) -> bool {
        matches!(
            self,
            WriteOp::Append {
                entry: LogEntry::Action { auto: false, .. },
                ..
            }
        )
    }
}

macro_rules! writes {
    (dialect = $dialect:ident, db = $db:ident, conn = $conn:ty, err = $err:path $(,)?) => {
        use crate::writes::WriteOp;
        use crate::{LogEntry, RatingDelta, StoreError, TableRow, TableState};

        /// An `INSERT INTO tables` statement of the dialect's, as `sqlx::query` makes it.
        pub(crate) type Query<'q> = sqlx::query::Query<
            'q,
            sqlx::$db,
            <sqlx::$db as sqlx::Database>::Arguments<'q>,
        >;

        /// A new table's columns that both dialects store, bound as the first fifteen
        /// parameters of `INSERT INTO tables (id, ruleset, ..., ladder_rotation)`, in the order
        /// the schema lists them (PostgreSQL binds its ownership after them).
        pub(crate) fn bind_table<'q>(q: Query<'q>, t: &'q TableRow) -> Query<'q> {
            q.bind(&t.id)
                .bind(&t.ruleset)
                .bind(i64::from(t.seats))
                .bind(&t.config_json)
                .bind(&t.seed)
                .bind(i64::from(t.first_dealer))
                .bind(t.deadline_ms as i64)
                .bind(t.visibility.as_str())
                .bind(t.state.as_str())
                .bind(&t.created_by)
                .bind(t.created_at_ms)
                .bind(t.seed_chosen)
                .bind(t.ladder.as_ref().map(|l| l.ladder_id.as_str()))
                .bind(t.ladder.as_ref().map(|l| l.match_id.as_str()))
                .bind(t.ladder.as_ref().map(|l| i64::from(l.rotation)))
        }

        /// Every write whose statements the dialects share, in the batch's transaction on
        /// `conn`. The others (creating a table, appending, finishing) are the back end's own:
        /// one of them here is a bug, refused.
        pub(crate) async fn apply(conn: &mut $conn, op: &WriteOp) -> Result<(), StoreError> {
            match op {
                WriteOp::CreateBot(b) => {
                    sqlx::query(
                        "INSERT INTO bots (id, name, owner, token_hash, created_at, account_id, \
                         version) VALUES ($1, $2, $3, $4, $5, $6, $7)",
                    )
                    .bind(&b.id)
                    .bind(&b.name)
                    .bind(&b.owner)
                    .bind(&b.token_hash)
                    .bind(b.created_at_ms)
                    .bind(&b.account_id)
                    .bind(&b.version)
                    .execute(&mut *conn)
                    .await
                    .map_err($err)?;
                }
                WriteOp::CreateAccount(a) => {
                    sqlx::query(
                        "INSERT INTO accounts (id, name, token_hash, created_at) \
                         VALUES ($1, $2, $3, $4)",
                    )
                    .bind(&a.id)
                    .bind(&a.name)
                    .bind(&a.token_hash)
                    .bind(a.created_at_ms)
                    .execute(&mut *conn)
                    .await
                    .map_err($err)?;
                }
                WriteOp::RotateToken {
                    bot,
                    new_hash,
                    at_ms,
                } => {
                    // In one transaction (the batch's): the hash replaced is the one current
                    // at the write, so two rotations racing each revoke the hash they replaced.
                    sqlx::query(
                        "INSERT INTO revoked_tokens (token_hash, bot_id, revoked_at) \
                         SELECT token_hash, id, $1 FROM bots WHERE id = $2 \
                         ON CONFLICT (token_hash) DO NOTHING",
                    )
                    .bind(at_ms)
                    .bind(bot)
                    .execute(&mut *conn)
                    .await
                    .map_err($err)?;
                    sqlx::query("UPDATE bots SET token_hash = $1 WHERE id = $2")
                        .bind(new_hash)
                        .bind(bot)
                        .execute(&mut *conn)
                        .await
                        .map_err($err)?;
                }
                WriteOp::PutEntry(e) => {
                    sqlx::query(
                        "INSERT INTO ladder_entries (ladder_id, bot_id, capacity, active, \
                         removed_reason, entered_at) VALUES ($1, $2, $3, $4, $5, $6) \
                         ON CONFLICT (ladder_id, bot_id) DO UPDATE \
                         SET capacity = excluded.capacity, active = excluded.active, \
                         removed_reason = excluded.removed_reason, entered_at = excluded.entered_at",
                    )
                    .bind(&e.ladder_id)
                    .bind(&e.bot_id)
                    .bind(i64::from(e.capacity))
                    .bind(e.active)
                    .bind(&e.removed_reason)
                    .bind(e.entered_at_ms)
                    .execute(&mut *conn)
                    .await
                    .map_err($err)?;
                }
                WriteOp::PutStrikes(r) => {
                    crate::strikes::$dialect::put(&mut *conn, r)
                        .await
                        .map_err($err)?;
                }
                WriteOp::CreateMatch(m) => {
                    let entrants = serde_json::Value::from(m.entrants.clone()).to_string();
                    let cursor: i64 = sqlx::query_scalar(
                        "INSERT INTO ladder_matches (id, ladder_id, seed, duplicate, entrants, \
                         state, started_at) VALUES ($1, $2, $3, $4, $5, 'playing', $6) \
                         RETURNING cursor",
                    )
                    .bind(&m.id)
                    .bind(&m.ladder_id)
                    .bind(&m.seed)
                    .bind(m.duplicate)
                    .bind(&entrants)
                    .bind(m.started_at_ms)
                    .fetch_one(&mut *conn)
                    .await
                    .map_err($err)?;
                    for bot in &m.entrants {
                        sqlx::query(
                            "INSERT INTO ladder_match_bots (match_id, bot_id, cursor) \
                             VALUES ($1, $2, $3) ON CONFLICT DO NOTHING",
                        )
                        .bind(&m.id)
                        .bind(bot)
                        .bind(cursor)
                        .execute(&mut *conn)
                        .await
                        .map_err($err)?;
                    }
                }
                WriteOp::RateMatch {
                    match_id,
                    results,
                    ratings,
                    rated_at_ms,
                } => {
                    let results = serde_json::to_string(results)
                        .map_err(|e| StoreError::Corrupt(format!("cannot encode results: {e}")))?;
                    // Exactly once: only a match still playing becomes rated, and only then do
                    // the ratings move. A retry after a crash finds it rated and changes nothing.
                    let done = sqlx::query(
                        "UPDATE ladder_matches SET state = 'rated', rated_at = $1, results = $2, \
                         rated_seq = (SELECT coalesce(max(rated_seq), 0) + 1 FROM ladder_matches m \
                           WHERE m.ladder_id = ladder_matches.ladder_id) \
                         WHERE id = $3 AND state = 'playing'",
                    )
                    .bind(rated_at_ms)
                    .bind(&results)
                    .bind(match_id)
                    .execute(&mut *conn)
                    .await
                    .map_err($err)?;
                    if done.rows_affected() == 1 {
                        for r in ratings {
                            sqlx::query(
                                "INSERT INTO ladder_ratings (ladder_id, bot_id, mu, sigma, \
                                 matches, jetons, deals, last_net, last_place) \
                                 VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9) \
                                 ON CONFLICT (ladder_id, bot_id) DO UPDATE SET mu = excluded.mu, \
                                 sigma = excluded.sigma, matches = excluded.matches, \
                                 jetons = excluded.jetons, deals = excluded.deals, \
                                 last_net = excluded.last_net, last_place = excluded.last_place",
                            )
                            .bind(&r.ladder_id)
                            .bind(&r.bot_id)
                            .bind(r.mu)
                            .bind(r.sigma)
                            .bind(i64::from(r.matches))
                            .bind(r.jetons)
                            .bind(r.deals as i64)
                            .bind(r.last_net)
                            .bind(i64::from(r.last_place))
                            .execute(&mut *conn)
                            .await
                            .map_err($err)?;
                        }
                        // A set's tables were private while its decks could still help a
                        // player at a later rotation; rated, they are listed for spectators
                        // and replays.
                        sqlx::query(
                            "UPDATE tables SET visibility = 'listed' WHERE ladder_match = $1",
                        )
                        .bind(match_id)
                        .execute(&mut *conn)
                        .await
                        .map_err($err)?;
                    }
                }
                WriteOp::SetState { table, state } => set_state(conn, table, *state).await?,
                WriteOp::CreateTable(..) | WriteOp::Append { .. } | WriteOp::Finish { .. } => {
                    return Err(StoreError::Corrupt(
                        "a write of the back end's own reached the shared path".into(),
                    ));
                }
            }
            Ok(())
        }

        pub(crate) async fn set_state(
            conn: &mut $conn,
            table: &str,
            state: TableState,
        ) -> Result<(), StoreError> {
            sqlx::query("UPDATE tables SET state = $1 WHERE id = $2")
                .bind(state.as_str())
                .bind(table)
                .execute(&mut *conn)
                .await
                .map_err($err)?;
            Ok(())
        }

        /// A finished table's record, and its results folded into the bots' ratings (the
        /// table's state is the back end's to set: PostgreSQL fences it).
        pub(crate) async fn store_result(
            conn: &mut $conn,
            table: &str,
            record: &str,
            ratings: &[RatingDelta],
        ) -> Result<(), StoreError> {
            sqlx::query(
                "INSERT INTO records (table_id, record) VALUES ($1, $2) \
                 ON CONFLICT (table_id) DO UPDATE SET record = excluded.record",
            )
            .bind(table)
            .bind(record)
            .execute(&mut *conn)
            .await
            .map_err($err)?;
            for r in ratings {
                sqlx::query(
                    "INSERT INTO ratings (bot_id, ruleset, rating, games) VALUES ($1, $2, $3, 1) \
                     ON CONFLICT (bot_id, ruleset) DO UPDATE SET \
                     rating = ratings.rating + excluded.rating, games = ratings.games + 1",
                )
                .bind(&r.bot)
                .bind(&r.ruleset)
                .bind(r.net)
                .execute(&mut *conn)
                .await
                .map_err($err)?;
            }
            Ok(())
        }

        /// Keep the seats table in step with the log, in the same transaction as the entry.
        pub(crate) async fn update_seats(
            conn: &mut $conn,
            table: &str,
            entry: &LogEntry,
        ) -> Result<(), StoreError> {
            let q = match entry {
                LogEntry::Join { seat, bot, .. } => {
                    sqlx::query("UPDATE seats SET bot_id = $1 WHERE table_id = $2 AND seat = $3")
                        .bind(bot.as_str())
                        .bind(table)
                        .bind(i64::from(*seat))
                }
                LogEntry::Leave { seat, .. } => {
                    sqlx::query("UPDATE seats SET bot_id = NULL WHERE table_id = $1 AND seat = $2")
                        .bind(table)
                        .bind(i64::from(*seat))
                }
                LogEntry::Action {
                    seat, auto: true, ..
                } => sqlx::query(
                    "UPDATE seats SET strikes = strikes + 1 WHERE table_id = $1 AND seat = $2",
                )
                .bind(table)
                .bind(i64::from(*seat)),
                LogEntry::Action { .. } => return Ok(()),
                LogEntry::Close { .. } => {
                    sqlx::query("UPDATE tables SET state = 'finished' WHERE id = $1").bind(table)
                }
            };
            q.execute(&mut *conn).await.map_err($err)?;
            Ok(())
        }
    };
}

/// For `sqlite/`.
pub(crate) mod sqlite {
    writes!(
        dialect = sqlite,
        db = Sqlite,
        conn = sqlx::SqliteConnection,
        err = StoreError::Sql
    );
}

/// For `postgres/`.
pub(crate) mod postgres {
    writes!(
        dialect = postgres,
        db = Postgres,
        conn = sqlx::PgConnection,
        err = crate::postgres::pg
    );
}
