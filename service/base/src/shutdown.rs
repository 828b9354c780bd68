//! The server's drain signal, as the move path checks it: without a lock.
//!
//! Why not a `CancellationToken` alone: every poll of its `cancelled()` future takes the token's
//! mutex and then the mutex of its waiter list, and the move path polls one in each table actor,
//! each watch stream and each submit stream at every wake-up (≈ 5 % of the server's CPU per
//! move, the locks uncontended). Here a flag is read first, and the token's future is polled only
//! to register a task's waker (again only if the task's waker changes).

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::task::{Context, Poll, Waker};

use tokio_util::sync::{CancellationToken, WaitForCancellationFutureOwned};

/// Set once, when the server starts to drain; shared by everything that must stop then.
#[derive(Clone, Debug, Default)]
pub struct Shutdown {
    token: CancellationToken,
    /// Set before the token is cancelled, so whoever the token wakes sees it set.
    stopping: Arc<AtomicBool>,
}

impl Shutdown {
    pub fn new() -> Shutdown {
        Shutdown::default()
    }

    /// Starts the drain: every [`Stopped`] resolves.
    pub fn cancel(&self) {
        self.stopping.store(true, Ordering::Release);
        self.token.cancel();
    }

    pub fn is_cancelled(&self) -> bool {
        self.stopping.load(Ordering::Acquire)
    }

    /// Whether any [`Stopped`] of this signal is still held (each holds the flag).
    pub fn is_awaited(&self) -> bool {
        Arc::strong_count(&self.stopping) > 1
    }

    /// A future that resolves once the drain has started. Cheap to poll again and again (as in
    /// a `select!` loop): after the first poll it reads one flag, unless the waker changed.
    pub fn stopped(&self) -> Stopped {
        Stopped {
            stopping: self.stopping.clone(),
            wait: Box::pin(self.token.clone().cancelled_owned()),
            registered: None,
        }
    }
}

/// See [`Shutdown::stopped`].
#[derive(Debug)]
pub struct Stopped {
    stopping: Arc<AtomicBool>,
    wait: Pin<Box<WaitForCancellationFutureOwned>>,
    /// The waker the token's future holds; polling it again with one that wakes the same task
    /// would only take its locks to find nothing changed.
    registered: Option<Waker>,
}

impl Future for Stopped {
    type Output = ();

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        let this = self.get_mut();
        if this.stopping.load(Ordering::Acquire) {
            return Poll::Ready(());
        }
        if this
            .registered
            .as_ref()
            .is_some_and(|w| w.will_wake(cx.waker()))
        {
            return Poll::Pending;
        }
        // First poll, or another task's waker: (re-)register it. The token's future checks
        // the token itself first, so a drain begun since the flag was read is not missed.
        if this.wait.as_mut().poll(cx).is_ready() {
            return Poll::Ready(());
        }
        this.registered = Some(cx.waker().clone());
        Poll::Pending
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    /// A task waiting on `stopped()` in a loop (polled many times while pending) wakes and ends
    /// when the drain starts; a future made after the start is ready at once.
    #[tokio::test]
    async fn a_waiting_task_ends_when_the_drain_starts() {
        let shutdown = Shutdown::new();
        let (tick_tx, mut tick_rx) = tokio::sync::mpsc::channel::<()>(1);
        let s = shutdown.clone();
        let task = tokio::spawn(async move {
            let mut stopped = std::pin::pin!(s.stopped());
            let mut ticks = 0;
            loop {
                tokio::select! {
                    biased;
                    () = &mut stopped => return ticks,
                    Some(()) = tick_rx.recv() => ticks += 1,
                }
            }
        });
        for _ in 0..5 {
            tick_tx.send(()).await.unwrap();
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
        assert!(!task.is_finished());
        assert!(!shutdown.is_cancelled());
        shutdown.cancel();
        let ticks = tokio::time::timeout(Duration::from_secs(5), task)
            .await
            .expect("the task saw the drain")
            .unwrap();
        assert_eq!(ticks, 5);
        assert!(shutdown.is_cancelled());
        tokio::time::timeout(Duration::from_secs(1), shutdown.stopped())
            .await
            .expect("ready at once after the start");
    }

    /// Polled by one task, then by another: the second is the one woken.
    #[tokio::test]
    async fn a_future_moved_to_another_task_wakes_that_task() {
        let shutdown = Shutdown::new();
        let mut stopped = shutdown.stopped();
        let waker = Waker::noop();
        assert!(
            Pin::new(&mut stopped)
                .poll(&mut Context::from_waker(waker))
                .is_pending()
        );
        let task = tokio::spawn(stopped);
        tokio::time::sleep(Duration::from_millis(20)).await;
        shutdown.cancel();
        tokio::time::timeout(Duration::from_secs(5), task)
            .await
            .expect("the second task was woken")
            .unwrap();
    }
}
