//! One store test suite, run against both back ends: SQLite in a temporary folder, and
//! PostgreSQL in a fresh database of the server named by `BETE_TEST_DATABASE_URL`
//! (scripts/pg.sh starts one; scripts/test.sh always does). Without the variable the
//! PostgreSQL half skips, saying so loudly.
#![allow(clippy::unwrap_used)]

use std::sync::Arc;
use std::time::Duration;

use super::*;

/// Where a test's stores live; `open` may be called again after the last store was dropped
/// (or released), to check what survived.
pub(crate) enum Backend {
    Sqlite(tempfile::TempDir),
    Postgres { url: String, node: String },
}

/// A database of its own on the test server, for one test.
pub(crate) async fn fresh_database() -> Option<String> {
    let Ok(base) = std::env::var("BETE_TEST_DATABASE_URL") else {
        eprintln!(
            "SKIPPED (PostgreSQL): BETE_TEST_DATABASE_URL is not set; \
             run through `bash scripts/pg.sh cargo test ...` (scripts/test.sh does)"
        );
        return None;
    };
    use sqlx::Connection;
    let mut conn = sqlx::PgConnection::connect(&base).await.unwrap();
    let name = format!("bete_{}", {
        let mut b = [0u8; 8];
        getrandom::fill(&mut b).unwrap();
        u64::from_le_bytes(b)
    });
    sqlx::query(&format!("CREATE DATABASE {name}"))
        .execute(&mut conn)
        .await
        .unwrap();
    let (head, _) = base.rsplit_once('/').unwrap();
    Some(format!("{head}/{name}"))
}

pub(crate) fn node(id: &str, ttl: Duration) -> NodeConfig {
    NodeConfig {
        id: id.into(),
        addr: format!("{id}.test:50051"),
        lease_ttl: ttl,
    }
}

/// Node `a`, whose lease of `ttl` a test lets lapse, and node `b`, whose lease (30 s) holds
/// throughout.
pub(super) async fn two_nodes(url: &str, ttl: Duration) -> (PgStore, PgStore) {
    let a = PgStore::open(url, node("a", ttl)).await.unwrap();
    let b = PgStore::open(url, node("b", Duration::from_secs(30)))
        .await
        .unwrap();
    (a, b)
}

impl Backend {
    pub(super) fn sqlite() -> Backend {
        Backend::Sqlite(tempfile::tempdir().unwrap())
    }

    pub(super) async fn postgres() -> Option<Backend> {
        Some(Backend::Postgres {
            url: fresh_database().await?,
            node: "n1".into(),
        })
    }

    pub(super) async fn open(&self) -> Arc<dyn Store> {
        match self {
            Backend::Sqlite(dir) => Arc::new(SqliteStore::open(dir.path()).await.unwrap()),
            Backend::Postgres { url, node: id } => {
                let pg = PgStore::open(url, node(id, Duration::from_secs(30)))
                    .await
                    .unwrap();
                // The one node leads the ladders, as its cluster loop would make it.
                assert!(pg.lead_ladders().await.unwrap().is_some());
                Arc::new(pg)
            }
        }
    }

    /// Drops the store as a stopping server does (releasing its tables), opens it again, and
    /// claims the tables again as a restarted server's recovery does.
    pub(super) async fn reopen(&self, old: Arc<dyn Store>, tables: &[&str]) -> Arc<dyn Store> {
        old.release_all().await.unwrap();
        drop(old);
        let s = self.open().await;
        for t in tables {
            assert_eq!(s.claim((*t).into()).await.unwrap(), Claim::Held);
        }
        s
    }
}

/// Runs each named test against both back ends (`suite_*.rs` use it too).
macro_rules! suite {
    ($($name:ident),* $(,)?) => {
        mod sqlite {
            $(
                #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
                async fn $name() {
                    super::$name(super::Backend::sqlite()).await
                }
            )*
        }
        mod postgres {
            $(
                #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
                async fn $name() {
                    let Some(b) = super::Backend::postgres().await else { return };
                    super::$name(b).await
                }
            )*
        }
    };
}

suite!(
    round_trip_survives_reopen,
    duplicate_seq_is_refused_without_failing_neighbours,
    the_log_refuses_entries_out_of_sequence,
    tables_of_bot_includes_finished_tables_only_when_named,
    listing_filters_and_pages,
    accounts_and_ladders_round_trip,
    a_seated_table_is_created_with_its_joins,
    bots_reads_many_ids_at_once,
);

