//! Accepted connections under guard: at most so many at once per listener, at most a share of
//! them per client address (IPv6 by /64), and each must send the HTTP/2 preface within a
//! deadline (on the web listener, any first 24 bytes: an HTTP/1.1 request line is longer).
//! Without a cap, about 1,100 TCP connections that never said a word held every file descriptor
//! of a process limited to 1,024; without a share, 1,000 connections from one address that
//! answered PINGs kept out 99 % of everyone else's.

use std::collections::HashMap;
use std::io;
use std::net::{IpAddr, Ipv6Addr, SocketAddr};
use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};
use std::time::Duration;

use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::sync::{OwnedSemaphorePermit, Semaphore};
use tokio::time::Sleep;
use tonic::transport::server::Connected;

use bete_base::metrics::{ConnLabels, ListenerLabels, Metrics};

/// The client connection preface of HTTP/2 (RFC 9113 section 3.4), in bytes.
const PREFACE_LEN: usize = 24;

/// What one listener admits.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PlacesConfig {
    /// Open connections at most.
    pub max: usize,
    /// Open connections (TLS handshakes included) from one address (IPv6: one /64) at most;
    /// 0 is no share (only the cap).
    pub per_address: usize,
    /// The same for connections whose client certificate was verified (a bot farm the operator
    /// trusts): connections without one still hold at most `per_address` of them.
    pub per_verified_address: usize,
}

/// Hands out places to one listener's connections.
#[derive(Clone, Debug)]
pub struct Places(Arc<PlacesInner>);

#[derive(Debug)]
struct PlacesInner {
    listener: &'static str,
    config: PlacesConfig,
    free: Arc<Semaphore>,
    by_address: Mutex<HashMap<IpAddr, Share>>,
    metrics: Arc<Metrics>,
}

/// One address's open connections.
#[derive(Debug, Default)]
struct Share {
    open: usize,
    /// Of `open`, those with a verified client certificate.
    verified: usize,
}

/// Why a connection was refused.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Refused {
    /// The listener's cap.
    Cap,
    /// The address's share of it.
    Address,
}

/// The key of an address's share: IPv4 as is (an IPv4-mapped IPv6 address as its IPv4), IPv6
/// by its /64, the smallest block one subscriber is given, so one host cannot take a share per
/// address of its block.
pub fn share_key(ip: IpAddr) -> IpAddr {
    match ip {
        IpAddr::V4(v4) => IpAddr::V4(v4),
        IpAddr::V6(v6) => match v6.to_ipv4_mapped() {
            Some(v4) => IpAddr::V4(v4),
            None => IpAddr::V6(Ipv6Addr::from(
                u128::from(v6) & 0xffff_ffff_ffff_ffff_0000_0000_0000_0000,
            )),
        },
    }
}

impl Places {
    pub fn new(listener: &'static str, config: PlacesConfig, metrics: Arc<Metrics>) -> Places {
        Places(Arc::new(PlacesInner {
            listener,
            config,
            free: Arc::new(Semaphore::new(config.max.clamp(1, Semaphore::MAX_PERMITS))),
            by_address: Mutex::new(HashMap::new()),
            metrics,
        }))
    }

    /// A place for a connection from `peer`, or why not (counted in the metrics).
    pub fn take(&self, peer: Option<SocketAddr>) -> Result<Place, Refused> {
        let r = self.try_take(peer);
        if let Err(why) = r {
            let reason = match why {
                Refused::Cap => "cap",
                Refused::Address => "address",
            };
            self.0
                .metrics
                .connections_refused
                .get_or_create(&ConnLabels {
                    listener: self.0.listener,
                    reason,
                })
                .inc();
            tracing::debug!(
                listener = self.0.listener,
                reason,
                ?peer,
                "connection refused"
            );
        }
        r
    }

