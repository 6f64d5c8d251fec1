//! Scenario loading: YAML text → raw structs (unknown fields rejected) → validated
//! runtime objects (cluster, queues, scheduler choice, merged job stream).
//!
//! Validation collects every problem it finds, each with the file, line and column
//! and the field path, so a user fixes a scenario in one pass. The field reference
//! is docs/scenario.md.

mod build;
pub mod error;
pub mod raw;
mod validate;
mod workload;

pub use error::{Diagnostic, ScenarioError, Warning};
pub use validate::comm::{load_constants, merge_constants};
pub use workload::{Health, Workload};

use lahar_core::engine::EngineConfig;
use lahar_core::model::cluster::Cluster;
use lahar_core::model::job::JobSpec;
use lahar_core::model::queue::Queue;
use sha2::{Digest, Sha256};
use std::path::{Path, PathBuf};

/// The scenario `lahar run` uses without an argument: a 64-node, two-tier H100
/// cluster and a few thousand synthetic jobs.
pub const DEFAULT_SCENARIO: &str = include_str!("default.yaml");

/// Name used in messages for the embedded default scenario.
pub const DEFAULT_SCENARIO_FILE: &str = "<default scenario>";

/// The scheduler a scenario asks for.
#[derive(Clone, Debug, PartialEq)]
pub enum SchedulerChoice {
    /// A baseline by name (see `lahar_policies::baselines::ALL`).
    Baseline(String),
    /// Volcano's pipeline with a validated `volcano-scheduler.conf`.
    Volcano(Box<lahar_policies::volcano::conf::SchedulerConf>),
}

impl SchedulerChoice {
    /// The FGD paper's policy this scheduler places by: a baseline of that name, or
    /// the policy of a Volcano conf's `fgd` plugin.
    pub fn placement_policy(&self) -> Option<lahar_policies::placement::Policy> {
        match self {
            SchedulerChoice::Baseline(b) => lahar_policies::placement::Policy::from_name(b),
            SchedulerChoice::Volcano(conf) => {
                lahar_policies::volcano::plugins::fgd::policy_of(conf.tiers.iter().flatten())
            }
        }
    }

    /// The card order vGPU pods take cards in and the exclusive rules, when the
    /// scheduler models vGPU sharing (a Volcano conf with
    /// `deviceshare.VGPUEnable: true`).
    pub fn vgpu_policy(
        &self,
    ) -> Option<(lahar_core::devices::vgpu::VgpuPolicy, lahar_core::devices::vgpu::ExclusiveRules)> {
        self.deviceshare(lahar_policies::volcano::plugins::deviceshare::DeviceShare::vgpu_policy)
    }

    /// What `f` reads from the first deviceshare entry of a Volcano conf that it
    /// says something of.
    fn deviceshare<T>(&self, f: impl Fn(&lahar_policies::volcano::args::Args) -> Option<T>) -> Option<T> {
        let SchedulerChoice::Volcano(conf) = self else { return None };
        conf.tiers.iter().flatten().filter(|p| p.name == "deviceshare").find_map(|p| f(&p.args))
    }

    /// The chip order vNPU pods take chips in, when the scheduler models Ascend
    /// vNPU sharing (a Volcano conf with `deviceshare.AscendHAMiVNPUEnable: true`).
    pub fn vnpu_policy(&self) -> Option<lahar_core::devices::vnpu::NpuPolicy> {
        self.deviceshare(lahar_policies::volcano::plugins::deviceshare::DeviceShare::vnpu_policy)
    }

