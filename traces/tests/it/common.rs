//! Helpers shared by the test modules.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use lahar_traces::{Format, ImportError, ImportOptions, ImportReport, Imported, SkipReason, import};

/// A file of the real-trace samples in examples/traces (each directory's
/// SOURCE.md names its source and licence); fails loudly when it is missing.
pub fn sample(rel: &str) -> PathBuf {
    let p = Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/../examples/traces")).join(rel);
    assert!(p.is_file(), "sample trace `{}` is missing from examples/traces", p.display());
    p
}

/// Imports with default options (not strict, earliest-submit origin, queue 0).
pub fn load(format: Format, path: &Path) -> Imported {
    import(format, path, &ImportOptions::default()).unwrap_or_else(|e| panic!("import failed: {e}"))
}

/// Imports in strict mode and returns the error.
pub fn strict_error(format: Format, path: &Path) -> ImportError {
    match import(format, path, &ImportOptions { strict: true, ..ImportOptions::default() }) {
        Ok(out) => panic!("strict import of {} succeeded with {} jobs", path.display(), out.jobs.len()),
        Err(e) => e,
    }
}

/// `skipped` as a map for comparisons.
pub fn skips(pairs: &[(SkipReason, u64)]) -> BTreeMap<SkipReason, u64> {
    pairs.iter().copied().collect()
}

/// `BTreeMap<String, u64>` from pairs.
pub fn counts(pairs: &[(&str, u64)]) -> BTreeMap<String, u64> {
    pairs.iter().map(|(k, v)| (k.to_string(), *v)).collect()
}

/// A line edit for [`corrupt`]: `None` removes the line.
pub type Edit = fn(&str) -> Option<String>;

/// An expected task: `(name, replicas, cpu_milli, memory_bytes, gpu_milli, gpu_model)`.
pub type Task<'a> = (&'a str, u32, i64, i64, i64, Option<&'a str>);

/// A copy of `src` in a temporary directory with line `line` (1-based) replaced
/// by `edit(old line)`; an edit returning `None` removes the line.
pub fn corrupt(
    src: &Path,
    name: &str,
    line: usize,
    edit: impl Fn(&str) -> Option<String>,
) -> (tempfile::TempDir, PathBuf) {
    let text = std::fs::read_to_string(src).expect("read sample");
    let mut out = String::with_capacity(text.len());
    for (i, l) in text.split_inclusive('\n').enumerate() {
        if i + 1 == line {
            let (body, nl) = l.strip_suffix('\n').map_or((l, ""), |b| (b, "\n"));
            if let Some(new) = edit(body) {
                out.push_str(&new);
                out.push_str(nl);
            }
        } else {
            out.push_str(l);
        }
    }
    write_temp(name, &out)
}

/// Writes `text` to `name` in a fresh temporary directory.
pub fn write_temp(name: &str, text: &str) -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join(name);
    std::fs::write(&path, text).expect("write temp file");
    (dir, path)
}

/// Asserts a strict-mode error names the file, line and row, and says what.
pub fn assert_row_error(e: &ImportError, path: &Path, line: u64, row: u64, reason: SkipReason, needle: &str) {
    let msg = e.to_string();
    match e {
        ImportError::Row { path: p, at, reason: r, .. } => {
            assert_eq!(p, path, "{msg}");
            assert_eq!((at.line, at.row), (line, row), "{msg}");
            assert_eq!(*r, reason, "{msg}");
        }
        other => panic!("expected a row error, got {other:?}"),
    }
    assert!(msg.contains(&path.display().to_string()), "{msg}");
    assert!(msg.contains(&format!("line {line}, row {row}")), "{msg}");
    assert!(msg.contains(needle), "`{msg}` should mention `{needle}`");
}

/// Rows = jobs + skips, for formats with one job per row.
pub fn assert_balanced(r: &ImportReport) {
    assert_eq!(r.rows_read, r.jobs + r.skipped_total(), "{r:?}");
}

/// The job an importer should make: a gang of the given tasks
/// `(name, replicas, cpu_milli, memory_bytes, gpu_milli, gpu_model)`.
#[allow(clippy::too_many_arguments)]
pub fn gang(
    name: &str,
    kind: &str,
    submit_s: u64,
    duration_s: u64,
    user: &str,
    queue: u32,
    tasks: &[Task<'_>],
) -> lahar_core::model::job::JobSpec {
    use lahar_core::model::job::{JobSpec, TaskSpec};
    use lahar_core::model::resource::Resources;
    use lahar_core::util::time::{SimDuration, SimTime};
    let tasks: Vec<TaskSpec> = tasks
        .iter()
        .map(|&(n, replicas, cpu, mem, gpu, model)| TaskSpec {
            node_label_in: Vec::new(),
            name: n.into(),
            replicas,
            min_available: replicas,
            requests: Resources::new(cpu, mem, gpu, 1),
            priority: 1,
            depends_on: vec![],
            depends_any: false,
            node_selector: model
                .map(|m| vec![("nvidia.com/gpu.product".to_string(), m.to_string())])
                .unwrap_or_default(),
            policies: vec![],
            preemptable: true,
            never_preempts: false,
            tolerations: Vec::new(),
            hints: None,
            run_time: None,
            exits: None,
            stop_code: lahar_core::model::job::STOPPED_EXIT_CODE,
        })
        .collect();
    let mut job = JobSpec {
        name: name.into(),
        kind: kind.into(),
        queue: lahar_core::model::queue::QueueId(queue),
        submit: SimTime(submit_s * 1_000_000),
        min_available: tasks.iter().map(|t| t.replicas).sum(),
        tasks,
        duration: SimDuration::from_secs(duration_s),
        user: user.into(),
        ..JobSpec::default()
    };
    // Written out rather than computed: every task is required, so minResources is
    // the sum of all pods' requests.
    job.min_resources = job.tasks.iter().fold(Resources::ZERO, |acc, t| acc + t.requests.times(i64::from(t.replicas)));
    job
}

/// The job called `name`.
pub fn job<'a>(out: &'a Imported, name: &str) -> &'a lahar_core::model::job::JobSpec {
    out.jobs.iter().find(|j| j.name == name).unwrap_or_else(|| panic!("no job `{name}`"))
}
