//! Count budgets per client address (issue 26): how many bots and accounts one address (IPv6:
//! its /64) may register in a window, whatever token the call carries. A rate alone let one
//! address register 20 bots a second for as long as it liked, each held in memory (the token
//! cache) and in the store; the count bounds what one address can make the server hold.
//!
//! A place is reserved before the registration and given back if it fails, so concurrent
//! calls cannot overshoot. The window is fixed per address: it starts at the address's first
//! registration, and the count starts again when it has passed.

use std::collections::HashMap;
use std::net::IpAddr;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use bete_base::status::ServerError;

/// The window of the count budgets.
pub const WINDOW: Duration = Duration::from_secs(24 * 60 * 60);

/// One budget: at most `limit` registrations per address per [`WINDOW`].
#[derive(Debug)]
pub struct AddressCounts {
    /// The ErrorInfo `budget` of a refusal.
    budget: &'static str,
    what: &'static str,
    limit: usize,
    window: Duration,
    counts: Mutex<HashMap<IpAddr, (Instant, usize)>>,
}

impl AddressCounts {
    /// `limit == 0` switches the budget off.
    pub fn new(budget: &'static str, what: &'static str, limit: usize) -> AddressCounts {
        AddressCounts::with_window(budget, what, limit, WINDOW)
    }

    pub fn with_window(
        budget: &'static str,
        what: &'static str,
        limit: usize,
        window: Duration,
    ) -> AddressCounts {
        AddressCounts {
            budget,
            what,
            limit,
            window,
            counts: Mutex::new(HashMap::new()),
        }
    }

    /// Takes one place of `addr`'s budget, or refuses with the time until its window ends.
    pub fn reserve(&self, addr: IpAddr) -> Result<(), ServerError> {
        if self.limit == 0 {
            return Ok(());
        }
        let key = crate::conn::share_key(addr);
        let now = Instant::now();
        let mut m = self.counts.lock().unwrap_or_else(|p| p.into_inner());
        let (since, n) = m.entry(key).or_insert((now, 0));
        if now.duration_since(*since) >= self.window {
            *since = now;
            *n = 0;
        }
        if *n >= self.limit {
            return Err(ServerError::BudgetExhausted {
                budget: self.budget,
                what: self.what,
                retry_after: (*since + self.window)
                    .saturating_duration_since(now)
                    .max(Duration::from_secs(1)),
            });
        }
        *n += 1;
        Ok(())
    }

    /// Gives back a place taken by [`AddressCounts::reserve`] (the registration failed).
    pub fn release(&self, addr: IpAddr) {
        if self.limit == 0 {
            return;
        }
        let key = crate::conn::share_key(addr);
        let mut m = self.counts.lock().unwrap_or_else(|p| p.into_inner());
        if let Some((_, n)) = m.get_mut(&key) {
            *n = n.saturating_sub(1);
        }
    }

    /// Forgets the addresses whose window has passed (memory stays bounded by the addresses
    /// of the last window).
    pub fn shrink(&self) {
        let now = Instant::now();
        let mut m = self.counts.lock().unwrap_or_else(|p| p.into_inner());
        m.retain(|_, (since, _)| now.duration_since(*since) < self.window);
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    fn budget(e: ServerError) -> (&'static str, Duration) {
        match e {
            ServerError::BudgetExhausted {
                budget,
                retry_after,
                ..
            } => (budget, retry_after),
            other => panic!("{other:?}"),
        }
    }

    /// The count per address (IPv6 by /64): refused past the limit with the time left in the
    /// window, a failed registration's place given back, other addresses untouched, and the
    /// count starts again once the window has passed.
    #[test]
    fn an_address_registers_its_count_per_window() {
        let c = AddressCounts::with_window("bots_per_address", "x", 2, Duration::from_millis(300));
        let a: IpAddr = "2001:db8::1".parse().unwrap();
        let same_64: IpAddr = "2001:db8::ffff".parse().unwrap();
        let other: IpAddr = "10.0.0.1".parse().unwrap();
        c.reserve(a).unwrap();
        c.reserve(same_64).unwrap();
        let (name, wait) = budget(c.reserve(a).unwrap_err());
        assert_eq!(name, "bots_per_address");
        assert!(wait >= Duration::from_secs(1), "{wait:?}");
        c.release(a);
        c.reserve(a).unwrap();
        assert!(c.reserve(same_64).is_err());
        c.reserve(other).unwrap();
        std::thread::sleep(Duration::from_millis(350));
        c.shrink();
        c.reserve(a).unwrap();
        c.reserve(a).unwrap();
        assert!(c.reserve(a).is_err());
    }

    #[test]
    fn zero_is_off() {
        let c = AddressCounts::new("b", "x", 0);
        for _ in 0..10 {
            c.reserve("10.0.0.1".parse().unwrap()).unwrap();
        }
    }
}
