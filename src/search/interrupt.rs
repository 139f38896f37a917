//! Stopping a long search from outside it: a check installed for the calling thread
//! ([`interruptible`]) that the search loops call between rounds (the exclusion and branch and
//! bound on either backend; the clustering and the Krawczyk steps of [`super::newton::isolate`]).
//! When the check answers true the search ends with [`SearchError::Interrupted`]; nothing it
//! found is returned. The Python package installs a check that runs Python's signal handlers,
//! so that Ctrl-C stops a search with `KeyboardInterrupt`.
//!
//! A CPU search runs its rounds on one of rayon's threads ([`on_pool`]) while the calling
//! thread asks its check every few milliseconds and tells the rounds to stop when it answers
//! true; the GPU's rounds and the Krawczyk steps run on the calling thread and ask it between
//! rounds. The check itself always runs on the thread it was installed on (Python's signal
//! handlers run only on the main thread).
//!
//! ```
//! use ivjit::search::{exclude::exclude, interruptible, SearchError};
//! use ivjit::{BackendChoice, Error, Evaluator, Expression, Precision};
//! let f = Expression::parse("x - x").unwrap();
//! let eval = Evaluator::new(&f, Precision::F64, BackendChoice::Cpu).unwrap();
//! let r = interruptible(|| true, || exclude(&eval, &[(-1.0, 1.0)], 0.0, 0.0, 1 << 40));
//! assert!(matches!(r, Err(Error::Search(SearchError::Interrupted))));
//! ```

use std::cell::RefCell;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use super::SearchError;
use crate::Error;

type Check = Box<dyn FnMut() -> bool>;

thread_local! {
    static CHECK: RefCell<Option<Check>> = const { RefCell::new(None) };
}

/// Runs `f` with `check` installed for this thread: every search `f` runs on this thread calls
/// it between rounds and stops with [`SearchError::Interrupted`] when it answers true. The
/// check installed before (if any) is restored when `f` returns or unwinds.
pub fn interruptible<R>(check: impl FnMut() -> bool + 'static, f: impl FnOnce() -> R) -> R {
    struct Restore(Option<Check>);
    impl Drop for Restore {
        fn drop(&mut self) {
            let previous = self.0.take();
            CHECK.with(|c| {
                if let Ok(mut c) = c.try_borrow_mut() {
                    *c = previous;
                }
            });
        }
    }
    let previous = CHECK.with(|c| c.borrow_mut().replace(Box::new(check)));
    let _restore = Restore(previous);
    f()
}

/// How often the calling thread asks its check while a search runs on the pool.
const POLL: std::time::Duration = std::time::Duration::from_millis(10);

/// Runs a CPU search on one of rayon's threads. A parallel loop started from a thread outside
/// the pool hands its work over and sleeps until it is done (a wake-up and a sleep per loop):
/// a small search's rounds were mostly that (the six-hump camel's branch and bound, 29 rounds
/// of at most 136 boxes: 7.7 ms on one thread, 0.7 ms from inside the pool with the
/// evaluator's plan kept); inside the pool a loop too small to split runs where it is. Where
/// this thread has a check, it asks it every [`POLL`] while the search runs, and the search's
/// rounds stop at the first answer true.
pub(crate) fn on_pool<R: Send>(search: impl FnOnce() -> R + Send) -> R {
    let has_check = CHECK.with(|c| c.try_borrow().is_ok_and(|c| c.is_some()));
    // On one of the pool's threads already (a search started by a search), the search runs
    // right here and asks the check itself.
    if !has_check || rayon::current_thread_index().is_some() {
        return rayon::scope(|_| search());
    }
    let stop = Arc::new(AtomicBool::new(false));
    let done = AtomicBool::new(false);
    let caller = std::thread::current();
    let mut result = None;
    /// Marks the search done and wakes the caller, also when the search unwinds.
    struct Done<'a>(&'a AtomicBool, &'a std::thread::Thread);
    impl Drop for Done<'_> {
        fn drop(&mut self) {
            self.0.store(true, Ordering::Release);
            self.1.unpark();
        }
    }
    rayon::in_place_scope(|s| {
        let (flag, done, caller, result) = (stop.clone(), &done, &caller, &mut result);
        s.spawn(move |_| {
            let _done = Done(done, caller);
            *result = Some(interruptible(move || flag.load(Ordering::Relaxed), search));
        });
        while !done.load(Ordering::Acquire) {
            std::thread::park_timeout(POLL);
            if !done.load(Ordering::Acquire) && check().is_err() {
                stop.store(true, Ordering::Relaxed);
            }
        }
    });
    result.expect("the search ran")
}

/// Asks the check installed for this thread (none: go on); `Err` when the search must stop.
pub(crate) fn check() -> Result<(), Error> {
    // A check that itself runs a search finds the cell borrowed: that inner search goes on.
    let stop = CHECK.with(|c| match c.try_borrow_mut() {
        Ok(mut c) => c.as_mut().is_some_and(|f| f()),
        Err(_) => false,
    });
    if stop {
        Err(SearchError::Interrupted.into())
    } else {
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_check_is_scoped_to_the_call_and_restored() {
        assert!(check().is_ok());
        let r = interruptible(
            || true,
            || {
                let inner = interruptible(|| false, check);
                (inner.is_ok(), check().is_err())
            },
        );
        assert_eq!(r, (true, true));
        assert!(check().is_ok());
        // Restored after an unwind too.
        let _ = std::panic::catch_unwind(|| interruptible(|| true, || panic!("inside")));
        assert!(check().is_ok());
    }

    #[test]
    fn a_search_on_the_pool_stops_when_the_callers_check_says() {
        let here = std::thread::current().id();
        let asked_here = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
        let seen = asked_here.clone();
        // The check answers true (and notes where it ran); the search on the pool sees the stop
        // at its next round.
        let stopped = interruptible(
            move || {
                seen.store(std::thread::current().id() == here, Ordering::Relaxed);
                true
            },
            || {
                on_pool(|| {
                    let started = std::time::Instant::now();
                    while check().is_ok() {
                        assert!(started.elapsed().as_secs() < 10, "never stopped");
                        std::thread::yield_now();
                    }
                    std::thread::current().id()
                })
            },
        );
        assert_ne!(stopped, here);
        assert!(asked_here.load(Ordering::Relaxed));
        // No check: none on the pool either; a panic on the pool reaches the caller.
        assert!(on_pool(|| check().is_ok()));
        let r = interruptible(
            || false,
            || std::panic::catch_unwind(|| on_pool(|| panic!("on the pool"))),
        );
        assert!(r.is_err());
    }
}
