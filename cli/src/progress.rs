//! Progress on stderr for long work, the way command-line tools in this ecosystem show it
//! (`indicatif`): a bar when the amount of work is known, a spinner when it is not, a countdown
//! for work bounded by time. Nothing is drawn when stderr is not a terminal (pipes, CI logs,
//! tests), so output that is read by programs never holds progress frames; [`draw_target`] is
//! the one place that decides.
//!
//! A [`Progress`] clears its line when finished or dropped, so results printed afterwards
//! start on a clean line.

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressState, ProgressStyle};
use shepherd_analysis::pipeline::{Observer, Step};
use std::borrow::Cow;
use std::io::IsTerminal;
use std::time::Duration;

/// How often spinners and countdowns redraw while nothing else changes.
const TICK: Duration = Duration::from_millis(120);

/// Where progress is drawn: stderr when it is a terminal, nowhere otherwise.
fn draw_target() -> ProgressDrawTarget {
    target_for(std::io::stderr().is_terminal())
}

fn target_for(terminal: bool) -> ProgressDrawTarget {
    if terminal {
        ProgressDrawTarget::stderr()
    } else {
        ProgressDrawTarget::hidden()
    }
}

fn style(template: &str) -> ProgressStyle {
    ProgressStyle::with_template(template)
        // The templates are constants of this module; a typo is caught by the tests.
        .unwrap_or_else(|_| ProgressStyle::default_bar())
        .progress_chars("=> ")
}

const ITEMS: &str = "{msg} [{wide_bar}] {human_pos}/{human_len} ({per_sec}, {eta} left)";
const BYTES: &str = "{msg} [{wide_bar}] {bytes}/{total_bytes} ({bytes_per_sec}, {eta} left)";
const SPINNER: &str = "{spinner} {msg} ({elapsed})";
const COUNTDOWN: &str = "{spinner} {msg}: {human_pos} {unit}, {left} left";

/// Whole seconds left of `limit` after `elapsed`, rounded up (`0s` once it has passed).
fn time_left(limit: Duration, elapsed: Duration) -> String {
    format!("{}s", limit.saturating_sub(elapsed).as_secs_f64().ceil())
}

/// One progress display on stderr (hidden when stderr is not a terminal).
pub struct Progress {
    bar: ProgressBar,
}

impl Progress {
    fn new(bar: ProgressBar, template: &str, what: &str) -> Progress {
        bar.set_style(style(template));
        bar.set_message(what.to_string());
        Progress { bar }
    }

    /// A bar counting `total` items (exchanges, entries): `what [====>  ] 1,204/5,000`.
    pub fn items(total: u64, what: &str) -> Progress {
        Progress::new(
            ProgressBar::with_draw_target(Some(total), draw_target()),
            ITEMS,
            what,
        )
    }

    /// A bar counting `total` bytes, for reading or writing a file.
    pub fn bytes(total: u64, what: &str) -> Progress {
        Progress::new(
            ProgressBar::with_draw_target(Some(total), draw_target()),
            BYTES,
            what,
        )
    }

    /// A spinner for work of unknown size, with the time spent so far; change what it says
    /// with [`Progress::message`] as the work moves through phases.
    pub fn spinner(what: &str) -> Progress {
        let p = Progress::new(
            ProgressBar::with_draw_target(None, draw_target()),
            SPINNER,
            what,
        );
        p.bar.enable_steady_tick(TICK);
        p
    }

    /// Sets the total (when it becomes known or grows).
    pub fn set_total(&self, total: u64) {
        self.bar.set_length(total);
    }

    /// Replaces the text in front of the bar or spinner.
    pub fn message(&self, what: impl Into<Cow<'static, str>>) {
        self.bar.set_message(what);
    }

    /// `(done, total)` updates from a library's progress callback (`shepherd_recording::Progress`).
    pub fn update(&self, done: u64, total: u64) {
        if self.bar.length() != Some(total) {
            self.bar.set_length(total);
        }
        self.bar.set_position(done);
    }

    /// Reads through `r`, counting the bytes read.
    pub fn reader<R: std::io::Read>(&self, r: R) -> impl std::io::Read + use<R> {
        self.bar.wrap_read(r)
    }

    /// Ends the display and clears its line.
    pub fn finish(self) {
        // Drop clears.
    }
}

