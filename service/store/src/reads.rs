//! The reads both back ends make alike, written once: the same statement text for both (SQLite
//! reads PostgreSQL's `$1` parameters, by number), the same row mapping (`rows.rs`). What a
//! dialect does its own way (lists of ids, the table columns it selects, which tables a node
//! recovers) stays in its own module; what it passes in here is the little that differs:
//!
//! - `err`: what a database error means to it (PostgreSQL tells an unreachable server apart);
//! - `tables`: the head of a statement reading tables (`SELECT <columns> FROM tables t`), and
//!   `table_from_row`, which reads such a row (each finds a table's latest seq its own way).
//!
//! [`store_methods!`] then writes the `Store` methods that are the same in both, reads and
//! writes, so that each back end's `impl Store` holds only what differs.

/// A table's seats, with each bot's registered name: each name by its bot's key, seat by seat.
/// As a join, a generic plan PostgreSQL made while `bots` was small read all of it for every
/// table loaded (`postgres/plans` tests it). (No `AS`: statements may be logged, and the log
/// must hold no card's code, `tests/hidden.rs`.)
pub(crate) const SEATS_OF: &str = "\
SELECT s.seat, s.bot_id, s.house, s.strikes, \
       (SELECT b.name FROM bots b WHERE b.id = s.bot_id) bot_name \
FROM seats s WHERE s.table_id = $1 ORDER BY s.seat";

