//! The `lahar` command line. Thin: the grammar (`args`), one function per command
//! (`run`, `files`, `sweep`; the work is in the library), and one place that turns
//! a failure into its message and exit code (`failure`: 0 ok, 1 the work failed,
//! 2 bad input or usage).
//! Output goes through `out!`/`outln!` and `errln!` (`out`), which never panic on a
//! closed or full stream; the print macros, which do, are refused.
#![deny(clippy::print_stderr, clippy::print_stdout)]

#[macro_use]
mod out;
mod args;
mod failure;
mod files;
mod run;
mod sweep;

use args::{Cli, Command};
use clap::Parser;
use std::process::ExitCode;

fn main() -> ExitCode {
    match command(Cli::parse().command) {
        Ok(code) => code,
        Err(failure) => failure.report(),
    }
}

/// Runs one command.
fn command(c: Command) -> Result<ExitCode, failure::Failure> {
    match c {
        Command::Init { example } => {
            let text = lahar::starting::init(example.as_deref())
                .map_err(|e| failure::Failure::usage(format!("--example: {e}")))?;
            out!("{text}");
        }
        Command::Completions { shell } => {
            use clap::CommandFactory;
            let mut buf = Vec::new();
            clap_complete::generate(shell, &mut Cli::command(), "lahar", &mut buf);
            out!("{}", String::from_utf8_lossy(&buf));
        }
        Command::List { what } => {
            for line in lahar::starting::list(what) {
                outln!("{line}");
            }
        }
        Command::Run(a) => return run::run(a),
        Command::Validate { scenario, snapshot, conf, overrides, strict } => {
            return run::validate(scenario, snapshot, conf, &overrides, strict);
        }
        Command::Diff { scenario, snapshot, conf, sessions, overrides } => {
            return run::diff(scenario.as_deref(), snapshot.as_deref(), &conf, sessions, &overrides);
        }
        Command::Sweep(a) => return sweep::sweep(a),
        Command::Check { baseline, write_baseline, run_dir, tolerance, format, markdown } => {
            return files::check(baseline, write_baseline, &run_dir, &tolerance, files::markdown(format, markdown));
        }
        Command::Compare { dirs, out, format, plot } => return files::compare(&dirs, &out, format, &plot),
        Command::Report { dirs, out, plot } => return files::report(&dirs, out.as_deref(), &plot),
        Command::Nccl(a) => return files::nccl(a),
        Command::Trace(t) => return files::trace(t),
    }
    Ok(ExitCode::SUCCESS)
}
