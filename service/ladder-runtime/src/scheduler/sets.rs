//! A match's set of tables: starting the match, creating and seating each table, resuming a
//! set after a restart.

use super::conduct::forfeit;
use super::{Playing, Scheduler};
use crate::LadderCommand;
use crate::result::table_result;
use bete_base::ids::hex;
use bete_base::status::ServerError;
use bete_ladder::duplicate;
use bete_store::clock::now_ms;
use bete_store::{
    LadderTable, MatchRow, Occupant, SeatRow, Store, TableRow, TableState, Visibility,
};
use bete_table::registry::Tables;

impl Scheduler {
    pub(super) async fn start_match(&mut self, entrants: Vec<String>) -> Result<(), ServerError> {
        let seed = if self.fixed_seeds {
            bete_rules::Seed(rand::Rng::random(&mut self.rng))
        } else {
            bete_store::fresh_seed()?
        };
        let row = MatchRow {
            id: format!("m_{}", hex(&rand::random::<[u8; 8]>())),
            ladder_id: self.spec.id.clone(),
            seed: seed.to_string(),
            duplicate: self.spec.duplicate,
            entrants,
            rated: false,
            started_at_ms: now_ms(),
            rated_at_ms: None,
            results: Vec::new(),
            cursor: 0,
        };
        let id = row.id.clone();
        tracing::info!(ladder = %self.spec.id, r#match = %id, entrants = ?row.entrants, "ladder match scheduled");
        self.playing.insert(
            id.clone(),
            Playing {
                row: row.clone(),
                done: Vec::new(),
                stalled: false,
            },
        );
        // The match row is stored by the table's start, before its first table.
        self.start_table(&id, 0, true, Some(row)).await
    }

    /// The id of a match's table of `rotation`: fixed, so a restart finds the table it made.
    pub(super) fn table_id(match_id: &str, rotation: usize) -> String {
        format!("t_{}r{rotation}", match_id.trim_start_matches("m_"))
    }

    /// Start the table of `rotation`: built here, then created and seated in a task of its own,
    /// so the scheduler never waits for the commits of one table (its row, one join per bot)
    /// before it looks at the next. Creation and seating are idempotent (a fixed table id, an
    /// "already seated" join), so a restart may simply do them again.
    pub(super) async fn start_table(
        &mut self,
        match_id: &str,
        rotation: usize,
        fresh: bool,
        new_match: Option<MatchRow>,
    ) -> Result<(), ServerError> {
        let Some(p) = self.playing.get(match_id) else {
            return Ok(());
        };
        let row = p.row.clone();
        let seats = usize::from(self.spec.seats);
        let id = Self::table_id(match_id, rotation);
        let at_seat: Vec<String> = (0..seats)
            .filter_map(|s| row.entrants.get(duplicate::entrant_at(s, rotation, seats)))
            .cloned()
            .collect();
        let table = TableRow {
            id: id.clone(),
            ruleset: self.spec.ruleset.id().to_string(),
            seats: self.spec.seats,
            config_json: serde_json::Value::Object(self.spec.config_json()).to_string(),
            seed: row.seed.clone(),
            first_dealer: 0,
            deadline_ms: self.spec.deadline_ms,
            // A set's later rotations deal the same decks: its tables stay private (no
            // spectator sees a revealed hand, no record is served) until it is rated.
            visibility: if row.duplicate {
                Visibility::Private
            } else {
                Visibility::Listed
            },
            state: TableState::Waiting,
            last_seq: 0,
            created_by: format!("ladder:{}", self.spec.id),
            created_at_ms: now_ms(),
            seed_chosen: false,
            ladder: Some(LadderTable {
                ladder_id: self.spec.id.clone(),
                match_id: match_id.to_string(),
                rotation: rotation as u8,
            }),
        };
        // A bot that left during its set is not seated at the set's later tables: the house's
        // random policy plays its seat there, and the set (whose result still counts for the
        // bot) keeps every rotation for the others.
        let left = |bot: &str| {
            self.entrants
                .get(bot)
                .is_some_and(|e| !e.house && !e.entry.active)
        };
        let seat_rows = at_seat
            .iter()
            .enumerate()
            .map(|(s, bot)| SeatRow {
                seat: s as u8,
                occupant: match bot.strip_prefix("house:") {
                    Some(p) => Occupant::House(house_text(
                        bete_ladder::spec::house_policy(p),
                        self.spec.search_budget_ms,
                    )),
                    None if left(bot) => {
                        Occupant::House(house_text("random", self.spec.search_budget_ms))
                    }
                    None => Occupant::Empty,
                },
                name: String::new(),
                strikes: 0,
            })
            .collect();
        let bots: Vec<bete_table::Seating> = at_seat
            .iter()
            .enumerate()
            .filter(|(_, b)| !b.starts_with("house:") && !left(b))
            .map(|(s, b)| {
                let name = self
                    .entrants
                    .get(b.as_str())
                    .map(|e| e.name.clone())
                    .unwrap_or_default();
                (s as u8, b.clone(), name)
            })
            .collect();
        let forfeits = self.forfeited(&at_seat);
        let (store, tables, ladder, back) = (
            self.store.clone(),
            self.tables.clone(),
            self.spec.id.clone(),
            self.me.clone(),
        );
        let match_id = match_id.to_string();
        let seated: Vec<String> = bots.iter().map(|b| b.1.clone()).collect();
        let task = tokio::spawn(async move {
            let mut stored = new_match.is_none();
            let started = async {
                if let Some(m) = new_match {
                    store.create_match(m).await?;
                    stored = true;
                }
                seat_table(&*store, &tables, table, seat_rows, bots, fresh).await
            }
            .await;
            if started.is_ok() {
                // The set's later tables of a bot taken off: auto-moved too.
                for bot in forfeits {
                    forfeit(tables.clone(), id.clone(), bot);
                }
            }
            if let Err(e) = started {
                tracing::error!(%ladder, table = %id, error = %e, "cannot start a ladder table");
                if let Some(tx) = back.upgrade() {
                    let _ = tx.send(LadderCommand::StartFailed { match_id, stored });
                }
            }
        });
        self.seating.retain(|(_, t)| !t.is_finished());
        self.seating.push((seated, task));
        Ok(())
    }

    /// After a restart: take the finished tables' results and carry on from the first
    /// unfinished (or not yet created) table.
    pub(super) async fn resume(&mut self, match_id: &str) -> Result<(), ServerError> {
        let tables = self.store.match_tables(match_id.to_string()).await?;
        let n = self.spec.tables_per_match();
        let mut done = Vec::new();
        for r in 0..n {
            let Some(t) = tables.iter().find(|t| {
                t.table
                    .ladder
                    .as_ref()
                    .is_some_and(|l| usize::from(l.rotation) == r)
            }) else {
                if let Some(p) = self.playing.get_mut(match_id) {
                    p.done = done;
                }
                return self.start_table(match_id, r, false, None).await;
            };
            if t.table.state != TableState::Finished {
                if let Some(p) = self.playing.get_mut(match_id) {
                    p.done = done;
                }
                return self.start_table(match_id, r, false, None).await;
            }
            done.push(table_result(&*self.store, t, self.spec.luck_adjusted).await?);
        }
        if let Some(p) = self.playing.get_mut(match_id) {
            p.done = done;
        }
        self.rate(match_id).await
    }
}

/// Create a ladder table with its bots seated, in one store transaction, then attach their
/// WatchBot streams. After a restart (`fresh` false) the table may exist already, perhaps
/// from an older server that seated bots one join at a time: then each bot is seated through
/// the table actor's own join, where already seated counts as seated.
pub(super) async fn seat_table(
    store: &dyn Store,
    tables: &Tables,
    table: TableRow,
    seat_rows: Vec<SeatRow>,
    bots: Vec<bete_table::Seating>,
    fresh: bool,
) -> Result<(), ServerError> {
    let id = table.id.clone();
    if fresh || store.table(id.clone()).await?.is_none() {
        tables.create_seated(table, seat_rows, bots.clone()).await?;
    } else {
        for (seat, bot, name) in &bots {
            let joined = tables
                .call(&id, |reply| bete_table::Command::Join {
                    bot: bot.clone(),
                    name: name.clone(),
                    seat: Some(*seat),
                    by_ladder: true,
                    reply,
                })
                .await;
            match joined {
                Ok(Ok(_)) | Ok(Err(ServerError::AlreadySeated(_))) => {}
                // Played by another node of the cluster (claimed after its creator died), with
                // its seats as stored: nothing to do here.
                Err(ServerError::TableElsewhere { .. }) => return Ok(()),
                Ok(Err(e)) | Err(e) => return Err(e),
            }
        }
    }
    for (_, bot, _) in &bots {
        tables.attach_bot_streams(bot, &id).await;
    }
    Ok(())
}

/// The stored policy of a house entrant's seat: a `search` entrant with the ladder's budget.
pub(super) fn house_text(policy: &str, search_budget_ms: u32) -> String {
    match policy {
        "search" => bete_table::HousePolicy::Search {
            budget_ms: search_budget_ms,
        }
        .text(),
        p => p.to_string(),
    }
}
