//! Fuzzing of the readers (issue 41): real inputs — the default scenario, an
//! example with manifests, a snapshot, a volcano-scheduler.conf, and a sample of
//! every trace format — mutated at random (bytes deleted, YAML and CSV tokens,
//! huge and odd numbers, control characters and non-ASCII inserted, lines
//! repeated, text cut short) and read. A reader must answer with its value or an
//! error; a panic fails the test. The mutations are seeded by proptest, so a
//! failure is replayed from tests/proptest-regressions.
//!
//! `LAHAR_FUZZ_CASES=5000 cargo test --release -p lahar --test it fuzz` runs a
//! longer session (the default keeps the suite's time small).

use proptest::prelude::*;
use std::path::{Path, PathBuf};

fn cases() -> u32 {
    std::env::var("LAHAR_FUZZ_CASES").ok().and_then(|v| v.parse().ok()).unwrap_or(48)
}

fn repo(rel: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join(rel)
}

fn text(rel: &str, max_lines: usize) -> String {
    let t = std::fs::read_to_string(repo(rel)).unwrap_or_else(|e| panic!("{rel}: {e}"));
    t.lines().take(max_lines).map(|l| format!("{l}\n")).collect()
}

const TOKENS: &[&str] = &[
    ":",
    ": ",
    "- ",
    "{",
    "}",
    "[",
    "]",
    "\n",
    "\r\n",
    "\"",
    "'",
    "*a",
    "&a ",
    "!!binary ",
    "? ",
    "|",
    ">",
    "#",
    ",",
    ";",
    "\t",
    "\0",
    "\u{7f}",
    "é",
    "\u{feff}",
    "99999999999999999999",
    "-1",
    "-9223372036854775808",
    "18446744073709551616",
    "NaN",
    "inf",
    "1e309",
    "0.0000001",
    "1Ei",
    "1e-9m",
    "~",
    "null",
    "n",
    "yes",
    "..",
    "../",
    "/",
    "=cmd",
    "1000000000",
    "0",
    "",
];

#[derive(Clone, Debug)]
enum Edit {
    /// Remove `len` bytes at a position (fraction of the length, in 1/1000).
    Delete(u16, u8),
    /// Insert a token at a position.
    Insert(u16, usize),
    /// Repeat the line at a position `times` times.
    Repeat(u16, u8),
    /// Cut the text at a position.
    Cut(u16),
}

fn edit() -> impl Strategy<Value = Edit> {
    prop_oneof![
        (0u16..1000, 1u8..40).prop_map(|(p, n)| Edit::Delete(p, n)),
        (0u16..1000, 0..TOKENS.len()).prop_map(|(p, t)| Edit::Insert(p, t)),
        (0u16..1000, 1u8..5).prop_map(|(p, n)| Edit::Repeat(p, n)),
        (0u16..1000).prop_map(Edit::Cut),
    ]
}

/// `text` with `edits` applied (byte positions snapped to character boundaries).
fn mutate(text: &str, edits: &[Edit]) -> String {
    let mut s = text.to_string();
    let at = |s: &str, p: u16| {
        let mut i = s.len() * usize::from(p) / 1000;
        while !s.is_char_boundary(i) {
            i -= 1;
        }
        i
    };
    for e in edits {
        match *e {
            Edit::Delete(p, n) => {
                let i = at(&s, p);
                let mut j = (i + usize::from(n)).min(s.len());
                while !s.is_char_boundary(j) {
                    j += 1;
                }
                s.replace_range(i..j, "");
            }
            Edit::Insert(p, t) => {
                let i = at(&s, p);
                s.insert_str(i, TOKENS[t]);
            }
            Edit::Repeat(p, n) => {
                let i = at(&s, p);
                let start = s[..i].rfind('\n').map_or(0, |k| k + 1);
                let end = s[i..].find('\n').map_or(s.len(), |k| i + k + 1);
                let line = s[start..end].to_string();
                for _ in 0..n {
                    s.insert_str(end, &line);
                }
            }
            Edit::Cut(p) => {
                let i = at(&s, p);
                s.truncate(i);
            }
        }
    }
    s
}

fn edits() -> impl Strategy<Value = Vec<Edit>> {
    prop::collection::vec(edit(), 1..6)
}