pub(crate) fn table(id: &str, vis: Visibility) -> TableRow {
    TableRow {
        id: id.into(),
        ruleset: "bete".into(),
        seats: 3,
        config_json: "{}".into(),
        seed: "00".repeat(32),
        first_dealer: 0,
        deadline_ms: 10_000,
        visibility: vis,
        state: TableState::Waiting,
        last_seq: 0,
        created_by: "b1".into(),
        created_at_ms: 1,
        seed_chosen: false,
        ladder: None,
    }
}

pub(crate) fn seats() -> Vec<SeatRow> {
    [
        Occupant::Empty,
        Occupant::House("random".into()),
        Occupant::Empty,
    ]
    .into_iter()
    .enumerate()
    .map(|(i, occupant)| SeatRow {
        seat: i as u8,
        occupant,
        name: String::new(),
        strikes: 0,
    })
    .collect()
}

pub(crate) fn pass(time_ms: i64) -> LogEntry {
    LogEntry::Action {
        seat: 0,
        action: "pass".into(),
        auto: false,
        request_id: None,
        time_ms,
    }
}

fn bot(id: &str, name: &str, hash: &str, account: Option<&str>) -> BotRow {
    BotRow {
        id: id.into(),
        name: name.into(),
        owner: "me".into(),
        token_hash: hash.into(),
        created_at_ms: 5,
        account_id: account.map(Into::into),
        version: "1".into(),
    }
}

fn join(seat: u8, bot: &str) -> LogEntry {
    LogEntry::Join {
        seat,
        bot: bot.into(),
        name: "alice".into(),
        time_ms: 7,
    }
}

async fn round_trip_survives_reopen(b: Backend) {
    let s = b.open().await;
    s.create_bot(bot("b1", "alice", "ab", None)).await.unwrap();
    s.create_table(table("t1", Visibility::Listed), seats())
        .await
        .unwrap();
    s.append("t1".into(), 0, join(0, "b1"), 1).await.unwrap();
    s.append(
        "t1".into(),
        1,
        LogEntry::Action {
            seat: 2,
            action: "pass".into(),
            auto: true,
            request_id: None,
            time_ms: 9,
        },
        2,
    )
    .await
    .unwrap();
    let s = b.reopen(s, &["t1"]).await;
    assert_eq!(
        s.bot_by_token_hash("ab".into())
            .await
            .unwrap()
            .unwrap()
            .name,
        "alice"
    );
    assert_eq!(s.bot("b1".into()).await.unwrap().unwrap().token_hash, "ab");
    assert!(s.bot_by_token_hash("cd".into()).await.unwrap().is_none());
    let t = s.table("t1".into()).await.unwrap().unwrap();
    assert_eq!(
        t.table,
        TableRow {
            last_seq: 2,
            ..table("t1", Visibility::Listed)
        }
    );
    assert_eq!(t.seats[0].name, "alice");
    assert_eq!(t.seats[0].occupant, Occupant::Bot("b1".into()));
    assert_eq!(t.seats[1].occupant, Occupant::House("random".into()));
    assert_eq!(t.seats[1].name, "house:random");
    assert_eq!(t.seats[2].strikes, 1);
    let log = s.log("t1".into()).await.unwrap();
    assert_eq!(log.len(), 2);
    assert_eq!(log[0], join(0, "b1"));
    assert_eq!(log[1].time_ms(), 9);
    assert_eq!(s.unfinished_tables().await.unwrap(), vec!["t1".to_string()]);
    // The log goes on after the reopen.
    s.append("t1".into(), 2, pass(10), 3).await.unwrap();
    assert_eq!(s.log("t1".into()).await.unwrap().len(), 3);
    assert!(s.table("nope".into()).await.unwrap().is_none());
    assert!(s.log("nope".into()).await.unwrap().is_empty());
}

