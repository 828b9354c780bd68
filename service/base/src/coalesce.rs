//! Fewer, larger socket writes under load: each accepted connection's writes wait for the tasks
//! already queued on the worker to run first.
//!
//! Why: one move wakes about six response streams (the submitter's answer, a decision, events to
//! the other seats) that share a handful of HTTP/2 connections. Each of them hands its frame to
//! the connection's task, and tokio runs a task just woken before the rest of its queue, so the
//! connection task wrote one small frame per `writev`: ≈ one syscall and one pass through the
//! loopback TCP stack per move, both here and in the reader. Yielding once before a write lets
//! the other woken streams queue their frames first; the one `writev` then carries them all.
//!
//! The cost is one extra poll of the connection task per write. The delay is bounded by the
//! tasks already runnable on this worker when the write was due: none when the server is idle
//! (the yield comes straight back), a share of a busy run queue under load. Reads are untouched.
//!
//! Only on a runtime of one worker (the default on 2 cores), where it was measured: at
//! saturation 0.9 → 0.3 `writev` per move and, with one worker, 10–25 % less CPU per move. With
//! several workers tokio answers a task's yield by waking an idle worker, which may steal the
//! connection task before the other streams have queued anything: no gain showed on 2 workers,
//! so there the wrapper passes writes straight through. (h2 copies only small DATA frames into
//! its write buffer; a large one still goes out in a `writev` of its own.)

use std::io::{self, IoSlice};
use std::pin::Pin;
use std::task::{Context, Poll};

use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tonic::transport::server::Connected;

/// A connection whose writes yield to the runnable tasks once before going to the socket.
#[derive(Debug)]
pub struct Coalesced<IO> {
    io: IO,
    /// Yield before writes at all (see the module's notes); false passes writes through.
    enabled: bool,
    /// This write already yielded once: do it now. Reset after each write, so the next one
    /// waits its turn again.
    yielded: bool,
}

impl<IO> Coalesced<IO> {
    pub fn new(io: IO, enabled: bool) -> Self {
        Coalesced {
            io,
            enabled,
            yielded: false,
        }
    }

    /// `Ready` when the write may go out now; else the task was woken to run again after the
    /// tasks queued ahead of it (a self-wake during a poll reschedules at the back of the run
    /// queue, not in the slot for the task woken last).
    fn take_turn(&mut self, cx: &mut Context<'_>) -> Poll<()> {
        if self.yielded || !self.enabled {
            self.yielded = false;
            Poll::Ready(())
        } else {
            self.yielded = true;
            cx.waker().wake_by_ref();
            Poll::Pending
        }
    }
}

impl<IO: AsyncRead + Unpin> AsyncRead for Coalesced<IO> {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        Pin::new(&mut self.get_mut().io).poll_read(cx, buf)
    }
}

impl<IO: AsyncWrite + Unpin> AsyncWrite for Coalesced<IO> {
    fn poll_write(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        let this = self.get_mut();
        std::task::ready!(this.take_turn(cx));
        let res = Pin::new(&mut this.io).poll_write(cx, buf);
        if res.is_pending() {
            // The socket is full: the next attempt (on its readiness) need not yield again.
            this.yielded = true;
        }
        res
    }

