//! Progress on stderr for long runs: hidden for the first second and whenever
//! stderr is not a terminal, so it never reaches snapshotted output.

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

/// A progress bar over claims (or any count), shown after one second.
pub struct Progress {
    bar: Option<ProgressBar>,
    start: Instant,
    shown: AtomicBool,
}

impl Progress {
    /// No output at all.
    pub fn hidden() -> Progress {
        Progress {
            bar: None,
            start: Instant::now(),
            shown: AtomicBool::new(false),
        }
    }

    /// A bar of `len` steps on stderr, if stderr is a terminal.
    pub fn stderr(len: u64) -> Progress {
        use std::io::IsTerminal;
        if !std::io::stderr().is_terminal() {
            return Progress::hidden();
        }
        let bar = ProgressBar::with_draw_target(Some(len), ProgressDrawTarget::hidden());
        bar.set_style(
            ProgressStyle::with_template(
                "{spinner} [{elapsed_precise}] {bar:20} {pos}/{len} {wide_msg}",
            )
            .unwrap_or_else(|_| ProgressStyle::default_bar()),
        );
        // a watcher shows the bar once the run has lasted a second
        let watcher = bar.clone();
        std::thread::spawn(move || {
            std::thread::sleep(Duration::from_secs(1));
            if !watcher.is_finished() {
                watcher.set_draw_target(ProgressDrawTarget::stderr());
                watcher.enable_steady_tick(Duration::from_millis(200));
            }
        });
        Progress {
            bar: Some(bar),
            start: Instant::now(),
            shown: AtomicBool::new(false),
        }
    }

    fn maybe_show(&self) {
        if let Some(b) = &self.bar {
            if !self.shown.load(Ordering::Relaxed) && self.start.elapsed() > Duration::from_secs(1)
            {
                self.shown.store(true, Ordering::Relaxed);
                b.set_draw_target(ProgressDrawTarget::stderr());
                b.enable_steady_tick(Duration::from_millis(200));
            }
        }
    }

    /// Sets the message (e.g. the claim being run).
    pub fn message(&self, msg: impl Into<String>) {
        if let Some(b) = &self.bar {
            b.set_message(msg.into());
            self.maybe_show();
        }
    }

    /// Like [`Progress::message`], but builds the message only when a bar is shown
    /// (for updates from inner loops, which would otherwise format for nothing).
    pub fn message_with(&self, msg: impl FnOnce() -> String) {
        if self.bar.is_some() {
            self.message(msg());
        }
    }

    /// Advances by `n` steps.
    pub fn inc(&self, n: u64) {
        if let Some(b) = &self.bar {
            b.inc(n);
            self.maybe_show();
        }
    }

    /// Removes the bar.
    pub fn finish(&self) {
        if let Some(b) = &self.bar {
            b.finish_and_clear();
        }
    }
}
