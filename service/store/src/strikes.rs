//! Bots' strike records on ladders (issue 24): how often each was taken off a ladder for
//! timeouts, until when it must wait to enter again, and its recent decisions there. The
//! ladder's leader writes them; every node reads them when a bot enters, so a removal holds
//! across a restart and on every node of a cluster.
//!
//! One schema and one set of statements for both back ends (SQLite reads PostgreSQL's `$1`
//! parameters, and both know `ON CONFLICT ... DO UPDATE`), as in `rows.rs`.

/// The migration that adds the records, the same text for both back ends (BIGINT is an
/// INTEGER to SQLite).
pub(super) const MIGRATION: &str = r#"
CREATE TABLE ladder_strikes (
    ladder_id       TEXT NOT NULL,
    bot_id          TEXT NOT NULL,
    removals        BIGINT NOT NULL,
    cooldown_until  BIGINT NOT NULL,
    strike_window   TEXT NOT NULL,
    PRIMARY KEY (ladder_id, bot_id)
);
"#;

macro_rules! statements {
    ($row:ty, $db:ty) => {
        use sqlx::Row;

        use crate::{StoreError, StrikeRecord};

        fn from_row(row: &$row) -> Result<StrikeRecord, StoreError> {
            let removals: i64 = row.try_get("removals")?;
            Ok(StrikeRecord {
                ladder_id: row.try_get("ladder_id")?,
                bot_id: row.try_get("bot_id")?,
                removals: u32::try_from(removals.max(0)).unwrap_or(u32::MAX),
                cooldown_until_ms: row.try_get("cooldown_until")?,
                window: row.try_get("strike_window")?,
            })
        }

        /// Writes a bot's record whole (the leader holds all of it).
        pub(crate) async fn put<'e>(
            db: impl sqlx::Executor<'e, Database = $db>,
            r: &StrikeRecord,
        ) -> Result<(), sqlx::Error> {
            sqlx::query(
                "INSERT INTO ladder_strikes (ladder_id, bot_id, removals, cooldown_until, \
                 strike_window) VALUES ($1, $2, $3, $4, $5) \
                 ON CONFLICT (ladder_id, bot_id) DO UPDATE SET removals = excluded.removals, \
                 cooldown_until = excluded.cooldown_until, strike_window = excluded.strike_window",
            )
            .bind(&r.ladder_id)
            .bind(&r.bot_id)
            .bind(i64::from(r.removals))
            .bind(r.cooldown_until_ms)
            .bind(&r.window)
            .execute(db)
            .await?;
            Ok(())
        }

        /// Every record of a ladder, by bot id; `err` says what a database error means to the
        /// back end (PostgreSQL tells an unreachable server apart).
        pub(crate) async fn of_ladder<'e>(
            db: impl sqlx::Executor<'e, Database = $db>,
            ladder: String,
            err: fn(sqlx::Error) -> StoreError,
        ) -> Result<Vec<StrikeRecord>, StoreError> {
            let rows =
                sqlx::query("SELECT * FROM ladder_strikes WHERE ladder_id = $1 ORDER BY bot_id")
                    .bind(ladder)
                    .fetch_all(db)
                    .await
                    .map_err(err)?;
            rows.iter().map(from_row).collect()
        }

        /// One bot's record on a ladder.
        pub(crate) async fn of_bot<'e>(
            db: impl sqlx::Executor<'e, Database = $db>,
            ladder: String,
            bot: String,
            err: fn(sqlx::Error) -> StoreError,
        ) -> Result<Option<StrikeRecord>, StoreError> {
            let row =
                sqlx::query("SELECT * FROM ladder_strikes WHERE ladder_id = $1 AND bot_id = $2")
                    .bind(ladder)
                    .bind(bot)
                    .fetch_optional(db)
                    .await
                    .map_err(err)?;
            row.as_ref().map(from_row).transpose()
        }
    };
}

/// For `sqlite.rs` and its modules.
pub(super) mod sqlite {
    statements!(sqlx::sqlite::SqliteRow, sqlx::Sqlite);
}

/// For `postgres.rs` and its modules.
pub(super) mod postgres {
    statements!(sqlx::postgres::PgRow, sqlx::Postgres);
}
