//! Interrupts. SIGINT (Ctrl-C) and SIGTERM (a scheduler's stop) cancel the run's
//! [`megashingle::Cancel`] token: the run stops at its next check and unwinds as from any
//! error, each temporary file removed by its owner, no output put in place and no index change
//! committed, and the command ends with one line and exit code 130 or 143 (128 + the signal).
//! A signal that comes after the last check (while finished outputs are put in place, or once
//! an index add has passed the check before its commit) lets the run end complete, and the
//! line says so. A second signal ends the process at once. SIGXFSZ (a file size limit reached)
//! is caught and does nothing, so that the write past the limit fails with an error naming the
//! file instead of killing the run.

use std::sync::atomic::{AtomicBool, AtomicI32, Ordering};
use std::sync::{Arc, LazyLock};

use anyhow::{Context, Result};
use megashingle::Cancel;
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

/// The token every run of this process checks.
static TOKEN: LazyLock<Cancel> = LazyLock::new(Cancel::new);

/// The first signal received, 0 for none.
static RECEIVED: AtomicI32 = AtomicI32::new(0);

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
                received(signal);
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

/// The first signal cancels the run; a second ends the process at once, as a user pressing
/// Ctrl-C twice asks.
fn received(signal: i32) {
    match RECEIVED.compare_exchange(0, signal, Ordering::SeqCst, Ordering::SeqCst) {
        Ok(_) => TOKEN.cancel(),
        Err(_) => {
            crate::bars::clear();
            eprintln!(
                "megashingle: interrupted ({}) again; stopped at once",
                name(&signal)
            );
            std::process::exit(128 + signal);
        }
    }
}

/// The token the run's library calls check.
pub fn token() -> Cancel {
    TOKEN.clone()
}

/// The signal received so far, if any.
fn signal() -> Option<i32> {
    match RECEIVED.load(Ordering::SeqCst) {
        0 => None,
        signal => Some(signal),
    }
}

/// Fails with [`Interrupted::Early`] once a signal came: the caller gives up before it puts
/// anything in place or commits.
pub fn check() -> Result<(), Interrupted> {
    match signal() {
        Some(signal) => Err(Interrupted::Early(signal)),
        None => Ok(()),
    }
}

/// How a run ends once a signal came: a run that stopped for the cancelled token (or gave up
/// at a [`check`]) wrote nothing; one that finished anyway wrote everything; one that failed
/// otherwise keeps its own error.
pub fn outcome<T>(result: Result<T>) -> Result<T> {
    let Some(signal) = signal() else {
        return result;
    };
    match result {
        Ok(_) => Err(Interrupted::Late(signal).into()),
        Err(error) if was_cancelled(&error) => Err(Interrupted::Early(signal).into()),
        Err(error) => Err(error),
    }
}

/// Whether the run stopped for its token or a [`check`].
fn was_cancelled(error: &anyhow::Error) -> bool {
    error.chain().any(|cause| {
        matches!(
            cause.downcast_ref::<megashingle::Error>(),
            Some(megashingle::Error::Cancelled)
        ) || cause.is::<Interrupted>()
    })
}