macro_rules! reads {
    (
        dialect = $dialect:ident,
        row = $row:ty,
        db = $db:ident,
        err = $err:path,
        tables = $tables:literal,
        table_from_row = $table_from_row:path,
        text = $text:literal,
        log = $log:expr $(,)?
    ) => {
        use sqlx::{Pool, Row};

        use crate::rows::$dialect::{
            account_from_row, bot_from_row, entry_from_row, match_from_row, rating_from_row,
        };
        use crate::{
            AccountRow, BotRow, EntryRow, LogEntry, MatchRow, Occupant, RatingRow, SeatRow,
            StoreError, StoredTable, TableFilter, TableState,
        };

        /// The head of a statement that reads tables for [`with_seats`].
        pub(crate) const TABLES: &str = $tables;

        pub(crate) async fn bot_by_token_hash(
            pool: &Pool<sqlx::$db>,
            hash: String,
        ) -> Result<Option<BotRow>, StoreError> {
            let row = sqlx::query("SELECT * FROM bots WHERE token_hash = $1")
                .bind(hash)
                .fetch_optional(pool)
                .await
                .map_err($err)?;
            row.as_ref().map(bot_from_row).transpose()
        }

        pub(crate) async fn bot(
            pool: &Pool<sqlx::$db>,
            id: String,
        ) -> Result<Option<BotRow>, StoreError> {
            let row = sqlx::query("SELECT * FROM bots WHERE id = $1")
                .bind(id)
                .fetch_optional(pool)
                .await
                .map_err($err)?;
            row.as_ref().map(bot_from_row).transpose()
        }

        pub(crate) async fn account_by_token_hash(
            pool: &Pool<sqlx::$db>,
            hash: String,
        ) -> Result<Option<AccountRow>, StoreError> {
            let row = sqlx::query("SELECT * FROM accounts WHERE token_hash = $1")
                .bind(hash)
                .fetch_optional(pool)
                .await
                .map_err($err)?;
            row.as_ref().map(account_from_row).transpose()
        }

        pub(crate) async fn bots_of_account(
            pool: &Pool<sqlx::$db>,
            account: String,
        ) -> Result<Vec<BotRow>, StoreError> {
            let rows =
                sqlx::query("SELECT * FROM bots WHERE account_id = $1 ORDER BY created_at, id")
                    .bind(account)
                    .fetch_all(pool)
                    .await
                    .map_err($err)?;
            rows.iter().map(bot_from_row).collect()
        }

        pub(crate) async fn token_revoked(
            pool: &Pool<sqlx::$db>,
            hash: String,
        ) -> Result<bool, StoreError> {
            let row = sqlx::query("SELECT 1 FROM revoked_tokens WHERE token_hash = $1")
                .bind(hash)
                .fetch_optional(pool)
                .await
                .map_err($err)?;
            Ok(row.is_some())
        }

        pub(crate) async fn record(
            pool: &Pool<sqlx::$db>,
            table: String,
        ) -> Result<Option<String>, StoreError> {
            sqlx::query_scalar("SELECT record FROM records WHERE table_id = $1")
                .bind(table)
                .fetch_optional(pool)
                .await
                .map_err($err)
        }

        pub(crate) async fn rating(
            pool: &Pool<sqlx::$db>,
            bot: String,
            ruleset: String,
        ) -> Result<Option<(i64, u64)>, StoreError> {
            let row =
                sqlx::query("SELECT rating, games FROM ratings WHERE bot_id = $1 AND ruleset = $2")
                    .bind(bot)
                    .bind(ruleset)
                    .fetch_optional(pool)
                    .await
                    .map_err($err)?;
            row.map(|r| -> Result<(i64, u64), StoreError> {
                let games: i64 = r.try_get("games")?;
                Ok((r.try_get("rating")?, games.max(0) as u64))
            })
            .transpose()
        }

        pub(crate) async fn entries(
            pool: &Pool<sqlx::$db>,
            ladder: String,
        ) -> Result<Vec<EntryRow>, StoreError> {
            let rows = sqlx::query(
                "SELECT * FROM ladder_entries WHERE ladder_id = $1 ORDER BY entered_at",
            )
            .bind(ladder)
            .fetch_all(pool)
            .await
            .map_err($err)?;
            rows.iter().map(entry_from_row).collect()
        }

        pub(crate) async fn ladder_match(
            pool: &Pool<sqlx::$db>,
            id: String,
        ) -> Result<Option<MatchRow>, StoreError> {
            let row = sqlx::query("SELECT * FROM ladder_matches WHERE id = $1")
                .bind(id)
                .fetch_optional(pool)
                .await
                .map_err($err)?;
            row.as_ref().map(match_from_row).transpose()
        }

        pub(crate) async fn ladder_matches(
            pool: &Pool<sqlx::$db>,
            ladder: String,
            bot: Option<String>,
            before: i64,
            limit: u32,
        ) -> Result<Vec<MatchRow>, StoreError> {
            let q = match bot {
                None => sqlx::query(
                    "SELECT * FROM ladder_matches WHERE ladder_id = $1 \
                     AND ($2 = 0 OR cursor < $2) ORDER BY cursor DESC LIMIT $3",
                )
                .bind(ladder)
                .bind(before)
                .bind(i64::from(limit)),
                Some(bot) => sqlx::query(
                    "SELECT m.* FROM ladder_match_bots b JOIN ladder_matches m \
                     ON m.id = b.match_id WHERE b.bot_id = $1 AND m.ladder_id = $2 \
                     AND ($3 = 0 OR b.cursor < $3) ORDER BY b.cursor DESC LIMIT $4",
                )
                .bind(bot)
                .bind(ladder)
                .bind(before)
                .bind(i64::from(limit)),
            };
            let rows = q.fetch_all(pool).await.map_err($err)?;
            rows.iter().map(match_from_row).collect()
        }

        pub(crate) async fn playing_matches(
            pool: &Pool<sqlx::$db>,
        ) -> Result<Vec<MatchRow>, StoreError> {
            let rows =
                sqlx::query("SELECT * FROM ladder_matches WHERE state = 'playing' ORDER BY cursor")
                    .fetch_all(pool)
                    .await
                    .map_err($err)?;
            rows.iter().map(match_from_row).collect()
        }

        pub(crate) async fn rated_matches(
            pool: &Pool<sqlx::$db>,
            ladder: String,
        ) -> Result<Vec<MatchRow>, StoreError> {
            let rows = sqlx::query(
                "SELECT * FROM ladder_matches WHERE ladder_id = $1 AND state = 'rated' \
                 ORDER BY rated_seq",
            )
            .bind(ladder)
            .fetch_all(pool)
            .await
            .map_err($err)?;
            rows.iter().map(match_from_row).collect()
        }

        /// How many matches of a ladder are rated, counted by the database (a follower's
        /// GetLadder, without reading them).
        pub(crate) async fn rated_match_count(
            pool: &Pool<sqlx::$db>,
            ladder: String,
        ) -> Result<u64, StoreError> {
            let n: i64 = sqlx::query_scalar(
                "SELECT count(*) FROM ladder_matches WHERE ladder_id = $1 AND state = 'rated'",
            )
            .bind(ladder)
            .fetch_one(pool)
            .await
            .map_err($err)?;
            Ok(n.max(0) as u64)
        }

        pub(crate) async fn matches_since(
            pool: &Pool<sqlx::$db>,
            ladder: String,
            since_ms: i64,
        ) -> Result<Vec<MatchRow>, StoreError> {
            let rows = sqlx::query(
                "SELECT * FROM ladder_matches WHERE ladder_id = $1 AND started_at >= $2 \
                 ORDER BY cursor",
            )
            .bind(ladder)
            .bind(since_ms)
            .fetch_all(pool)
            .await
            .map_err($err)?;
            rows.iter().map(match_from_row).collect()
        }

        pub(crate) async fn ratings(
            pool: &Pool<sqlx::$db>,
            ladder: String,
        ) -> Result<Vec<RatingRow>, StoreError> {
            let rows = sqlx::query("SELECT * FROM ladder_ratings WHERE ladder_id = $1")
                .bind(ladder)
                .fetch_all(pool)
                .await
                .map_err($err)?;
            rows.iter().map(rating_from_row).collect()
        }

        /// A table's seats, with each bot's registered name.
        pub(crate) async fn seats_of(
            pool: &Pool<sqlx::$db>,
            table: &str,
        ) -> Result<Vec<SeatRow>, StoreError> {
            let rows = sqlx::query(crate::reads::SEATS_OF)
                .bind(table)
                .fetch_all(pool)
                .await
                .map_err($err)?;
            rows.iter()
                .map(|r| {
                    let seat: i64 = r.try_get("seat")?;
                    let bot: Option<String> = r.try_get("bot_id")?;
                    let house: Option<String> = r.try_get("house")?;
                    let strikes: i64 = r.try_get("strikes")?;
                    let bot_name: Option<String> = r.try_get("bot_name")?;
                    let name = match (&bot, &house) {
                        (Some(_), _) => bot_name.unwrap_or_default(),
                        (None, Some(h)) => format!("house:{h}"),
                        (None, None) => String::new(),
                    };
                    Ok(SeatRow {
                        name,
                        seat: u8::try_from(seat)
                            .map_err(|_| StoreError::Corrupt(format!("seat {seat}")))?,
                        occupant: match (bot, house) {
                            (Some(b), _) => Occupant::Bot(b),
                            (None, Some(h)) => Occupant::House(h),
                            (None, None) => Occupant::Empty,
                        },
                        strikes: strikes.max(0) as u32,
                    })
                })
                .collect()
        }

        /// Tables read by a statement that starts with [`TABLES`], each with its seats.
        pub(crate) async fn with_seats(
            pool: &Pool<sqlx::$db>,
            rows: &[$row],
        ) -> Result<Vec<StoredTable>, StoreError> {
            let mut out = Vec::with_capacity(rows.len());
            for row in rows {
                let (cursor, table) = $table_from_row(row)?;
                let seats = seats_of(pool, &table.id).await?;
                out.push(StoredTable {
                    cursor,
                    table,
                    seats,
                });
            }
            Ok(out)
        }

        pub(crate) async fn table(
            pool: &Pool<sqlx::$db>,
            id: String,
        ) -> Result<Option<StoredTable>, StoreError> {
            let rows = sqlx::query(concat!($tables, " WHERE t.id = $1"))
                .bind(&id)
                .fetch_all(pool)
                .await
                .map_err($err)?;
            Ok(with_seats(pool, &rows).await?.into_iter().next())
        }

        /// The tables of a ladder match, in rotation order.
        pub(crate) async fn match_tables(
            pool: &Pool<sqlx::$db>,
            match_id: String,
        ) -> Result<Vec<StoredTable>, StoreError> {
            let rows = sqlx::query(concat!(
                $tables,
                " WHERE t.ladder_match = $1 ORDER BY t.ladder_rotation"
            ))
            .bind(match_id)
            .fetch_all(pool)
            .await
            .map_err($err)?;
            with_seats(pool, &rows).await
        }

        /// A page of `ListTables`, newest first. `$text` types the optional parameters where
        /// the dialect needs it (PostgreSQL must know a NULL's type).
        pub(crate) async fn list_tables(
            pool: &Pool<sqlx::$db>,
            f: TableFilter,
        ) -> Result<Vec<StoredTable>, StoreError> {
            let rows = sqlx::query(concat!(
                $tables,
                " WHERE ($1 = 0 OR t.cursor < $1) AND ($2",
                $text,
                " IS NULL OR t.ruleset = $2) AND ($3",
                $text,
                " IS NULL OR t.state = $3) AND (t.visibility = 'listed' OR ($4",
                $text,
                " IS NOT NULL AND (t.created_by = $4 OR EXISTS \
                 (SELECT 1 FROM seats s WHERE s.table_id = t.id AND s.bot_id = $4)))) \
                 ORDER BY t.cursor DESC LIMIT $5"
            ))
            .bind(f.before)
            .bind(f.ruleset)
            .bind(f.state.map(TableState::as_str))
            .bind(f.viewer_bot)
            .bind(i64::from(f.limit))
            .fetch_all(pool)
            .await
            .map_err($err)?;
            with_seats(pool, &rows).await
        }

        /// A table's log, oldest first (`$log` reads its rows the dialect's way).
        pub(crate) async fn log(
            pool: &Pool<sqlx::$db>,
            table: String,
        ) -> Result<Vec<LogEntry>, StoreError> {
            let rows = sqlx::query($log)
                .bind(&table)
                .fetch_all(pool)
                .await
                .map_err($err)?;
            log_from_rows(&table, &rows)
        }

        /// A table's log from its rows (`seq`, `payload`), oldest first; a gap is corruption.
        pub(crate) fn log_from_rows(
            table: &str,
            rows: &[$row],
        ) -> Result<Vec<LogEntry>, StoreError> {
            let mut out = Vec::with_capacity(rows.len());
            for (i, row) in rows.iter().enumerate() {
                let seq: i64 = row.try_get("seq")?;
                if seq != i as i64 {
                    return Err(StoreError::Corrupt(format!(
                        "table {table}: log entry {i} has seq {seq}"
                    )));
                }
                let payload: String = row.try_get("payload")?;
                // Not serde's message: it may quote the payload, whose actions name cards.
                out.push(serde_json::from_str(&payload).map_err(|e| {
                    StoreError::Corrupt(format!(
                        "table {table} entry {i}: {:?} error at column {}",
                        e.classify(),
                        e.column()
                    ))
                })?);
            }
            Ok(out)
        }
    };
}

