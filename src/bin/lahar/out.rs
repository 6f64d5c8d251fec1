//! Standard output and error that never panic: `out!`/`outln!` end the program
//! quietly when the reader went away, `errln!` drops what stderr cannot take. The
//! print macros, which panic, are refused (`clippy::print_stdout`).

/// Writes to stderr. A stderr that cannot be written (`2>/dev/full`, a closed
/// pipe) loses the message but never the exit code: the message is dropped, the
/// program goes on (a panic would exit 101 instead of the code that matters).
pub(crate) fn emit_err(args: std::fmt::Arguments<'_>) {
    use std::io::Write;
    let mut err = std::io::stderr().lock();
    let _ = err.write_fmt(args).and_then(|()| err.flush());
}

/// `eprintln!` through [`emit_err`] (`eprintln!` panics when stderr fails).
macro_rules! errln {
    ($($t:tt)*) => { $crate::out::emit_err(format_args!("{}\n", format_args!($($t)*))) };
}

/// Writes to stdout. A reader that went away (`| head`, `| true`) ends the program
/// quietly with success, as Unix tools do; another write error is reported.
pub(crate) fn emit(args: std::fmt::Arguments<'_>) {
    use std::io::Write;
    let mut out = std::io::stdout().lock();
    if let Err(e) = out.write_fmt(args).and_then(|()| out.flush()) {
        if e.kind() == std::io::ErrorKind::BrokenPipe {
            std::process::exit(0);
        }
        errln!("error: cannot write to standard output: {e}");
        std::process::exit(1);
    }
}

/// `print!` through [`emit`].
macro_rules! out {
    ($($t:tt)*) => { $crate::out::emit(format_args!($($t)*)) };
}

/// `println!` through [`emit`].
macro_rules! outln {
    ($($t:tt)*) => { $crate::out::emit(format_args!("{}\n", format_args!($($t)*))) };
}
