//! Which entrants meet next.
//!
//! The scheduler calls [`choose_group`] with every entrant that could play now (online, with
//! free capacity, under its daily limit) until it returns `None`. The entrant waiting longest
//! anchors the group; the others are drawn by rating closeness to it plus random noise, so
//! similar bots meet more often while the field still mixes. Two entrants of one owner never
//! share a group (house entrants belong to the server and are exempt), a group needs at least
//! one bot that is not a house entrant (house-only tables would burn CPU for nothing), and a
//! group that already met `max_meetings` times (in the caller's window) is not formed again.

use rand::Rng;

/// An entrant that could be seated now.
#[derive(Clone, Debug, PartialEq)]
pub struct Candidate {
    /// Bot id (house entrants: `house:<policy>`).
    pub id: String,
    /// Owner: account id, or the bot's own id; house entrants say `house`.
    pub owner: String,
    /// A house entrant of the server.
    pub house: bool,
    /// Rating mean, the similarity measure.
    pub mu: f64,
    /// Tables (or sets) it can still start now.
    pub free: u32,
    /// When it last had no free capacity or entered (Unix ms): the longest waiting anchors.
    pub waiting_since_ms: i64,
}

/// The mean of the noise added to closeness, in rating points: about two classes of
/// Weng-Lin's beta (25/6). The noise is exponential, so its tail now and then lets the far
/// field win: a bot mostly meets its neighbours and still meets everyone.
pub const MIX: f64 = 8.0;

fn noise(rng: &mut impl Rng) -> f64 {
    -MIX * (1.0 - rng.random::<f64>()).ln()
}

/// Tries per anchor before it gives way to the next (each try draws new noise).
const TRIES: usize = 4;

/// A group of `seats` candidate indices, anchor first, or `None` when no group can be formed.
/// `meetings(ids)` counts how often that exact group (ids sorted) met recently.
pub fn choose_group(
    candidates: &[Candidate],
    seats: usize,
    meetings: &dyn Fn(&[&str]) -> u32,
    max_meetings: u32,
    rng: &mut impl Rng,
) -> Option<Vec<usize>> {
    if seats == 0 {
        return None;
    }
    let mut anchors: Vec<usize> = (0..candidates.len())
        .filter(|&i| !candidates[i].house && candidates[i].free > 0)
        .collect();
    anchors.sort_by_key(|&i| (candidates[i].waiting_since_ms, candidates[i].id.clone()));
    for &anchor in &anchors {
        for _ in 0..TRIES {
            let Some(group) = group_for(candidates, anchor, seats, rng) else {
                break;
            };
            let mut ids: Vec<&str> = group.iter().map(|&i| candidates[i].id.as_str()).collect();
            ids.sort_unstable();
            if meetings(&ids) < max_meetings {
                return Some(group);
            }
        }
    }
    None
}