    fn try_take(&self, peer: Option<SocketAddr>) -> Result<Place, Refused> {
        let inner = &self.0;
        let key = peer.map(|p| share_key(p.ip()));
        // The share is checked and taken under the lock, so racing accepts cannot overshoot it.
        let mut by_address = lock(&inner.by_address);
        if let (Some(k), true) = (key, inner.config.per_address > 0) {
            let share = by_address.entry(k).or_default();
            let unverified = share.open - share.verified;
            let most = inner
                .config
                .per_address
                .max(inner.config.per_verified_address);
            if unverified >= inner.config.per_address || share.open >= most {
                if share.open == 0 {
                    by_address.remove(&k);
                }
                return Err(Refused::Address);
            }
        }
        let permit = match inner.free.clone().try_acquire_owned() {
            Ok(p) => p,
            Err(_) => {
                if let Some(k) = key
                    && by_address.get(&k).is_some_and(|s| s.open == 0)
                {
                    by_address.remove(&k);
                }
                return Err(Refused::Cap);
            }
        };
        let key = key.filter(|_| inner.config.per_address > 0);
        if let Some(k) = key {
            by_address.entry(k).or_default().open += 1;
        }
        drop(by_address);
        inner
            .metrics
            .connections_open
            .get_or_create(&ListenerLabels {
                listener: inner.listener,
            })
            .inc();
        Ok(Place {
            places: self.0.clone(),
            key,
            verified: false,
            _permit: permit,
        })
    }

    /// Connections open from the address of `ip` (0 without a share).
    pub fn open_from(&self, ip: IpAddr) -> usize {
        lock(&self.0.by_address)
            .get(&share_key(ip))
            .map_or(0, |s| s.open)
    }

    /// Which listener these places are for (`grpc`, `web`).
    pub fn listener(&self) -> &'static str {
        self.0.listener
    }

    pub fn metrics(&self) -> &Arc<Metrics> {
        &self.0.metrics
    }
}

/// A poisoned lock (a panic while it was held) still guards counts that are consistent: every
/// change is one statement.
fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// A connection's place under its listener's cap and its address's share; given back on drop.
#[derive(Debug)]
pub struct Place {
    places: Arc<PlacesInner>,
    key: Option<IpAddr>,
    verified: bool,
    _permit: OwnedSemaphorePermit,
}

impl Place {
    /// The connection presented a client certificate that was verified: it counts against the
    /// larger share of verified connections, and leaves room in the address's ordinary share.
    pub fn verified(&mut self) {
        if self.verified {
            return;
        }
        self.verified = true;
        if let Some(k) = self.key
            && let Some(s) = lock(&self.places.by_address).get_mut(&k)
        {
            s.verified += 1;
        }
    }
}

impl Drop for Place {
    fn drop(&mut self) {
        if let Some(k) = self.key {
            let mut by_address = lock(&self.places.by_address);
            if let Some(s) = by_address.get_mut(&k) {
                s.open = s.open.saturating_sub(1);
                if self.verified {
                    s.verified = s.verified.saturating_sub(1);
                }
                if s.open == 0 {
                    by_address.remove(&k);
                }
            }
        }
        self.places
            .metrics
            .connections_open
            .get_or_create(&ListenerLabels {
                listener: self.places.listener,
            })
            .dec();
    }
}

/// A connection that holds its place until it closes, and fails its reads once the preface
/// deadline passes before the preface has arrived.
#[derive(Debug)]
pub struct Guarded<IO> {
    io: IO,
    /// Running until the preface's bytes have all been read.
    preface: Option<Pin<Box<Sleep>>>,
    read: usize,
    _place: Place,
}

impl<IO> Guarded<IO> {
    pub fn new(io: IO, place: Place, preface_timeout: Duration) -> Self {
        Self::until(io, place, tokio::time::Instant::now() + preface_timeout)
    }

    /// With the preface due by `deadline` (over TLS, the handshake has used part of the time).
    pub fn until(io: IO, place: Place, deadline: tokio::time::Instant) -> Self {
        Guarded {
            io,
            preface: Some(Box::pin(tokio::time::sleep_until(deadline))),
            read: 0,
            _place: place,
        }
    }
}

impl<IO: AsyncRead + Unpin> AsyncRead for Guarded<IO> {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        let this = self.get_mut();
        let before = buf.filled().len();
        let res = Pin::new(&mut this.io).poll_read(cx, buf);
        if let Some(deadline) = &mut this.preface {
            if let Poll::Ready(Ok(())) = &res {
                this.read += buf.filled().len() - before;
                if this.read >= PREFACE_LEN {
                    this.preface = None;
                    return res;
                }
            }
            if res.is_pending() && deadline.as_mut().poll(cx).is_ready() {
                return Poll::Ready(Err(io::Error::new(
                    io::ErrorKind::TimedOut,
                    "no HTTP/2 preface before the deadline",
                )));
            }
        }
        res
    }
}

impl<IO: AsyncWrite + Unpin> AsyncWrite for Guarded<IO> {
    fn poll_write(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        Pin::new(&mut self.get_mut().io).poll_write(cx, buf)
    }

