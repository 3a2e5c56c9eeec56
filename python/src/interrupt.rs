//! Ctrl-C during a long call. The library's work runs without the GIL on a thread of its own
//! while the calling thread waits for it and lets Python's signal handlers run every 50 ms; an
//! exception from them (KeyboardInterrupt on Ctrl-C) cancels the run's [`Cancel`] token, waits
//! for the work to stop at its next check, and is raised in place of the result.

use std::time::Duration;

use megashingle::Cancel;
use pyo3::exceptions::PyOSError;
use pyo3::prelude::*;

/// How often the waiting thread lets signal handlers run.
const SIGNAL_CHECK: Duration = Duration::from_millis(50);

/// Runs `work` without the GIL, stopping it through `cancel` when a signal handler raises.
pub fn interruptible<T: Send>(
    py: Python<'_>,
    cancel: &Cancel,
    work: impl FnOnce() -> T + Send,
) -> PyResult<T> {
    std::thread::scope(|scope| {
        let waiter = std::thread::current();
        let worker = std::thread::Builder::new()
            .name("megashingle".into())
            .spawn_scoped(scope, move || {
                let result = work();
                waiter.unpark();
                result
            })
            .map_err(|e| PyOSError::new_err(format!("cannot start a thread: {e}")))?;
        while !worker.is_finished() {
            py.allow_threads(|| std::thread::park_timeout(SIGNAL_CHECK));
            if worker.is_finished() {
                break;
            }
            if let Err(raised) = py.check_signals() {
                cancel.cancel();
                let _ = py.allow_threads(|| worker.join());
                return Err(raised);
            }
        }
        match worker.join() {
            Ok(result) => Ok(result),
            Err(panic) => std::panic::resume_unwind(panic),
        }
    })
}

/// Documents taken between two checks for Ctrl-C while a column is read with the GIL held.
const DOCUMENTS_PER_CHECK: u32 = 256;

/// Checks for Ctrl-C while a loop holds the GIL, every [`DOCUMENTS_PER_CHECK`] calls; an
/// exception from a signal handler cancels the token and is returned.
pub struct CheckSignals<'a, 'py> {
    py: Python<'py>,
    cancel: &'a Cancel,
    calls: u32,
}

impl<'a, 'py> CheckSignals<'a, 'py> {
    /// Checks for `py`, cancelling `cancel`.
    pub fn new(py: Python<'py>, cancel: &'a Cancel) -> CheckSignals<'a, 'py> {
        CheckSignals {
            py,
            cancel,
            calls: 0,
        }
    }

    /// Lets signal handlers run on every [`DOCUMENTS_PER_CHECK`]th call.
    pub fn every_few(&mut self) -> PyResult<()> {
        self.calls += 1;
        if self.calls < DOCUMENTS_PER_CHECK {
            return Ok(());
        }
        self.calls = 0;
        self.py
            .check_signals()
            .inspect_err(|_| self.cancel.cancel())
    }
}
