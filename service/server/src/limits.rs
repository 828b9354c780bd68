//! What one caller may take: call rates (keyed GCRA limiters from `governor`) per bot, per
//! account (all its bots together) and per client address (the calls without a bot token), open
//! streams per bot, and unfinished tables per bot. Every refusal is a [`ServerError`] that carries a
//! `RetryInfo` delay where waiting helps. Values and reasons: docs/security.md.

use std::collections::{HashMap, HashSet};
use std::net::IpAddr;
use std::num::NonZeroU32;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use governor::clock::{Clock, DefaultClock};
use governor::{DefaultKeyedRateLimiter, Quota};

use crate::counts::AddressCounts;
use crate::store::BotRow;
use bete_base::status::ServerError;

/// A sustained rate with a burst; `per_second == 0` switches the limit off.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct Rate {
    pub per_second: u32,
    pub burst: u32,
}

impl Rate {
    pub const OFF: Rate = Rate {
        per_second: 0,
        burst: 0,
    };

    pub(crate) fn quota(self) -> Option<Quota> {
        let per_second = NonZeroU32::new(self.per_second)?;
        let burst = NonZeroU32::new(self.burst.max(1)).unwrap_or(NonZeroU32::MIN);
        Some(Quota::per_second(per_second).allow_burst(burst))
    }
}

impl std::str::FromStr for Rate {
    type Err = String;
    /// `RATE` or `RATE/BURST` (per second); `0` is off.
    fn from_str(s: &str) -> Result<Rate, String> {
        let (rate, burst) = match s.split_once('/') {
            Some((r, b)) => (r, Some(b)),
            None => (s, None),
        };
        let per_second: u32 = rate
            .trim()
            .parse()
            .map_err(|_| format!("{s:?}: expected RATE or RATE/BURST (per second)"))?;
        let burst = match burst {
            Some(b) => b
                .trim()
                .parse()
                .map_err(|_| format!("{s:?}: the burst is not a number"))?,
            None => per_second,
        };
        Ok(Rate { per_second, burst })
    }
}

/// Every limit a caller meets; the defaults are in [`crate::config::ServerConfig`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LimitsConfig {
    /// Authenticated calls per bot (each request of a SubmitActions stream counts as one).
    pub calls_per_bot: Rate,
    /// RegisterBot calls per client address (the only call without a token).
    pub registrations_per_address: Rate,
    /// CreateTable calls per bot.
    pub creations_per_bot: Rate,
    /// Authenticated calls of all of an account's bots together (a bot without an account is
    /// held by the per-bot rate alone).
    pub calls_per_account: Rate,
    /// CreateTable calls of all of an account's bots together.
    pub creations_per_account: Rate,
    /// RegisterBot calls with an account's token, per account.
    pub registrations_per_account: Rate,
    /// CreateAccount calls per client address (the other call without a bot token).
    pub accounts_per_address: Rate,
    /// EnterLadder and LeaveLadder calls per bot (all ladders together): an enter/leave loop
    /// cannot churn the scheduler.
    pub ladder_entries_per_bot: Rate,
    /// Open streams (WatchBot, WatchTable, SubmitActions) per bot; 0 is no limit.
    pub streams_per_bot: usize,
    /// Unfinished tables a bot created (waiting or playing); 0 is no limit.
    pub open_tables_per_bot: usize,
    /// Unfinished tables a bot sits at; 0 is no limit.
    pub seats_per_bot: usize,
    /// Failed authentications (unknown, revoked or malformed tokens) per client address.
    pub auth_failures_per_address: Rate,
    /// RESOURCE_EXHAUSTED answers per client address (IPv6: one /64) sent at once; past it
    /// each is held back `edge::TARPIT_DELAY` first, so a client that ignores RetryInfo and
    /// calls again at once is slowed to its own concurrency instead of costing the server a
    /// refusal per call.
    pub refusals_per_address: Rate,
    /// Unfinished tables created through calls from one client address (IPv6: one /64); 0 is
    /// no limit.
    pub open_tables_per_address: usize,
    /// Unfinished tables created by all of an account's bots together; 0 is no limit.
    pub open_tables_per_account: usize,
    /// Unfinished tables on this server (ladder tables included): past it CreateTable is
    /// refused, before memory runs out; 0 is no limit.
    pub max_open_tables: usize,
    /// Bots registered through calls from one client address (IPv6: one /64) in a day, with
    /// or without an account's token (counts.rs); 0 is no limit.
    pub bots_per_address: usize,
    /// Accounts created through calls from one client address in a day (open signup); 0 is
    /// no limit.
    pub accounts_per_address_count: usize,
}

