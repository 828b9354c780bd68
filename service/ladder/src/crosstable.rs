//! The crosstable of a ladder: for every pair of entrants that met, how many rated matches
//! (sets) they shared and the mean net difference per deal between them, with a 95 % interval.
//!
//! A meeting is one rated match (or duplicate set) with both bots among its entrants; its
//! sample is `(net_a - net_b) / deals`. The meetings of a pair are independent draws (fresh
//! seeds), so the interval is Student's t over them: honest for the few meetings a young
//! ladder has, and the normal interval's as they grow.

use std::collections::BTreeMap;

use statrs::distribution::{ContinuousCDF, StudentsT};

/// One entrant's result in a rated match: its bot, its net over the match's tables, and the
/// deals it played there.
#[derive(Clone, Debug, PartialEq)]
pub struct Outcome {
    pub bot_id: String,
    pub net: i64,
    pub deals: u32,
}

/// Two bots and how they fared against each other; differences are A's minus B's.
#[derive(Clone, Debug, PartialEq)]
pub struct Pair {
    /// The smaller id.
    pub bot_a: String,
    pub bot_b: String,
    pub meetings: u32,
    pub deals: u64,
    pub a_ahead: u32,
    pub level: u32,
    pub b_ahead: u32,
    /// Mean over the meetings of (net_a - net_b) / deals.
    pub mean: f64,
    /// The 95 % interval of the mean; both ends are the mean after one meeting.
    pub low: f64,
    pub high: f64,
}

#[derive(Default)]
struct Sums {
    meetings: u32,
    deals: u64,
    a_ahead: u32,
    level: u32,
    b_ahead: u32,
    sum: f64,
    sum_sq: f64,
}

/// The crosstable of these rated matches: every pair that met, ordered by `bot_a`, `bot_b`.
/// A match whose entrants played no deal adds a meeting to nobody (it has no per-deal value).
pub fn crosstable<'a, M>(matches: M) -> Vec<Pair>
where
    M: IntoIterator<Item = &'a [Outcome]>,
{
    let mut sums: BTreeMap<(&'a str, &'a str), Sums> = BTreeMap::new();
    for outcomes in matches {
        for (i, x) in outcomes.iter().enumerate() {
            for y in &outcomes[i + 1..] {
                let (a, b) = if x.bot_id <= y.bot_id { (x, y) } else { (y, x) };
                if a.bot_id == b.bot_id {
                    continue;
                }
                // Both played the match's deals; a set's entrants all play every table.
                let deals = a.deals.max(b.deals);
                if deals == 0 {
                    continue;
                }
                let s = sums.entry((&a.bot_id, &b.bot_id)).or_default();
                let diff = a.net - b.net;
                let sample = diff as f64 / f64::from(deals);
                s.meetings += 1;
                s.deals += u64::from(deals);
                match diff.signum() {
                    1 => s.a_ahead += 1,
                    0 => s.level += 1,
                    _ => s.b_ahead += 1,
                }
                s.sum += sample;
                s.sum_sq += sample * sample;
            }
        }
    }
    sums.into_iter()
        .map(|((a, b), s)| {
            let n = f64::from(s.meetings);
            let mean = s.sum / n;
            let half = half_width(s.meetings, n, mean, s.sum_sq);
            Pair {
                bot_a: a.to_string(),
                bot_b: b.to_string(),
                meetings: s.meetings,
                deals: s.deals,
                a_ahead: s.a_ahead,
                level: s.level,
                b_ahead: s.b_ahead,
                mean,
                low: mean - half,
                high: mean + half,
            }
        })
        .collect()
}

/// Half the width of the 95 % t interval of a mean of `meetings` samples.
fn half_width(meetings: u32, n: f64, mean: f64, sum_sq: f64) -> f64 {
    if meetings < 2 {
        return 0.0;
    }
    // Sample variance; rounding can take a constant series a hair below 0.
    let var = ((sum_sq - n * mean * mean) / (n - 1.0)).max(0.0);
    let t = match StudentsT::new(0.0, 1.0, n - 1.0) {
        Ok(d) => d.inverse_cdf(0.975),
        // Unreachable: n - 1 >= 1 is a valid number of degrees of freedom; fall back to the
        // normal quantile rather than fail a read.
        Err(_) => 1.959_963_984_540_054,
    };
    t * (var / n).sqrt()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn o(bot: &str, net: i64, deals: u32) -> Outcome {
        Outcome {
            bot_id: bot.into(),
            net,
            deals,
        }
    }

    #[test]
    fn pairs_every_two_entrants_with_their_differences() {
        let m1 = vec![o("c", 10, 4), o("a", -6, 4), o("b", -4, 4)];
        let m2 = vec![o("a", 8, 4), o("c", -8, 4)];
        let m3 = vec![o("a", 4, 4), o("c", 4, 4)];
        let pairs = crosstable([m1.as_slice(), m2.as_slice(), m3.as_slice()]);
        let ids: Vec<(&str, &str)> = pairs
            .iter()
            .map(|p| (p.bot_a.as_str(), p.bot_b.as_str()))
            .collect();
        assert_eq!(ids, [("a", "b"), ("a", "c"), ("b", "c")]);
        let ac = &pairs[1];
        assert_eq!((ac.meetings, ac.deals), (3, 12));
        assert_eq!((ac.a_ahead, ac.level, ac.b_ahead), (1, 1, 1));
        // Samples -4, 4, 0: mean 0, sd 4, t(2) = 4.302653.
        assert!(ac.mean.abs() < 1e-12);
        let half = 4.302_652_729_911_275 * 4.0 / 3f64.sqrt();
        assert!((ac.high - half).abs() < 1e-6, "{ac:?}");
        assert!((ac.low + half).abs() < 1e-6, "{ac:?}");
        let ab = &pairs[0];
        assert_eq!((ab.meetings, ab.b_ahead), (1, 1));
        assert_eq!((ab.mean, ab.low, ab.high), (-0.5, -0.5, -0.5));
    }

    /// With many meetings the interval is the normal one and covers the true mean about 95 %
    /// of the time.
    #[test]
    fn the_interval_covers_the_true_mean_about_95_percent_of_the_time() {
        use rand::{Rng, SeedableRng};
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(7);
        let trials = 2000;
        let mut covered = 0;
        for _ in 0..trials {
            let matches: Vec<Vec<Outcome>> = (0..8)
                .map(|_| {
                    // a's edge over b is 1 jeton per deal on average; a sum of draws is
                    // near normal, the interval's assumption.
                    let d: i64 = 4 + (0..4).map(|_| rng.random_range(-20..=20)).sum::<i64>();
                    vec![o("a", d, 4), o("b", 0, 4)]
                })
                .collect();
            let p = &crosstable(matches.iter().map(Vec::as_slice))[0];
            if p.low <= 1.0 && 1.0 <= p.high {
                covered += 1;
            }
        }
        let share = f64::from(covered) / f64::from(trials);
        assert!((0.93..=0.97).contains(&share), "coverage {share}");
    }
}
