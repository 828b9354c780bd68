//! The SQLite back end's own tests (the suite both back ends pass is suite.rs).

use super::batch::*;
use super::schema::*;
use super::*;
// The suite's rows, shared rather than copied.
use crate::suite::{pass, seats, table};
use crate::{Occupant, TableFilter, Visibility};

/// A migrated database in `dir` and one connection to it, as the writer has; the options
/// open it again.
async fn writer_connection(dir: &tempfile::TempDir) -> (SqliteConnectOptions, SqliteConnection) {
    let opts = SqliteConnectOptions::from_str("sqlite://")
        .unwrap()
        .filename(dir.path().join("bete.sqlite3"))
        .create_if_missing(true)
        .journal_mode(SqliteJournalMode::Wal);
    let mut conn = SqliteConnection::connect_with(&opts).await.unwrap();
    migrate(&mut conn).await.unwrap();
    (opts, conn)
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