impl Default for LimitsConfig {
    fn default() -> Self {
        LimitsConfig {
            calls_per_bot: Rate {
                per_second: 1000,
                burst: 2000,
            },
            registrations_per_address: Rate {
                per_second: 20,
                burst: 1000,
            },
            creations_per_bot: Rate {
                per_second: 20,
                burst: 200,
            },
            calls_per_account: Rate {
                per_second: 5000,
                burst: 10_000,
            },
            creations_per_account: Rate {
                per_second: 50,
                burst: 500,
            },
            registrations_per_account: Rate {
                per_second: 2,
                burst: 100,
            },
            accounts_per_address: Rate {
                per_second: 1,
                burst: 20,
            },
            ladder_entries_per_bot: Rate {
                per_second: 1,
                burst: 20,
            },
            streams_per_bot: 512,
            open_tables_per_bot: 256,
            seats_per_bot: 256,
            auth_failures_per_address: Rate {
                per_second: 5,
                burst: 50,
            },
            refusals_per_address: Rate {
                per_second: 20,
                burst: 200,
            },
            open_tables_per_address: 2000,
            open_tables_per_account: 5000,
            max_open_tables: 20_000,
            bots_per_address: 2000,
            accounts_per_address_count: 100,
        }
    }
}

type Keyed<K> = DefaultKeyedRateLimiter<K>;

/// The live limiters and counts.
#[derive(Debug)]
pub struct Limits {
    pub config: LimitsConfig,
    calls: Option<Keyed<String>>,
    registrations: Option<Keyed<IpAddr>>,
    creations: Option<Keyed<String>>,
    account_calls: Option<Keyed<String>>,
    account_creations: Option<Keyed<String>>,
    account_registrations: Option<Keyed<String>>,
    accounts: Option<Keyed<IpAddr>>,
    ladder_entries: Option<Keyed<String>>,
    clock: DefaultClock,
    streams: Arc<Mutex<HashMap<String, usize>>>,
    /// Unfinished tables by creator: filled by CreateTable and by table actors as they load
    /// (and by recovery for waiting tables kept as rows), emptied as their tables finish or
    /// close.
    open: Mutex<HashMap<String, HashSet<String>>>,
    /// Who holds each unfinished table made by CreateTable here: its address's and account's
    /// budgets, and the server's count of unfinished tables.
    holders: Mutex<Holders>,
    /// Each bot's count of seats, for `seats_per_bot` (seated.rs).
    pub seated: crate::seated::SeatCounts,
    /// Bots and accounts registered per address (the count budgets).
    bot_counts: AddressCounts,
    account_counts: AddressCounts,
}

/// The budgets' counts of unfinished tables.
#[derive(Debug, Default)]
struct Holders {
    by_table: HashMap<String, Holder>,
    by_address: HashMap<IpAddr, usize>,
    by_account: HashMap<String, usize>,
    /// Unfinished tables known here (loaded ones and reserved ones).
    total: usize,
}

#[derive(Debug)]
struct Holder {
    address: Option<IpAddr>,
    account: Option<String>,
}