/// A scenario that reads `m.yaml` (manifests) from a temporary folder.
const WITH_MANIFESTS: &str = "apiVersion: lahar.io/v1alpha1\nkind: Scenario\nmetadata: {name: f}\nspec:\n  cluster:\n    nodes: [{name: n0, cpu: 64, memory: 256Gi, gpus: 8}]\n  queues: [{name: default}, {name: research}, {name: prod}]\n  workload:\n    - manifests: m.yaml\n";

proptest! {
    #![proptest_config(ProptestConfig { cases: cases(), ..ProptestConfig::default() })]

    #[test]
    fn the_scenario_reader_never_panics(e in edits()) {
        let t = mutate(lahar::scenario::DEFAULT_SCENARIO, &e);
        let _ = lahar::scenario::load_str(&t, "fuzz.yaml", Path::new(""));
    }

    #[test]
    fn the_manifest_readers_never_panic(e in edits(), which in 0usize..9) {
        let rel = ["examples/manifests/jobs/10-vcjob.yaml", "examples/manifests/jobs/20-kubeflow.yaml",
            "examples/manifests/jobs/30-ray-spark.yaml", "examples/manifests/recurring/volcano-cronjob.yaml",
            "examples/manifests/lws/sample-volcano.yaml", "examples/manifests/kthena/model-serving--gangPolicy.yaml",
            "examples/manifests/kthena/model-booster--lmcache-pd-disaggregation.yaml",
            "examples/manifests/hyperjob/llm-training.yaml", "examples/serving/chat.yaml"][which];
        let d = tempfile::tempdir().unwrap();
        std::fs::write(d.path().join("m.yaml"), mutate(&text(rel, 400), &e)).unwrap();
        let _ = lahar::scenario::load_str(WITH_MANIFESTS, "fuzz.yaml", d.path());
    }

    #[test]
    fn the_services_reader_never_panics(e in edits()) {
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("examples");
        let t = mutate(&text("examples/serving-scenario.yaml", 200), &e);
        let _ = lahar::scenario::load_str(&t, "fuzz.yaml", &root);
    }

    #[test]
    fn the_snapshot_reader_never_panics(e in edits()) {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("snap.yaml");
        std::fs::write(&p, mutate(&text("examples/snapshot/cluster.yaml", 400), &e)).unwrap();
        let _ = lahar::overrides::load_snapshot(&p, &[]);
    }

    #[test]
    fn the_conf_reader_never_panics(e in edits()) {
        let t = mutate(&text("examples/snapshot/volcano-scheduler.conf", 200), &e);
        let _ = lahar_policies::volcano::conf::parse(&t);
        let _ = lahar_policies::volcano::conf::parse_file(&t);
    }

    #[test]
    fn the_trace_readers_never_panic(e in edits(), which in 0usize..6) {
        use lahar_traces::{Format, ImportOptions, QueueInterner, QueueMapping, import};
        let (format, rel, lines) = [
            (Format::Swf, "examples/traces/swf/KTH-SP2-1996-2.1-cln.records-1-10000.swf", 60),
            (Format::Openb, "examples/traces/openb/openb_pod_list_default.csv", 40),
            (Format::Philly, "examples/traces/philly/cluster_job_log", 200),
            (Format::Pai, "examples/traces/pai-2020/pai_task_table.csv", 40),
            (Format::Helios, "examples/traces/helios/cluster_log.csv", 40),
            (Format::Canonical, "examples/traces/canonical/openb-500.csv", 40),
        ][which];
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("trace");
        std::fs::write(&p, mutate(&text(rel, lines), &e)).unwrap();
        for strict in [false, true] {
            let opts = ImportOptions { queues: QueueMapping::Intern(QueueInterner::new()), strict, ..Default::default() };
            let _ = import(format, &p, &opts);
        }
    }
}

#[test]
fn the_mutations_change_the_text() {
    let t = "a: 1\nb: 2\n";
    assert_eq!(mutate(t, &[Edit::Cut(500)]), "a: 1\n");
    assert_eq!(mutate(t, &[Edit::Repeat(0, 2)]), "a: 1\na: 1\na: 1\nb: 2\n");
    assert_eq!(mutate(t, &[Edit::Insert(0, 0)]), ":a: 1\nb: 2\n");
    assert_eq!(mutate(t, &[Edit::Delete(0, 3)]), "1\nb: 2\n");
}