    fn poll_write_vectored(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        Pin::new(&mut self.get_mut().io).poll_write_vectored(cx, bufs)
    }

    fn is_write_vectored(&self) -> bool {
        self.io.is_write_vectored()
    }

    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.get_mut().io).poll_flush(cx)
    }

    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.get_mut().io).poll_shutdown(cx)
    }
}

impl<IO: Connected> Connected for Guarded<IO> {
    type ConnectInfo = IO::ConnectInfo;
    fn connect_info(&self) -> Self::ConnectInfo {
        self.io.connect_info()
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    fn places(max: usize, per_address: usize, per_verified_address: usize) -> Places {
        Places::new(
            "grpc",
            PlacesConfig {
                max,
                per_address,
                per_verified_address,
            },
            Arc::new(Metrics::new()),
        )
    }

    fn at(s: &str) -> Option<SocketAddr> {
        Some(s.parse().unwrap())
    }

    /// One address holds its share and no more; others still get places up to the cap; a
    /// place given back is free again, and an address without places leaves no entry.
    #[test]
    fn an_address_holds_its_share() {
        let p = places(5, 2, 0);
        let a1 = p.take(at("127.0.0.2:1")).unwrap();
        let _a2 = p.take(at("127.0.0.2:2")).unwrap();
        assert_eq!(p.take(at("127.0.0.2:3")).unwrap_err(), Refused::Address);
        let _b1 = p.take(at("127.0.0.1:1")).unwrap();
        let _b2 = p.take(at("127.0.0.1:2")).unwrap();
        let _c1 = p.take(at("127.0.0.3:1")).unwrap();
        assert_eq!(p.take(at("127.0.0.4:1")).unwrap_err(), Refused::Cap);
        drop(a1);
        assert_eq!(p.open_from("127.0.0.2".parse().unwrap()), 1);
        let _a3 = p.take(at("127.0.0.2:4")).unwrap();
        assert!(
            lock(&p.0.by_address)
                .get(&"127.0.0.4".parse().unwrap())
                .is_none()
        );
    }

    /// IPv6 addresses of one /64 share one share; an IPv4-mapped address is its IPv4.
    #[test]
    fn ipv6_is_grouped_by_64() {
        let p = places(10, 2, 0);
        let _x = p.take(at("[2001:db8:1:2::1]:1")).unwrap();
        let _y = p.take(at("[2001:db8:1:2:ffff::9]:1")).unwrap();
        assert_eq!(
            p.take(at("[2001:db8:1:2:abcd::1]:1")).unwrap_err(),
            Refused::Address
        );
        let _z = p.take(at("[2001:db8:1:3::1]:1")).unwrap();
        let _v4 = p.take(at("10.0.0.1:1")).unwrap();
        let _v4b = p.take(at("10.0.0.1:2")).unwrap();
        assert_eq!(
            p.take(at("[::ffff:10.0.0.1]:1")).unwrap_err(),
            Refused::Address
        );
    }

    /// Verified connections may fill the larger share; connections without a verified
    /// certificate (handshakes in progress among them) still hold at most the ordinary one.
    #[test]
    fn a_verified_certificate_gets_a_larger_share() {
        let p = places(100, 2, 5);
        let mut held = Vec::new();
        for i in 0..5 {
            let mut place = p.take(at(&format!("127.0.0.2:{i}"))).unwrap();
            place.verified();
            held.push(place);
        }
        assert_eq!(p.take(at("127.0.0.2:9")).unwrap_err(), Refused::Address);
        held.truncate(2);
        // Three free in the larger share, but only two without a certificate.
        let _u1 = p.take(at("127.0.0.2:10")).unwrap();
        let _u2 = p.take(at("127.0.0.2:11")).unwrap();
        assert_eq!(p.take(at("127.0.0.2:12")).unwrap_err(), Refused::Address);
    }

    /// A share of 0 is no share: only the cap holds.
    #[test]
    fn no_share_is_the_cap_alone() {
        let p = places(3, 0, 0);
        let held: Vec<_> = (0..3)
            .map(|i| p.take(at(&format!("127.0.0.2:{i}"))).unwrap())
            .collect();
        assert_eq!(p.take(at("127.0.0.1:1")).unwrap_err(), Refused::Cap);
        drop(held);
        assert!(p.take(at("127.0.0.1:1")).is_ok());
    }
}