/// How long a refusal for a budget of unfinished tables tells the caller to wait: a table
/// ends or expires in minutes, not milliseconds.
pub const TABLE_BUDGET_RETRY: Duration = Duration::from_secs(5);

fn dec<K: std::hash::Hash + Eq>(m: &mut HashMap<K, usize>, k: &K) {
    if let Some(n) = m.get_mut(k) {
        *n = n.saturating_sub(1);
        if *n == 0 {
            m.remove(k);
        }
    }
}

impl Limits {
    pub fn new(config: LimitsConfig) -> Limits {
        Limits {
            calls: config.calls_per_bot.quota().map(Keyed::keyed),
            registrations: config.registrations_per_address.quota().map(Keyed::keyed),
            creations: config.creations_per_bot.quota().map(Keyed::keyed),
            account_calls: config.calls_per_account.quota().map(Keyed::keyed),
            account_creations: config.creations_per_account.quota().map(Keyed::keyed),
            account_registrations: config.registrations_per_account.quota().map(Keyed::keyed),
            accounts: config.accounts_per_address.quota().map(Keyed::keyed),
            ladder_entries: config.ladder_entries_per_bot.quota().map(Keyed::keyed),
            clock: DefaultClock::default(),
            streams: Arc::new(Mutex::new(HashMap::new())),
            open: Mutex::new(HashMap::new()),
            holders: Mutex::new(Holders::default()),
            seated: crate::seated::SeatCounts::default(),
            bot_counts: AddressCounts::new(
                "bots_per_address",
                "your address has registered as many bots today as it may",
                config.bots_per_address,
            ),
            account_counts: AddressCounts::new(
                "accounts_per_address",
                "your address has created as many accounts today as it may",
                config.accounts_per_address_count,
            ),
            config,
        }
    }

    fn check<K: std::hash::Hash + Eq + Clone>(
        &self,
        limiter: &Option<Keyed<K>>,
        key: &K,
        what: &'static str,
    ) -> Result<(), ServerError> {
        let Some(l) = limiter else { return Ok(()) };
        l.check_key(key)
            .map_err(|not_until| ServerError::RateLimited {
                what,
                // At least 1 ms, so a client that honours it never spins.
                retry_after: not_until
                    .wait_time_from(self.clock.now())
                    .max(Duration::from_millis(1)),
            })
    }

    /// An authenticated call of `bot`: its own rate, then its account's.
    pub fn check_call(&self, bot: &BotRow) -> Result<(), ServerError> {
        self.check(&self.calls, &bot.id, "calls")?;
        match &bot.account_id {
            Some(a) => self.check(&self.account_calls, a, "calls of your account's bots"),
            None => Ok(()),
        }
    }

    /// A call without a peer address (not over TCP) shares one key.
    fn address(addr: Option<IpAddr>) -> IpAddr {
        addr.unwrap_or(IpAddr::from([0, 0, 0, 0]))
    }

    pub fn check_registration(&self, addr: Option<IpAddr>) -> Result<(), ServerError> {
        let key = Self::address(addr);
        self.check(&self.registrations, &key, "registrations from your address")
    }

    /// One more bot registered from `addr`, whatever token the call carries (the count
    /// budget); given back by [`Limits::release_bot`] if the registration fails.
    pub fn reserve_bot(&self, addr: Option<IpAddr>) -> Result<(), ServerError> {
        self.bot_counts.reserve(Self::address(addr))
    }

    pub fn release_bot(&self, addr: Option<IpAddr>) {
        self.bot_counts.release(Self::address(addr));
    }

    /// One more account created from `addr` (open signup).
    pub fn reserve_account(&self, addr: Option<IpAddr>) -> Result<(), ServerError> {
        self.account_counts.reserve(Self::address(addr))
    }

    pub fn release_account(&self, addr: Option<IpAddr>) {
        self.account_counts.release(Self::address(addr));
    }

