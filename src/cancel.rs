//! Cancellation as a value: a [`Cancel`] token that a caller keeps a clone of and a run checks
//! between batches and stages. Cancelling makes the run end at its next check with
//! [`Error::Cancelled`], unwinding as any error does, so every temporary file it made is
//! removed by its owner and nothing is put in place or committed. The token is all a caller
//! needs: the command sets it from its signal thread, the Python package when Ctrl-C reaches the
//! interpreter, an embedding program from wherever it decides to stop.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use crate::error::Error;

/// A token that stops a run. Clones share one flag; [`Cancel::default`] is a fresh token
/// that nothing has cancelled.
#[derive(Clone, Debug, Default)]
pub struct Cancel(Arc<AtomicBool>);

impl Cancel {
    /// A fresh token.
    pub fn new() -> Cancel {
        Cancel::default()
    }

    /// Asks every run holding a clone of this token to stop at its next check.
    pub fn cancel(&self) {
        self.0.store(true, Ordering::Relaxed);
    }

    /// Whether [`Cancel::cancel`] was called on this token or a clone of it.
    pub fn is_cancelled(&self) -> bool {
        self.0.load(Ordering::Relaxed)
    }

    /// [`Error::Cancelled`] once the token is cancelled.
    pub fn check(&self) -> Result<(), Error> {
        if self.is_cancelled() {
            Err(Error::Cancelled)
        } else {
            Ok(())
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn clones_share_the_flag() {
        let token = Cancel::new();
        let held = token.clone();
        assert!(held.check().is_ok());
        token.cancel();
        assert!(held.is_cancelled());
        assert!(matches!(held.check(), Err(Error::Cancelled)));
        assert!(!Cancel::new().is_cancelled());
    }
}