    /// The device ConfigMap (namespace, name) a conf modelling vGPU or vNPU reads
    /// (`deviceshare.KnownGeometriesCMNamespace` / `…CMName`, by default
    /// `kube-system/volcano-vgpu-device-config`).
    pub fn device_config_map(&self) -> Option<(String, String)> {
        self.deviceshare(|a| {
            let on = a.bool("deviceshare.VGPUEnable", false) || a.bool("deviceshare.AscendHAMiVNPUEnable", false);
            let s = |k: &str, d: &str| a.str(k).filter(|x| !x.is_empty()).unwrap_or(d).to_string();
            on.then(|| {
                (
                    s("deviceshare.KnownGeometriesCMNamespace", "kube-system"),
                    s("deviceshare.KnownGeometriesCMName", "volcano-vgpu-device-config"),
                )
            })
        })
    }

    /// The scheduler places Guaranteed pods' CPUs by NUMA topology (a Volcano
    /// conf with `numa-aware`).
    pub fn models_numa(&self) -> bool {
        self.has_plugin("numa-aware")
    }

    /// Whether Volcano's gang plugin checks jobs' validity (it is in the conf).
    pub fn checks_gang(&self) -> bool {
        self.has_plugin("gang")
    }

    /// Whether a Volcano conf runs plugin `name`, in any tier.
    fn has_plugin(&self, name: &str) -> bool {
        match self {
            SchedulerChoice::Baseline(_) => false,
            SchedulerChoice::Volcano(conf) => conf.runs_plugin(name),
        }
    }

    /// Name for reports.
    pub fn name(&self) -> String {
        match self {
            SchedulerChoice::Baseline(b) => b.clone(),
            SchedulerChoice::Volcano(_) => "volcano".into(),
        }
    }
}

/// `spec.comm`: the constants of the collective cost model and link sharing.
#[derive(Clone, Debug, Default)]
pub struct CommSettings {
    /// The constants, defaults overridden by `spec.comm.constants`.
    pub constants: lahar_core::comm::CommConstants,
    /// Jobs crossing the same oversubscribed uplink share it max-min fairly
    /// (`linkSharing: maxmin`); off by default.
    pub link_sharing: bool,
}

/// A validated scenario, ready to run.
#[derive(Clone, Debug)]
pub struct Scenario {
    /// `metadata.name`.
    pub name: String,
    /// Seed of every random stream.
    pub seed: u64,
    /// sha256 of the scenario text, hex.
    pub sha256: String,
    /// The cluster.
    pub cluster: Cluster,
    /// Queues (at least one).
    pub queues: Vec<Queue>,
    /// PodDisruptionBudgets (from manifests and the snapshot).
    pub budgets: Vec<lahar_core::model::budget::DisruptionBudget>,
    /// `spec.startTime`: the wall-clock time of t = 0, seconds since
    /// 1970-01-01T00:00 (0 without it).
    pub clock_start: i64,
    /// Scheduler.
    pub scheduler: SchedulerChoice,
    /// A baseline's options (`spec.scheduler.runTime`).
    pub baseline_options: lahar_policies::baselines::BaselineOptions,
    /// All jobs of all sources, ordered by (submit time, source, position in
    /// source): made again for each pass (see [`Workload`]).
    pub workload: Workload,
    /// Communication model settings (`spec.comm`).
    pub comm: CommSettings,
    /// Engine settings (horizon, period, sampling, session limit).
    pub engine: EngineConfig,
    /// Output directory (resolved against the scenario's folder).
    pub output_dir: PathBuf,
    /// The folder its relative paths are read from, as typed (the scenario
    /// file's, or the sweep file's): summary.json names input files relative
    /// to it, so a run's outputs do not depend on where it was started.
    pub dir: PathBuf,
    /// What the input let through that the user must know (docs/scenario.md).
    pub warnings: Vec<Warning>,
    /// The scenario text as validated (overrides applied): written into the run
    /// directory as input-scenario.yaml, the record of what was simulated.
    pub text: String,
    /// The volcano-scheduler.conf text the run used (Volcano's default conf when the
    /// scenario names none); `None` for a baseline.
    pub conf_text: Option<String>,
    /// The confs `spec.timeline`'s `conf` steps reload, by the index their
    /// [`lahar_core::timeline::Operation::Conf`] names (checked: Volcano runs
    /// only, the device models unchanged).
    pub reloads: Vec<lahar_policies::volcano::conf::SchedulerConf>,
    /// Their texts, each once, kept for the run's record
    /// (input-timeline-confs.yaml); `None` when the timeline reloads none.
    pub reloads_text: Option<String>,
    /// `spec.placement`: the FGD paper's placement-only evaluation, run by
    /// [`crate::placement::run`] instead of the engine (its workload is then empty).
    pub placement: Option<crate::placement::Placement>,
    /// `spec.faults`: what fails during the run (`None`: nothing, and the
    /// outputs carry no fault columns).
    pub faults: Option<lahar_core::faults::FaultPlan>,
}