    fn poll_write_vectored(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        let this = self.get_mut();
        std::task::ready!(this.take_turn(cx));
        let res = Pin::new(&mut this.io).poll_write_vectored(cx, bufs);
        if res.is_pending() {
            this.yielded = true;
        }
        res
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

impl<IO: Connected> Connected for Coalesced<IO> {
    type ConnectInfo = IO::ConnectInfo;
    fn connect_info(&self) -> Self::ConnectInfo {
        self.io.connect_info()
    }
}

#[cfg(test)]
mod tests {
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::sync::{Arc, Mutex};
    use std::task::{Wake, Waker};
    use std::time::Duration;

    use super::*;
    use tokio::io::{AsyncReadExt, AsyncWriteExt};

    /// Every byte arrives, in order, whatever the mix of plain and vectored writes; the yield
    /// only delays them.
    #[tokio::test]
    async fn writes_arrive_whole_and_in_order() {
        let (a, mut b) = tokio::io::duplex(64);
        let mut w = Coalesced::new(a, true);
        let (plain, _) = tokio::io::duplex(1);
        assert_eq!(w.is_write_vectored(), plain.is_write_vectored());
        let writer = tokio::spawn(async move {
            for i in 0..200u32 {
                let chunk = i.to_be_bytes();
                if i % 2 == 0 {
                    w.write_all(&chunk).await.unwrap();
                } else {
                    let n = w.write_vectored(&[IoSlice::new(&chunk)]).await.unwrap();
                    w.write_all(&chunk[n..]).await.unwrap();
                }
            }
            w.shutdown().await.unwrap();
        });
        let mut got = Vec::new();
        tokio::time::timeout(Duration::from_secs(10), b.read_to_end(&mut got))
            .await
            .expect("every write went out")
            .unwrap();
        writer.await.unwrap();
        let want: Vec<u8> = (0..200u32).flat_map(|i| i.to_be_bytes()).collect();
        assert_eq!(got, want);
    }

    struct Count(AtomicUsize);
    impl Wake for Count {
        fn wake(self: Arc<Self>) {
            self.0.fetch_add(1, Ordering::SeqCst);
        }
    }

    /// The first attempt of each write (plain or vectored) yields and wakes its task, so it is
    /// polled again; the second goes out. Disabled, every attempt goes out at once.
    #[test]
    fn each_write_yields_once_then_goes_out() {
        let wakes = Arc::new(Count(AtomicUsize::new(0)));
        let waker = Waker::from(wakes.clone());
        let mut cx = Context::from_waker(&waker);
        let (a, _b) = tokio::io::duplex(64);
        let mut w = Coalesced::new(a, true);
        for round in 1..=3 {
            assert!(Pin::new(&mut w).poll_write(&mut cx, b"x").is_pending());
            assert_eq!(wakes.0.load(Ordering::SeqCst), 2 * round - 1, "woke itself");
            assert!(matches!(
                Pin::new(&mut w).poll_write(&mut cx, b"x"),
                Poll::Ready(Ok(1))
            ));
            let bufs = [IoSlice::new(b"y")];
            assert!(
                Pin::new(&mut w)
                    .poll_write_vectored(&mut cx, &bufs)
                    .is_pending()
            );
            assert!(matches!(
                Pin::new(&mut w).poll_write_vectored(&mut cx, &bufs),
                Poll::Ready(Ok(1))
            ));
        }
        let (a, _b) = tokio::io::duplex(64);
        let mut plain = Coalesced::new(a, false);
        assert!(matches!(
            Pin::new(&mut plain).poll_write(&mut cx, b"x"),
            Poll::Ready(Ok(1))
        ));
        assert_eq!(wakes.0.load(Ordering::SeqCst), 6);
    }

    /// What it is for: a task already runnable when a write is due runs before the write goes
    /// out (one worker, tasks run in the order they were queued).
    #[tokio::test]
    async fn a_write_lets_the_tasks_already_queued_run_first() {
        for enabled in [true, false] {
            let log = Arc::new(Mutex::new(Vec::new()));
            let (a, _b) = tokio::io::duplex(64);
            let mut w = Coalesced::new(a, enabled);
            let l = log.clone();
            let writer = tokio::spawn(async move {
                w.write_all(b"x").await.unwrap();
                l.lock().unwrap().push("write");
            });
            let l = log.clone();
            let other = tokio::spawn(async move { l.lock().unwrap().push("other") });
            writer.await.unwrap();
            other.await.unwrap();
            let want = if enabled {
                ["other", "write"]
            } else {
                ["write", "other"]
            };
            assert_eq!(*log.lock().unwrap(), want, "enabled: {enabled}");
        }
    }
}