async fn duplicate_seq_is_refused_without_failing_neighbours(b: Backend) {
    let s = b.open().await;
    for t in ["t1", "t2"] {
        s.create_table(table(t, Visibility::Listed), seats())
            .await
            .unwrap();
    }
    // Many tables appending at once, each one entry at a time as an actor does: folded into
    // few transactions; the duplicate fails alone.
    let mut joins = Vec::new();
    for k in 0..20 {
        let s = s.clone();
        let id = format!("c{k}");
        s.create_table(table(&id, Visibility::Listed), seats())
            .await
            .unwrap();
        joins.push(tokio::spawn(async move {
            for i in 0..10u64 {
                s.append(id.clone(), i, pass(i as i64), i + 1).await?;
            }
            Ok::<_, StoreError>(())
        }));
    }
    let dup = {
        let s = s.clone();
        tokio::spawn(async move {
            s.append("t1".into(), 0, pass(0), 1).await.unwrap();
            s.append("t1".into(), 0, pass(1), 1).await
        })
    };
    for j in joins {
        j.await.unwrap().unwrap();
    }
    assert!(dup.await.unwrap().is_err());
    for k in 0..20 {
        let id = format!("c{k}");
        assert_eq!(s.log(id.clone()).await.unwrap().len(), 10);
        assert_eq!(s.table(id).await.unwrap().unwrap().table.last_seq, 10);
    }
    assert_eq!(
        s.table("t1".into()).await.unwrap().unwrap().table.last_seq,
        1
    );
    assert_eq!(s.log("t1".into()).await.unwrap(), vec![pass(0)]);
    // The failed write left nothing half-done: the next one commits and survives.
    s.append("t1".into(), 1, pass(2), 2).await.unwrap();
    let s = b.reopen(s, &["t1"]).await;
    assert_eq!(s.log("t1".into()).await.unwrap(), vec![pass(0), pass(2)]);
    assert_eq!(
        s.table("t1".into()).await.unwrap().unwrap().table.last_seq,
        2
    );
}

async fn the_log_refuses_entries_out_of_sequence(b: Backend) {
    let s = b.open().await;
    s.create_table(table("t1", Visibility::Listed), seats())
        .await
        .unwrap();
    s.append("t1".into(), 0, pass(1), 1).await.unwrap();
    // A seq already taken, a gap, a table that does not exist.
    for (t, seq) in [("t1", 0), ("t1", 2), ("nope", 0)] {
        assert!(
            s.append(t.into(), seq, pass(2), seq + 1).await.is_err(),
            "{t} {seq}"
        );
    }
    s.append("t1".into(), 1, pass(3), 2).await.unwrap();
    assert_eq!(s.log("t1".into()).await.unwrap(), [pass(1), pass(3)]);
    assert!(s.log("nope".into()).await.unwrap().is_empty());
}

async fn tables_of_bot_includes_finished_tables_only_when_named(b: Backend) {
    let s = b.open().await;
    for id in ["t1", "t2", "t3"] {
        s.create_table(table(id, Visibility::Listed), seats())
            .await
            .unwrap();
        s.append(id.into(), 0, join(0, "b1"), 1).await.unwrap();
    }
    s.finish("t1".into(), "{}".into(), vec![]).await.unwrap();
    s.finish("t2".into(), "{}".into(), vec![]).await.unwrap();
    assert_eq!(s.tables_of_bot("b1".into(), vec![]).await.unwrap(), ["t3"]);
    assert_eq!(
        s.tables_of_bot("b1".into(), vec!["t2".into(), "nope".into()])
            .await
            .unwrap(),
        ["t2", "t3"]
    );
    // Naming a table is no way into someone else's seat.
    assert!(
        s.tables_of_bot("b2".into(), vec!["t1".into()])
            .await
            .unwrap()
            .is_empty()
    );
}

