//! Prints a generated scale scenario (see `lahar_benches::scale`), so the large
//! runs of docs/PERFORMANCE.md can be repeated with `lahar run`:
//!
//! ```text
//! cargo run --release -p lahar-benches --bin scale-scenario -- \
//!     --jobs 1000000 --nodes 813 --rate 445 --conf p-prime > scale.yaml
//! ```
//!
//! Options: `--jobs N` (10000), `--nodes N` (312), `--rate JOBS_PER_HOUR` (214;
//! with `--mix classes`, 0.088 per GPU: about 90% offered load), `--tiers 2|3` (2;
//! with `--mix classes`, 3 from 2,048 nodes), `--conf p|p-prime|gang-fifo` (p),
//! `--mix default|classes` (default: the default scenario's job mix; classes: the
//! contention mix of issue 39, three priority classes), `--checkpoint on|off`
//! (off: with on, jobs checkpoint every 30 minutes).

use lahar_benches::scale::{Conf, Scale};
use std::process::ExitCode;

fn main() -> ExitCode {
    let mut s = Scale::bench(10_000, Conf::P);
    let (mut rate, mut tiers) = (None, None);
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
            "--rate" => value.parse::<f64>().ok().filter(|&v| v > 0.0).map(|v| rate = Some(v)).is_some(),
            "--tiers" => value.parse::<u32>().ok().filter(|v| matches!(v, 2 | 3)).map(|v| tiers = Some(v)).is_some(),
            "--conf" => Conf::parse(value).map(|c| s.conf = c).is_some(),
            "--mix" => {
                matches!(value.as_str(), "default" | "classes") && {
                    s.classes = value == "classes";
                    true
                }
            }
            "--checkpoint" => {
                matches!(value.as_str(), "on" | "off") && {
                    s.checkpoint = value == "on";
                    true
                }
            }
            _ => {
                eprintln!(
                    "error: unknown option {flag} (options: --jobs, --nodes, --rate, --tiers, --conf, --mix, --checkpoint)"
                );
                return ExitCode::from(2);
            }
        };
        if !ok {
            eprintln!("error: {flag}: invalid value `{value}`");
            return ExitCode::from(2);
        }
    }
    if s.classes {
        let c = Scale::contention(s.jobs, s.nodes, s.conf);
        (s.rate_per_hour, s.tiers) = (c.rate_per_hour, c.tiers);
    }
    s.rate_per_hour = rate.unwrap_or(s.rate_per_hour);
    s.tiers = tiers.unwrap_or(s.tiers);
    print!("{}", s.text());
    ExitCode::SUCCESS
}