impl Scenario {
    /// Every job, in submit order, made whole (for tests and small scenarios: a
    /// run takes its jobs one at a time from [`Workload::source`]).
    pub fn jobs(&self) -> Vec<JobSpec> {
        self.workload.specs()
    }

    /// The model profile of each job, in the order of [`Scenario::jobs`].
    pub fn models(&self) -> Vec<Option<std::sync::Arc<lahar_core::comm::runtime::JobProfile>>> {
        self.workload.arrivals().into_iter().map(|a| a.profile).collect()
    }
}

/// Reads and validates a scenario file.
pub fn load_file(path: &Path) -> Result<Scenario, ScenarioError> {
    let file = path.display().to_string();
    let text = lahar_core::util::files::read_to_string(path)
        .map_err(|e| ScenarioError::one(&file, None, "", format!("cannot read scenario: {e}")))?;
    let base = path.parent().map(Path::to_path_buf).unwrap_or_default();
    load_str(&text, &file, &base)
}

/// The embedded default scenario, validated.
pub fn load_default() -> Scenario {
    load_str(DEFAULT_SCENARIO, DEFAULT_SCENARIO_FILE, Path::new(""))
        .expect("the embedded default scenario is valid (tested)")
}

/// Validates scenario text; `file` names it in errors; relative paths resolve
/// against `base`.
pub fn load_str(text: &str, file: &str, base: &Path) -> Result<Scenario, ScenarioError> {
    let raw: raw::RawScenario =
        serde_saphyr::from_str_with_options(text, yaml_options()).map_err(|e| parse_error(file, text, &e))?;
    let validated = validate::validate(&raw, file, base).map_err(|errors| ScenarioError { errors })?;
    let mut s = build::build(validated)?;
    s.sha256 = hex(&Sha256::digest(text.as_bytes()));
    s.text = text.to_string();
    s.dir = base.to_path_buf();
    Ok(s)
}

