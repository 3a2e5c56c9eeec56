//! Progress and warnings of a run, as the library reports them: a [`Progress`] receives how
//! many documents each [`Stage`] has done and each warning about a skipped record. The library
//! draws nothing itself; the `megashingle` binary implements it with progress bars, and an
//! embedding program may log, count or ignore it ([`Quiet`]).

/// A stage of a run, in the order they start.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Stage {
    /// Documents taken in.
    Reading,
    /// Documents canonicalized and shingled.
    Shingling,
    /// Documents sketched (after corpus statistics).
    Sketching,
    /// Documents clustered.
    Clustering,
}

impl Stage {
    /// Every stage, in order.
    pub const ALL: [Stage; 4] = [
        Stage::Reading,
        Stage::Shingling,
        Stage::Sketching,
        Stage::Clustering,
    ];

    /// Its name, in lower case.
    pub fn name(self) -> &'static str {
        match self {
            Stage::Reading => "reading",
            Stage::Shingling => "shingling",
            Stage::Sketching => "sketching",
            Stage::Clustering => "clustering",
        }
    }
}

/// Receives the progress of a run. Called from worker threads, so it must be cheap and
/// thread-safe; every method does nothing by default.
pub trait Progress: Send + Sync {
    /// `documents` more documents went through `stage`.
    fn advance(&self, stage: Stage, documents: u64) {
        let _ = (stage, documents);
    }

    /// `stage` is over.
    fn finish(&self, stage: Stage) {
        let _ = stage;
    }

    /// A record was skipped or something else needs the user's attention; `message` is one
    /// line naming the file and record.
    fn warn(&self, message: &str) {
        let _ = message;
    }
}

/// Reports nothing.
#[derive(Debug, Clone, Copy, Default)]
pub struct Quiet;

impl Progress for Quiet {}
