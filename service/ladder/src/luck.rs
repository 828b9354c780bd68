//! The luck of the cards, taken out of a finished table's nets before rating: a control
//! variate in the spirit of AIVAT (Burch, Schmid, Moravčík, Morrill, Bowling, AAAI 2018).
//!
//! For every deal k of a table and every seat i:
//!
//! - `V_i(deck)`: what seat i nets in deal k when every seat plays the fixed reference policy
//!   ([`REFERENCE`]: `heuristic`, which is deterministic) from the state the table stood in
//!   before deal k's cards came (dealer, carried pools, balances) with the deck the deal
//!   really had. One heuristic playout of the deal gives it exactly.
//! - `E_i`: the mean of `V_i` over [`BASELINE_DECKS`] uniformly random decks from the same
//!   state, drawn from a generator keyed by the table and the deal alone (never by its deck).
//! - the correction `c_ik = w · (V_i(deck_k) − E_i)` with the fixed weight [`WEIGHT`]; a seat's luck over the table is `Σ_k c_ik`, and
//!   its luck-adjusted net is its net minus its luck.
//!
//! Why it stays unbiased: let F be everything that happened before deal k's deck was dealt
//! (the earlier deals, the players' actions in them, the carried pools). The deck of deal k is
//! uniformly random and independent of F (the table's secret seed), and `V_i` depends on the
//! deck and on F only, not on any action of deal k, so `E[V_i(deck_k) | F]` is the true mean
//! `μ_i(F)`. `E_i` is a mean of independent uniformly random decks from the same state, so
//! `E[E_i | F] = μ_i(F)` too. Hence `E[c_ik | F] = 0`: each deal's correction is a martingale
//! difference (a fixed weight changes nothing to that), their sum has mean 0 whatever the players do, and the adjusted net has the
//! expectation of the raw net. "Per deal" with carried pools means exactly this: the deal from
//! the state it started in (after its antes, with what earlier deals left on the table) to its
//! settlement; what a deal leaves on the table is part of the next deal's starting state, whose
//! own correction is taken from there. The antes and anything else fixed before the deck cancel
//! in `V − E`.
//!
//! Nothing here reads a clock or a global generator: a finished table gives the same
//! corrections on any node, after any restart.

use bete_rules::bots::heuristic_action;
use bete_rules::{Card, DealLog, Decks, Game, Setup, SetupError, Viewer};
use rand_chacha::ChaCha8Rng;
use rand_chacha::rand_core::SeedableRng;
use sha2::{Digest, Sha256};
use thiserror::Error;

/// The reference of the luck correction, versioned: a change of the policy, of the weight, of
/// the baseline's size or of its generator is a new version, and one version serves every
/// ladder. (luck/1 was the same with weight 1; docs/benchmarks.md says why it changed.)
pub const REFERENCE: &str = "luck/2: heuristic at every seat, 24 random decks a deal, weight 1/2";

/// The weight of the correction: a seat's luck is `WEIGHT · (V − E)`. Any fixed weight keeps
/// the correction's mean at 0; the variance it leaves is smallest at Cov(net, V) / Var(V),
/// which is well under 1 because the reference is a heuristic field and a ladder's is not
/// (with weight 1 the correction added as much spread as it took in Bête).
pub const WEIGHT: f64 = 0.5;

/// Random decks a deal's baseline is averaged over. Its noise adds about 1/24 of `V`'s
/// variance to a correction (a ≈ 4 % larger spread than an exact mean); each costs one
/// heuristic playout of a deal.
pub const BASELINE_DECKS: usize = 24;

