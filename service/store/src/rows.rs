//! Rows to records, written once for both back ends: SQLite's and PostgreSQL's schemas name
//! and type these columns alike (the statements they share are in `reads.rs` and `writes.rs`).
//! sqlx's `Row::try_get` is generic over the database, with decoding bounds per column type; a
//! macro writes the mappers for each row type instead of spelling those bounds out on every
//! function.

macro_rules! mappers {
    ($row:ty, $db:ty) => {
        use sqlx::Row;

        use crate::{
            AccountRow, BotRow, EntrantResult, EntryRow, LadderTable, MatchRow, RatingRow,
            StoreError, TableRow, TableState, Visibility,
        };

        pub(crate) fn bot_from_row(row: &$row) -> Result<BotRow, StoreError> {
            Ok(BotRow {
                id: row.try_get("id")?,
                name: row.try_get("name")?,
                owner: row.try_get("owner")?,
                token_hash: row.try_get("token_hash")?,
                created_at_ms: row.try_get("created_at")?,
                account_id: row.try_get("account_id")?,
                version: row.try_get("version")?,
            })
        }

        pub(crate) fn account_from_row(row: &$row) -> Result<AccountRow, StoreError> {
            Ok(AccountRow {
                id: row.try_get("id")?,
                name: row.try_get("name")?,
                token_hash: row.try_get("token_hash")?,
                created_at_ms: row.try_get("created_at")?,
            })
        }

        pub(crate) fn entry_from_row(row: &$row) -> Result<EntryRow, StoreError> {
            let capacity: i64 = row.try_get("capacity")?;
            Ok(EntryRow {
                ladder_id: row.try_get("ladder_id")?,
                bot_id: row.try_get("bot_id")?,
                capacity: u32::try_from(capacity).unwrap_or(0),
                active: row.try_get("active")?,
                removed_reason: row.try_get("removed_reason")?,
                entered_at_ms: row.try_get("entered_at")?,
            })
        }

        pub(crate) fn match_from_row(row: &$row) -> Result<MatchRow, StoreError> {
            let id: String = row.try_get("id")?;
            let corrupt = |what: &str| StoreError::Corrupt(format!("ladder match {id}: {what}"));
            let entrants: String = row.try_get("entrants")?;
            let entrants: Vec<String> =
                serde_json::from_str(&entrants).map_err(|_| corrupt("entrants"))?;
            let results: Option<String> = row.try_get("results")?;
            let results: Vec<EntrantResult> = match results {
                Some(r) => serde_json::from_str(&r).map_err(|_| corrupt("results"))?,
                None => Vec::new(),
            };
            let state: String = row.try_get("state")?;
            Ok(MatchRow {
                ladder_id: row.try_get("ladder_id")?,
                seed: row.try_get("seed")?,
                duplicate: row.try_get("duplicate")?,
                entrants,
                rated: state == "rated",
                started_at_ms: row.try_get("started_at")?,
                rated_at_ms: row.try_get("rated_at")?,
                results,
                cursor: row.try_get("cursor")?,
                id,
            })
        }

        pub(crate) fn rating_from_row(row: &$row) -> Result<RatingRow, StoreError> {
            let n = |name: &str| -> Result<i64, StoreError> { Ok(row.try_get::<i64, _>(name)?) };
            Ok(RatingRow {
                ladder_id: row.try_get("ladder_id")?,
                bot_id: row.try_get("bot_id")?,
                mu: row.try_get("mu")?,
                sigma: row.try_get("sigma")?,
                matches: u32::try_from(n("matches")?).unwrap_or(0),
                jetons: n("jetons")?,
                deals: u64::try_from(n("deals")?).unwrap_or(0),
                last_net: n("last_net")?,
                last_place: u32::try_from(n("last_place")?).unwrap_or(0),
            })
        }

        /// `last_seq`: the table's latest event seq, which each back end finds its own way.
        pub(crate) fn table_from_row(
            row: &$row,
            last_seq: i64,
        ) -> Result<(i64, TableRow), StoreError> {
            let small = |name: &str| -> Result<u8, StoreError> {
                let v: i64 = row.try_get(name)?;
                u8::try_from(v).map_err(|_| StoreError::Corrupt(format!("{name} = {v}")))
            };
            let deadline: i64 = row.try_get("deadline_ms")?;
            Ok((
                row.try_get("cursor")?,
                TableRow {
                    id: row.try_get("id")?,
                    ruleset: row.try_get("ruleset")?,
                    seats: small("seats")?,
                    config_json: row.try_get("config")?,
                    seed: row.try_get("seed")?,
                    first_dealer: small("first_dealer")?,
                    deadline_ms: deadline.max(0) as u64,
                    visibility: Visibility::parse(row.try_get("visibility")?)?,
                    state: TableState::parse(row.try_get("state")?)?,
                    last_seq: last_seq.max(0) as u64,
                    created_by: row.try_get("created_by")?,
                    created_at_ms: row.try_get("created_at")?,
                    seed_chosen: row.try_get("seed_chosen")?,
                    ladder: match (
                        row.try_get::<Option<String>, _>("ladder_id")?,
                        row.try_get::<Option<String>, _>("ladder_match")?,
                        row.try_get::<Option<i64>, _>("ladder_rotation")?,
                    ) {
                        (Some(ladder_id), Some(match_id), Some(r)) => Some(LadderTable {
                            ladder_id,
                            match_id,
                            rotation: u8::try_from(r).map_err(|_| {
                                StoreError::Corrupt(format!("ladder_rotation = {r}"))
                            })?,
                        }),
                        _ => None,
                    },
                },
            ))
        }
    };
}

/// For `sqlite.rs` and its modules.
pub(super) mod sqlite {
    mappers!(sqlx::sqlite::SqliteRow, sqlx::Sqlite);
}

/// For `postgres.rs` and its modules.
pub(super) mod postgres {
    mappers!(sqlx::postgres::PgRow, sqlx::Postgres);
}