/// Exploration (`record --explore`): events fired against the time left.
impl Progress {
    /// A countdown for work bounded by `limit` (exploration): `what: 37 events, 12s left`.
    /// [`Progress::inc`] counts the `unit`s done; the time left comes from the clock.
    pub fn countdown(limit: Duration, what: &str, unit: &'static str) -> Progress {
        let style = style(COUNTDOWN)
            .with_key(
                "unit",
                move |_: &ProgressState, w: &mut dyn std::fmt::Write| {
                    let _ = w.write_str(unit);
                },
            )
            .with_key(
                "left",
                move |s: &ProgressState, w: &mut dyn std::fmt::Write| {
                    let _ = w.write_str(&time_left(limit, s.elapsed()));
                },
            );
        let bar = ProgressBar::with_draw_target(None, draw_target());
        bar.set_style(style);
        bar.set_message(what.to_string());
        bar.enable_steady_tick(TICK);
        Progress { bar }
    }

    /// A setter of what is done, for callbacks that run elsewhere (the explorer's).
    pub fn position_setter(&self) -> impl Fn(u64) + Send + Sync + 'static {
        let bar = self.bar.clone();
        move |n| bar.set_position(n)
    }
}

/// The analysis pipeline's progress (`shepherd races`, `policy covers`): a bar while the
/// trace is read, a spinner naming the analysis' phase, another while the HTML page is
/// written.
#[derive(Default)]
pub struct PipelineProgress {
    shown: Option<Progress>,
}

impl Observer for PipelineProgress {
    fn read(&mut self, done: u64, total: u64) {
        if let Some(p) = &self.shown {
            p.update(done, total);
        }
    }

    fn step(&mut self, step: Step<'_>) {
        match step {
            Step::Reading => self.shown = Some(Progress::bytes(0, "reading the trace")),
            Step::Analysing { .. } => self.shown = Some(Progress::spinner("analysing")),
            Step::Phase { actions, name } => {
                if let Some(p) = &self.shown {
                    p.message(format!("analysing {actions} actions: {name}"));
                }
            }
            Step::LoadingSources => {
                if let Some(p) = &self.shown {
                    p.message("loading page sources for the report");
                }
            }
            Step::WritingHtml => self.shown = Some(Progress::spinner("writing the HTML report")),
            Step::Read | Step::Reporting | Step::Done => self.shown = None,
            Step::Analysed(_) => {}
        }
    }
}

impl Drop for Progress {
    fn drop(&mut self) {
        self.bar.finish_and_clear();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Read;

    #[test]
    fn drawn_only_on_a_terminal() {
        assert!(target_for(false).is_hidden());
        // Tests run with stderr captured or piped: nothing may be drawn.
        if !std::io::stderr().is_terminal() {
            assert!(Progress::items(10, "x").bar.is_hidden());
            assert!(Progress::spinner("x").bar.is_hidden());
            assert!(
                Progress::countdown(Duration::from_secs(1), "x", "events")
                    .bar
                    .is_hidden()
            );
        }
    }

    #[test]
    fn templates_parse() {
        for t in [ITEMS, BYTES, SPINNER, COUNTDOWN] {
            assert!(ProgressStyle::with_template(t).is_ok(), "{t}");
        }
    }

    #[test]
    fn readers_pass_bytes_through_and_count_them() {
        let p = Progress::bytes(11, "copy");
        let mut got = String::new();
        p.reader(&b"hello world"[..])
            .read_to_string(&mut got)
            .unwrap();
        assert_eq!(got, "hello world");
        assert_eq!(p.bar.position(), 11);
    }

    #[test]
    fn countdown_counts_units_and_time_left() {
        let p = Progress::countdown(Duration::from_secs(60), "exploring", "events");
        let set = p.position_setter();
        std::thread::spawn(move || set(3)).join().unwrap();
        assert_eq!(p.bar.position(), 3);
        let s = Duration::from_secs_f64;
        assert_eq!(time_left(s(60.0), s(12.4)), "48s");
        assert_eq!(time_left(s(60.0), s(0.0)), "60s");
        assert_eq!(time_left(s(60.0), s(75.0)), "0s");
    }

    #[test]
    fn library_updates_set_total_and_position() {
        let p = Progress::items(0, "merge");
        p.update(3, 40);
        assert_eq!((p.bar.position(), p.bar.length()), (3, Some(40)));
        p.update(5, 40);
        assert_eq!(p.bar.position(), 5);
    }
}