async fn listing_filters_and_pages(b: Backend) {
    let s = b.open().await;
    for i in 0..5 {
        let vis = if i == 3 {
            Visibility::Private
        } else {
            Visibility::Listed
        };
        s.create_table(table(&format!("t{i}"), vis), seats())
            .await
            .unwrap();
    }
    s.set_state("t1".into(), TableState::Playing).await.unwrap();
    let list = |f: TableFilter| {
        let s = s.clone();
        async move {
            s.list_tables(f)
                .await
                .unwrap()
                .into_iter()
                .map(|t| (t.cursor, t.table.id))
                .collect::<Vec<_>>()
        }
    };
    let ids = |v: &[(i64, String)]| v.iter().map(|(_, id)| id.clone()).collect::<Vec<_>>();
    let all = list(TableFilter {
        limit: 10,
        ..Default::default()
    })
    .await;
    assert_eq!(ids(&all), ["t4", "t2", "t1", "t0"]);
    let mine = list(TableFilter {
        limit: 10,
        viewer_bot: Some("b1".into()),
        ..Default::default()
    })
    .await;
    assert_eq!(mine.len(), 5);
    let page1 = list(TableFilter {
        limit: 2,
        ..Default::default()
    })
    .await;
    let page2 = list(TableFilter {
        limit: 2,
        before: page1[1].0,
        ..Default::default()
    })
    .await;
    assert_eq!(ids(&page1), ["t4", "t2"]);
    assert_eq!(ids(&page2), ["t1", "t0"]);
    let playing = list(TableFilter {
        limit: 10,
        state: Some(TableState::Playing),
        ..Default::default()
    })
    .await;
    assert_eq!(ids(&playing), ["t1"]);
    let other = list(TableFilter {
        limit: 10,
        ruleset: Some("beast".into()),
        ..Default::default()
    })
    .await;
    assert!(other.is_empty());
    s.finish(
        "t1".into(),
        "{\"format\":\"bete-record/1\"}".into(),
        vec![RatingDelta {
            bot: "b1".into(),
            ruleset: "bete".into(),
            net: 7,
        }],
    )
    .await
    .unwrap();
    s.finish(
        "t0".into(),
        "{}".into(),
        vec![RatingDelta {
            bot: "b1".into(),
            ruleset: "bete".into(),
            net: -2,
        }],
    )
    .await
    .unwrap();
    assert_eq!(
        s.record("t1".into()).await.unwrap().unwrap(),
        "{\"format\":\"bete-record/1\"}"
    );
    assert!(s.record("t2".into()).await.unwrap().is_none());
    assert_eq!(
        s.rating("b1".into(), "bete".into()).await.unwrap(),
        Some((5, 2))
    );
    assert_eq!(s.rating("b1".into(), "beast".into()).await.unwrap(), None);
    assert_eq!(s.unfinished_tables().await.unwrap(), ["t2", "t3", "t4"]);
}

