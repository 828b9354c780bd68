//! The seats-per-bot limit (`--max-seats-per-bot`) without a store read at every join.
//!
//! A bot's count of unfinished tables it sits at is the store's (the tables of every node), read
//! when this node has no fresh count for the bot or when the count it has would reach the
//! limit; in between, the seats the bot takes through this node are added to it. A bot far from
//! the limit is read once a [`FRESH`] span however fast it joins, where it was read at every
//! join: in a run of 1,000 tables with 80 bots, 5,000 reads of 62 tables each, a third of the
//! database's setup (docs/benchmarks.md).
//!
//! What a count may miss: seats left or freed meanwhile (it only counts up, so it reads the
//! store sooner, never refuses wrongly: a refusal is always the store's answer), and seats the
//! bot took through another node within the span (one node's count cannot see them, so a bot
//! joining through several nodes at once may pass the limit by what it took elsewhere in that
//! span; on one node the limit is exact).

use std::collections::HashMap;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use bete_base::status::ServerError;
use bete_store::Store;

/// How long a count read from the store is used before it is read again.
pub const FRESH: Duration = Duration::from_secs(1);

/// Counts kept before the first sweep of stale ones.
const SWEEP_OVER: usize = 1024;

/// Each bot's count of seats, as last read and taken since.
#[derive(Debug, Default)]
pub struct SeatCounts {
    counts: Mutex<Counts>,
}

#[derive(Debug, Default)]
struct Counts {
    by_bot: HashMap<String, Count>,
    /// The size at which stale counts are swept next: twice what a sweep left (at least
    /// [`SWEEP_OVER`]), so that many bots all fresh at once cost one sweep per doubling, not
    /// one per new bot.
    sweep_at: usize,
}

#[derive(Clone, Copy, Debug)]
struct Count {
    read_at: Instant,
    /// The bot's unfinished tables, by the store, at `read_at`.
    tables: usize,
    /// Seats taken through this node since.
    taken: usize,
}

impl SeatCounts {
    /// Whether `bot` may take a seat at `table` under `limit` (0: no limit): from the count
    /// kept while it is fresh and under the limit, else from the store (which refuses with
    /// TOO_MANY_TABLES).
    pub async fn admit(
        &self,
        store: &dyn Store,
        bot: &str,
        table: &str,
        limit: usize,
    ) -> Result<(), ServerError> {
        if limit == 0 {
            return Ok(());
        }
        let now = Instant::now();
        if let Some(c) = self.lock().by_bot.get(bot)
            && now.duration_since(c.read_at) < FRESH
            && c.tables + c.taken < limit
        {
            return Ok(());
        }
        let seated = store.tables_of_bot(bot.to_string(), Vec::new()).await?;
        let mut counts = self.lock();
        if counts.by_bot.len() >= counts.sweep_at.max(SWEEP_OVER) {
            counts
                .by_bot
                .retain(|_, c| now.duration_since(c.read_at) < FRESH);
            counts.sweep_at = 2 * counts.by_bot.len();
        }
        counts.by_bot.insert(
            bot.to_string(),
            Count {
                read_at: now,
                tables: seated.len(),
                taken: 0,
            },
        );
        if seated.len() >= limit && !seated.iter().any(|t| t == table) {
            return Err(ServerError::TooManyTables {
                what: "seated",
                limit,
            });
        }
        Ok(())
    }

    /// `bot` took a seat through this node.
    pub fn taken(&self, bot: &str) {
        if let Some(c) = self.lock().by_bot.get_mut(bot) {
            c.taken += 1;
        }
    }

    #[cfg(test)]
    fn len(&self) -> usize {
        self.lock().by_bot.len()
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Counts> {
        // Poisoned only by a panic inside the short sections above, which leave the map whole.
        self.counts.lock().unwrap_or_else(|p| p.into_inner())
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use bete_store::{Occupant, SeatRow, SqliteStore, TableRow, TableState, Visibility};

    use super::*;

    /// A table at which `bot` sits (seat 0), in the store.
    async fn seated_at(store: &SqliteStore, id: &str, bot: &str) {
        let table = TableRow {
            id: id.into(),
            ruleset: "bete".into(),
            seats: 3,
            config_json: "{}".into(),
            seed: "00".repeat(32),
            first_dealer: 0,
            deadline_ms: 10_000,
            visibility: Visibility::Listed,
            state: TableState::Waiting,
            last_seq: 0,
            created_by: bot.into(),
            created_at_ms: 1,
            seed_chosen: false,
            ladder: None,
        };
        let seats = (0..3u8)
            .map(|seat| SeatRow {
                seat,
                occupant: if seat == 0 {
                    Occupant::Bot(bot.into())
                } else {
                    Occupant::Empty
                },
                name: String::new(),
                strikes: 0,
            })
            .collect();
        store.create_table(table, seats).await.unwrap();
    }

    fn refused(r: Result<(), ServerError>) -> bool {
        matches!(
            r,
            Err(ServerError::TooManyTables {
                what: "seated",
                limit: 2
            })
        )
    }

    /// The store decides at the limit, and only the store refuses; a fresh count under the
    /// limit is used as it is (the span's slack); a stale one is read again.
    #[tokio::test]
    async fn the_store_decides_at_the_limit_and_a_fresh_count_spares_it() {
        let dir = tempfile::tempdir().unwrap();
        let store = SqliteStore::open(dir.path()).await.unwrap();
        let counts = SeatCounts::default();
        // Read: no seats. Two taken here (not in the store): the count reaches the limit, so
        // the store is asked, and it has none, so the bot is admitted.
        counts.admit(&store, "b1", "t9", 2).await.unwrap();
        counts.taken("b1");
        counts.taken("b1");
        counts.admit(&store, "b1", "t9", 2).await.unwrap();
        // The bot sits at two tables (through another node, say): the fresh count of 0 does
        // not know, and admits.
        seated_at(&store, "t1", "b1").await;
        seated_at(&store, "t2", "b1").await;
        counts.admit(&store, "b1", "t9", 2).await.unwrap();
        // Once stale, the count is read again: two, at the limit.
        tokio::time::sleep(FRESH).await;
        assert!(refused(counts.admit(&store, "b1", "t9", 2).await));
        // A table it sits at already is no new seat; no limit admits anything.
        counts.admit(&store, "b1", "t1", 2).await.unwrap();
        counts.admit(&store, "b1", "t9", 0).await.unwrap();
    }

    /// Stale counts are swept once the bots kept double: the counts of bots seen a while ago
    /// do not stay for the life of the server.
    #[tokio::test]
    async fn stale_counts_are_swept() {
        let dir = tempfile::tempdir().unwrap();
        let store = SqliteStore::open(dir.path()).await.unwrap();
        let counts = SeatCounts::default();
        for i in 0..1100 {
            counts
                .admit(&store, &format!("old{i}"), "t", 2)
                .await
                .unwrap();
        }
        assert_eq!(counts.len(), 1100, "all fresh: none swept");
        tokio::time::sleep(FRESH).await;
        for i in 0..1000 {
            counts
                .admit(&store, &format!("new{i}"), "t", 2)
                .await
                .unwrap();
        }
        assert!(
            counts.len() < 1100,
            "the old ones were swept: {}",
            counts.len()
        );
    }
}
