//! PostgreSQL's schema: its steps, applied in order at start under an advisory lock (nodes
//! starting together migrate once), mirroring SQLite's (sqlite/schema.rs).

use sqlx::{Connection, Executor, PgPool};

use super::pg;
use crate::StoreError;

/// The schema, applied in order; `bete_schema.version` counts the steps already applied.
/// Integers are BIGINT (the store's i64), flags BOOLEAN.
pub(crate) const MIGRATIONS: &[&str] = &[
    r#"
CREATE TABLE bots (
    id          TEXT PRIMARY KEY,
    name        TEXT NOT NULL,
    owner       TEXT NOT NULL,
    token_hash  TEXT NOT NULL UNIQUE,
    created_at  BIGINT NOT NULL,
    account_id  TEXT,
    version     TEXT NOT NULL DEFAULT '1'
);
CREATE UNIQUE INDEX bots_lineage ON bots(account_id, name, version) WHERE account_id IS NOT NULL;
CREATE TABLE accounts (
    id          TEXT PRIMARY KEY,
    name        TEXT NOT NULL,
    token_hash  TEXT NOT NULL UNIQUE,
    created_at  BIGINT NOT NULL
);
CREATE TABLE nodes (
    id           TEXT PRIMARY KEY,
    addr         TEXT NOT NULL,
    incarnation  TEXT NOT NULL,
    lease_until  TIMESTAMPTZ NOT NULL,
    started_at   TIMESTAMPTZ NOT NULL DEFAULT now()
);
CREATE TABLE tables (
    cursor          BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    id              TEXT NOT NULL UNIQUE,
    ruleset         TEXT NOT NULL,
    seats           BIGINT NOT NULL,
    config          TEXT NOT NULL,
    seed            TEXT NOT NULL,
    first_dealer    BIGINT NOT NULL,
    deadline_ms     BIGINT NOT NULL,
    visibility      TEXT NOT NULL,
    state           TEXT NOT NULL,
    last_seq        BIGINT NOT NULL DEFAULT 0,
    created_by      TEXT NOT NULL,
    created_at      BIGINT NOT NULL,
    seed_chosen     BOOLEAN NOT NULL DEFAULT false,
    ladder_id       TEXT,
    ladder_match    TEXT,
    ladder_rotation BIGINT,
    entries         BIGINT NOT NULL DEFAULT 0,
    owner           TEXT,
    epoch           BIGINT NOT NULL DEFAULT 0
);
CREATE INDEX tables_unfinished ON tables(cursor) WHERE state <> 'finished';
CREATE INDEX tables_ladder_match ON tables(ladder_match) WHERE ladder_match IS NOT NULL;
CREATE INDEX tables_owner ON tables(owner) WHERE owner IS NOT NULL;
CREATE TABLE seats (
    table_id  TEXT NOT NULL,
    seat      BIGINT NOT NULL,
    bot_id    TEXT,
    house     TEXT,
    strikes   BIGINT NOT NULL DEFAULT 0,
    PRIMARY KEY (table_id, seat)
);
CREATE INDEX seats_bot ON seats(bot_id);
CREATE TABLE log (
    table_id  TEXT NOT NULL,
    seq       BIGINT NOT NULL,
    payload   TEXT NOT NULL,
    last_seq  BIGINT,
    PRIMARY KEY (table_id, seq)
);
CREATE TABLE records (
    table_id  TEXT PRIMARY KEY,
    record    TEXT NOT NULL
);
CREATE TABLE ratings (
    bot_id   TEXT NOT NULL,
    ruleset  TEXT NOT NULL,
    rating   BIGINT NOT NULL,
    games    BIGINT NOT NULL,
    PRIMARY KEY (bot_id, ruleset)
);
CREATE TABLE ladder_entries (
    ladder_id       TEXT NOT NULL,
    bot_id          TEXT NOT NULL,
    capacity        BIGINT NOT NULL,
    active          BOOLEAN NOT NULL,
    removed_reason  TEXT NOT NULL DEFAULT '',
    entered_at      BIGINT NOT NULL,
    PRIMARY KEY (ladder_id, bot_id)
);
CREATE TABLE ladder_matches (
    cursor      BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    id          TEXT NOT NULL UNIQUE,
    ladder_id   TEXT NOT NULL,
    seed        TEXT NOT NULL,
    duplicate   BOOLEAN NOT NULL,
    entrants    TEXT NOT NULL,
    state       TEXT NOT NULL,
    started_at  BIGINT NOT NULL,
    rated_at    BIGINT,
    rated_seq   BIGINT,
    results     TEXT
);
CREATE INDEX ladder_matches_ladder ON ladder_matches(ladder_id, cursor);
CREATE INDEX ladder_matches_state ON ladder_matches(state);
CREATE TABLE ladder_match_bots (
    match_id  TEXT NOT NULL,
    bot_id    TEXT NOT NULL,
    cursor    BIGINT NOT NULL,
    PRIMARY KEY (bot_id, match_id)
);
CREATE TABLE ladder_ratings (
    ladder_id   TEXT NOT NULL,
    bot_id      TEXT NOT NULL,
    mu          DOUBLE PRECISION NOT NULL,
    sigma       DOUBLE PRECISION NOT NULL,
    matches     BIGINT NOT NULL,
    jetons      BIGINT NOT NULL,
    deals       BIGINT NOT NULL,
    last_net    BIGINT NOT NULL,
    last_place  BIGINT NOT NULL,
    PRIMARY KEY (ladder_id, bot_id)
);
"#,
    // Revoked bot tokens (BotService.RotateBotToken), as SQLite's step 5.
    r#"
CREATE TABLE revoked_tokens (
    token_hash  TEXT PRIMARY KEY,
    bot_id      TEXT NOT NULL,
    revoked_at  BIGINT NOT NULL
);
"#,
    // Ladder scheduling runs on one node at a time: the leader, whose claim holds while its
    // node's lease does (`nodes`); the epoch goes up with each new leader and fences the
    // scheduler's writes. `bots_online`: each node's bots with an open WatchBot stream, so
    // the leader sees entrants online wherever they connected.
    r#"
CREATE TABLE ladder_leader (
    one          BOOLEAN PRIMARY KEY DEFAULT true CHECK (one),
    node         TEXT NOT NULL,
    incarnation  TEXT NOT NULL,
    epoch        BIGINT NOT NULL
);
CREATE TABLE bots_online (
    node    TEXT NOT NULL,
    bot_id  TEXT NOT NULL,
    PRIMARY KEY (node, bot_id)
);
"#,
    // Bots' strike records on ladders, as SQLite's step 6.
    crate::strikes::MIGRATION,
    // Room on each page of `tables` for the group commits' updates (pg_append.rs).
    super::append::MIGRATION,
    // The group commit's functions: its abort when refused, its seats taken (pg_append.rs).
    super::append::FUNCTIONS_MIGRATION,
];