    /// A RegisterBot call with `account`'s token.
    pub fn check_account_registration(&self, account: &str) -> Result<(), ServerError> {
        self.check(
            &self.account_registrations,
            &account.to_string(),
            "bot registrations of your account",
        )
    }

    pub fn check_account_creation(&self, addr: Option<IpAddr>) -> Result<(), ServerError> {
        let key = Self::address(addr);
        self.check(&self.accounts, &key, "accounts created from your address")
    }

    /// A CreateTable call of `bot`: its own rate, then its account's.
    pub fn check_creation(&self, bot: &BotRow) -> Result<(), ServerError> {
        self.check(&self.creations, &bot.id, "table creations")?;
        match &bot.account_id {
            Some(a) => self.check(
                &self.account_creations,
                a,
                "table creations of your account's bots",
            ),
            None => Ok(()),
        }
    }

    /// An EnterLadder or LeaveLadder call of `bot` (on top of its call rate).
    pub fn check_ladder_entry(&self, bot: &BotRow) -> Result<(), ServerError> {
        self.check(&self.ladder_entries, &bot.id, "ladder entries and leaves")
    }

    /// Forget limiter state of keys that are back to a full burst (memory stays bounded by
    /// the callers of the last few seconds).
    pub fn shrink(&self) {
        for l in [
            &self.calls,
            &self.creations,
            &self.account_calls,
            &self.account_creations,
            &self.account_registrations,
            &self.ladder_entries,
        ]
        .into_iter()
        .flatten()
        {
            l.retain_recent();
            l.shrink_to_fit();
        }
        for l in [&self.registrations, &self.accounts].into_iter().flatten() {
            l.retain_recent();
            l.shrink_to_fit();
        }
        self.bot_counts.shrink();
        self.account_counts.shrink();
    }

    /// One more open stream for `bot`, released when the permit drops.
    pub fn open_stream(&self, bot: &str) -> Result<StreamPermit, ServerError> {
        let limit = self.config.streams_per_bot;
        let mut m = self
            .streams
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        let n = m.entry(bot.to_string()).or_insert(0);
        if limit > 0 && *n >= limit {
            return Err(ServerError::TooManyStreams { limit });
        }
        *n += 1;
        Ok(StreamPermit {
            bot: bot.to_string(),
            streams: self.streams.clone(),
        })
    }

    /// Reserve a place for a new table of `bot`'s, created through a call from `addr`: the
    /// server's, the address's and the account's budgets of unfinished tables, then the bot's
    /// own limit; or refuse.
    pub fn reserve_table(
        &self,
        bot: &BotRow,
        table: &str,
        addr: Option<IpAddr>,
    ) -> Result<(), ServerError> {
        let address = addr.map(crate::conn::share_key);
        let mut h = self.holders.lock().unwrap_or_else(|p| p.into_inner());
        let c = &self.config;
        let spent = |budget, what| ServerError::BudgetExhausted {
            budget,
            what,
            retry_after: TABLE_BUDGET_RETRY,
        };
        if c.max_open_tables > 0 && h.total >= c.max_open_tables {
            return Err(spent(
                "open_tables_server",
                "the server holds as many unfinished tables as it may",
            ));
        }
        if let Some(a) = address
            && c.open_tables_per_address > 0
            && h.by_address.get(&a).copied().unwrap_or(0) >= c.open_tables_per_address
        {
            return Err(spent(
                "open_tables_per_address",
                "your address has as many unfinished tables as it may",
            ));
        }
        if let Some(acc) = &bot.account_id
            && c.open_tables_per_account > 0
            && h.by_account.get(acc).copied().unwrap_or(0) >= c.open_tables_per_account
        {
            return Err(spent(
                "open_tables_per_account",
                "your account's bots have as many unfinished tables as they may",
            ));
        }
        self.reserve_bot_table(&bot.id, table)?;
        if let Some(a) = address {
            *h.by_address.entry(a).or_default() += 1;
        }
        if let Some(acc) = &bot.account_id {
            *h.by_account.entry(acc.clone()).or_default() += 1;
        }
        h.total += 1;
        h.by_table.insert(
            table.to_string(),
            Holder {
                address,
                account: bot.account_id.clone(),
            },
        );
        Ok(())
    }

