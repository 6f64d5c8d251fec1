//! The `lahar` command line. Thin: parsing and exit codes; the work is in the library.
//! Exit codes: 0 ok, 1 run failed, 2 bad input or usage.

use clap::{Parser, Subcommand};
use std::path::PathBuf;
use std::process::ExitCode;

#[derive(Parser)]
#[command(
    name = "lahar",
    version,
    about = "Offline discrete-event simulator of Volcano-style batch scheduling on GPU clusters"
)]
struct Cli {
    #[command(subcommand)]
    command: Option<Command>,
}

#[derive(Subcommand)]
enum Command {
    /// Run a scenario (without one: the embedded default scenario) and print a summary.
    Run {
        /// Scenario YAML file.
        scenario: Option<PathBuf>,
        /// Output directory (overrides spec.output.dir).
        #[arg(long)]
        out: Option<PathBuf>,
        /// Stop after N scheduling sessions (overrides spec.sessions).
        #[arg(long, value_parser = clap::value_parser!(u64).range(1..))]
        sessions: Option<u64>,
        /// Print nothing on success.
        #[arg(long, short)]
        quiet: bool,
    },
    /// Check a scenario and report every problem with its location.
    Validate {
        /// Scenario YAML file.
        scenario: PathBuf,
    },
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let command = cli.command.unwrap_or(Command::Run { scenario: None, out: None, sessions: None, quiet: false });
    match command {
        Command::Run { scenario, out, sessions, quiet } => {
            let s = match &scenario {
                Some(p) => match lahar::scenario::load_file(p) {
                    Ok(s) => s,
                    Err(e) => return input_error(&e),
                },
                None => lahar::scenario::load_default(),
            };
            let opts = lahar::RunOptions { out_dir: out, sessions, no_write: false };
            match lahar::run(s, &opts) {
                Ok(report) => {
                    if !quiet {
                        println!("{}", lahar::summary_table(&report));
                    }
                    ExitCode::SUCCESS
                }
                Err(e) => {
                    eprintln!("error: {e}");
                    ExitCode::from(1)
                }
            }
        }
        Command::Validate { scenario } => match lahar::scenario::load_file(&scenario) {
            Ok(s) => {
                println!(
                    "{}: ok ({} nodes, {} queues, {} jobs)",
                    scenario.display(),
                    s.cluster.len(),
                    s.queues.len(),
                    s.jobs.len()
                );
                ExitCode::SUCCESS
            }
            Err(e) => input_error(&e),
        },
    }
}

fn input_error(e: &lahar::scenario::ScenarioError) -> ExitCode {
    for err in &e.errors {
        let text = err.to_string();
        let mut lines = text.lines();
        eprintln!("error: {}", lines.next().unwrap_or_default());
        for l in lines {
            eprintln!("  {l}");
        }
    }
    if e.errors.len() > 1 {
        eprintln!("{} errors", e.errors.len());
    }
    ExitCode::from(2)
}
