//! Which entrants meet next.
//!
//! The scheduler calls [`choose_group`] with every entrant that could play now (online, with
//! free capacity, under its daily limit) and every outside entrant online but busy, until it
//! returns `None`. The outside entrant waiting longest anchors the group. Its partners are
//! outside entrants first: those it (and the partners chosen so far) met least, then the
//! closest in rating (plus random noise, so the field mixes). When a partner it should meet is
//! busy, the anchor waits for it, up to the ladder's `house_fill_after_ms`; after that wait it
//! takes the free outside entrants and house entrants fill the rest. Seats that no outside
//! entrant online could take (fewer owners online than seats) go to house entrants at once, so
//! a lone bot still plays. Two entrants of one owner never share a group (house entrants belong
//! to the server and are exempt), a group needs at least one bot that is not a house entrant
//! (house-only tables would burn CPU for nothing), and a group that already met `max_meetings`
//! times (in the caller's window) is not formed again.

use rand::Rng;

/// An entrant that could be seated now, or (outside entrants with `free == 0`) soon.
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
    /// Tables (or sets) it can still start now; 0: online but busy (worth waiting for).
    pub free: u32,
    /// Since when it has had a free slot and waited (Unix ms): the longest waiting anchors.
    pub waiting_since_ms: i64,
}

/// What the scheduler knows besides the candidates.
pub struct Pool<'a> {
    /// Seats of a table.
    pub seats: usize,
    /// Now (Unix ms), for the anchors' waits.
    pub now_ms: i64,
    /// How long an anchor waits for busy outside entrants before the house fills in.
    pub house_fill_after_ms: i64,
    /// `meetings(ids)`: how often that exact group (ids sorted) met recently.
    pub meetings: &'a dyn Fn(&[&str]) -> u32,
    /// A group that met this often is not formed again.
    pub max_meetings: u32,
    /// `pair_meetings(a, b)`: how often two outside entrants met recently (either order).
    pub pair_meetings: &'a dyn Fn(&str, &str) -> u32,
}

impl std::fmt::Debug for Pool<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Pool")
            .field("seats", &self.seats)
            .field("now_ms", &self.now_ms)
            .field("house_fill_after_ms", &self.house_fill_after_ms)
            .field("max_meetings", &self.max_meetings)
            .finish_non_exhaustive()
    }
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

/// A group of `pool.seats` candidate indices, anchor first, or `None` when no group should be
/// formed now (the scheduler asks again at its next look).
pub fn choose_group(
    candidates: &[Candidate],
    pool: &Pool<'_>,
    rng: &mut impl Rng,
) -> Option<Vec<usize>> {
    let seats = pool.seats;
    if seats == 0 {
        return None;
    }
    let mut anchors: Vec<usize> = (0..candidates.len())
        .filter(|&i| !candidates[i].house && candidates[i].free > 0)
        .collect();
    anchors.sort_by_key(|&i| (candidates[i].waiting_since_ms, candidates[i].id.clone()));
    for &anchor in &anchors {
        let a = &candidates[anchor];
        let waited = pool.now_ms - a.waiting_since_ms >= pool.house_fill_after_ms;
        for _ in 0..TRIES {
            // Before its wait is over the anchor may pick busy partners (and then waits for
            // them); after it, only free ones.
            let partners = outside_partners(candidates, anchor, pool, !waited, rng);
            if partners.iter().any(|&i| candidates[i].free == 0) {
                break;
            }
            let mut group = vec![anchor];
            group.extend(partners);
            fill_with_house(candidates, anchor, &mut group, seats, rng);
            if group.len() < seats {
                break;
            }
            let mut ids: Vec<&str> = group.iter().map(|&i| candidates[i].id.as_str()).collect();
            ids.sort_unstable();
            if (pool.meetings)(&ids) < pool.max_meetings {
                return Some(group);
            }
        }
    }
    None
}