    /// The bot's own limit of unfinished tables it created.
    fn reserve_bot_table(&self, bot: &str, table: &str) -> Result<(), ServerError> {
        let limit = self.config.open_tables_per_bot;
        let mut m = self.open.lock().unwrap_or_else(|p| p.into_inner());
        let set = m.entry(bot.to_string()).or_default();
        if limit > 0 && set.len() >= limit {
            return Err(ServerError::TooManyTables {
                what: "created",
                limit,
            });
        }
        set.insert(table.to_string());
        Ok(())
    }

    /// A table of `bot`'s is loaded and not finished.
    pub fn table_open(&self, bot: &str, table: &str) {
        let mut h = self.holders.lock().unwrap_or_else(|p| p.into_inner());
        let mut m = self.open.lock().unwrap_or_else(|p| p.into_inner());
        let new = m
            .entry(bot.to_string())
            .or_default()
            .insert(table.to_string());
        // A table reserved by CreateTable is counted already.
        if new && !h.by_table.contains_key(table) {
            h.total += 1;
        }
    }

    /// A table of `bot`'s finished or closed (or was never stored).
    pub fn table_done(&self, bot: &str, table: &str) {
        let mut h = self.holders.lock().unwrap_or_else(|p| p.into_inner());
        let mut m = self.open.lock().unwrap_or_else(|p| p.into_inner());
        let mut was_open = false;
        if let Some(set) = m.get_mut(bot) {
            was_open = set.remove(table);
            if set.is_empty() {
                m.remove(bot);
            }
        }
        match h.by_table.remove(table) {
            Some(holder) => {
                if let Some(a) = holder.address {
                    dec(&mut h.by_address, &a);
                }
                if let Some(acc) = holder.account {
                    dec(&mut h.by_account, &acc);
                }
                h.total = h.total.saturating_sub(1);
            }
            None if was_open => h.total = h.total.saturating_sub(1),
            None => {}
        }
    }

    /// Unfinished tables counted against the server's budget.
    pub fn open_tables(&self) -> usize {
        self.holders.lock().unwrap_or_else(|p| p.into_inner()).total
    }
}

/// An open stream, counted against its bot until dropped.
#[derive(Debug)]
pub struct StreamPermit {
    bot: String,
    streams: Arc<Mutex<HashMap<String, usize>>>,
}

impl Drop for StreamPermit {
    fn drop(&mut self) {
        let mut m = self.streams.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(n) = m.get_mut(&self.bot) {
            *n = n.saturating_sub(1);
            if *n == 0 {
                m.remove(&self.bot);
            }
        }
    }
}

impl bete_table::OpenTables for Limits {
    fn table_open(&self, bot: &str, table: &str) {
        Limits::table_open(self, bot, table);
    }

