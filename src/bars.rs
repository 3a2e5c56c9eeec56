//! Progress bars on stderr for the library's [`Progress`] reports: one counting bar per stage,
//! made when the stage first reports, with its count and its rate in whole documents per
//! second, drawn only when stderr is a terminal and `--quiet` is not given; warnings are
//! printed above the bars. [`clear`] takes every bar off the screen before a line that must
//! start a line of its own (a summary, an error).

use std::sync::{Mutex, OnceLock};
use std::time::Duration;

use indicatif::{MultiProgress, ProgressBar, ProgressDrawTarget, ProgressState, ProgressStyle};
use megashingle::{Progress, Stage};

/// The bars drawn on the terminal, for [`clear`].
static SHOWN: Mutex<Vec<MultiProgress>> = Mutex::new(Vec::new());

/// Takes every bar drawn off the screen and draws no more, so that the next line printed on
/// stderr starts a line of its own.
pub fn clear() {
    let shown = std::mem::take(&mut *SHOWN.lock().unwrap_or_else(|e| e.into_inner()));
    for bars in shown {
        let _ = bars.clear();
        bars.set_draw_target(ProgressDrawTarget::hidden());
    }
}

/// A rate as shown on a bar: whole units per second with thousands separators (`12,345/s`).
pub fn whole_rate(per_second: f64) -> String {
    let whole = if per_second.is_finite() && per_second > 0.0 {
        per_second.round() as u64
    } else {
        0
    };
    let digits = whole.to_string();
    let mut out = String::with_capacity(digits.len() + digits.len() / 3 + 2);
    for (i, digit) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i) % 3 == 0 {
            out.push(',');
        }
        out.push(digit);
    }
    out.push_str("/s");
    out
}

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
        let bars = MultiProgress::with_draw_target(target);
        if visible {
            SHOWN
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .push(bars.clone());
        }
        Bars {
            bars,
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
                "{prefix:>10.bold} {spinner} {human_pos} docs {rate} {elapsed:>4}",
            )
            .unwrap_or_else(|_| ProgressStyle::default_spinner())
            .with_key(
                "rate",
                |state: &ProgressState, out: &mut dyn std::fmt::Write| {
                    let _ = write!(out, "{:>12}", whole_rate(state.per_sec()));
                },
            );
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rates_are_whole_numbers() {
        assert_eq!(whole_rate(96_234.810_628), "96,235/s");
        assert_eq!(whole_rate(999.4), "999/s");
        assert_eq!(whole_rate(1_234_567.0), "1,234,567/s");
        assert_eq!(whole_rate(f64::NAN), "0/s");
        assert_eq!(whole_rate(0.0), "0/s");
    }
}
