//! Multiplayer ratings: Weng-Lin (the Bayesian approximation behind OpenSkill), through the
//! `skillratings` crate. A match's (or set's) ranking by net jetons updates every entrant at
//! once; equal nets share a rank.

use serde::{Deserialize, Serialize};
use skillratings::MultiTeamOutcome;
use skillratings::weng_lin::{WengLinConfig, WengLinRating, weng_lin_multi_team};

/// A bot's rating in one ladder.
#[derive(Copy, Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Rating {
    /// The mean skill estimate.
    pub mu: f64,
    /// Its uncertainty (one standard deviation).
    pub sigma: f64,
}

impl Default for Rating {
    /// Weng-Lin's start: mu 25, sigma 25/3.
    fn default() -> Rating {
        let r = WengLinRating::new();
        Rating {
            mu: r.rating,
            sigma: r.uncertainty,
        }
    }
}

impl Rating {
    /// The leaderboard's order: mu - 3 sigma, a skill the bot has with ≈ 99.7 % confidence, so
    /// a new bot with one lucky match does not top the board.
    pub fn conservative(&self) -> f64 {
        self.mu - 3.0 * self.sigma
    }
}

/// Places by net jetons: 1 for the best, equal nets share the better place ("1 2 2 4").
pub fn places<T: PartialOrd>(nets: &[T]) -> Vec<u32> {
    nets.iter()
        .map(|n| 1 + nets.iter().filter(|m| *m > n).count() as u32)
        .collect()
}

/// The entrants' ratings after a match in which they won `nets` (same order as `before`).
/// Nets may be jetons (`i64`) or luck-adjusted nets (`f64`, see [`crate::luck`]).
pub fn update<T: PartialOrd>(before: &[Rating], nets: &[T]) -> Vec<Rating> {
    let places = places(nets);
    let teams: Vec<[WengLinRating; 1]> = before
        .iter()
        .map(|r| {
            [WengLinRating {
                rating: r.mu,
                uncertainty: r.sigma,
            }]
        })
        .collect();
    let input: Vec<(&[WengLinRating], MultiTeamOutcome)> = teams
        .iter()
        .zip(&places)
        .map(|(t, p)| (&t[..], MultiTeamOutcome::new(*p as usize)))
        .collect();
    weng_lin_multi_team(&input, &WengLinConfig::new())
        .into_iter()
        .zip(before)
        .map(|(team, old)| {
            team.first().map_or(*old, |r| Rating {
                mu: r.rating,
                sigma: r.uncertainty,
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn places_share_ties() {
        assert_eq!(places(&[5, -2, 5, 0]), vec![1, 4, 1, 3]);
        assert_eq!(places(&[0, 0, 0]), vec![1, 1, 1]);
        assert_eq!(places::<i64>(&[]), Vec::<u32>::new());
    }

    /// The winner gains, the loser loses, everyone grows more certain, and an all-tie among
    /// equals moves no mean.
    #[test]
    fn a_match_moves_ratings_by_rank() {
        let start = vec![Rating::default(); 4];
        let after = update(&start, &[10, 3, -5, -8]);
        assert!(after[0].mu > 25.0 && after[3].mu < 25.0, "{after:?}");
        assert!(
            after[0].mu > after[1].mu && after[1].mu > after[2].mu && after[2].mu > after[3].mu
        );
        assert!(after.iter().all(|r| r.sigma < start[0].sigma));
        let tied = update(&start, &[0, 0, 0, 0]);
        assert!(tied.iter().all(|r| (r.mu - 25.0).abs() < 1e-9), "{tied:?}");
        // Equal nets give equal ratings.
        let two = update(&start, &[4, 4, -4, -4]);
        assert!((two[0].mu - two[1].mu).abs() < 1e-9 && (two[2].mu - two[3].mu).abs() < 1e-9);
    }

    /// The same history gives the same ratings (the recomputation the server checks).
    #[test]
    fn updates_are_deterministic() {
        let mut a = vec![Rating::default(); 3];
        let mut b = a.clone();
        for nets in [[3, -1, -2], [0, 5, -5], [-4, 2, 2]] {
            a = update(&a, &nets);
            b = update(&b, &nets);
        }
        assert_eq!(a, b);
    }

    #[test]
    fn conservative_rating_is_mu_minus_three_sigma() {
        let r = Rating {
            mu: 30.0,
            sigma: 2.0,
        };
        assert_eq!(r.conservative(), 24.0);
        assert!(Rating::default().conservative().abs() < 1e-9);
    }
}