    fn table_done(&self, bot: &str, table: &str) {
        Limits::table_done(self, bot, table);
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn rates_parse() {
        assert_eq!(
            "10/50".parse::<Rate>().unwrap(),
            Rate {
                per_second: 10,
                burst: 50
            }
        );
        assert_eq!("7".parse::<Rate>().unwrap().burst, 7);
        assert_eq!("0".parse::<Rate>().unwrap().quota(), None);
        assert!("x".parse::<Rate>().is_err());
    }

    /// The burst passes, the next call is refused with a delay, and other keys are untouched.
    #[test]
    fn a_burst_then_a_delay() {
        let l = Limits::new(LimitsConfig {
            creations_per_bot: Rate {
                per_second: 1,
                burst: 3,
            },
            ..LimitsConfig::default()
        });
        let (a, b) = (bot("a", None), bot("b", None));
        for _ in 0..3 {
            l.check_creation(&a).unwrap();
        }
        let e = l.check_creation(&a).unwrap_err();
        let delay = e.retry_after().unwrap();
        assert!(
            delay > Duration::ZERO && delay <= Duration::from_secs(1),
            "{delay:?}"
        );
        l.check_creation(&b).unwrap();
    }

    fn bot(id: &str, account: Option<&str>) -> BotRow {
        BotRow {
            id: id.into(),
            name: id.into(),
            owner: String::new(),
            token_hash: String::new(),
            created_at_ms: 0,
            account_id: account.map(str::to_string),
            version: "1".into(),
        }
    }

    /// An account's bots share its rate: many bots cannot multiply one owner's share; a bot
    /// without an account, or of another account, is not held by it.
    #[test]
    fn an_accounts_bots_share_its_rate() {
        let l = Limits::new(LimitsConfig {
            calls_per_account: Rate {
                per_second: 1,
                burst: 4,
            },
            ..LimitsConfig::default()
        });
        let bots: Vec<_> = (0..4)
            .map(|i| bot(&format!("b{i}"), Some("acct")))
            .collect();
        for b in &bots {
            l.check_call(b).unwrap();
        }
        let e = l.check_call(&bot("b4", Some("acct"))).unwrap_err();
        assert!(e.retry_after().is_some());
        l.check_call(&bot("lone", None)).unwrap();
        l.check_call(&bot("other", Some("acct2"))).unwrap();
    }

    #[test]
    fn stream_permits_count_and_release() {
        let l = Limits::new(LimitsConfig {
            streams_per_bot: 2,
            ..LimitsConfig::default()
        });
        let a = l.open_stream("a").unwrap();
        let _b = l.open_stream("a").unwrap();
        assert_eq!(
            l.open_stream("a").unwrap_err(),
            ServerError::TooManyStreams { limit: 2 }
        );
        drop(a);
        l.open_stream("a").unwrap();
    }

    /// The budgets of unfinished tables: per address (IPv6 by /64), per account, server-wide;
    /// each refusal names its budget and carries a delay; a table done frees its place in each.
    #[test]
    fn table_budgets_are_per_address_account_and_server() {
        let limits = Limits::new(LimitsConfig {
            open_tables_per_address: 2,
            open_tables_per_account: 3,
            max_open_tables: 5,
            ..LimitsConfig::default()
        });
        let a: Option<IpAddr> = Some("10.0.0.1".parse().unwrap());
        let b: Option<IpAddr> = Some("10.0.0.2".parse().unwrap());
        let budget = |e: ServerError| match e {
            ServerError::BudgetExhausted {
                budget,
                retry_after,
                ..
            } => {
                assert!(retry_after > Duration::ZERO);
                budget
            }
            other => panic!("{other:?}"),
        };
        let x = bot("x", Some("acc"));
        limits.reserve_table(&x, "t1", a).unwrap();
        limits.reserve_table(&x, "t2", a).unwrap();
        let e = limits.reserve_table(&x, "t3", a).unwrap_err();
        assert_eq!(budget(e), "open_tables_per_address");
        limits.reserve_table(&x, "t3", b).unwrap();
        let e = limits.reserve_table(&x, "t4", b).unwrap_err();
        assert_eq!(budget(e), "open_tables_per_account");
        let y = bot("y", None);
        limits.reserve_table(&y, "t4", b).unwrap();
        // A recovered table counts toward the server's budget.
        limits.table_open("z", "t5");
        let e = limits
            .reserve_table(&y, "t6", Some("10.0.0.3".parse().unwrap()))
            .unwrap_err();
        assert_eq!(budget(e), "open_tables_server");
        limits.table_done("x", "t1");
        limits.table_done("x", "t1");
        assert_eq!(limits.open_tables(), 4);
        limits.reserve_table(&x, "t6", a).unwrap();
    }
}
