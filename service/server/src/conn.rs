//! Accepted connections under guard: at most so many at once, and each must send the HTTP/2
//! preface within a deadline (on the web listener, any first 24 bytes: an HTTP/1.1 request line
//! is longer). Both listeners share one count of places. Without these, about 1,100 TCP connections that never said a word
//! held every file descriptor of a process limited to 1,024 and locked out every new client.

use std::io;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::Duration;

use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::sync::{OwnedSemaphorePermit, Semaphore};
use tokio::time::Sleep;
use tonic::transport::server::Connected;

/// The client connection preface of HTTP/2 (RFC 9113 section 3.4), in bytes.
const PREFACE_LEN: usize = 24;

/// Hands out a place per connection; `None` when all are taken.
#[derive(Clone, Debug)]
pub struct Places(Arc<Semaphore>);

impl Places {
    pub fn new(max: usize) -> Places {
        Places(Arc::new(Semaphore::new(
            max.clamp(1, Semaphore::MAX_PERMITS),
        )))
    }

    pub fn take(&self) -> Option<OwnedSemaphorePermit> {
        self.0.clone().try_acquire_owned().ok()
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
    _place: OwnedSemaphorePermit,
}

impl<IO> Guarded<IO> {
    pub fn new(io: IO, place: OwnedSemaphorePermit, preface_timeout: Duration) -> Self {
        Self::until(io, place, tokio::time::Instant::now() + preface_timeout)
    }

    /// With the preface due by `deadline` (over TLS, the handshake has used part of the time).
    pub fn until(io: IO, place: OwnedSemaphorePermit, deadline: tokio::time::Instant) -> Self {
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