async fn accounts_and_ladders_round_trip(b: Backend) {
    let s = b.open().await;
    s.create_account(AccountRow {
        id: "a1".into(),
        name: "acme".into(),
        token_hash: "acc".into(),
        created_at_ms: 1,
    })
    .await
    .unwrap();
    s.create_bot(bot("b1", "one", "h1", Some("a1")))
        .await
        .unwrap();
    s.create_bot(bot("b2", "two", "h2", Some("a1")))
        .await
        .unwrap();
    // One account, one name, one version.
    assert!(
        s.create_bot(bot("b3", "one", "h3", Some("a1")))
            .await
            .is_err()
    );
    assert_eq!(
        s.account_by_token_hash("acc".into())
            .await
            .unwrap()
            .unwrap()
            .name,
        "acme"
    );
    let mine: Vec<String> = s
        .bots_of_account("a1".into())
        .await
        .unwrap()
        .into_iter()
        .map(|b| b.id)
        .collect();
    assert_eq!(mine, ["b1", "b2"]);
    let entry = |bot: &str, active: bool| EntryRow {
        ladder_id: "l1".into(),
        bot_id: bot.into(),
        capacity: 2,
        active,
        removed_reason: String::new(),
        entered_at_ms: if bot == "b1" { 10 } else { 11 },
    };
    s.put_entry(entry("b1", true)).await.unwrap();
    s.put_entry(entry("b2", true)).await.unwrap();
    s.put_entry(entry("b1", false)).await.unwrap();
    assert_eq!(
        s.entries("l1".into()).await.unwrap(),
        [entry("b1", false), entry("b2", true)]
    );
    let m = |id: &str, at: i64| MatchRow {
        id: id.into(),
        ladder_id: "l1".into(),
        seed: "ab".repeat(32),
        duplicate: true,
        entrants: vec!["b1".into(), "b2".into(), "house:random".into()],
        rated: false,
        started_at_ms: at,
        rated_at_ms: None,
        results: vec![],
        cursor: 0,
    };
    s.create_match(m("m1", 100)).await.unwrap();
    s.create_match(m("m2", 200)).await.unwrap();
    let mut lt = table("m1-0", Visibility::Private);
    lt.ladder = Some(LadderTable {
        ladder_id: "l1".into(),
        match_id: "m1".into(),
        rotation: 0,
    });
    s.create_table(lt.clone(), seats()).await.unwrap();
    let got = s.ladder_match("m1".into()).await.unwrap().unwrap();
    assert_eq!(
        MatchRow {
            cursor: 0,
            ..got.clone()
        },
        m("m1", 100)
    );
    let ids = |v: Vec<MatchRow>| v.into_iter().map(|m| m.id).collect::<Vec<_>>();
    assert_eq!(
        ids(s.ladder_matches("l1".into(), None, 0, 10).await.unwrap()),
        ["m2", "m1"]
    );
    let newest = s.ladder_matches("l1".into(), None, 0, 1).await.unwrap();
    assert_eq!(
        ids(s
            .ladder_matches("l1".into(), None, newest[0].cursor, 10)
            .await
            .unwrap()),
        ["m1"]
    );
    assert_eq!(
        ids(s
            .ladder_matches("l1".into(), Some("b2".into()), 0, 10)
            .await
            .unwrap()),
        ["m2", "m1"]
    );
    assert!(
        s.ladder_matches("l1".into(), Some("b9".into()), 0, 10)
            .await
            .unwrap()
            .is_empty()
    );
    assert_eq!(ids(s.playing_matches().await.unwrap()), ["m1", "m2"]);
    assert_eq!(
        ids(s.matches_since("l1".into(), 150).await.unwrap()),
        ["m2"]
    );
    let result = EntrantResult {
        bot_id: "b1".into(),
        net: 4,
        place: 1,
        mu_before: 25.0,
        sigma_before: 8.3,
        mu_after: 27.5,
        sigma_after: 7.9,
        strikes: 0,
        deals: 6,
    };
    let rating = |mu: f64| RatingRow {
        ladder_id: "l1".into(),
        bot_id: "b1".into(),
        mu,
        sigma: 7.9,
        matches: 1,
        jetons: 4,
        deals: 6,
        last_net: 4,
        last_place: 1,
    };
    assert_eq!(s.rated_match_count("l1".into()).await.unwrap(), 0);
    s.rate_match("m1".into(), vec![result.clone()], vec![rating(27.5)], 300)
        .await
        .unwrap();
    // Exactly once: a second rating of the same match changes nothing.
    s.rate_match("m1".into(), vec![], vec![rating(99.0)], 400)
        .await
        .unwrap();
    let rated = s.ladder_match("m1".into()).await.unwrap().unwrap();
    assert!(rated.rated);
    assert_eq!(rated.rated_at_ms, Some(300));
    assert_eq!(rated.results, [result]);
    assert_eq!(s.ratings("l1".into()).await.unwrap(), [rating(27.5)]);
    assert_eq!(ids(s.rated_matches("l1".into()).await.unwrap()), ["m1"]);
    assert_eq!(s.rated_match_count("l1".into()).await.unwrap(), 1);
    assert_eq!(ids(s.playing_matches().await.unwrap()), ["m2"]);
    // The finished tables of matches in flight, in one call: m1's once it is finished.
    let mids = vec!["m1".to_string(), "m2".to_string()];
    assert!(
        s.finished_match_tables(mids.clone())
            .await
            .unwrap()
            .is_empty()
    );
    s.set_state("m1-0".into(), TableState::Finished)
        .await
        .unwrap();
    let finished = s.finished_match_tables(mids).await.unwrap();
    assert_eq!(finished.len(), 1);
    assert_eq!(finished[0].table.id, "m1-0");
    assert_eq!(finished[0].table.ladder, lt.ladder);
    assert!(
        s.finished_match_tables(vec!["m2".into()])
            .await
            .unwrap()
            .is_empty()
    );
    // Rated, the set's tables are listed.
    let tables = s.match_tables("m1".into()).await.unwrap();
    assert_eq!(tables.len(), 1);
    assert_eq!(tables[0].table.visibility, Visibility::Listed);
    assert_eq!(tables[0].table.ladder, lt.ladder);
}

