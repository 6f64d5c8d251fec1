//! Prints a generated scale scenario (see `lahar_benches::scale`), so the large
//! runs of docs/PERFORMANCE.md can be repeated with `lahar run`:
//!
//! ```text
//! cargo run --release -p lahar-benches --bin scale-scenario -- \
//!     --jobs 1000000 --nodes 813 --rate 445 --conf p-prime > scale.yaml
//! ```
//!
//! Options: `--jobs N` (10000), `--nodes N` (312), `--rate JOBS_PER_HOUR` (214),
//! `--tiers 2|3` (2), `--conf p|p-prime|gang-fifo` (p).

use lahar_benches::scale::{Conf, Scale};
use std::process::ExitCode;

fn main() -> ExitCode {
    let mut s = Scale::bench(10_000, Conf::P);
    let args: Vec<String> = std::env::args().skip(1).collect();
    let mut it = args.iter();
    while let Some(flag) = it.next() {
        let Some(value) = it.next() else {
            eprintln!("error: {flag} needs a value");
            return ExitCode::from(2);
        };
        let ok = match flag.as_str() {
            "--jobs" => value.parse().map(|v| s.jobs = v).is_ok(),
            "--nodes" => value.parse().map(|v| s.nodes = v).is_ok_and(|_| s.nodes > 0),
            "--rate" => value.parse().map(|v| s.rate_per_hour = v).is_ok_and(|_| s.rate_per_hour > 0.0),
            "--tiers" => value.parse().map(|v| s.tiers = v).is_ok_and(|_| matches!(s.tiers, 2 | 3)),
            "--conf" => Conf::parse(value).map(|c| s.conf = c).is_some(),
            _ => {
                eprintln!("error: unknown option {flag} (options: --jobs, --nodes, --rate, --tiers, --conf)");
                return ExitCode::from(2);
            }
        };
        if !ok {
            eprintln!("error: {flag}: invalid value `{value}`");
            return ExitCode::from(2);
        }
    }
    print!("{}", s.text());
    ExitCode::SUCCESS
}
