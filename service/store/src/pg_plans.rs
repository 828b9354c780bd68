//! The write path's statements keep to their keys whatever PostgreSQL's statistics say: the
//! generic plan of each, made on a young database (a handful of rows, never analysed, as a
//! connection makes it in a new deployment and then keeps), reads no table whole.

#![allow(clippy::unwrap_used)]

use sqlx::{Connection, PgConnection};

use super::append::APPEND;
use super::{PgStore, TABLES_OF_BOT};
use crate::reads::SEATS_OF;
use crate::suite::{fresh_database, node, seats, table};
use crate::{Store, Visibility};

/// The generic plan of `sql` (its parameters typed as `types`, executed with `args`).
async fn generic_plan(
    conn: &mut PgConnection,
    name: &str,
    types: &str,
    sql: &str,
    args: &str,
) -> String {
    sqlx::raw_sql(&format!("PREPARE {name}({types}) AS {sql}"))
        .execute(&mut *conn)
        .await
        .unwrap();
    let rows: Vec<String> = sqlx::query_scalar(&format!("EXPLAIN EXECUTE {name}({args})"))
        .fetch_all(&mut *conn)
        .await
        .unwrap();
    rows.join("\n")
}

#[tokio::test]
async fn plans_stay_on_their_keys() {
    let Some(url) = fresh_database().await else {
        return;
    };
    let store = PgStore::open(&url, node("a", std::time::Duration::from_secs(30)))
        .await
        .unwrap();
    for id in ["t1", "t2", "t3"] {
        store
            .create_table(table(id, Visibility::Listed), seats())
            .await
            .unwrap();
    }
    let mut conn = PgConnection::connect(&url).await.unwrap();
    sqlx::raw_sql("SET plan_cache_mode = force_generic_plan")
        .execute(&mut conn)
        .await
        .unwrap();
    let plans = [
        (
            "group_commit",
            generic_plan(
                &mut conn,
                "group_commit",
                "text[], int8[], int8[], text, text, text[], int8[], text[], int8[]",
                APPEND,
                "'{t1}', '{0}', '{0}', 'a', 'x', '{t1}', '{0}', '{p}', '{1}'",
            )
            .await,
        ),
        (
            "tables_of_bot",
            generic_plan(
                &mut conn,
                "tables_of_bot",
                "text, text[]",
                TABLES_OF_BOT,
                "'b1', '{}'",
            )
            .await,
        ),
        (
            "a_table",
            generic_plan(
                &mut conn,
                "a_table",
                "text",
                &format!("{} WHERE t.id = $1", crate::reads::postgres::TABLES),
                "'t1'",
            )
            .await,
        ),
        (
            // `bete_take_seats`' statement, seat by seat.
            "take_seat",
            generic_plan(
                &mut conn,
                "take_seat",
                "text, text, int8",
                "UPDATE seats SET bot_id = $1 WHERE table_id = $2 AND seat = $3",
                "'b1', 't1', 0",
            )
            .await,
        ),
        (
            "seats_of",
            generic_plan(&mut conn, "seats_of", "text", SEATS_OF, "'t1'").await,
        ),
    ];
    for (name, plan) in plans {
        for whole in [
            "Seq Scan on tables",
            "Seq Scan on bots",
            "Seq Scan on seats",
            "Seq Scan on log",
        ] {
            assert!(!plan.contains(whole), "{name} reads a table whole:\n{plan}");
        }
    }
}