/// A table the server seats itself is written with its first log entries in one transaction:
/// after a reopen the log, the seats and the state are all there, and the log goes on from
/// those entries.
async fn a_seated_table_is_created_with_its_joins(b: Backend) {
    let join = |seat: u8, bot: &str| LogEntry::Join {
        seat,
        bot: bot.into(),
        name: format!("{bot}-name"),
        time_ms: 7,
    };
    let s = b.open().await;
    let mut seated = seats();
    seated[0].occupant = Occupant::Bot("b1".into());
    seated[2].occupant = Occupant::Bot("b2".into());
    let mut row = table("t1", Visibility::Private);
    row.state = TableState::Playing;
    s.create_seated_table(row, seated, vec![(join(0, "b1"), 2), (join(2, "b2"), 9)])
        .await
        .unwrap();
    assert_eq!(
        s.table("t1".into()).await.unwrap().unwrap().table.last_seq,
        9
    );
    s.append("t1".into(), 2, pass(9), 10).await.unwrap();
    // A second entry 0 is refused: the joins are the log's first entries.
    assert!(s.append("t1".into(), 0, join(1, "b3"), 11).await.is_err());
    let s = b.reopen(s, &["t1"]).await;
    let log = s.log("t1".into()).await.unwrap();
    assert_eq!(log, [join(0, "b1"), join(2, "b2"), pass(9)]);
    let t = s.table("t1".into()).await.unwrap().unwrap();
    assert_eq!(t.table.state, TableState::Playing);
    assert_eq!(t.table.last_seq, 10);
    let occupants: Vec<Occupant> = t.seats.iter().map(|s| s.occupant.clone()).collect();
    assert_eq!(
        occupants,
        [
            Occupant::Bot("b1".into()),
            Occupant::House("random".into()),
            Occupant::Bot("b2".into())
        ]
    );
    assert_eq!(
        s.tables_of_bot("b2".into(), Vec::new()).await.unwrap(),
        ["t1"]
    );
}

/// A page of names is one read: every existing id comes back, unknown ones are left out.
async fn bots_reads_many_ids_at_once(b: Backend) {
    let s = b.open().await;
    for i in 0..3 {
        s.create_bot(bot(
            &format!("b{i}"),
            &format!("bot {i}"),
            &format!("h{i}"),
            None,
        ))
        .await
        .unwrap();
    }
    let mut got: Vec<String> = s
        .bots(vec![
            "b2".into(),
            "nope".into(),
            "b0".into(),
            "x'); --".into(),
        ])
        .await
        .unwrap()
        .into_iter()
        .map(|b| b.name)
        .collect();
    got.sort();
    assert_eq!(got, ["bot 0", "bot 2"]);
    assert!(s.bots(Vec::new()).await.unwrap().is_empty());
}

// ---- PostgreSQL only: nodes, leases and fenced ownership ----

/// Two nodes on one database: a table belongs to its creator; a peer cannot claim it while the
/// creator's lease runs; once the lease lapses the peer claims it, and from then on the former
/// owner's appends (and its record) are refused, however late they come, while the new
/// owner's go on from the log as it stands.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn postgres_a_claimed_table_fences_its_former_owner() {
    let Some(url) = fresh_database().await else {
        return;
    };
    let ttl = Duration::from_millis(800);
    let (a, b) = two_nodes(&url, ttl).await;
    a.create_table(table("t1", Visibility::Listed), seats())
        .await
        .unwrap();
    a.append("t1".into(), 0, pass(1), 1).await.unwrap();
    assert_eq!(
        b.claim("t1".into()).await.unwrap(),
        Claim::Elsewhere {
            node: "a".into(),
            addr: "a.test:50051".into()
        }
    );
    assert!(b.orphans(10).await.unwrap().is_empty());
    assert!(b.append("t1".into(), 1, pass(2), 2).await.is_err());
    // `a` stops renewing (paused): its lease lapses.
    tokio::time::sleep(ttl + Duration::from_millis(300)).await;
    assert_eq!(b.orphans(10).await.unwrap(), ["t1"]);
    assert_eq!(b.unfinished_tables().await.unwrap(), ["t1"]);
    assert_eq!(b.claim("t1".into()).await.unwrap(), Claim::Held);
    assert_eq!(b.log("t1".into()).await.unwrap(), [pass(1)]);
    b.append("t1".into(), 1, pass(2), 2).await.unwrap();
    // `a` wakes up: its lease renews, but its writes to the table are fenced, and it learns
    // it lost the table.
    assert!(
        a.renew(&mut a.lease_conn(), Duration::from_secs(5))
            .await
            .unwrap()
    );
    assert!(matches!(
        a.append("t1".into(), 1, pass(99), 2).await,
        Err(StoreError::Fenced { ref owner, .. }) if owner == "b"
    ));
    assert!(matches!(
        a.finish("t1".into(), "{}".into(), vec![]).await,
        Err(StoreError::Fenced { .. })
    ));
    // And `a`, alive again, cannot take it back while `b` lives.
    assert!(matches!(
        a.claim("t1".into()).await.unwrap(),
        Claim::Elsewhere { .. }
    ));
    b.append("t1".into(), 2, pass(3), 3).await.unwrap();
    assert_eq!(
        b.log("t1".into()).await.unwrap(),
        [pass(1), pass(2), pass(3)]
    );
    // A table `a` holds still and one it lost: only the lost one is reported.
    a.create_table(table("t2", Visibility::Listed), seats())
        .await
        .unwrap();
    assert!(
        a.lost_tables().await.unwrap().is_empty(),
        "already forgotten on the fenced write"
    );
    // `b` stops: it releases its tables, which are then anyone's at once.
    b.release_all().await.unwrap();
    assert_eq!(a.orphans(10).await.unwrap(), ["t1"]);
    assert_eq!(a.claim("t1".into()).await.unwrap(), Claim::Held);
    a.append("t1".into(), 3, pass(4), 4).await.unwrap();
    assert_eq!(a.log("t1".into()).await.unwrap().len(), 4);
}

