//! Which node runs the ladders' schedulers. On SQLite the one node always does. On PostgreSQL
//! one node at a time leads (store/postgres.rs `lead_ladders`, judged by its lease); the
//! cluster loop tells this node whether it leads, and which bots are online on any node.

use std::collections::HashSet;
use std::sync::RwLock;

use tokio::sync::watch;

/// Shared by the cluster loop (which writes it) and the schedulers (which follow it).
#[derive(Debug)]
pub struct Leadership {
    /// The epoch this node leads at; `None` while another node leads.
    epoch: watch::Sender<Option<i64>>,
    /// Bots with a WatchBot stream on any live node (a cluster only).
    online: RwLock<HashSet<String>>,
    cluster: bool,
}

impl Leadership {
    /// The node of a single-node store: the leader for good.
    pub fn single() -> Leadership {
        Leadership {
            epoch: watch::Sender::new(Some(0)),
            online: RwLock::default(),
            cluster: false,
        }
    }

    /// A node of a cluster: a follower until the cluster loop says otherwise.
    pub fn cluster() -> Leadership {
        Leadership {
            epoch: watch::Sender::new(None),
            online: RwLock::default(),
            cluster: true,
        }
    }

    pub fn is_cluster(&self) -> bool {
        self.cluster
    }

    /// Whether this node leads now.
    pub fn leads(&self) -> bool {
        self.epoch.borrow().is_some()
    }

    pub fn set(&self, epoch: Option<i64>) {
        self.epoch.send_if_modified(|e| {
            let changed = *e != epoch;
            *e = epoch;
            changed
        });
    }

    pub fn subscribe(&self) -> watch::Receiver<Option<i64>> {
        self.epoch.subscribe()
    }

    /// Whether the bot is online on some live node of the cluster (as of the last pass).
    pub fn online_anywhere(&self, bot: &str) -> bool {
        self.online.read().is_ok_and(|o| o.contains(bot))
    }

    pub fn set_online(&self, bots: Vec<String>) {
        if let Ok(mut o) = self.online.write() {
            *o = bots.into_iter().collect();
        }
    }
}
