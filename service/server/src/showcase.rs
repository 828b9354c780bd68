//! Showcase tables (`--house-tables N`): N listed tables of house bots kept running at a
//! watchable pace, so a fresh server's web page has live tables to open. Off (0) by default in
//! the library; tests and embedders opt in.

use std::sync::Arc;
use std::time::Duration;

use bete_api::pb;

use crate::service::Api;
use crate::store::{BotRow, TableFilter, TableState};

pub use bete_table::{SHOWCASE_CREATOR as CREATOR, SHOWCASE_PACE as PACE};

/// How often the task looks for finished showcase tables to replace.
const CHECK_EVERY: Duration = Duration::from_secs(3);

/// The games shown, in turn, and their seat counts.
const GAMES: [(pb::Ruleset, u32); 6] = [
    (pb::Ruleset::Bete, 4),
    (pb::Ruleset::Lanterlui, 4),
    (pb::Ruleset::Beast, 4),
    (pb::Ruleset::BesteBoer, 5),
    (pb::Ruleset::BeteAceHigh, 3),
    (pb::Ruleset::BesterBube, 4),
];

/// Keeps `wanted` showcase tables playing until the server drains.
pub async fn keep(api: Arc<Api>, wanted: u32) {
    let house = BotRow {
        id: CREATOR.to_string(),
        ..(*crate::service::spectator()).clone()
    };
    let mut next_game = 0usize;
    let stopped = api.tables.deps.shutdown.stopped();
    tokio::pin!(stopped);
    loop {
        let running = match running(&api).await {
            Ok(n) => n,
            Err(e) => {
                tracing::warn!(error = %e, "showcase: cannot list tables");
                wanted
            }
        };
        for _ in running..wanted {
            let (ruleset, seats) = GAMES[next_game % GAMES.len()];
            next_game += 1;
            let req = pb::CreateTableRequest {
                ruleset: ruleset.into(),
                seats,
                house_bots: (0..seats)
                    .map(|seat| pb::HouseBotSeat {
                        seat,
                        policy: if seat % 2 == 0 {
                            pb::HouseBotPolicy::Heuristic
                        } else {
                            pb::HouseBotPolicy::Random
                        }
                        .into(),
                        search_budget_ms: 0,
                    })
                    .collect(),
                visibility: pb::Visibility::Listed.into(),
                ..Default::default()
            };
            let created = async {
                let (row, seat_rows) = api.check_create(&house, req)?;
                let id = row.id.clone();
                api.store.create_table(row, seat_rows).await?;
                api.status(&id).await?;
                Ok::<_, bete_base::status::ServerError>(id)
            };
            match created.await {
                Ok(id) => tracing::info!(table = %id, "showcase table started"),
                Err(e) => tracing::warn!(error = %e, "showcase: cannot create a table"),
            }
        }
        tokio::select! {
            () = &mut stopped => return,
            () = tokio::time::sleep(CHECK_EVERY) => {}
        }
    }
}

/// Showcase tables waiting or playing now.
async fn running(api: &Api) -> Result<u32, bete_base::status::ServerError> {
    let mut n = 0;
    for state in [TableState::Waiting, TableState::Playing] {
        let rows = api
            .store
            .list_tables(TableFilter {
                ruleset: None,
                state: Some(state),
                viewer_bot: None,
                before: 0,
                limit: 500,
            })
            .await?;
        for t in rows.iter().filter(|t| t.table.created_by == CREATOR) {
            // The stored state lags the actor's; a loaded table knows.
            let live = api.tables.loaded(&t.table.id).map(|h| h.shared.state());
            if live != Some(TableState::Finished) {
                n += 1;
            }
        }
    }
    Ok(n)
}