/// Up to `seats − 1` outside partners for `anchor`, one owner each: each pick the one that met
/// the group so far least, then (busy ones last) the closest in rating plus noise.
fn outside_partners(
    candidates: &[Candidate],
    anchor: usize,
    pool: &Pool<'_>,
    with_busy: bool,
    rng: &mut impl Rng,
) -> Vec<usize> {
    let a = &candidates[anchor];
    let mut field: Vec<(f64, usize)> = candidates
        .iter()
        .enumerate()
        .filter(|(i, c)| {
            *i != anchor
                && !c.house
                && c.owner != a.owner
                && c.id != a.id
                && (with_busy || c.free > 0)
        })
        .map(|(i, c)| ((c.mu - a.mu).abs() + noise(rng), i))
        .collect();
    let mut group = vec![anchor];
    let mut owners = vec![a.owner.as_str()];
    while group.len() < pool.seats {
        let best = field
            .iter()
            .enumerate()
            .filter(|(_, (_, i))| !owners.contains(&candidates[*i].owner.as_str()))
            .map(|(k, &(closeness, i))| {
                let c = &candidates[i];
                let met: u32 = group
                    .iter()
                    .map(|&g| (pool.pair_meetings)(&candidates[g].id, &c.id))
                    .sum();
                (met, u8::from(c.free == 0), closeness, k)
            })
            .min_by(|x, y| {
                (x.0, x.1)
                    .cmp(&(y.0, y.1))
                    .then_with(|| x.2.total_cmp(&y.2))
            });
        let Some((_, _, _, k)) = best else { break };
        let (_, i) = field.swap_remove(k);
        owners.push(candidates[i].owner.as_str());
        group.push(i);
    }
    group.remove(0);
    group
}

