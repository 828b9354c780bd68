//! Whether a bot answers on time, judged over its recent decisions on a ladder rather than per
//! table: a bot that lets exactly a table's limit time out at every table still shows a share
//! of timeouts that the window catches.

use std::collections::VecDeque;

use crate::LadderSpec;

/// A bot's last `size` decisions on one ladder: which timed out.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct StrikeWindow {
    recent: VecDeque<bool>,
    timed_out: u32,
}

impl StrikeWindow {
    /// One more decision; returns the timeouts now in the window of `size` decisions.
    pub fn record(&mut self, timed_out: bool, size: u32) -> u32 {
        self.recent.push_back(timed_out);
        self.timed_out += u32::from(timed_out);
        while self.recent.len() > size as usize {
            if self.recent.pop_front() == Some(true) {
                self.timed_out -= 1;
            }
        }
        self.timed_out
    }

    /// Timeouts in the window.
    pub fn timed_out(&self) -> u32 {
        self.timed_out
    }

    /// Decisions in the window.
    pub fn decisions(&self) -> usize {
        self.recent.len()
    }

    /// What a store keeps of the window: its decisions from the oldest timeout on, oldest
    /// first (`x` timed out, `.` in time); empty when none timed out. Decisions in time before
    /// the oldest timeout leave the window without changing its count, so the rest judges the
    /// bot exactly as the whole window would.
    pub fn kept(&self) -> String {
        self.recent
            .iter()
            .skip_while(|t| !**t)
            .map(|&t| if t { 'x' } else { '.' })
            .collect()
    }

    /// A window again from [`StrikeWindow::kept`] (its last `size` decisions, should the
    /// ladder's window have shrunk since); any other character counts as in time.
    pub fn from_kept(kept: &str, size: u32) -> StrikeWindow {
        let mut w = StrikeWindow::default();
        for c in kept.chars() {
            w.record(c == 'x', size);
        }
        w
    }
}

/// Why a bot must be taken off now, if it must: the window holds more timeouts than the ladder
/// allows, or one table more than `max_strikes_per_match`. A window not yet full is judged
/// against the full window's allowance, so a bot that never answers is off at its first
/// timeout past it.
pub fn past_limit(spec: &LadderSpec, window: &StrikeWindow, table_strikes: u32) -> Option<String> {
    if window.timed_out() > spec.strikes_allowed() {
        return Some(format!(
            "{} of its last {} decisions on the ladder timed out, more than the {} ({} %) the \
             ladder allows",
            window.timed_out(),
            window.decisions(),
            spec.strikes_allowed(),
            spec.max_strike_share * 100.0
        ));
    }
    if table_strikes > spec.max_strikes_per_match {
        return Some(format!(
            "{table_strikes} decisions timed out at one table, more than the {} a table allows",
            spec.max_strikes_per_match
        ));
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec(window: u32, share: f64, per_table: u32) -> LadderSpec {
        let mut s = crate::default_ladders().remove(0);
        s.strike_window = window;
        s.max_strike_share = share;
        s.max_strikes_per_match = per_table;
        s
    }

    #[test]
    fn the_window_forgets_old_decisions() {
        let mut w = StrikeWindow::default();
        for _ in 0..3 {
            w.record(true, 5);
        }
        assert_eq!(w.timed_out(), 3);
        for _ in 0..4 {
            w.record(false, 5);
        }
        // T T T F F F F in a window of five keeps T F F F F.
        assert_eq!(w.timed_out(), 1);
        assert_eq!(w.decisions(), 5);
        w.record(false, 5);
        assert_eq!(w.timed_out(), 0);
    }

    /// A bot that never answers is off at its first timeout past the allowance.
    #[test]
    fn a_silent_bot_is_off_at_the_first_strike_past_the_limit() {
        let s = spec(50, 0.1, 100);
        assert_eq!(s.strikes_allowed(), 5);
        let mut w = StrikeWindow::default();
        for k in 1..=5 {
            w.record(true, s.strike_window);
            assert_eq!(past_limit(&s, &w, k), None, "timeout {k}");
        }
        w.record(true, s.strike_window);
        assert!(past_limit(&s, &w, 6).is_some());
    }

    /// Exactly the per-table limit at every table of `decisions` decisions, wherever in the
    /// table they fall, is caught when the share is above the ladder's.
    #[test]
    fn the_per_table_limit_at_every_table_is_caught() {
        let s = spec(50, 0.05, 3);
        let decisions = 40;
        for offset in [0, 10, 37] {
            let mut w = StrikeWindow::default();
            let mut caught = None;
            'tables: for table in 0..20 {
                for d in 0..decisions {
                    let out = (offset..offset + 3).contains(&d);
                    w.record(out, s.strike_window);
                    let strikes = if d >= offset {
                        (d - offset + 1).min(3)
                    } else {
                        0
                    };
                    if past_limit(&s, &w, strikes).is_some() {
                        caught = Some(table);
                        break 'tables;
                    }
                }
            }
            assert!(caught.is_some(), "offset {offset} never caught");
            assert!(
                caught <= Some(1),
                "offset {offset}: caught at table {caught:?}"
            );
        }
    }

    /// The kept form judges the bot as the whole window does, at every later decision.
    #[test]
    fn the_kept_window_judges_alike() {
        let mut w = StrikeWindow::default();
        for t in [false, false, true, false, true, false] {
            w.record(t, 5);
        }
        assert_eq!(w.kept(), "x.x.");
        let mut again = StrikeWindow::from_kept(&w.kept(), 5);
        assert_eq!(again.timed_out(), w.timed_out());
        for t in [false, false, true, false, false, false, false] {
            assert_eq!(again.record(t, 5), w.record(t, 5));
        }
        assert_eq!(StrikeWindow::default().kept(), "");
        assert_eq!(StrikeWindow::from_kept("x.x.x", 2).timed_out(), 1);
    }

    #[test]
    fn one_table_past_its_limit_is_enough() {
        let s = spec(1000, 0.5, 2);
        let w = StrikeWindow::default();
        assert_eq!(past_limit(&s, &w, 2), None);
        assert!(past_limit(&s, &w, 3).is_some());
    }

    #[test]
    fn the_cooldown_doubles_with_each_removal() {
        let mut s = spec(50, 0.05, 5);
        s.strike_cooldown_ms = 1_000;
        assert_eq!(s.cooldown_ms(1), 1_000);
        assert_eq!(s.cooldown_ms(2), 2_000);
        assert_eq!(s.cooldown_ms(3), 4_000);
        assert_eq!(s.cooldown_ms(200), crate::spec::MAX_STRIKE_COOLDOWN_MS);
    }
}