/// One node leads the ladders at a time: a second node follows while the leader's lease runs,
/// takes over (a higher epoch) once it lapses, and from then on the former leader's scheduler
/// writes (a new match, a rating) are refused, however late they come, while the new
/// leader's go through. Bots online on any live node are seen by every node.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn postgres_ladder_writes_are_fenced_to_the_leader() {
    let Some(url) = fresh_database().await else {
        return;
    };
    let ttl = Duration::from_millis(800);
    let (a, b) = two_nodes(&url, ttl).await;
    let m = |id: &str| MatchRow {
        id: id.into(),
        ladder_id: "l1".into(),
        seed: "ab".repeat(32),
        duplicate: false,
        entrants: vec!["b1".into(), "house:random".into(), "house:heuristic".into()],
        rated: false,
        started_at_ms: 100,
        rated_at_ms: None,
        results: vec![],
        cursor: 0,
    };
    let first = a.lead_ladders().await.unwrap().unwrap();
    assert_eq!(
        a.lead_ladders().await.unwrap(),
        Some(first),
        "still the leader"
    );
    assert_eq!(b.lead_ladders().await.unwrap(), None);
    assert!(matches!(
        b.create_match(m("from-b")).await,
        Err(StoreError::LadderFenced { ref leader }) if leader == "a"
    ));
    a.create_match(m("m1")).await.unwrap();
    assert_eq!(
        b.sync_online(vec!["b1".into()]).await.unwrap(),
        ["b1"],
        "online on b"
    );
    assert_eq!(a.sync_online(vec![]).await.unwrap(), ["b1"], "seen from a");
    // `a` pauses past its lease: `b` takes over at a higher epoch.
    tokio::time::sleep(ttl + Duration::from_millis(300)).await;
    let second = b.lead_ladders().await.unwrap().unwrap();
    assert!(second > first);
    // `a` wakes up: its lease renews, but it leads no more and its writes are fenced.
    assert!(
        a.renew(&mut a.lease_conn(), Duration::from_secs(5))
            .await
            .unwrap()
    );
    assert!(matches!(
        a.create_match(m("late")).await,
        Err(StoreError::LadderFenced { ref leader }) if leader == "b"
    ));
    assert!(matches!(
        a.rate_match("m1".into(), vec![], vec![], 200).await,
        Err(StoreError::LadderFenced { .. })
    ));
    assert_eq!(a.lead_ladders().await.unwrap(), None);
    assert!(a.ladder_match("late".into()).await.unwrap().is_none());
    b.rate_match("m1".into(), vec![], vec![], 300)
        .await
        .unwrap();
    assert!(b.ladder_match("m1".into()).await.unwrap().unwrap().rated);
    // `b` stops (releases its lease): `a` leads again at once.
    b.release_all().await.unwrap();
    assert!(a.lead_ladders().await.unwrap().unwrap() > second);
    assert!(a.sync_online(vec![]).await.unwrap().is_empty(), "b is gone");
}

