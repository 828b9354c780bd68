//! Pairing: which entrants meet next, weighed by their ratings and how often they met lately.

use bete_ladder::{Candidate, Rating};
use rand::seq::SliceRandom;
use std::collections::HashMap;

use super::{DAY_MS, Scheduler};
use bete_store::clock::now_ms;

impl Scheduler {
    /// Form and start every match the entrants allow now.
    pub(super) async fn schedule(&mut self) {
        let now = now_ms();
        while self
            .recent
            .front()
            .is_some_and(|(t, _, _)| *t < now - DAY_MS)
        {
            if let Some((_, ids, tables)) = self.recent.pop_front() {
                for id in &ids {
                    if let Some(n) = self.today.get_mut(id) {
                        *n = n.saturating_sub(tables);
                        if *n == 0 {
                            self.today.remove(id);
                        }
                    }
                }
                let key = group_key(&ids);
                if let Some(n) = self.meetings.get_mut(&key) {
                    *n -= 1;
                    if *n == 0 {
                        self.meetings.remove(&key);
                    }
                }
                for (a, b) in outside_pairs(&ids) {
                    for (x, y) in [(a, b), (b, a)] {
                        if let Some(m) = self.pairs.get_mut(x) {
                            if let Some(n) = m.get_mut(y) {
                                *n = n.saturating_sub(1);
                                if *n == 0 {
                                    m.remove(y);
                                }
                            }
                            if m.is_empty() {
                                self.pairs.remove(x);
                            }
                        }
                    }
                }
            }
        }
        let seats = usize::from(self.spec.seats);
        let per_match = self.spec.tables_per_match() as u32;
        let mut busy: HashMap<&str, u32> = HashMap::new();
        for p in self.playing.values() {
            for e in &p.row.entrants {
                *busy.entry(e.as_str()).or_default() += 1;
            }
        }
        for entrants in self.unstored.values() {
            for e in entrants {
                *busy.entry(e.as_str()).or_default() += 1;
            }
        }
        let mut candidates: Vec<Candidate> = Vec::new();
        let mut busy_now: Vec<String> = Vec::new();
        for e in self.entrants.values() {
            if !e.entry.active {
                continue;
            }
            let id = e.entry.bot_id.as_str();
            let used = busy.get(id).copied().unwrap_or(0);
            let free = e.entry.capacity.saturating_sub(used);
            if e.house && free == 0 {
                continue;
            }
            if !e.house {
                if self.today.get(id).copied().unwrap_or(0) + per_match
                    > self.spec.max_matches_per_day
                {
                    continue;
                }
                if !self.online(id) {
                    continue;
                }
                if free == 0 {
                    // Busy: its wait for partners starts when a slot frees, not before.
                    busy_now.push(id.to_string());
                }
            }
            // An outside bot online but busy stays a candidate: a free bot that should meet
            // it may wait for it (`house_fill_after_ms`).
            candidates.push(Candidate {
                id: id.to_string(),
                owner: e.owner.clone(),
                house: e.house,
                mu: self.rating(id).mu,
                free,
                waiting_since_ms: e.waiting_since_ms,
            });
        }
        for id in busy_now {
            if let Some(e) = self.entrants.get_mut(&id) {
                e.waiting_since_ms = now;
            }
        }
        let mut groups = Vec::new();
        loop {
            let met = &self.meetings;
            let meetings = |ids: &[&str]| {
                let key: Vec<String> = ids.iter().map(|s| s.to_string()).collect();
                met.get(&key).copied().unwrap_or(0)
            };
            let pairs = &self.pairs;
            let pair_meetings =
                |a: &str, b: &str| pairs.get(a).and_then(|m| m.get(b)).copied().unwrap_or(0);
            let pool = bete_ladder::Pool {
                seats,
                now_ms: now,
                house_fill_after_ms: i64::try_from(self.spec.house_fill_after_ms)
                    .unwrap_or(i64::MAX),
                meetings: &meetings,
                max_meetings: self.spec.max_group_meetings_per_day,
                pair_meetings: &pair_meetings,
            };
            let Some(group) = bete_ladder::choose_group(&candidates, &pool, &mut self.rng) else {
                break;
            };
            for &i in &group {
                candidates[i].free -= 1;
                candidates[i].waiting_since_ms = now;
            }
            let mut ids: Vec<String> = group.iter().map(|&i| candidates[i].id.clone()).collect();
            // Seats by lot: the anchor must not always sit first.
            ids.shuffle(&mut self.rng);
            groups.push(ids);
            // `meetings` reads the index: count the group before choosing the next.
            self.remember(now, groups[groups.len() - 1].clone(), per_match);
        }
        for ids in groups {
            for id in &ids {
                if let Some(e) = self.entrants.get_mut(id) {
                    e.waiting_since_ms = now;
                }
            }
            if let Err(e) = self.start_match(ids).await {
                tracing::error!(ladder = %self.spec.id, error = %e, "cannot start a ladder match");
            }
        }
    }

    pub(super) fn remember(&mut self, at_ms: i64, entrants: Vec<String>, tables: u32) {
        *self.meetings.entry(group_key(&entrants)).or_default() += 1;
        for (a, b) in outside_pairs(&entrants) {
            *self
                .pairs
                .entry(a.clone())
                .or_default()
                .entry(b.clone())
                .or_default() += 1;
            *self
                .pairs
                .entry(b.clone())
                .or_default()
                .entry(a.clone())
                .or_default() += 1;
        }
        for id in &entrants {
            *self.today.entry(id.clone()).or_default() += tables;
        }
        self.recent.push_back((at_ms, entrants, tables));
    }

    pub(super) fn rating(&self, bot: &str) -> Rating {
        self.ratings
            .get(bot)
            .map_or_else(Rating::default, |r| Rating {
                mu: r.mu,
                sigma: r.sigma,
            })
    }
}

/// Every pair of outside entrants (not house entrants) in a group.
pub(super) fn outside_pairs(ids: &[String]) -> Vec<(&String, &String)> {
    let outside: Vec<&String> = ids.iter().filter(|b| !b.starts_with("house:")).collect();
    let mut out = Vec::new();
    for (k, a) in outside.iter().enumerate() {
        for b in &outside[k + 1..] {
            out.push((*a, *b));
        }
    }
    out
}

/// A group's identity whatever the seating: its ids, sorted.
pub(super) fn group_key(ids: &[String]) -> Vec<String> {
    let mut k = ids.to_vec();
    k.sort_unstable();
    k
}