/// The `Store` methods both back ends have alike, inside each one's `impl Store`: reads through
/// `crate::reads::$dialect` (the dialect's instance of `reads!`) on the pool `self.$pool`,
/// strike records through `crate::strikes::$dialect`, and writes handed to the back end's own
/// `self.write`, its writer queue (a new table to its `self.create`).
macro_rules! store_methods {
    (dialect = $dialect:ident, err = $err:path, pool = $pool:ident $(,)?) => {
        fn create_bot(&self, bot: crate::BotRow) -> crate::StoreFuture<'_, ()> {
            Box::pin(self.write(crate::writes::WriteOp::CreateBot(bot)))
        }

        fn bot_by_token_hash(&self, hash: String) -> crate::StoreFuture<'_, Option<crate::BotRow>> {
            Box::pin(
                async move { crate::reads::$dialect::bot_by_token_hash(&self.$pool, hash).await },
            )
        }

        fn bot(&self, id: String) -> crate::StoreFuture<'_, Option<crate::BotRow>> {
            Box::pin(async move { crate::reads::$dialect::bot(&self.$pool, id).await })
        }

        fn create_table(
            &self,
            table: crate::TableRow,
            seats: Vec<crate::SeatRow>,
        ) -> crate::StoreFuture<'_, ()> {
            Box::pin(self.create(table, seats, Vec::new()))
        }

        fn create_seated_table(
            &self,
            table: crate::TableRow,
            seats: Vec<crate::SeatRow>,
            log: Vec<(crate::LogEntry, u64)>,
        ) -> crate::StoreFuture<'_, ()> {
            Box::pin(self.create(table, seats, log))
        }

        fn append(
            &self,
            table: String,
            seq: u64,
            entry: crate::LogEntry,
            last_seq: u64,
        ) -> crate::StoreFuture<'_, ()> {
            Box::pin(self.write(crate::writes::WriteOp::Append {
                table,
                seq,
                entry,
                last_seq,
            }))
        }

        fn set_state(&self, table: String, state: crate::TableState) -> crate::StoreFuture<'_, ()> {
            Box::pin(self.write(crate::writes::WriteOp::SetState { table, state }))
        }

        fn finish(
            &self,
            table: String,
            record: String,
            ratings: Vec<crate::RatingDelta>,
        ) -> crate::StoreFuture<'_, ()> {
            Box::pin(self.write(crate::writes::WriteOp::Finish {
                table,
                record,
                ratings,
            }))
        }

        fn table(&self, id: String) -> crate::StoreFuture<'_, Option<crate::StoredTable>> {
            Box::pin(async move { crate::reads::$dialect::table(&self.$pool, id).await })
        }

        fn list_tables(
            &self,
            filter: crate::TableFilter,
        ) -> crate::StoreFuture<'_, Vec<crate::StoredTable>> {
            Box::pin(async move { crate::reads::$dialect::list_tables(&self.$pool, filter).await })
        }

        fn log(&self, table: String) -> crate::StoreFuture<'_, Vec<crate::LogEntry>> {
            Box::pin(async move { crate::reads::$dialect::log(&self.$pool, table).await })
        }

        fn record(&self, table: String) -> crate::StoreFuture<'_, Option<String>> {
            Box::pin(async move { crate::reads::$dialect::record(&self.$pool, table).await })
        }

        fn rating(
            &self,
            bot: String,
            ruleset: String,
        ) -> crate::StoreFuture<'_, Option<(i64, u64)>> {
            Box::pin(async move { crate::reads::$dialect::rating(&self.$pool, bot, ruleset).await })
        }

        fn writer_stopped(&self) -> crate::StoreFuture<'_, ()> {
            // The writer tasks own the receiving end: it is dropped exactly when they end
            // (SQLite's after a failure it cannot prove harmless; PostgreSQL's reconnect
            // through the pool, and end only with the store).
            Box::pin(async move {
                self.writes.closed().await;
                Ok(())
            })
        }

        fn create_account(&self, account: crate::AccountRow) -> crate::StoreFuture<'_, ()> {
            Box::pin(self.write(crate::writes::WriteOp::CreateAccount(account)))
        }

        fn rotate_bot_token(
            &self,
            bot: String,
            new_hash: String,
            at_ms: i64,
        ) -> crate::StoreFuture<'_, ()> {
            Box::pin(self.write(crate::writes::WriteOp::RotateToken {
                bot,
                new_hash,
                at_ms,
            }))
        }

        fn token_revoked(&self, hash: String) -> crate::StoreFuture<'_, bool> {
            Box::pin(async move { crate::reads::$dialect::token_revoked(&self.$pool, hash).await })
        }

        fn account_by_token_hash(
            &self,
            hash: String,
        ) -> crate::StoreFuture<'_, Option<crate::AccountRow>> {
            Box::pin(async move {
                crate::reads::$dialect::account_by_token_hash(&self.$pool, hash).await
            })
        }

        fn bots_of_account(&self, account: String) -> crate::StoreFuture<'_, Vec<crate::BotRow>> {
            Box::pin(
                async move { crate::reads::$dialect::bots_of_account(&self.$pool, account).await },
            )
        }

        fn put_entry(&self, entry: crate::EntryRow) -> crate::StoreFuture<'_, ()> {
            Box::pin(self.write(crate::writes::WriteOp::PutEntry(entry)))
        }

        fn entries(&self, ladder: String) -> crate::StoreFuture<'_, Vec<crate::EntryRow>> {
            Box::pin(async move { crate::reads::$dialect::entries(&self.$pool, ladder).await })
        }

        fn put_strikes(&self, record: crate::StrikeRecord) -> crate::StoreFuture<'_, ()> {
            Box::pin(self.write(crate::writes::WriteOp::PutStrikes(record)))
        }

        fn strike_records(
            &self,
            ladder: String,
        ) -> crate::StoreFuture<'_, Vec<crate::StrikeRecord>> {
            Box::pin(crate::strikes::$dialect::of_ladder(
                &self.$pool,
                ladder,
                $err,
            ))
        }

        fn strike_record(
            &self,
            ladder: String,
            bot: String,
        ) -> crate::StoreFuture<'_, Option<crate::StrikeRecord>> {
            Box::pin(crate::strikes::$dialect::of_bot(
                &self.$pool,
                ladder,
                bot,
                $err,
            ))
        }

        fn create_match(&self, m: crate::MatchRow) -> crate::StoreFuture<'_, ()> {
            Box::pin(self.write(crate::writes::WriteOp::CreateMatch(m)))
        }

        fn rate_match(
            &self,
            match_id: String,
            results: Vec<crate::EntrantResult>,
            ratings: Vec<crate::RatingRow>,
            rated_at_ms: i64,
        ) -> crate::StoreFuture<'_, ()> {
            Box::pin(self.write(crate::writes::WriteOp::RateMatch {
                match_id,
                results,
                ratings,
                rated_at_ms,
            }))
        }

        fn ladder_match(&self, id: String) -> crate::StoreFuture<'_, Option<crate::MatchRow>> {
            Box::pin(async move { crate::reads::$dialect::ladder_match(&self.$pool, id).await })
        }

        fn ladder_matches(
            &self,
            ladder: String,
            bot: Option<String>,
            before: i64,
            limit: u32,
        ) -> crate::StoreFuture<'_, Vec<crate::MatchRow>> {
            Box::pin(async move {
                crate::reads::$dialect::ladder_matches(&self.$pool, ladder, bot, before, limit)
                    .await
            })
        }

        fn playing_matches(&self) -> crate::StoreFuture<'_, Vec<crate::MatchRow>> {
            Box::pin(async move { crate::reads::$dialect::playing_matches(&self.$pool).await })
        }

        fn rated_matches(&self, ladder: String) -> crate::StoreFuture<'_, Vec<crate::MatchRow>> {
            Box::pin(
                async move { crate::reads::$dialect::rated_matches(&self.$pool, ladder).await },
            )
        }

        fn rated_match_count(&self, ladder: String) -> crate::StoreFuture<'_, u64> {
            Box::pin(
                async move { crate::reads::$dialect::rated_match_count(&self.$pool, ladder).await },
            )
        }

        fn matches_since(
            &self,
            ladder: String,
            since_ms: i64,
        ) -> crate::StoreFuture<'_, Vec<crate::MatchRow>> {
            Box::pin(async move {
                crate::reads::$dialect::matches_since(&self.$pool, ladder, since_ms).await
            })
        }

        fn ratings(&self, ladder: String) -> crate::StoreFuture<'_, Vec<crate::RatingRow>> {
            Box::pin(async move { crate::reads::$dialect::ratings(&self.$pool, ladder).await })
        }

        fn match_tables(
            &self,
            match_id: String,
        ) -> crate::StoreFuture<'_, Vec<crate::StoredTable>> {
            Box::pin(
                async move { crate::reads::$dialect::match_tables(&self.$pool, match_id).await },
            )
        }
    };
}
pub(crate) use store_methods;

