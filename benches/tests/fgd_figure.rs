//! docs/fragmentation.md's four 10-seed figures and the numbers it quotes from
//! `fgd-figure` (the allocation at 130% of two policies, the table of openb in
//! time and the falls in wait it reads off it, as the README does) are what `cargo run --release -p lahar-benches --bin fgd-figure` draws
//! and prints now (issue 42: every figure and number of the docs is checked).
//! Run with `LAHAR_WRITE_FIGURES=1` to write the new figures instead, and commit
//! them after looking at them.

use std::path::Path;
use std::process::Command;

fn root() -> &'static Path {
    Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/.."))
}

/// Thousands grouped with commas, as the docs write them.
fn grouped(x: &str) -> String {
    let mut out = String::new();
    for (i, c) in x.chars().enumerate() {
        if i > 0 && (x.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// The value after `key ` in a printed line, up to the next space.
fn after<'a>(line: &'a str, key: &str) -> &'a str {
    let at = line.find(key).unwrap_or_else(|| panic!("no `{key}` in {line:?}")) + key.len();
    line[at..].trim_start().split([' ', ',', ';']).next().unwrap()
}

#[test]
fn fragmentation_figures_and_numbers_are_fgd_figure_s() {
    let dir = tempfile::tempdir().unwrap();
    let o = Command::new(env!("CARGO_BIN_EXE_fgd-figure")).arg(dir.path()).output().unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let printed = String::from_utf8(o.stdout).unwrap();
    let write = std::env::var_os("LAHAR_WRITE_FIGURES").is_some();
    for name in ["fgd-allocation", "fgd-fragmentation", "fgd-time-pending", "fgd-time-fragmentation"] {
        let made = std::fs::read(dir.path().join(format!("{name}.png"))).unwrap();
        let doc = root().join(format!("docs/img/{name}.png"));
        if write {
            std::fs::write(&doc, &made).unwrap();
            continue;
        }
        assert!(
            std::fs::read(&doc).unwrap() == made,
            "docs/img/{name}.png is not what fgd-figure draws now: look at the new one, then rerun with LAHAR_WRITE_FIGURES=1 and commit it"
        );
    }
    let page = std::fs::read_to_string(root().join("docs/fragmentation.md")).unwrap();
    // The line of policy `who` that says `what`.
    let line = |who: &str, what: &str| {
        printed
            .lines()
            .find(|l| l.trim_start().starts_with(&format!("{who}:")) && l.contains(what))
            .unwrap_or_else(|| panic!("no {who} line with {what:?} in {printed}"))
    };
    // "gpu-clustering and gpu-packing nearly coincide on this list: A% and B%".
    let at130 = |who: &str| {
        line(who, "allocated at 130 %").split(':').nth(1).unwrap().split_whitespace().next().unwrap().to_string()
    };
    let sentence = format!("{}% and {}%", at130("gpu-clustering"), at130("gpu-packing"));
    assert!(page.contains(&sentence), "docs/fragmentation.md lacks {sentence:?}; fgd-figure printed:\n{printed}");
    // The prose on the two runs: "waits fall by A% on average and by B% at the
    // median" (docs/fragmentation.md), "from C s to D s" (the README).
    let secs = |who: &str, k: &str| after(line(who, "wait mean"), k).parse::<f64>().unwrap();
    let fall = |k: &str| format!("{:.0}%", 100.0 * (1.0 - secs("fgd", k) / secs("binpack", k)));
    let said = format!("waits fall by {} on average and by {} at the median", fall("wait mean"), fall("p50"));
    let joined = |t: &str| t.split_whitespace().collect::<Vec<_>>().join(" ");
    assert!(joined(&page).contains(&said), "docs/fragmentation.md lacks {said:?}");
    let readme = std::fs::read_to_string(root().join("README.md")).unwrap();
    let said = format!(
        "cuts the median wait of openb's pods on a contended cluster from {} s to {} s",
        grouped(after(line("binpack", "wait mean"), "p50")),
        grouped(after(line("fgd", "wait mean"), "p50"))
    );
    assert!(joined(&readme).contains(&said), "README.md lacks {said:?}");
    // The table of openb in time: one row per node order.
    for who in ["binpack", "fgd"] {
        let l = line(who, "wait mean");
        let secs = |k: &str| format!("{} s", grouped(after(l, k)));
        let row = format!(
            "| {who} | {} | {} | {} | {} | {} | {}% |",
            secs("wait mean"),
            secs("p50"),
            secs("p90"),
            secs("max"),
            secs("JCT mean"),
            after(l, "fragmentation")
        );
        assert!(page.contains(&row), "docs/fragmentation.md lacks the row {row:?}; fgd-figure printed:\n{printed}");
    }
}
