//! `--shard I/N`: several harness processes (the pods of a Kubernetes indexed Job) share one
//! load between them. The split is by residue: the tables of the whole load are numbered
//! 0..`--tables`, and shard I drives those numbered I, I+N, I+2N, ... (so the shards' counts
//! differ by at most one and together are exactly `--tables`); its bots are numbered the same
//! way (its k-th bot is bot k·N+I of the whole load, named `load-{k·N+I}`), so no two shards
//! register the same bot name, even under one account. `--rate` is the whole load's, and each
//! shard takes its tables' share of it.

use std::fmt;

/// One shard of N.
#[derive(Copy, Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Shard {
    /// I: 0 ≤ index < count.
    pub index: u32,
    /// N ≥ 1.
    pub count: u32,
}

impl Default for Shard {
    /// The whole load in one process.
    fn default() -> Self {
        Shard { index: 0, count: 1 }
    }
}

impl fmt::Display for Shard {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}/{}", self.index, self.count)
    }
}

/// Parses `I/N` for clap (which names the flag in its error).
pub fn parse_shard(s: &str) -> Result<Shard, String> {
    let (i, n) = s.trim().split_once('/').ok_or_else(|| {
        format!("`{s}` is not I/N (this process's shard I of N shards, e.g. 0/3)")
    })?;
    let number = |part: &str, what: &str| {
        part.trim()
            .parse::<u32>()
            .map_err(|_| format!("`{s}`: {what} `{part}` is not a whole number (I/N, e.g. 0/3)"))
    };
    let index = number(i, "the shard index I")?;
    let count = number(n, "the shard count N")?;
    if count == 0 {
        return Err(format!("`{s}`: the shard count N must be at least 1"));
    }
    if index >= count {
        return Err(format!(
            "`{s}`: the shard index I must be below N (0 to {} for {count} shards)",
            count - 1
        ));
    }
    Ok(Shard { index, count })
}

impl Shard {
    /// Whether this is one process driving the whole load.
    pub fn is_whole(&self) -> bool {
        self.count == 1
    }

    /// How many of the numbers 0..`total` this shard takes (those ≡ index mod count).
    pub fn share(&self, total: u32) -> u32 {
        if total <= self.index {
            0
        } else {
            (total - self.index).div_ceil(self.count)
        }
    }

    /// The whole load's number of this shard's `local`-th table or bot.
    pub fn global(&self, local: usize) -> usize {
        local * self.count as usize + self.index as usize
    }

    /// This shard's part of a whole-load rate: its tables' share.
    pub fn rate(&self, rate: f64, total_tables: u32) -> f64 {
        rate * f64::from(self.share(total_tables)) / f64::from(total_tables.max(1))
    }
}

/// What a report says about the shard that wrote it.
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct ShardInfo {
    pub index: u32,
    pub count: u32,
    /// `--tables` of the whole load (the report's `settings.tables` is this shard's share).
    pub tables_total: u32,
    /// The first whole-load table numbers this shard drives (index, index + count, ...).
    pub first_tables: Vec<usize>,
}

impl ShardInfo {
    pub fn new(shard: Shard, tables_total: u32) -> ShardInfo {
        let share = shard.share(tables_total) as usize;
        ShardInfo {
            index: shard.index,
            count: shard.count,
            tables_total,
            first_tables: (0..share.min(4)).map(|k| shard.global(k)).collect(),
        }
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn shards_parse_and_bad_ones_say_why() {
        assert_eq!(parse_shard("2/3").unwrap(), Shard { index: 2, count: 3 });
        assert_eq!(parse_shard(" 0/1 ").unwrap(), Shard::default());
        for (bad, why) in [
            ("3/3", "must be below N"),
            ("5/3", "must be below N"),
            ("0/0", "at least 1"),
            ("1", "is not I/N"),
            ("a/3", "the shard index I `a`"),
            ("1/b", "the shard count N `b`"),
            ("-1/3", "is not a whole number"),
            ("1/2/3", "is not a whole number"),
            ("", "is not I/N"),
        ] {
            let e = parse_shard(bad).unwrap_err();
            assert!(e.contains(why), "{bad}: {e}");
        }
    }

    #[test]
    fn the_shards_take_every_table_once() {
        for total in [0u32, 1, 2, 7, 10, 600] {
            for count in 1..=5u32 {
                let mut seen = vec![0u32; total as usize];
                for index in 0..count {
                    let s = Shard { index, count };
                    for local in 0..s.share(total) as usize {
                        let g = s.global(local);
                        assert_eq!(g % count as usize, index as usize);
                        seen[g] += 1;
                    }
                }
                assert!(
                    seen.iter().all(|&n| n == 1),
                    "{total} tables, {count} shards"
                );
            }
        }
        let s = Shard { index: 1, count: 3 };
        assert_eq!(s.share(10), 3); // 1, 4, 7
        assert!((s.rate(300.0, 10) - 90.0).abs() < 1e-9);
        assert_eq!(ShardInfo::new(s, 10).first_tables, [1, 4, 7]);
    }
}
