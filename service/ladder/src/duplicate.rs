//! Duplicate sets: n tables with one seed, one per cyclic rotation of the n entrants round the
//! seats, so every entrant plays every seat of every deal once and the luck of the deal cancels
//! out of the set's totals.
//!
//! Entrant `i` (its index in the match's rotation-0 order) sits at seat `(i + r) mod n` of the
//! table of rotation `r`.

/// Tables in a match: every rotation for a duplicate set, one table otherwise.
pub fn tables_in_match(duplicate: bool, seats: usize) -> usize {
    if duplicate { seats } else { 1 }
}

/// The seat of entrant `entrant` at the table of `rotation`.
pub fn seat_of(entrant: usize, rotation: usize, seats: usize) -> usize {
    (entrant + rotation) % seats
}

/// The entrant at `seat` of the table of `rotation` (the inverse of [`seat_of`]).
pub fn entrant_at(seat: usize, rotation: usize, seats: usize) -> usize {
    (seat + seats - rotation % seats) % seats
}

/// Each entrant's net over the tables played so far: `per_table[r][seat]` is the net of `seat`
/// at the table of rotation `r`.
pub fn totals(per_table: &[Vec<i64>], seats: usize) -> Vec<i64> {
    let mut total = vec![0i64; seats];
    for (rotation, nets) in per_table.iter().enumerate() {
        for (seat, net) in nets.iter().enumerate().take(seats) {
            total[entrant_at(seat, rotation, seats)] += net;
        }
    }
    total
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every entrant sits at every seat exactly once over a set, and `entrant_at` inverts `seat_of`.
    #[test]
    fn a_set_puts_every_entrant_at_every_seat_once() {
        for n in 2..=10 {
            for e in 0..n {
                let mut seats: Vec<usize> = (0..n).map(|r| seat_of(e, r, n)).collect();
                seats.sort_unstable();
                assert_eq!(seats, (0..n).collect::<Vec<_>>(), "n={n} e={e}");
                for r in 0..n {
                    assert_eq!(entrant_at(seat_of(e, r, n), r, n), e);
                }
            }
            for r in 0..n {
                let mut es: Vec<usize> = (0..n).map(|s| entrant_at(s, r, n)).collect();
                es.sort_unstable();
                assert_eq!(es, (0..n).collect::<Vec<_>>());
            }
        }
    }

    /// A seat that always wins the same amount (pure luck of the deal) gives every entrant the
    /// same total over a set: the luck cancels.
    #[test]
    fn seat_luck_cancels_over_a_set() {
        let n = 4;
        let luck = vec![9, -3, -3, -3];
        let per_table = vec![luck.clone(); n];
        assert_eq!(totals(&per_table, n), vec![0, 0, 0, 0]);
        // One table alone credits the luck to whoever sat at seat 0.
        assert_eq!(totals(&per_table[..1], n), luck);
        // The rotation moves entrant 0 to seat 1 at rotation 1.
        assert_eq!(totals(&[vec![0, 5, 0, -5]], n), vec![0, 5, 0, -5]);
        assert_eq!(
            totals(&[vec![0; 4], vec![0, 5, 0, -5]], n),
            vec![5, 0, -5, 0]
        );
    }

    #[test]
    fn single_tables_are_one_table() {
        assert_eq!(tables_in_match(false, 5), 1);
        assert_eq!(tables_in_match(true, 5), 5);
    }
}