/// The group's empty seats to free house entrants, the closest in rating (plus noise) first.
fn fill_with_house(
    candidates: &[Candidate],
    anchor: usize,
    group: &mut Vec<usize>,
    seats: usize,
    rng: &mut impl Rng,
) {
    let a = &candidates[anchor];
    let mut house: Vec<(f64, usize)> = candidates
        .iter()
        .enumerate()
        .filter(|(i, c)| c.house && c.free > 0 && !group.contains(i))
        .map(|(i, c)| ((c.mu - a.mu).abs() + noise(rng), i))
        .collect();
    house.sort_by(|x, y| x.0.total_cmp(&y.0));
    for (_, i) in house {
        if group.len() >= seats {
            break;
        }
        if group.iter().all(|&g| candidates[g].id != candidates[i].id) {
            group.push(i);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::SeedableRng;
    use rand_chacha::ChaCha8Rng;
    use std::collections::HashMap;

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

    fn no_pairs(_: &str, _: &str) -> u32 {
        0
    }

    /// A pool at `now` whose anchors have waited long enough when `now >= 1000`.
    fn pool<'a>(
        seats: usize,
        now_ms: i64,
        meetings: &'a dyn Fn(&[&str]) -> u32,
        max_meetings: u32,
        pair_meetings: &'a dyn Fn(&str, &str) -> u32,
    ) -> Pool<'a> {
        Pool {
            seats,
            now_ms,
            house_fill_after_ms: 1000,
            meetings,
            max_meetings,
            pair_meetings,
        }
    }

    #[test]
    fn the_longest_waiting_bot_anchors_the_group() {
        let c = vec![
            bot("a", "a", 25.0, 30),
            bot("b", "b", 25.0, 10),
            bot("c", "c", 25.0, 20),
        ];
        let mut rng = ChaCha8Rng::seed_from_u64(1);
        let g = choose_group(&c, &pool(2, 0, &never, 1, &no_pairs), &mut rng).unwrap();
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
            let g = choose_group(&c, &pool(4, 5000, &never, 1, &no_pairs), &mut rng).unwrap();
            let owners: Vec<&str> = g
                .iter()
                .filter(|&&i| !c[i].house)
                .map(|&i| c[i].owner.as_str())
                .collect();
            let mut dedup = owners.clone();
            dedup.sort_unstable();
            dedup.dedup();
            assert_eq!(owners.len(), dedup.len(), "round {round}: {g:?}");
            // Three owners for four seats: three outside bots and one house entrant.
            assert_eq!(owners.len(), 3, "round {round}");
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
        assert_eq!(
            choose_group(&c, &pool(3, 0, &never, 1, &no_pairs), &mut rng),
            None
        );
        // House entrants alone never form a table.
        let h = vec![house("random"), house("heuristic"), house("x")];
        assert_eq!(
            choose_group(&h, &pool(3, 0, &never, 1, &no_pairs), &mut rng),
            None
        );
        // A lone bot plays against the house at once: no outside bot could take a seat.
        let mut one = h.clone();
        one.push(bot("a", "o", 25.0, 0));
        let g = choose_group(&one, &pool(3, 0, &never, 1, &no_pairs), &mut rng).unwrap();
        assert_eq!(g[0], 3);
    }

    #[test]
    fn a_group_that_met_enough_is_not_formed_again() {
        let c = vec![bot("a", "a", 25.0, 0), bot("b", "b", 25.0, 0)];
        let mut rng = ChaCha8Rng::seed_from_u64(1);
        let met = |ids: &[&str]| u32::from(ids == ["a", "b"]) * 3;
        assert_eq!(
            choose_group(&c, &pool(2, 0, &met, 3, &no_pairs), &mut rng),
            None
        );
        assert!(choose_group(&c, &pool(2, 0, &met, 4, &no_pairs), &mut rng).is_some());
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
            let g = choose_group(&c, &pool(2, 0, &never, 1, &no_pairs), &mut rng).unwrap();
            match c[g[1]].id.as_str() {
                "near" => near += 1,
                _ => far += 1,
            }
        }
        assert!(near > far * 3, "near {near} far {far}");
        assert!(far > 0, "the far bot never met the anchor");
    }

    #[test]
    fn candidates_without_free_capacity_are_skipped_after_the_wait() {
        let mut c = vec![
            bot("a", "a", 25.0, 0),
            bot("b", "b", 25.0, 0),
            bot("c", "c", 25.0, 0),
        ];
        c[1].free = 0;
        let mut rng = ChaCha8Rng::seed_from_u64(2);
        let g = choose_group(&c, &pool(2, 5000, &never, 1, &no_pairs), &mut rng).unwrap();
        assert!(!g.contains(&1));
    }

    /// Outside bots take every seat they can; the house only fills what they cannot.
    #[test]
    fn outside_bots_are_seated_before_the_house() {
        let mut rng = ChaCha8Rng::seed_from_u64(5);
        for _ in 0..200 {
            let mut c: Vec<Candidate> = (0..4)
                .map(|i| {
                    bot(
                        &format!("b{i}"),
                        &format!("o{i}"),
                        10.0 + 10.0 * i as f64,
                        i,
                    )
                })
                .collect();
            // House entrants rated like the anchor: rating closeness alone would pick them.
            for p in ["random", "heuristic", "heuristic-2"] {
                let mut h = house(p);
                h.mu = 10.0;
                c.push(h);
            }
            let g = choose_group(&c, &pool(4, 0, &never, 9, &no_pairs), &mut rng).unwrap();
            assert!(g.iter().all(|&i| !c[i].house), "{g:?}");
        }
    }

    /// A free bot waits for a busy outside bot it has not met, then after the wait plays
    /// with whom it can; a seat no outside owner online could take goes to the house at once.
    #[test]
    fn a_busy_partner_is_waited_for_until_the_house_fill_wait() {
        let mut rng = ChaCha8Rng::seed_from_u64(9);
        let mut c = vec![bot("a", "a", 25.0, 100), bot("b", "b", 25.0, 0)];
        c[1].free = 0;
        for p in ["random", "heuristic", "heuristic-2"] {
            c.push(house(p));
        }
        // Within the wait: nothing (b is busy, and it is the only other outside bot).
        assert_eq!(
            choose_group(&c, &pool(4, 600, &never, 9, &no_pairs), &mut rng),
            None
        );
        // Once b is free: a and b together, house in the two seats no outside bot could take.
        c[1].free = 1;
        let g = choose_group(&c, &pool(4, 600, &never, 9, &no_pairs), &mut rng).unwrap();
        assert!(g.contains(&0) && g.contains(&1), "{g:?}");
        // After the wait, with b still busy: a plays the house.
        c[1].free = 0;
        let g = choose_group(&c, &pool(4, 1100, &never, 9, &no_pairs), &mut rng).unwrap();
        assert_eq!(g[0], 0);
        assert!(g[1..].iter().all(|&i| c[i].house), "{g:?}");
    }

    /// Pairs that met least are preferred over rating closeness.
    #[test]
    fn pairs_that_met_least_come_first() {
        let mut rng = ChaCha8Rng::seed_from_u64(4);
        let c = vec![
            bot("a", "a", 25.0, 0),
            bot("near", "n", 25.0, 5),
            bot("far", "f", 45.0, 5),
        ];
        let pairs =
            |x: &str, y: &str| u32::from((x, y) == ("a", "near") || (x, y) == ("near", "a"));
        for _ in 0..200 {
            let g = choose_group(&c, &pool(2, 0, &never, 9, &pairs), &mut rng).unwrap();
            assert_eq!(c[g[1]].id, "far");
        }
    }

    /// Eight outside bots of eight owners, one set at a time each, sets of uneven length, a
    /// look every 250 ms: the house never sits in and every pair meets within six sets each.
    #[test]
    fn eight_bots_meet_every_pair_without_the_house() {
        for seed in 0..20 {
            let mut rng = ChaCha8Rng::seed_from_u64(seed);
            let mut c: Vec<Candidate> = (0..8)
                .map(|i| bot(&format!("b{i}"), &format!("o{i}"), 25.0 + i as f64, 0))
                .collect();
            for p in ["random", "heuristic", "heuristic-2"] {
                c.push(house(p));
            }
            let mut pairs: HashMap<(String, String), u32> = HashMap::new();
            let mut sets = [0u32; 8];
            let (mut outside_seats, mut all_seats) = (0, 0);
            // (ends at, members)
            let mut playing: Vec<(i64, Vec<usize>)> = Vec::new();
            let mut now = 0i64;
            while sets.iter().any(|&n| n < 6) && now < 1_000_000 {
                playing.retain(|(end, g)| {
                    if *end > now {
                        return true;
                    }
                    for &i in g {
                        c[i].free += 1;
                        if !c[i].house {
                            c[i].waiting_since_ms = now;
                        }
                    }
                    false
                });
                loop {
                    let met = pairs.clone();
                    let pm = move |x: &str, y: &str| {
                        let k = if x < y {
                            (x.to_string(), y.to_string())
                        } else {
                            (y.to_string(), x.to_string())
                        };
                        met.get(&k).copied().unwrap_or(0)
                    };
                    let p = Pool {
                        seats: 4,
                        now_ms: now,
                        house_fill_after_ms: 3000,
                        meetings: &never,
                        max_meetings: 1000,
                        pair_meetings: &pm,
                    };
                    let Some(g) = choose_group(&c, &p, &mut rng) else {
                        break;
                    };
                    for &i in &g {
                        c[i].free -= 1;
                        all_seats += 1;
                        if !c[i].house {
                            outside_seats += 1;
                            sets[i] += 1;
                        }
                    }
                    for (x, &i) in g.iter().enumerate() {
                        for &j in &g[x + 1..] {
                            if c[i].house || c[j].house {
                                continue;
                            }
                            let (a, b) = (c[i].id.clone(), c[j].id.clone());
                            let k = if a < b { (a, b) } else { (b, a) };
                            *pairs.entry(k).or_default() += 1;
                        }
                    }
                    playing.push((now + rng.random_range(1000..2500), g));
                }
                now += 250;
            }
            assert_eq!(outside_seats, all_seats, "seed {seed}: the house sat in");
            assert_eq!(pairs.len(), 28, "seed {seed}: {} pairs met", pairs.len());
        }
    }
}
