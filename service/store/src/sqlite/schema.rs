//! SQLite's schema: its steps, applied in order at open (`PRAGMA user_version` counts those
//! applied); PostgreSQL's mirrors it (postgres/schema.rs).

use sqlx::{Connection, Executor, Row, SqliteConnection};

use crate::StoreError;

/// The schema, applied in order; `PRAGMA user_version` counts the steps already applied.
pub(super) const MIGRATIONS: &[&str] = &[
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
    crate::strikes::MIGRATION,
];

/// Applies the steps this database lacks; refuses a newer binary's schema.
pub(super) async fn migrate(conn: &mut SqliteConnection) -> Result<(), StoreError> {
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