/// Applies the steps this database lacks; refuses a newer binary's schema.
pub(super) async fn migrate(pool: &PgPool) -> Result<(), StoreError> {
    let mut conn = pool.acquire().await.map_err(pg)?;
    let mut tx = conn.begin().await.map_err(pg)?;
    // A node waits for another's migration as long as it takes (not the sessions' timeouts).
    sqlx::query("SET LOCAL lock_timeout = 0")
        .execute(&mut *tx)
        .await
        .map_err(pg)?;
    sqlx::query("SET LOCAL statement_timeout = 0")
        .execute(&mut *tx)
        .await
        .map_err(pg)?;
    // Nodes starting together migrate one at a time (the lock ends with the transaction).
    sqlx::query("SELECT pg_advisory_xact_lock(7451)")
        .execute(&mut *tx)
        .await
        .map_err(pg)?;
    sqlx::query("CREATE TABLE IF NOT EXISTS bete_schema (version BIGINT NOT NULL)")
        .execute(&mut *tx)
        .await
        .map_err(pg)?;
    let version: Option<i64> = sqlx::query_scalar("SELECT max(version) FROM bete_schema")
        .fetch_one(&mut *tx)
        .await
        .map_err(pg)?;
    let version = version.unwrap_or(0);
    crate::refuse_newer_schema(version, MIGRATIONS.len())?;
    for (i, sql) in MIGRATIONS.iter().enumerate().skip(version.max(0) as usize) {
        (&mut *tx).execute(sqlx::raw_sql(sql)).await.map_err(pg)?;
        sqlx::query("INSERT INTO bete_schema (version) VALUES ($1)")
            .bind(i as i64 + 1)
            .execute(&mut *tx)
            .await
            .map_err(pg)?;
    }
    tx.commit().await.map_err(pg)?;
    Ok(())
}
