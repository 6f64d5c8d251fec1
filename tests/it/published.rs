//! What people read is what the binary prints (issue 42): the README's table of
//! the default run, and the topology result in the README and docs/topology.md,
//! are checked against runs of the same commands. A change that moves a number
//! fails here until the page is brought up to date.

use super::*;

/// The README's fenced block after `marker`.
fn block_after<'a>(text: &'a str, marker: &str) -> &'a str {
    let from = text.find(marker).unwrap_or_else(|| panic!("no `{marker}` in README.md")) + marker.len();
    let open = text[from..].find("```\n").expect("a fenced block") + from + 4;
    let close = text[open..].find("```").expect("its end") + open;
    &text[open..close]
}

/// The table's lines, the wall time's value blanked (it is the machine's).
fn table(text: &str) -> Vec<String> {
    text.lines()
        .filter(|l| l.starts_with(['┌', '│', '╞', '└']))
        .map(|l| if l.contains("wall time") { "│ wall time".to_string() } else { l.to_string() })
        .collect()
}

/// `cargo run --release -- run` (the README's first command, from a fresh folder)
/// prints the README's table, but for the wall time.
#[test]
fn readme_default_run_table_is_the_binary_s() {
    let readme = std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("README.md")).expect("README");
    let want = table(block_after(&readme, "The first prints a summary and writes `out/default/`:"));
    let dir = tempfile::tempdir().expect("tempdir");
    let out = lahar().current_dir(dir.path()).arg("run").assert().success().get_output().stdout.clone();
    let got = table(&String::from_utf8_lossy(&out));
    assert!(want.len() > 10, "README's table not found");
    assert_eq!(got, want, "README.md's default-run table differs from `lahar run`");
}

/// The topology example's numbers in README.md and docs/topology.md are the two
/// runs' (`examples/topology/{without,with}-nta.yaml`).
#[test]
fn topology_numbers_are_the_binary_s() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let run = |f: &str| {
        let s = lahar::scenario::load_file(&root.join("examples/topology").join(f)).unwrap_or_else(|e| panic!("{e}"));
        lahar::run(s, &lahar::RunOptions { no_write: true, ..Default::default() }).unwrap()
    };
    let (without, with) = (run("without-nta.yaml"), run("with-nta.yaml"));
    let h = |s: f64| s / 3600.0;
    let cells = |r: &lahar::RunReport| {
        let m = &r.summary;
        let (jct, wait) = (m.jct_s.as_ref().expect("jct"), m.wait_s.as_ref().expect("wait"));
        format!(
            "{:.2} h | {:.2} h | {:.2} h | {:.2} | {:.1}% | {:.1}%",
            h(jct.mean),
            h(jct.p99),
            h(wait.mean),
            m.slowdown.as_ref().expect("slowdown").mean,
            100.0 * m.gpu_allocation_rate,
            100.0 * m.gpu_effective_utilization
        )
    };
    let rows = |r: &lahar::RunReport| r.rows();
    let crossing = rows(&without).iter().filter(|r| r.highest_tier >= 3).count();
    let with_rows = rows(&with);
    let (with_crossing, in_leaf) = (
        with_rows.iter().filter(|r| r.highest_tier >= 3).count(),
        with_rows.iter().filter(|r| r.highest_tier <= 1).count(),
    );
    let doc = std::fs::read_to_string(root.join("docs/topology.md")).expect("topology.md");
    let want_without = format!("| without-nta | Volcano default | {} | {crossing} / 400 |", cells(&without));
    let want_with = format!(
        "| with-nta | default + network-topology-aware, jobs `hard`, `highestTierAllowed: 2` | {} | {with_crossing} / 400 ({in_leaf} within one leaf) |",
        cells(&with)
    );
    assert!(doc.contains(&want_without), "docs/topology.md should have:\n{want_without}");
    assert!(doc.contains(&want_with), "docs/topology.md should have:\n{want_with}");
    assert!(doc.contains(&format!("so {in_leaf} of 400 jobs run inside one leaf")), "docs/topology.md: {in_leaf}");
    let readme = std::fs::read_to_string(root.join("README.md")).expect("README");
    let mean = |r: &lahar::RunReport| h(r.summary.jct_s.as_ref().expect("jct").mean);
    let claim = format!("halves the mean JCT ({:.1} h → {:.1} h)", mean(&without), mean(&with));
    assert!(readme.contains(&claim), "README.md should say: {claim}");
}

/// `lahar --version` and summary.json's `lahar_version` name the commit the binary
/// was built from (`VERSION+COMMIT`, `-dirty` when tracked code differed from it),
/// so a published number can be traced to its code.
#[test]
fn the_version_names_the_commit() {
    let out = lahar().arg("--version").assert().success().get_output().stdout.clone();
    let text = String::from_utf8_lossy(&out);
    let version = text.trim().strip_prefix("lahar ").expect("`lahar VERSION`");
    assert_eq!(version, lahar::VERSION);
    let in_git = Path::new(env!("CARGO_MANIFEST_DIR")).join(".git").exists();
    if in_git {
        let (base, build) = version.split_once('+').expect("a commit after `+`");
        assert_eq!(base, env!("CARGO_PKG_VERSION"));
        let commit = build.trim_end_matches("-dirty");
        assert!(commit.len() == 12 && commit.bytes().all(|b| b.is_ascii_hexdigit()), "{version}");
    }
    let dir = tempfile::tempdir().expect("tempdir");
    lahar().args(["run", "-q", "--out"]).arg(dir.path()).assert().success();
    let summary = std::fs::read_to_string(dir.path().join("summary.json")).expect("summary.json");
    assert!(summary.contains(&format!("\"lahar_version\": \"{version}\"")), "{summary}");
}
