//! Careless and hostile inputs against the `megashingle` binary: every case gets a clear answer
//! (exit 0, 1 or 2 with a message that names the file and the record) and no data is lost. One
//! module per kind of input; `PROPTEST_CASES=N cargo test --test hostile` runs a longer soak of
//! the random-bytes tests.

#[path = "../common/mod.rs"]
#[allow(dead_code)]
mod common;

mod copies;
mod interrupts;
mod outputs;
mod readers;
