//! Progress bars on stderr for the library's [`Progress`] reports: one counting bar per stage,
//! made when the stage first reports, drawn only when stderr is a terminal and `--quiet` is not
//! given; warnings are printed above the bars.

use std::sync::OnceLock;
use std::time::Duration;

use indicatif::{MultiProgress, ProgressBar, ProgressDrawTarget, ProgressStyle};
use megashingle::{Progress, Stage};

/// Progress bars and warnings on stderr.
pub struct Bars {
    bars: MultiProgress,
    stages: [OnceLock<ProgressBar>; Stage::ALL.len()],
}

impl Bars {
    /// Bars drawn when `visible` (stderr is a terminal and not `--quiet`), hidden otherwise.
    pub fn new(visible: bool) -> Bars {
        let target = if visible {
            ProgressDrawTarget::stderr()
        } else {
            ProgressDrawTarget::hidden()
        };
        Bars {
            bars: MultiProgress::with_draw_target(target),
            stages: Default::default(),
        }
    }

    fn bar(&self, stage: Stage) -> &ProgressBar {
        let index = Stage::ALL
            .iter()
            .position(|&s| s == stage)
            .expect("a stage");
        self.stages[index].get_or_init(|| {
            let style = ProgressStyle::with_template(
                "{prefix:>10.bold} {spinner} {human_pos} docs {per_sec:>12} {elapsed:>4}",
            )
            .expect("a valid template");
            let bar = self.bars.add(ProgressBar::new_spinner().with_style(style));
            bar.set_prefix(stage.name());
            bar.enable_steady_tick(Duration::from_millis(200));
            bar
        })
    }
}

impl Progress for Bars {
    fn advance(&self, stage: Stage, documents: u64) {
        self.bar(stage).inc(documents);
    }

    fn finish(&self, stage: Stage) {
        self.bar(stage).finish();
    }

    fn warn(&self, message: &str) {
        let line = format!("warning: {message}");
        if self.bars.is_hidden() {
            eprintln!("{line}");
        } else {
            let _ = self.bars.println(line);
        }
    }
}
