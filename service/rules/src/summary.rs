//! Deal summaries kept compactly while a match runs: one fixed-size entry per settled deal and
//! two flat lists (pools won, bêtes made) shared by the whole match, so a settlement allocates
//! nothing. [`crate::Game::summaries`] expands them into [`DealSummary`]s on request.

use crate::event::{Amounts, SeatSet};
use crate::game::{BeteMade, DealSummary, PoolWon};
use crate::ruleset::MAX_SEATS;
use crate::seat::Seat;

/// The fixed-size part of one deal's summary (see [`DealSummary`] for the meaning of each field).
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub(crate) struct SummaryHead {
    pub deal: u32,
    pub dealer: Seat,
    pub declarer: Option<Seat>,
    pub contrer: Option<Seat>,
    pub stayers: SeatSet,
    pub seats: u8,
    pub tricks: [u8; MAX_SEATS],
    pub outcome: &'static str,
    pub net: Amounts,
}

#[derive(Copy, Clone, Debug, PartialEq, Eq)]
struct Entry {
    head: SummaryHead,
    /// End (exclusive) of this deal's pools in `SummaryLog::won`; the start is the previous end.
    won_end: u32,
    /// End (exclusive) of this deal's bêtes in `SummaryLog::betes`.
    betes_end: u32,
}

/// Every settled deal's summary of one match.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct SummaryLog {
    deals: Vec<Entry>,
    won: Vec<(&'static str, Seat, i64)>,
    betes: Vec<(Seat, i64)>,
}

impl SummaryLog {
    /// Room for `deals` deals, so that a match of the expected length never reallocates.
    pub fn with_capacity(deals: usize) -> SummaryLog {
        SummaryLog {
            deals: Vec::with_capacity(deals),
            won: Vec::with_capacity(4 * deals),
            betes: Vec::with_capacity(deals),
        }
    }

    /// Records one settled deal: its head, the pools won in order, the bêtes made in order.
    pub fn push(
        &mut self,
        head: SummaryHead,
        won: impl IntoIterator<Item = (&'static str, Seat, i64)>,
        betes: impl IntoIterator<Item = (Seat, i64)>,
    ) {
        self.won.extend(won);
        self.betes.extend(betes);
        self.deals.push(Entry {
            head,
            won_end: self.won.len() as u32,
            betes_end: self.betes.len() as u32,
        });
    }

    /// The summaries in the public form, one per settled deal.
    pub fn expand(&self) -> Vec<DealSummary> {
        let (mut won_start, mut betes_start) = (0usize, 0usize);
        self.deals
            .iter()
            .map(|e| {
                let h = &e.head;
                let n = h.seats as usize;
                let won = &self.won[won_start..e.won_end as usize];
                let betes = &self.betes[betes_start..e.betes_end as usize];
                won_start = e.won_end as usize;
                betes_start = e.betes_end as usize;
                DealSummary {
                    deal: h.deal,
                    dealer: h.dealer.0,
                    declarer: h.declarer.map(|s| s.0),
                    contrer: h.contrer.map(|s| s.0),
                    stayers: h.stayers.iter().map(|s| s.0).collect(),
                    tricks: h.tricks[..n].to_vec(),
                    outcome: h.outcome.to_string(),
                    pools_won: won
                        .iter()
                        .map(|&(pool, seat, amount)| PoolWon {
                            pool: pool.to_string(),
                            seat: seat.0,
                            amount,
                        })
                        .collect(),
                    betes: betes
                        .iter()
                        .map(|&(seat, amount)| BeteMade {
                            seat: seat.0,
                            amount,
                        })
                        .collect(),
                    net: h.net[..n].to_vec(),
                }
            })
            .collect()
    }
}
