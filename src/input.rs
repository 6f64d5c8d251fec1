//! What a run loads, as `lahar run` and the Python package name it: a scenario
//! file, a scenario text, a cluster snapshot or the embedded default, with the
//! overrides of the command line (`--conf`, `--sessions`, `--set`, `--seed`).
//! The CLI and `lahar.run` load through [`load`], so both give the same
//! scenario and the same errors.

use crate::overrides::{FieldPath, Override, load_file_with, load_snapshot, load_with, parse_value};
use crate::scenario::{DEFAULT_SCENARIO, DEFAULT_SCENARIO_FILE, Scenario, ScenarioError, load_default};
use std::path::Path;

/// Where the scenario comes from.
#[derive(Clone, Copy, Debug)]
pub enum Source<'a> {
    /// The embedded default scenario.
    Default,
    /// A scenario file.
    File(&'a Path),
    /// Scenario text: `file` names it in errors, relative paths resolve against `base`.
    Text {
        /// The YAML (or JSON) text.
        text: &'a str,
        /// Its name in errors (`<string>`).
        file: &'a str,
        /// The folder its relative paths resolve against.
        base: &'a Path,
    },
    /// A cluster snapshot (`lahar run --snapshot`).
    Snapshot(&'a Path),
}

impl Source<'_> {
    /// The folder the input's relative paths resolve against.
    fn base(&self) -> &Path {
        match self {
            Source::Default => Path::new(""),
            Source::File(p) | Source::Snapshot(p) => p.parent().unwrap_or(Path::new("")),
            Source::Text { base, .. } => base,
        }
    }
}

/// A scenario and the overrides to apply to it.
#[derive(Clone, Copy, Debug)]
pub struct Load<'a> {
    /// The scenario.
    pub source: Source<'a>,
    /// A volcano-scheduler.conf replacing the scenario's scheduler (`--conf`).
    pub conf: Option<&'a Path>,
    /// The session limit from the start (`--sessions`).
    pub sessions: Option<u64>,
    /// `PATH=VALUE` field overrides, applied in order (`--set`).
    pub set: &'a [String],
    /// The seed (`--seed`), applied last.
    pub seed: Option<u64>,
}

impl<'a> Load<'a> {
    /// `source` without overrides.
    pub fn of(source: Source<'a>) -> Self {
        Load { source, conf: None, sessions: None, set: &[], seed: None }
    }
}

/// The `--set` and `--seed` overrides, in that order, or the first malformed one.
pub fn overrides(set: &[String], seed: Option<u64>) -> Result<Vec<Override>, ScenarioError> {
    let mut out = Vec::new();
    for arg in set {
        let o = Override::from_set(arg).map_err(|m| ScenarioError::one("<command line>", None, "--set", m))?;
        out.push(o);
    }
    if let Some(seed) = seed {
        out.push(command_line(format!("--seed {seed}"), "spec.seed", &seed.to_string()));
    }
    Ok(out)
}

/// An override the command line itself makes (a valid path and JSON value).
fn command_line(origin: String, path: &str, value: &str) -> Override {
    Override {
        file: "<command line>".into(),
        at: None,
        origin,
        path: FieldPath::parse(path).expect("a valid path"),
        value: parse_value(value).expect("JSON is YAML"),
    }
}

/// Loads and validates what `l` names. `--sessions` is the scenario's session
/// limit from the start (its warnings say so); `--conf` sets the scheduler
/// before the other overrides, as a path relative to the scenario's folder, so
/// the recorded scenario (and its hash) is the same in every folder.
pub fn load(l: &Load) -> Result<Scenario, ScenarioError> {
    let mut all = Vec::new();
    if let Some(n) = l.sessions {
        all.push(command_line(format!("--sessions {n}"), "spec.sessions", &n.to_string()));
    }
    if let Some(c) = l.conf {
        let rel = lahar_core::util::files::relative_to(c, l.source.base());
        let value = serde_json::json!({ "conf": rel.display().to_string() });
        all.push(command_line(format!("--conf {}", c.display()), "spec.scheduler", &value.to_string()));
    }
    all.extend(overrides(l.set, l.seed)?);
    match l.source {
        Source::Snapshot(s) => load_snapshot(s, &all),
        Source::File(p) => load_file_with(p, &all),
        Source::Text { text, file, base } => load_with(text, file, base, &all),
        Source::Default if all.is_empty() => Ok(load_default()),
        Source::Default => load_with(DEFAULT_SCENARIO, DEFAULT_SCENARIO_FILE, Path::new(""), &all),
    }
}