fn group_for(
    candidates: &[Candidate],
    anchor: usize,
    seats: usize,
    rng: &mut impl Rng,
) -> Option<Vec<usize>> {
    let a = &candidates[anchor];
    let mut others: Vec<(f64, usize)> = candidates
        .iter()
        .enumerate()
        .filter(|(i, c)| *i != anchor && c.free > 0 && c.id != a.id)
        .map(|(i, c)| ((c.mu - a.mu).abs() + noise(rng), i))
        .collect();
    others.sort_by(|x, y| x.0.total_cmp(&y.0));
    let mut group = vec![anchor];
    let mut owners = vec![a.owner.as_str()];
    for (_, i) in others {
        if group.len() == seats {
            break;
        }
        let c = &candidates[i];
        if !c.house && owners.contains(&c.owner.as_str()) {
            continue;
        }
        if !c.house {
            owners.push(c.owner.as_str());
        }
        group.push(i);
    }
    (group.len() == seats).then_some(group)
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::SeedableRng;
    use rand_chacha::ChaCha8Rng;

    fn bot(id: &str, owner: &str, mu: f64, since: i64) -> Candidate {
        Candidate {
            id: id.into(),
            owner: owner.into(),
            house: false,
            mu,
            free: 1,
            waiting_since_ms: since,
        }
    }

    fn house(p: &str) -> Candidate {
        Candidate {
            id: format!("house:{p}"),
            owner: "house".into(),
            house: true,
            mu: 25.0,
            free: 100,
            waiting_since_ms: 0,
        }
    }

    fn never(_: &[&str]) -> u32 {
        0
    }

    #[test]
    fn the_longest_waiting_bot_anchors_the_group() {
        let c = vec![
            bot("a", "a", 25.0, 30),
            bot("b", "b", 25.0, 10),
            bot("c", "c", 25.0, 20),
        ];
        let mut rng = ChaCha8Rng::seed_from_u64(1);
        let g = choose_group(&c, 2, &never, 1, &mut rng).unwrap();
        assert_eq!(g[0], 1);
    }

    /// Over many draws, no group ever holds two bots of one owner; house entrants may share.
    #[test]
    fn one_owner_never_twice_in_a_group() {
        let mut rng = ChaCha8Rng::seed_from_u64(7);
        for round in 0..500 {
            let mut c: Vec<Candidate> = (0..12)
                .map(|i| bot(&format!("b{i}"), &format!("o{}", i % 3), (i * 3) as f64, i))
                .collect();
            c.push(house("random"));
            c.push(house("heuristic"));
            let g = choose_group(&c, 4, &never, 1, &mut rng).unwrap();
            let owners: Vec<&str> = g
                .iter()
                .filter(|&&i| !c[i].house)
                .map(|&i| c[i].owner.as_str())
                .collect();
            let mut dedup = owners.clone();
            dedup.sort_unstable();
            dedup.dedup();
            assert_eq!(owners.len(), dedup.len(), "round {round}: {g:?}");
        }
    }

    #[test]
    fn no_group_without_enough_owners_or_a_real_bot() {
        let mut rng = ChaCha8Rng::seed_from_u64(3);
        // Three bots of one owner cannot fill three seats.
        let c = vec![
            bot("a", "o", 25.0, 0),
            bot("b", "o", 25.0, 0),
            bot("c", "o", 25.0, 0),
        ];
        assert_eq!(choose_group(&c, 3, &never, 1, &mut rng), None);
        // House entrants alone never form a table.
        let h = vec![house("random"), house("heuristic"), house("x")];
        assert_eq!(choose_group(&h, 3, &never, 1, &mut rng), None);
        // A lone bot plays against the house.
        let mut one = h.clone();
        one.push(bot("a", "o", 25.0, 0));
        let g = choose_group(&one, 3, &never, 1, &mut rng).unwrap();
        assert_eq!(g[0], 3);
    }

    #[test]
    fn a_group_that_met_enough_is_not_formed_again() {
        let c = vec![bot("a", "a", 25.0, 0), bot("b", "b", 25.0, 0)];
        let mut rng = ChaCha8Rng::seed_from_u64(1);
        let met = |ids: &[&str]| u32::from(ids == ["a", "b"]) * 3;
        assert_eq!(choose_group(&c, 2, &met, 3, &mut rng), None);
        assert!(choose_group(&c, 2, &met, 4, &mut rng).is_some());
    }

    /// Close ratings meet more often than far ones, yet far ones still meet.
    #[test]
    fn similar_ratings_are_preferred_but_the_field_mixes() {
        let mut rng = ChaCha8Rng::seed_from_u64(11);
        let c = vec![
            bot("a", "a", 25.0, 0),
            bot("near", "n", 26.0, 5),
            bot("far", "f", 40.0, 5),
        ];
        let (mut near, mut far) = (0, 0);
        for _ in 0..2000 {
            let g = choose_group(&c, 2, &never, 1, &mut rng).unwrap();
            match c[g[1]].id.as_str() {
                "near" => near += 1,
                _ => far += 1,
            }
        }
        assert!(near > far * 3, "near {near} far {far}");
        assert!(far > 0, "the far bot never met the anchor");
    }

    #[test]
    fn candidates_without_free_capacity_are_skipped() {
        let mut c = vec![
            bot("a", "a", 25.0, 0),
            bot("b", "b", 25.0, 0),
            bot("c", "c", 25.0, 0),
        ];
        c[1].free = 0;
        let mut rng = ChaCha8Rng::seed_from_u64(2);
        let g = choose_group(&c, 2, &never, 1, &mut rng).unwrap();
        assert!(!g.contains(&1));
    }
}
