//! Stopping a long search from outside it: a check installed for the calling thread
//! ([`interruptible`]) that the search loops call between rounds (the exclusion and branch and
//! bound on either backend; the clustering and the Krawczyk steps of [`super::newton::isolate`]).
//! When the check answers true the search ends with [`SearchError::Interrupted`]; nothing it
//! found is returned. The Python package installs a check that runs Python's signal handlers,
//! so that Ctrl-C stops a search with `KeyboardInterrupt`.
//!
//! The rounds run on the thread that called the search (their batches are spread over rayon's
//! threads inside each round), so a check installed on that thread sees every round.
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
}
