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

use std::io::{self, IoSlice};
use std::pin::Pin;
use std::task::{Context, Poll};

use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tonic::transport::server::Connected;

/// A connection whose writes yield to the runnable tasks once before going to the socket.
#[derive(Debug)]
pub struct Coalesced<IO> {
    io: IO,
    /// This write already yielded once: do it now. Reset after each write, so the next one
    /// waits its turn again.
    yielded: bool,
}

impl<IO> Coalesced<IO> {
    pub fn new(io: IO) -> Self {
        Coalesced { io, yielded: false }
    }

    /// `Ready` when the write may go out now; else the task was woken to run again after the
    /// tasks queued ahead of it (a self-wake during a poll reschedules at the back of the run
    /// queue, not in the slot for the task woken last).
    fn take_turn(&mut self, cx: &mut Context<'_>) -> Poll<()> {
        if self.yielded {
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
    use super::*;
    use tokio::io::{AsyncReadExt, AsyncWriteExt};

    /// Every byte arrives, in order, whatever the mix of plain and vectored writes; the yield
    /// only delays them.
    #[tokio::test]
    async fn writes_arrive_whole_and_in_order() {
        let (a, mut b) = tokio::io::duplex(64);
        let mut w = Coalesced::new(a);
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
        b.read_to_end(&mut got).await.unwrap();
        writer.await.unwrap();
        let want: Vec<u8> = (0..200u32).flat_map(|i| i.to_be_bytes()).collect();
        assert_eq!(got, want);
    }

    /// The first attempt of each write yields (so queued tasks run first); the next goes out.
    #[test]
    fn each_write_yields_once_then_goes_out() {
        let (a, _b) = tokio::io::duplex(64);
        let mut w = Coalesced::new(a);
        let waker = std::task::Waker::noop();
        let mut cx = Context::from_waker(waker);
        for _ in 0..3 {
            assert!(Pin::new(&mut w).poll_write(&mut cx, b"x").is_pending());
            match Pin::new(&mut w).poll_write(&mut cx, b"x") {
                Poll::Ready(Ok(1)) => {}
                other => panic!("second attempt should write: {other:?}"),
            }
        }
    }
}
