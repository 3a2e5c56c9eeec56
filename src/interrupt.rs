//! Interrupts. SIGINT (Ctrl-C) and SIGTERM (a scheduler's stop) end a run at once with one
//! line and exit code 130 or 143 (128 + the signal), after removing the temporary file of every
//! output being written: an output is put in place only when complete, so each old one stays.
//! While an index is being changed and while finished outputs are being put in place, a signal
//! waits: the run gives the change up at its next check (its transaction is never committed)
//! and ends the same way, or, when the signal came too late for that, ends once everything is
//! written and says so. SIGXFSZ (a file size limit reached) is caught and does nothing, so that
//! the write past the limit fails with an error naming the file instead of killing the run.

use std::path::PathBuf;
use std::sync::atomic::AtomicBool;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use anyhow::{Context, Result};
use signal_hook::consts::{SIGINT, SIGTERM, SIGXFSZ};
use signal_hook::iterator::Signals;

/// The run was interrupted by a signal.
#[derive(Debug, thiserror::Error)]
pub enum Interrupted {
    /// Before anything was written (or changed).
    #[error("interrupted ({}); nothing was written", name(.0))]
    Early(i32),
    /// When everything was written already.
    #[error("interrupted ({}) as the run ended; everything was written", name(.0))]
    Late(i32),
}

impl Interrupted {
    /// The exit code: 128 + the signal.
    pub fn code(&self) -> u8 {
        let (Interrupted::Early(signal) | Interrupted::Late(signal)) = self;
        u8::try_from(128 + signal).unwrap_or(u8::MAX)
    }
}

/// A signal's name.
fn name(signal: &i32) -> &'static str {
    match *signal {
        SIGINT => "SIGINT",
        SIGTERM => "SIGTERM",
        _ => "a signal",
    }
}

/// What the signal thread and the run share.
struct State {
    /// Sections in which a signal waits (nested).
    waiting: usize,
    /// The signal that came during such a section.
    pending: Option<i32>,
    /// Files to remove when a signal ends the run: those the run made that must not outlive
    /// it (the lock file of an index not made yet).
    remove: Vec<PathBuf>,
    /// Everything the run writes is written: a signal now ends it as [`Interrupted::Late`].
    written: bool,
}

static STATE: Mutex<State> = Mutex::new(State {
    waiting: 0,
    pending: None,
    remove: Vec::new(),
    written: false,
});

fn state() -> MutexGuard<'static, State> {
    STATE.lock().unwrap_or_else(PoisonError::into_inner)
}

/// Starts the thread that handles SIGINT and SIGTERM, and catches SIGXFSZ. Where no thread
/// can start, the signals keep their default action (the run is killed); the run fails soon
/// after anyway, when its worker threads cannot start.
pub fn install() -> Result<()> {
    // A caught SIGXFSZ sets a flag nobody reads: the write fails with EFBIG instead.
    signal_hook::flag::register(SIGXFSZ, Arc::new(AtomicBool::new(false)))
        .context("cannot catch SIGXFSZ")?;
    // The handlers are registered by the thread itself, so that none is left without a thread
    // to act on it.
    let (registered, wait) = std::sync::mpsc::channel();
    let started = std::thread::Builder::new()
        .name("signals".into())
        .spawn(move || {
            let mut signals = match Signals::new([SIGINT, SIGTERM]) {
                Ok(signals) => {
                    let _ = registered.send(Ok(()));
                    signals
                }
                Err(e) => {
                    let _ = registered.send(Err(e));
                    return;
                }
            };
            for signal in signals.forever() {
                let mut state = state();
                if state.waiting > 0 {
                    state.pending.get_or_insert(signal);
                    continue;
                }
                end(signal, state);
            }
        });
    if started.is_err() {
        return Ok(());
    }
    match wait.recv() {
        Ok(result) => result.context("cannot catch SIGINT and SIGTERM"),
        Err(_) => Ok(()),
    }
}

/// Ends the run on `signal`: removes the temporary files of the outputs being written and the
/// files listed to go, prints the line and exits, holding the state and the list of temporary
/// files so that nothing new is made or put in place meanwhile.
fn end(signal: i32, mut state: MutexGuard<'static, State>) -> ! {
    let _abandoned = megashingle::io::write::abandon_outputs();
    for path in state.remove.drain(..) {
        let _ = std::fs::remove_file(path);
    }
    crate::bars::clear();
    let interrupted = if state.written {
        Interrupted::Late(signal)
    } else {
        Interrupted::Early(signal)
    };
    eprintln!("megashingle: {interrupted}");
    std::process::exit(i32::from(interrupted.code()))
}

/// Runs `section` with signals waiting until it ends (see [`check`]). A signal that came
/// meanwhile ends the run after it: as [`Interrupted::Early`] when the section gave up for it,
/// as [`Interrupted::Late`] when the section finished, and with the section's own error when it
/// failed otherwise.
pub fn waiting<T>(section: impl FnOnce() -> Result<T>) -> Result<T> {
    state().waiting += 1;
    let result = section();
    let pending = {
        let mut state = state();
        state.waiting -= 1;
        if state.waiting > 0 {
            None
        } else {
            state.pending.take()
        }
    };
    match (pending, result) {
        (None, result) => result,
        (Some(signal), Ok(_)) => Err(Interrupted::Late(signal).into()),
        (Some(_), Err(error)) => Err(error),
    }
}

/// Fails with [`Interrupted::Early`] when a signal came during the section being run by
/// [`waiting`]: the section gives up and changes nothing.
pub fn check() -> Result<(), Interrupted> {
    match state().pending {
        Some(signal) => Err(Interrupted::Early(signal)),
        None => Ok(()),
    }
}

/// Marks everything the run writes as written: a signal from now on says so.
pub fn written() {
    state().written = true;
}

/// Removes `path` if a signal ends the run, until the returned guard is dropped.
pub fn remove_if_interrupted(path: PathBuf) -> RemoveIfInterrupted {
    state().remove.push(path.clone());
    RemoveIfInterrupted(path)
}

/// See [`remove_if_interrupted`].
pub struct RemoveIfInterrupted(PathBuf);

impl Drop for RemoveIfInterrupted {
    fn drop(&mut self) {
        let mut state = state();
        if let Some(at) = state.remove.iter().position(|p| *p == self.0) {
            state.remove.swap_remove(at);
        }
    }
}
