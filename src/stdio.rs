//! Lines to stdout and stderr that a closed pipe cannot break.
//!
//! `println!` and `eprintln!` panic when the write fails, so `attncheck run … 2>&1 |
//! head -1` used to end in a panic (exit 101) as soon as `head` had gone. Every line
//! the binary prints goes through [`out`] and [`err`] ([`outln!`](crate::outln) and
//! [`errln!`](crate::errln)) instead: a stream whose write fails (a closed pipe, a full
//! disk) is left alone from then on, nothing else changes, and the exit code is the
//! one the command would have had anyway. `main.rs` denies `clippy::print_stdout`
//! and `clippy::print_stderr`, so no print macro comes back unnoticed. (The progress
//! bar, drawn only on a terminal, already ignores its write errors.)

use std::fmt;
use std::io::Write;
use std::sync::atomic::{AtomicBool, Ordering};

static STDOUT_GONE: AtomicBool = AtomicBool::new(false);
static STDERR_GONE: AtomicBool = AtomicBool::new(false);

fn line(mut w: impl Write, gone: &AtomicBool, args: fmt::Arguments<'_>) {
    if gone.load(Ordering::Relaxed) {
        return;
    }
    if w.write_fmt(args)
        .and_then(|()| w.write_all(b"\n"))
        .and_then(|()| w.flush())
        .is_err()
    {
        gone.store(true, Ordering::Relaxed);
    }
}

/// Writes one line to stdout; after a failed write, stdout is not written again.
pub fn out(args: fmt::Arguments<'_>) {
    line(std::io::stdout().lock(), &STDOUT_GONE, args);
}

/// Writes one line to stderr; after a failed write, stderr is not written again.
pub fn err(args: fmt::Arguments<'_>) {
    line(std::io::stderr().lock(), &STDERR_GONE, args);
}

/// `println!` that a closed stdout cannot turn into a panic ([`out`]).
#[macro_export]
macro_rules! outln {
    ($($t:tt)*) => {
        $crate::stdio::out(format_args!($($t)*))
    };
}

/// `eprintln!` that a closed stderr cannot turn into a panic ([`err`]).
#[macro_export]
macro_rules! errln {
    ($($t:tt)*) => {
        $crate::stdio::err(format_args!($($t)*))
    };
}