/// Why a table's luck cannot be measured.
#[derive(Debug, Error)]
pub enum LuckError {
    #[error("luck: the record does not replay: deal {deal}: {why}")]
    Replay { deal: usize, why: String },
    #[error(transparent)]
    Setup(#[from] SetupError),
}

/// The generator of one deal's baseline decks: SHA-256 of a domain tag, the reference's
/// version, the table's key and the deal index. Independent of the deal's deck by construction.
fn baseline_rng(key: &[u8], deal: usize) -> ChaCha8Rng {
    let mut h = Sha256::new();
    h.update(b"bete-luck/1");
    h.update((key.len() as u64).to_le_bytes());
    h.update(key);
    h.update((deal as u64).to_le_bytes());
    ChaCha8Rng::from_seed(h.finalize().into())
}

/// Plays deal `deal` of `g` to its settlement, every seat on the reference policy.
fn reference_playout(g: &mut Game, deal: u32) {
    while let Some(s) = g.to_act() {
        if g.deal_index() != deal {
            break;
        }
        let a = heuristic_action(&g.view(Viewer::Seat(s)));
        if g.play(s, a).is_err() {
            // The heuristic picks from the legal actions; should they ever disagree, the
            // engine's safe action keeps the playout going.
            match g.safe_action(s) {
                Some(safe) if g.play(s, safe).is_ok() => {}
                _ => break,
            }
        }
    }
}

/// What each seat nets in the deal `pre` waits the deck of, all seats on the reference
/// policy, counted from `pre`'s balances (after the deal's antes).
fn reference_value(
    pre: &Game,
    deal: u32,
    deck: Option<&[Card]>,
    rng: &mut ChaCha8Rng,
    out: &mut [f64],
) {
    let mut g = pre.playout();
    let dealt = match deck {
        Some(d) => g.play_deck(d).is_ok(),
        None => g.play_random_deck(rng).is_ok(),
    };
    if !dealt {
        return;
    }
    reference_playout(&mut g, deal);
    for (i, o) in out.iter_mut().enumerate() {
        *o += (g.settled_balances()[i] - pre.balances()[i]) as f64;
    }
}

/// Each seat's luck at one deal: `WEIGHT · (V_i(deck) − E_i)` (see the module's doc).
pub fn deal_luck(pre: &Game, deck: &[Card], key: &[u8]) -> Vec<f64> {
    let n = usize::from(pre.seats());
    let deal = pre.deal_index();
    let mut rng = baseline_rng(key, deal as usize);
    let mut actual = vec![0.0; n];
    reference_value(pre, deal, Some(deck), &mut rng, &mut actual);
    let mut base = vec![0.0; n];
    for _ in 0..BASELINE_DECKS {
        reference_value(pre, deal, None, &mut rng, &mut base);
    }
    actual
        .iter()
        .zip(&base)
        .map(|(v, b)| WEIGHT * (v - b / BASELINE_DECKS as f64))
        .collect()
}

/// Each seat's luck over a finished table: the sum over its deals of [`deal_luck`], replaying
/// the table's `deals` (the record's decks and actions) from `setup`. `key` names the table
/// (its id): the baseline decks are drawn from it, so the same table gives the same luck.
pub fn table_luck(setup: &Setup, deals: &[DealLog], key: &[u8]) -> Result<Vec<f64>, LuckError> {
    let mut luck = vec![0.0; usize::from(setup.seats)];
    for d in deals_luck(setup, deals, key)? {
        for (l, c) in luck.iter_mut().zip(d) {
            *l += c;
        }
    }
    Ok(luck)
}

/// [`deal_luck`] of every deal of a finished table, in order.
pub fn deals_luck(
    setup: &Setup,
    deals: &[DealLog],
    key: &[u8],
) -> Result<Vec<Vec<f64>>, LuckError> {
    let mut game = Game::new_playout(Setup {
        decks: Decks::Explicit(Vec::new()),
        ..setup.clone()
    })?;
    let mut out = Vec::with_capacity(deals.len());
    for (k, d) in deals.iter().enumerate() {
        let bad = |why: String| LuckError::Replay { deal: k, why };
        if d.deck.is_empty() {
            // A deal whose deck never came (the record's last, unplayed deal).
            break;
        }
        if game.deal_index() as usize != k {
            return Err(bad(format!(
                "the replay stands at deal {}",
                game.deal_index()
            )));
        }
        out.push(deal_luck(&game, &d.deck, key));
        game.play_deck(&d.deck).map_err(|e| bad(e.to_string()))?;
        for a in &d.actions {
            game.play(a.seat, a.action)
                .map_err(|e| bad(e.to_string()))?;
        }
    }
    Ok(out)
}

/// Nets with the luck taken out: `nets[i] − luck[i]`.
pub fn adjusted(nets: &[i64], luck: &[f64]) -> Vec<f64> {
    nets.iter()
        .zip(luck.iter().chain(std::iter::repeat(&0.0)))
        .map(|(&n, &l)| n as f64 - l)
        .collect()
}

/// Mean and half-width of the 95 % interval (normal approximation) of `xs`.
pub fn mean_ci95(xs: &[f64]) -> (f64, f64) {
    let n = xs.len() as f64;
    if xs.len() < 2 {
        return (xs.first().copied().unwrap_or(0.0), f64::INFINITY);
    }
    let mean = xs.iter().sum::<f64>() / n;
    let var = xs.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / (n - 1.0);
    (mean, 1.96 * (var / n).sqrt())
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use bete_rules::bots::{Bots, Policy};
    use bete_rules::{Config, RulesetId, Seat, Seed};

    fn setup(ruleset: RulesetId, seed: u64) -> Setup {
        let mut s = [0u8; 32];
        s[..8].copy_from_slice(&seed.to_le_bytes());
        Setup {
            ruleset,
            config: crate::default_ladders()
                .into_iter()
                .find(|l| l.ruleset == ruleset)
                .map_or_else(|| Config::defaults(ruleset, 4), |l| l.config),
            seats: 4,
            first_dealer: Seat(0),
            decks: Decks::Seed(Seed(s)),
        }
    }

    /// Plays a table of two heuristics and two randoms; its record.
    fn played(setup: &Setup, seed: u64) -> Game {
        let (mut game, _) = Game::new(setup.clone()).unwrap();
        let policies = [
            Policy::Heuristic,
            Policy::Random,
            Policy::Heuristic,
            Policy::Random,
        ];
        let mut s = [7u8; 32];
        s[..8].copy_from_slice(&seed.to_le_bytes());
        Bots::new(&policies, 4, &Seed(s))
            .play(&mut game, None)
            .unwrap();
        game
    }

    /// The correction has mean 0: over the deals of many seeded tables of mixed players (whose
    /// actions shape the carried pools and so the states the deals start from), every seat's
    /// mean correction per deal lies within its 95 % interval of 0, while the reference value
    /// alone (no baseline subtracted) is clearly off 0, so the interval is tight enough to see
    /// a bias of that size.
    #[test]
    fn the_correction_has_mean_zero() {
        let mut per_seat: Vec<Vec<f64>> = vec![Vec::new(); 4];
        let mut raw_v: Vec<f64> = Vec::new();
        for t in 0..40u64 {
            let setup = setup(RulesetId::Bete, 1_000 + t);
            let game = played(&setup, t);
            let mut replay = Game::new_playout(Setup {
                decks: Decks::Explicit(Vec::new()),
                ..setup.clone()
            })
            .unwrap();
            for (k, d) in game.log().iter().enumerate() {
                if d.deck.is_empty() {
                    break;
                }
                let c = deal_luck(&replay, &d.deck, &t.to_le_bytes());
                for (s, x) in c.iter().enumerate() {
                    per_seat[s].push(*x);
                }
                let mut v = vec![0.0; 4];
                let mut rng = baseline_rng(b"unused", k);
                reference_value(
                    &replay,
                    replay.deal_index(),
                    Some(&d.deck),
                    &mut rng,
                    &mut v,
                );
                raw_v.push(v.iter().sum());
                replay.play_deck(&d.deck).unwrap();
                for a in &d.actions {
                    replay.play(a.seat, a.action).unwrap();
                }
            }
        }
        for (s, xs) in per_seat.iter().enumerate() {
            let (mean, half) = mean_ci95(xs);
            assert!(xs.len() >= 300, "{} deals", xs.len());
            assert!(mean.abs() <= half, "seat {s}: {mean} ± {half}");
        }
        let (mean, half) = mean_ci95(&raw_v);
        assert!(mean.abs() > half, "reference value alone: {mean} ± {half}");
    }

    /// Luck is a function of the record and the table's key: the same table gives the same
    /// luck; another key draws other baseline decks.
    #[test]
    fn luck_is_reproducible_from_the_record() {
        let setup = setup(RulesetId::BesteBoer, 5);
        let game = played(&setup, 5);
        let a = table_luck(&setup, game.log(), b"table-1").unwrap();
        assert_eq!(a, table_luck(&setup, game.log(), b"table-1").unwrap());
        assert_ne!(a, table_luck(&setup, game.log(), b"table-2").unwrap());
        assert_eq!(a.len(), 4);
        let adj = adjusted(game.balances(), &a);
        for i in 0..4 {
            assert!((adj[i] - (game.balances()[i] as f64 - a[i])).abs() < 1e-9);
        }
    }

    /// A record that does not replay is refused, naming the deal.
    #[test]
    fn a_broken_record_is_refused() {
        let setup = setup(RulesetId::Bete, 9);
        let game = played(&setup, 9);
        let mut deals = game.log().to_vec();
        deals[1].actions.truncate(1);
        let err = table_luck(&setup, &deals, b"t").unwrap_err().to_string();
        assert!(err.contains("deal"), "{err}");
    }
}