/// YAML limits for scenario files. The parser's defaults (250k nodes, 1M events)
/// guard configs against YAML bombs but reject a legitimate scenario listing
/// ~10k explicit jobs; a scenario may be as large as a job trace, so the budget
/// scales to millions of nodes while keeping the depth limit (and alias limits).
fn yaml_options() -> serde_saphyr::Options {
    let mut budget = serde_saphyr::Budget::default();
    budget.max_events = 400_000_000;
    budget.max_nodes = 200_000_000;
    budget.max_total_scalar_bytes = 4 << 30;
    lahar_core::util::files::yaml_options(Some(budget))
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// The dotted field path (`spec.cluster.nodeGroups[0].count`) and scalar text of
/// the deepest YAML node of `text` that starts at `at`, or, with `keys`, of the
/// map entry whose key starts there (an error about a whole value is placed at
/// its key).
fn node_at(text: &str, at: (u64, u64), keys: bool) -> Option<(String, Option<String>)> {
    use lahar_workloads::manifest::{Node, Val};
    fn walk(n: &Node, path: &str, at: (u64, u64), key_at: &str) -> Option<(String, Option<String>)> {
        let child = match &n.val {
            Val::Map(m) => m.iter().find_map(|(k, v)| {
                let p = if path.is_empty() { k.clone() } else { format!("{path}.{k}") };
                walk(v, &p, at, key_at).or_else(|| {
                    let after = v.at.is_some_and(|v| v > at);
                    (after && key_at.strip_prefix(k.as_str()).is_some_and(|r| r.starts_with(':'))).then_some((p, None))
                })
            }),
            Val::Seq(items) => items.iter().enumerate().find_map(|(i, v)| walk(v, &format!("{path}[{i}]"), at, key_at)),
            _ => None,
        };
        child.or_else(|| (n.at == Some(at)).then(|| (path.to_string(), n.scalar())))
    }
    let docs = lahar_workloads::manifest::yaml::parse_documents_keeping_non_finite(text, "").ok()?;
    // The text from `at` on its line: a key there is followed by `:`.
    let line = text.lines().nth(usize::try_from(at.0).ok()?.checked_sub(1)?).unwrap_or_default();
    let col = usize::try_from(at.1).ok()?.saturating_sub(1);
    let key_at: String = if keys { line.chars().skip(col).collect() } else { String::new() };
    docs.iter().find_map(|d| walk(&d.root, "", at, &key_at))
}

/// What a serde type error ("invalid i64") expected, in words.
fn expected_words(msg: &str) -> Option<&'static str> {
    Some(match msg.strip_prefix("invalid ")? {
        "i8" | "i16" | "i32" | "i64" | "u8" | "u16" | "u32" | "u64" | "usize" => "expected an integer",
        "f32" | "f64" | "floating point" => "expected a number",
        "bool" => "expected true or false",
        _ => return None,
    })
}

/// Turns a YAML/serde error into `file:line:col: path: message` plus the snippet;
/// type errors say what was expected and what was found.
fn parse_error(file: &str, source: &str, e: &serde_saphyr::Error) -> ScenarioError {
    let at = e.location().map(|l| (l.line(), l.column())).filter(|&(l, _)| l > 0);
    let text = e.render_with_formatter(&serde_saphyr::UserMessageFormatter);
    let mut lines = text.lines();
    let first = lines.next().unwrap_or_default();
    // serde-saphyr starts with "error: line L column C: "; keep what follows.
    let msg = first
        .strip_prefix("error: ")
        .unwrap_or(first)
        .split_once(": ")
        .filter(|(p, _)| p.starts_with("line "))
        .map(|(_, m)| m)
        .unwrap_or(first)
        .to_string();
    // The snippet's own `--> <input>:L:C` header repeats what we already say.
    let snippet: Vec<&str> = lines.filter(|l| !l.trim_start().starts_with("--> <input>")).collect();
    // An unknown field's message names it at its key: no path is added.
    let keys = !msg.starts_with("unknown field");
    let (path, found) = at.and_then(|at| node_at(source, at, keys)).unwrap_or_default();
    // What the user wrote, not the number read back (`5.0`, not `5`).
    let found = found.map(|f| at.and_then(|at| lahar_workloads::manifest::yaml::written_at(source, at)).unwrap_or(f));
    let msg = match (expected_words(&msg), found) {
        (Some(words), Some(found)) => format!("{words}, got `{found}`"),
        _ => {
            let hint = lahar_core::util::text::serde_hint(&msg);
            msg + &hint
        }
    };
    let message = if snippet.is_empty() {
        msg
    } else {
        // The snippet's caret line repeats serde's wording: say it once, ours.
        let snippet: Vec<String> = snippet
            .iter()
            .map(|l| match l.rfind('^') {
                Some(i) if expected_words(l[i + 1..].trim()).is_some() || l[i + 1..].trim().starts_with("unknown ") => {
                    format!("{} {msg}", &l[..=i])
                }
                _ => l.to_string(),
            })
            .collect();
        format!("{msg}\n{}", snippet.join("\n"))
    };
    ScenarioError::one(file, at, &path, message)
}