/// Creating a table that exists (a ladder table's fixed id, created again while it plays) fails
/// and leaves the table held where it is: its owner goes on appending, at a claimed epoch too.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn postgres_creating_an_existing_table_keeps_it_held() {
    let Some(url) = fresh_database().await else {
        return;
    };
    let ttl = Duration::from_millis(600);
    let (a, b) = two_nodes(&url, ttl).await;
    a.create_table(table("t1", Visibility::Listed), seats())
        .await
        .unwrap();
    a.append("t1".into(), 0, pass(1), 1).await.unwrap();
    assert!(
        a.create_table(table("t1", Visibility::Listed), seats())
            .await
            .is_err()
    );
    a.append("t1".into(), 1, pass(2), 2).await.unwrap();
    // Claimed by `b` (epoch 2) after `a` lapsed: the same at `b`'s epoch.
    tokio::time::sleep(ttl + Duration::from_millis(300)).await;
    assert_eq!(b.claim("t1".into()).await.unwrap(), Claim::Held);
    assert!(
        b.create_table(table("t1", Visibility::Listed), seats())
            .await
            .is_err()
    );
    b.append("t1".into(), 2, pass(3), 3).await.unwrap();
    assert_eq!(b.log("t1".into()).await.unwrap().len(), 3);
}

/// A node whose lease lapsed and whose table was claimed and released meanwhile learns it from
/// `lost_tables` (the cluster loop then drops it) without having to write first.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn postgres_lost_tables_are_reported() {
    let Some(url) = fresh_database().await else {
        return;
    };
    let ttl = Duration::from_millis(600);
    let (a, b) = two_nodes(&url, ttl).await;
    for t in ["t1", "t2"] {
        a.create_table(table(t, Visibility::Listed), seats())
            .await
            .unwrap();
    }
    tokio::time::sleep(ttl + Duration::from_millis(300)).await;
    assert_eq!(b.claim("t1".into()).await.unwrap(), Claim::Held);
    assert!(
        a.renew(&mut a.lease_conn(), Duration::from_secs(5))
            .await
            .unwrap()
    );
    assert_eq!(
        a.lost_tables().await.unwrap(),
        [("t1".to_string(), Some("b".to_string()))]
    );
    assert!(a.lost_tables().await.unwrap().is_empty());
    a.append("t2".into(), 0, pass(1), 1).await.unwrap();
}

/// A second node with a live node's id is refused, naming the id; once the first is gone (its
/// registration released, as on SIGTERM) the id is free.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn postgres_a_second_node_with_a_live_id_is_refused() {
    let Some(url) = fresh_database().await else {
        return;
    };
    let ttl = Duration::from_millis(700);
    let first = PgStore::open(&url, node("same", ttl)).await.unwrap();
    let renewing = {
        let first = first.clone();
        tokio::spawn(async move {
            loop {
                first
                    .renew(&mut first.lease_conn(), Duration::from_secs(5))
                    .await
                    .unwrap();
                tokio::time::sleep(Duration::from_millis(100)).await;
            }
        })
    };
    let err = PgStore::open(&url, node("same", ttl)).await.unwrap_err();
    assert!(matches!(err, StoreError::NodeIdInUse { ref id, .. } if id == "same"));
    assert!(err.to_string().contains("--node-id"), "{err}");
    renewing.abort();
    first.release_all().await.unwrap();
    PgStore::open(&url, node("same", ttl)).await.unwrap();
}

/// PostgreSQL not reachable at start: a clear error naming where it was looked for (and no
/// password), after a bounded wait.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn postgres_unreachable_at_start_is_a_clear_error() {
    if std::env::var("BETE_TEST_DATABASE_URL").is_err() {
        eprintln!("SKIPPED (PostgreSQL): BETE_TEST_DATABASE_URL is not set");
        return;
    }
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let url = format!("postgres://bete:secret@127.0.0.1:{port}/nowhere");
    let err = PgStore::open(&url, node("x", Duration::from_secs(5)))
        .await
        .unwrap_err();
    let text = err.to_string();
    assert!(matches!(err, StoreError::Unavailable(_)), "{text}");
    assert!(
        text.contains(&format!("127.0.0.1:{port}/nowhere")),
        "{text}"
    );
    assert!(!text.contains("secret"), "{text}");
}
