//! A ladder's strike records on the server: each bot's recent decisions (its strike window),
//! its removals for timeouts and its cooldown, held by the scheduler of the ladder's leader and
//! kept in the store (`Store::put_strikes`), so that a restart forgets no griefer and every
//! node of a cluster refuses a bot that is cooling down (`check_cooldown`).

use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;

use bete_ladder::{LadderSpec, StrikeWindow};
use tokio::sync::{mpsc, oneshot};

use bete_base::status::ServerError;
use bete_store::{Store, StoreError, StrikeRecord};

/// Refuses a bot still cooling down after a removal from the ladder: LADDER_COOLDOWN with the
/// time left. Any node's EnterLadder asks this of the store.
pub(super) async fn check_cooldown(
    store: &dyn Store,
    ladder: &str,
    bot: &str,
    now_ms: i64,
) -> Result<(), ServerError> {
    match store.strike_record(ladder.into(), bot.into()).await? {
        Some(r) => cooling_down(&r, now_ms),
        None => Ok(()),
    }
}

fn cooling_down(r: &StrikeRecord, now_ms: i64) -> Result<(), ServerError> {
    let left = r.cooldown_until_ms.saturating_sub(now_ms);
    if left > 0 {
        return Err(ServerError::LadderCooldown {
            ladder: r.ladder_id.clone(),
            removals: r.removals,
            // `left` > 0 here, so the conversion cannot fail.
            retry_after: Duration::from_millis(u64::try_from(left).unwrap_or(0)),
        });
    }
    Ok(())
}

/// One bot's record as the leader holds it.
#[derive(Clone, Debug, Default)]
struct Held {
    removals: u32,
    until_ms: i64,
    window: StrikeWindow,
}

/// A write for the writer task; `done` answers once it is stored (or failed).
type Write = (
    StrikeRecord,
    Option<oneshot::Sender<Result<(), StoreError>>>,
);

/// The strike records of one ladder, in the leader's memory and, through a writer that keeps
/// their order, in the store.
pub(super) struct Strikes {
    ladder: String,
    held: HashMap<String, Held>,
    writes: mpsc::UnboundedSender<Write>,
}

impl Strikes {
    pub(super) fn new(ladder: &str, store: Arc<dyn Store>) -> Strikes {
        let (writes, rx) = mpsc::unbounded_channel();
        tokio::spawn(write_records(store, rx));
        Strikes {
            ladder: ladder.to_string(),
            held: HashMap::new(),
            writes,
        }
    }

    /// The ladder's records as the store holds them (a leader's load).
    pub(super) async fn load(
        &mut self,
        store: &dyn Store,
        spec: &LadderSpec,
    ) -> Result<(), StoreError> {
        self.held = store
            .strike_records(self.ladder.clone())
            .await?
            .into_iter()
            .map(|r| {
                let held = Held {
                    removals: r.removals,
                    until_ms: r.cooldown_until_ms,
                    window: StrikeWindow::from_kept(&r.window, spec.strike_window),
                };
                (r.bot_id, held)
            })
            .collect();
        Ok(())
    }

    /// The leader's own look before the store's: a removal whose write failed still holds here.
    pub(super) fn check(&self, bot: &str, now_ms: i64) -> Result<(), ServerError> {
        match self.held.get(bot) {
            Some(h) => cooling_down(&self.record(bot, h), now_ms),
            None => Ok(()),
        }
    }

    /// One more decision of the bot; returns its window. Stored (in order, without waiting)
    /// when the window held or now holds a timeout: a window of decisions in time judges like
    /// an empty one, so a bot that always answers costs no write.
    pub(super) fn decided(&mut self, bot: &str, timed_out: bool, size: u32) -> &StrikeWindow {
        let h = self.held.entry(bot.to_string()).or_default();
        let before = h.window.timed_out();
        h.window.record(timed_out, size);
        if before > 0 || h.window.timed_out() > 0 {
            let r = self.record(bot, &self.held[bot]);
            let _ = self.writes.send((r, None));
        }
        &self.held[bot].window
    }

    /// A removal: its count goes up, its cooldown starts (doubled at each removal) and its
    /// window starts afresh. Returns (removals, cooldown) once the record is stored, or the
    /// store's error (memory holds it either way).
    pub(super) async fn take_off(
        &mut self,
        bot: &str,
        spec: &LadderSpec,
        now_ms: i64,
    ) -> (u32, u64, Result<(), StoreError>) {
        let h = self.held.entry(bot.to_string()).or_default();
        h.removals += 1;
        let cooldown = spec.cooldown_ms(h.removals);
        h.until_ms = now_ms.saturating_add(i64::try_from(cooldown).unwrap_or(i64::MAX));
        h.window = StrikeWindow::default();
        let removals = h.removals;
        let r = self.record(bot, &self.held[bot]);
        let (done, stored) = oneshot::channel();
        let res = match self.writes.send((r, Some(done))) {
            Ok(()) => stored.await.unwrap_or(Err(StoreError::Closed)),
            Err(_) => Err(StoreError::Closed),
        };
        (removals, cooldown, res)
    }

    fn record(&self, bot: &str, h: &Held) -> StrikeRecord {
        StrikeRecord {
            ladder_id: self.ladder.clone(),
            bot_id: bot.to_string(),
            removals: h.removals,
            cooldown_until_ms: h.until_ms,
            window: h.window.kept(),
        }
    }
}

/// Stores records in the order they were made; of several queued for one bot only the last
/// is written (each is whole), and every waiter hears the outcome of its bot's write.
async fn write_records(store: Arc<dyn Store>, mut rx: mpsc::UnboundedReceiver<Write>) {
    while let Some(first) = rx.recv().await {
        let mut queued = vec![first];
        while let Ok(w) = rx.try_recv() {
            queued.push(w);
        }
        let mut order: Vec<String> = Vec::new();
        let mut last: HashMap<String, (StrikeRecord, Vec<oneshot::Sender<_>>)> = HashMap::new();
        for (r, done) in queued {
            let slot = last.entry(r.bot_id.clone()).or_insert_with(|| {
                order.push(r.bot_id.clone());
                (r.clone(), Vec::new())
            });
            slot.0 = r;
            slot.1.extend(done);
        }
        for bot in order {
            let Some((r, waiting)) = last.remove(&bot) else {
                continue;
            };
            let res = store.put_strikes(r.clone()).await;
            if let Err(e) = &res {
                tracing::warn!(ladder = %r.ladder_id, %bot, error = %e, "cannot store a strike record");
            }
            for w in waiting {
                let _ = w.send(match &res {
                    Ok(()) => Ok(()),
                    Err(e) => Err(StoreError::Unavailable(e.to_string())),
                });
            }
        }
    }
}
