//! Panics in the binary: a panic on any thread is a bug, and the user gets one error line
//! that names what was being processed, never a Rust backtrace. The hook installed here only
//! records the first panic's message and place (and, with `RUST_BACKTRACE` set, also prints
//! Rust's full report for a bug report); `main` catches the unwinding panic and prints the line.
//! A panic caught and handled further down (the index's opening catches redb's) prints nothing.

use std::any::Any;
use std::panic::PanicHookInfo;
use std::sync::Mutex;

/// The first panic of the process: its message and where it happened.
static FIRST: Mutex<Option<String>> = Mutex::new(None);

/// Installs the hook. With `RUST_BACKTRACE` set (and not `0`), Rust's own report is printed too.
pub fn install() {
    let report = std::env::var_os("RUST_BACKTRACE").is_some_and(|v| v != "0");
    let default = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info: &PanicHookInfo<'_>| {
        let mut message = message_of(info.payload());
        if let Some(place) = info.location() {
            message.push_str(&format!(" (at {}:{})", place.file(), place.line()));
        }
        {
            let mut first = FIRST.lock().unwrap_or_else(|e| e.into_inner());
            if first.is_none() {
                *first = Some(message);
            }
        }
        if report {
            default(info);
        }
    }));
}

/// What to tell the user about a panic that reached `main` with `payload`: the first panic's
/// message (a panic on a worker thread reaches `main` as a second panic, or as the first one's
/// payload), else the payload's. A panic caught and handled earlier would be taken for the
/// first; the only such catch (opening a damaged index) ends the command with an error.
pub fn message(payload: &(dyn Any + Send)) -> String {
    let first = FIRST.lock().unwrap_or_else(|e| e.into_inner()).take();
    first.unwrap_or_else(|| message_of(payload))
}

/// The text of a panic's payload, without the wording of `unwrap` that means nothing to a user.
fn message_of(payload: &(dyn Any + Send)) -> String {
    let text = payload
        .downcast_ref::<String>()
        .map(String::as_str)
        .or_else(|| payload.downcast_ref::<&str>().copied())
        .unwrap_or("no message");
    readable(text)
}

/// `text` with the standard library's `unwrap` wording taken out.
fn readable(text: &str) -> String {
    text.replace("called `Result::unwrap()` on an `Err` value: ", "")
        .replace(
            "called `Option::unwrap()` on a `None` value",
            "a value was missing",
        )
        .replace("unwrap()", "")
        .replace("Result::", "")
}

/// Panics when the `MEGASHINGLE_TEST_PANIC` variable names `at` (`main:AT`, `worker:AT` or
/// `unwrap:AT`): on this thread, on a worker thread, or by unwrapping an error, so that tests
/// can check how a panic ends. Only in builds with
/// debug assertions (those of `cargo test`); a release build has no such trigger.
#[cfg(debug_assertions)]
pub fn panic_for_tests(at: &str) {
    use rayon::prelude::*;
    let Ok(asked) = std::env::var("MEGASHINGLE_TEST_PANIC") else {
        return;
    };
    match asked.split_once(':') {
        Some(("main", place)) if place == at => panic!("test panic on the main thread at {at}"),
        Some(("unwrap", place)) if place == at => {
            let number: Result<u32, _> = "not a number".parse();
            let _ = number.unwrap();
        }
        Some(("worker", place)) if place == at => {
            let pool = rayon::ThreadPoolBuilder::new()
                .num_threads(2)
                .build()
                .unwrap_or_else(|e| panic!("test pool: {e}"));
            pool.install(|| {
                (0..64).into_par_iter().for_each(|i| {
                    if i == 63 {
                        panic!("test panic on a worker thread at {at}");
                    }
                })
            });
        }
        _ => {}
    }
}

/// Release builds have no panic trigger.
#[cfg(not(debug_assertions))]
pub fn panic_for_tests(_at: &str) {}