/// For `sqlite/`: a table's latest seq comes from its log's head (`latest_seq`).
pub(crate) mod sqlite {
    reads!(
        dialect = sqlite,
        row = sqlx::sqlite::SqliteRow,
        db = Sqlite,
        err = StoreError::Sql,
        tables = "SELECT t.*, (SELECT l.last_seq FROM log_heads h JOIN log l ON l.id = h.last \
                  WHERE h.tbl = t.cursor) latest_seq FROM tables t",
        table_from_row = crate::sqlite::table_from_row,
        text = "",
        log = crate::sqlite::READ_LOG,
    );
}

/// For `postgres/`: a table's latest seq is its log's last entry's (by the log's key), or the
/// row's own from its creation while it has no log.
pub(crate) mod postgres {
    reads!(
        dialect = postgres,
        row = sqlx::postgres::PgRow,
        db = Postgres,
        err = crate::postgres::pg,
        tables = "SELECT t.*, COALESCE((SELECT l.last_seq FROM log l WHERE l.table_id = t.id \
                  ORDER BY l.seq DESC LIMIT 1), t.last_seq) latest_seq FROM tables t",
        table_from_row = crate::postgres::table_from_row,
        text = "::text",
        log = "SELECT seq, payload FROM log WHERE table_id = $1 ORDER BY seq",
    );
}
