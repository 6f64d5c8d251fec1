//! Raw scenario → [`Validated`]: every field checked, every error collected with its
//! location, nothing generated, imported or priced yet (that is
//! [`build`](super::build)). One module per concern: the cluster, the queues, the
//! scheduler, synthetic sources, explicit jobs, manifests and the comm model.

use super::raw::*;
use super::{CommSettings, Diagnostic, SchedulerChoice, Warning};
use lahar_core::comm::runtime::JobProfile;
use lahar_core::engine::EngineConfig;
use lahar_core::model::cluster::{Node, NodeId};
use lahar_core::model::job::{JobSpec, NetworkTopology};
use lahar_core::model::queue::{Queue, QueueId};
use lahar_core::model::resource::{ResourceList, ResourceNames};
use lahar_core::model::topology::{FabricTier, HyperNodeDecl};
use lahar_core::util::time::{SimDuration, SimTime, parse_duration};
use lahar_workloads::synthetic::SyntheticSpec;
use serde_saphyr::Spanned;
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::sync::Arc;

mod cluster;
pub mod comm;
pub(crate) mod faults;
mod fit;
pub(crate) mod gpu_model;
mod jobs;
mod manifests;
mod placement;
mod queues;
mod scheduler;
mod services;
mod snapshot;
mod synthetic;
mod timeline;

pub(crate) use fit::{fits_somewhere, fits_somewhere_with, largest, ports_bound_the_gang};

pub(crate) type At = Option<(u64, u64)>;

/// Nodes in one cluster, at most (a node costs about 1 KB with its state).
pub const MAX_NODES: usize = 1_000_000;

/// Jobs of one synthetic source, at most (about 1.4 KB each, alive or not).
pub const MAX_JOBS: usize = 10_000_000;

/// Replicas of one task, at most (the limit every job source shares).
pub const MAX_REPLICAS: usize = lahar_core::model::job::MAX_PODS_PER_JOB as usize;

/// Timeseries rows, at most (they are streamed; more is an unreasonable file).
pub const MAX_SAMPLES: u64 = 5_000_000;

pub(crate) fn at<T>(s: &Spanned<T>) -> At {
    let l = &s.referenced;
    (l.line() > 0).then(|| (l.line(), l.column()))
}

/// The validation context: the file, every error and warning so far, and the
/// resource names registered.
pub(crate) struct V<'a> {
    pub file: &'a str,
    pub errors: Vec<Diagnostic>,
    pub warnings: Vec<Warning>,
    pub names: ResourceNames,
    /// Queues that are some queue's `parent`: they hold no jobs.
    pub parent_queues: BTreeSet<String>,
    /// The cluster had errors, so its node list is incomplete: checks of whether
    /// pods fit a node would only repeat those errors as false cascades.
    pub cluster_broken: bool,
    /// `spec.defaults.duration`.
    pub default_duration: Option<SimDuration>,
    /// `spec.startTime` (Unix seconds) and `spec.horizon`: recurring objects'
    /// schedules are read against them.
    pub clock_start: i64,
    pub horizon: Option<SimTime>,
    /// Compact nodes' Ascend chips, given their types once the device
    /// ConfigMap is read.
    pub compact_npus: Vec<snapshot::CompactNpus>,
    /// Nodes declared `absent: true`: not in the cluster until a timeline
    /// `addNodes` brings them in.
    pub absent_nodes: BTreeSet<String>,
}

impl V<'_> {
    /// A warning about the scenario file itself.
    pub(crate) fn warn(
        &mut self,
        kind: &'static str,
        count: u64,
        at: At,
        path: impl Into<String>,
        message: impl Into<String>,
    ) {
        let file = self.file.to_string();
        self.warn_in(Warning {
            kind,
            count,
            file,
            at,
            path: path.into(),
            message: message.into(),
            first_of_many: true,
        });
    }
    /// Adds a warning; one of the same kind about the same source (`group`) only
    /// adds to the first one's count.
    pub(crate) fn warn_in(&mut self, w: Warning) {
        merge_warning(&mut self.warnings, w);
    }
    pub(crate) fn err(&mut self, at: At, path: impl Into<String>, message: impl Into<String>) {
        self.errors.push(Diagnostic { file: self.file.to_string(), at, path: path.into(), message: message.into() });
    }

    pub(crate) fn duration(&mut self, s: &Spanned<String>, path: &str) -> Option<SimDuration> {
        parse_duration(&s.value).map_err(|e| self.err(at(s), path, e.to_string())).ok()
    }

    pub(crate) fn count(&mut self, s: &Spanned<i64>, path: &str, min: i64) -> Option<u32> {
        if s.value < min {
            self.err(at(s), path, format!("must be an integer ≥ {min}, got {}", s.value));
            return None;
        }
        if s.value > i64::from(u32::MAX) {
            self.err(at(s), path, format!("must be an integer from {min} to {}, got {}", u32::MAX, s.value));
            return None;
        }
        Some(s.value as u32)
    }

    pub(crate) fn quantity(&mut self, resource: &str, q: &Quantity, at: At, path: &str) -> Option<(usize, i64)> {
        let d = match self.names.dim_or_register(resource) {
            Ok(d) => d,
            Err(e) => {
                self.err(at, path, e.to_string());
                return None;
            }
        };
        match lahar_core::util::quantity::parse_quantity(&q.0, ResourceNames::scale(d)) {
            Ok(v) if v >= 0 => Some((d, v)),
            Ok(v) => {
                self.err(at, path, format!("must not be negative, got {v}"));
                None
            }
            Err(e) => {
                self.err(at, path, e.to_string());
                None
            }
        }
    }

    pub(crate) fn resource_list(&mut self, m: &Spanned<BTreeMap<String, Quantity>>, path: &str) -> ResourceList {
        let mut list = ResourceList::default();
        for (k, q) in &m.value {
            if let Some((d, v)) = self.quantity(k, q, at(m), &format!("{path}.{k}")) {
                list.put(d, v);
            }
        }
        list
    }
}

/// The source a warning's field path belongs to (`spec.workload[2]`), so warnings of
/// one kind about one source are counted together.
/// Adds `w` to `list`; one of the same kind about the same source (`group`) only
/// adds to the first one's count.
pub(crate) fn merge_warning(list: &mut Vec<Warning>, w: Warning) {
    match list.iter_mut().find(|x| x.kind == w.kind && x.file == w.file && group(&x.path) == group(&w.path)) {
        Some(first) => first.count += w.count,
        None => list.push(w),
    }
}

fn group(path: &str) -> &str {
    match path.find("].") {
        Some(i) if path.starts_with("spec.workload[") => &path[..=i],
        _ => path,
    }
}

/// Warning kind: a job with a pod no node can hold.
pub(crate) const UNSCHEDULABLE: &str = "unschedulable-pods";

/// Warning kind: a gang whose minimum exceeds the whole cluster.
pub(crate) const GANG_EXCEEDS_CLUSTER: &str = "gang-exceeds-cluster";

/// Warning kind: jobs whose gang minimum exceeds the pods they have before their
/// task dependencies are met, under Volcano's gang plugin: they never start.
pub(crate) const GANG_NEVER_VALID: &str = "gang-never-valid";

/// Warning kind: objects of a `manifests:` source that make no pods.
pub(crate) const OBJECTS_SKIPPED: &str = "manifest-objects-skipped";

/// Warning kind: a conf argument Volcano no longer reads.
pub(crate) const RETIRED_ARGUMENT: &str = "retired-argument";

/// Warning kind: a cluster without nodes.
pub(crate) const EMPTY_CLUSTER: &str = "empty-cluster";

/// Warning kind: jobs whose input gives no run time.
pub(crate) const NO_RUN_TIME: &str = "jobs-without-run-time";
/// Warning kind: `runTime: estimate` with jobs whose input gives no estimate.
pub(crate) const NO_ESTIMATE: &str = "jobs-without-estimate";

/// Warning kind: PodDisruptionBudgets read without the `pdb` plugin.
pub(crate) const BUDGETS_UNUSED: &str = "budgets-unused";
/// Nodes with vGPU cards while the scheduler does not model vGPU sharing.
pub(crate) const VGPU_UNUSED: &str = "vgpu-cards-unused";
/// vGPU cards the GPU metrics leave out.
pub(crate) const VGPU_NOT_IN_METRICS: &str = "vgpu-not-in-gpu-metrics";
/// Nodes registering Ascend chips while the scheduler models no vNPU sharing.
pub(crate) const VNPU_UNUSED: &str = "vnpu-chips-unused";
/// Ascend vNPU chips the GPU metrics leave out.
pub(crate) const VNPU_NOT_IN_METRICS: &str = "vnpu-not-in-gpu-metrics";

/// Nodes with a NUMA topology while the scheduler has no `numa-aware` plugin.
pub(crate) const NUMA_UNUSED: &str = "numa-topology-unused";
/// A `numa-aware` plugin with no node topology to read.
pub(crate) const NUMA_NO_TOPOLOGY: &str = "numa-aware-without-topology";
/// Jobs naming a topology policy for pods numa-aware does not look at.
pub(crate) const NUMA_NOT_GUARANTEED: &str = "numa-policy-not-guaranteed";

/// Warning kind: trace rows skipped.
pub(crate) const TRACE_ROWS_SKIPPED: &str = "trace-rows-skipped";

/// A job's model profile, shared by the jobs of a source that names one.
pub(crate) type Profile = Option<Arc<JobProfile>>;

/// A scenario whose every field is checked: the cluster's nodes, its fabric or
/// HyperNodes, queues, scheduler and run settings, and each workload source ready
/// to be built.
pub(crate) struct Validated<'a> {
    /// The context: the resource names registered, warnings so far (no errors).
    pub v: V<'a>,
    pub name: String,
    pub seed: u64,
    pub engine: EngineConfig,
    pub nodes: Vec<Node>,
    pub fabric: Option<Vec<FabricTier>>,
    pub decls: Option<Vec<HyperNodeDecl>>,
    pub queues: Vec<Queue>,
    /// PodDisruptionBudgets (manifests and snapshot).
    pub budgets: Vec<lahar_core::model::budget::DisruptionBudget>,
    /// `spec.startTime`, seconds since 1970-01-01T00:00.
    pub clock_start: i64,
    pub scheduler: SchedulerChoice,
    /// A baseline's options (`spec.scheduler.runTime`).
    pub baseline_options: lahar_policies::baselines::BaselineOptions,
    /// The conf text, kept for the run's record (input-scheduler.conf).
    pub conf_text: Option<String>,
    /// The confs `spec.timeline`'s `conf` steps reload, by the index their
    /// steps name.
    pub reloads: Vec<lahar_policies::volcano::conf::SchedulerConf>,
    /// Their texts, kept for the run's record (input-timeline-confs.yaml).
    pub reloads_text: Option<String>,
    pub comm: CommSettings,
    /// The workload sources, in the scenario's order.
    pub sources: Vec<Source>,
    /// Which of `sources` holds the snapshot's PodGroups and Pods (the last).
    pub snapshot_source: Option<usize>,
    pub output_dir: PathBuf,
    /// Where `spec.output.sampleInterval` was given, if it was.
    pub sample_at: Option<At>,
    /// `spec.placement`: the placement-only evaluation (then `sources` is empty).
    pub placement: Option<crate::placement::Placement>,
    /// `spec.faults`, its switch targets still by name.
    pub faults: Option<faults::Draft>,
}

/// One workload source, validated.
pub(crate) enum Source {
    /// Jobs to generate from `spec`; each gets `profile`, or one of `mix` as
    /// `spec.model_weights` picks, and multi-pod gangs get `network_topology`.
    Synthetic {
        spec: Box<SyntheticSpec>,
        profile: Profile,
        mix: Vec<Arc<JobProfile>>,
        network_topology: Option<NetworkTopology>,
        at: At,
        path: String,
    },
    /// A trace to import.
    Trace {
        format: lahar_traces::Format,
        file: PathBuf,
        opts: lahar_traces::ImportOptions,
        allow_empty: bool,
        /// Where the source's `path` is written.
        at: At,
        path: String,
    },
    /// Jobs given whole: a `jobs:` list (`compact`) or the jobs of manifests,
    /// each with where it was defined (`origins[i]` is `jobs[i]`'s).
    Jobs { jobs: Vec<(JobSpec, Profile)>, origins: Vec<Origin>, compact: bool },
}

/// Where a job given whole was defined, for messages about it found later (a
/// name used twice): its file, the position of its definition, its field path
/// (a manifest's: the document).
#[derive(Clone, Debug)]
pub(crate) struct Origin {
    pub file: String,
    pub at: At,
    pub path: String,
}

/// Validates a parsed scenario.
pub(super) fn validate<'a>(raw: &RawScenario, file: &'a str, base: &Path) -> Result<Validated<'a>, Vec<Diagnostic>> {
    let mut v = V {
        file,
        errors: Vec::new(),
        warnings: Vec::new(),
        names: ResourceNames::default(),
        parent_queues: BTreeSet::new(),
        cluster_broken: false,
        default_duration: None,
        clock_start: 0,
        horizon: None,
        compact_npus: Vec::new(),
        absent_nodes: BTreeSet::new(),
    };
    if raw.api_version.value != "lahar.io/v1alpha1" {
        v.err(
            at(&raw.api_version),
            "apiVersion",
            format!("expected `lahar.io/v1alpha1`, got `{}`", raw.api_version.value),
        );
    }
    if raw.kind.value != "Scenario" {
        v.err(at(&raw.kind), "kind", format!("expected `Scenario`, got `{}`", raw.kind.value));
    }
    let name = raw.metadata.name.value.clone();
    // The name is the default output folder's last component.
    if let Err(m) = lahar_core::util::files::component(&name) {
        v.err(at(&raw.metadata.name), "metadata.name", m);
    } else if let Some(m) = lahar_core::util::text::name_problem(&name) {
        // It is the first cell of every summary.csv row.
        v.err(at(&raw.metadata.name), "metadata.name", m);
    }
    let spec = &raw.spec;
    let seed = spec.seed.unwrap_or(0);
    let mut engine = engine(&mut v, spec, seed);
    let clock_start = match &spec.start_time {
        Some(t) => lahar_core::util::time::parse_civil(&t.value).unwrap_or_else(|| {
            v.err(
                at(t),
                "spec.startTime",
                format!("expected a date and time such as 2026-01-05T08:00:00, got `{}`", t.value),
            );
            0
        }),
        None => 0,
    };
    v.clock_start = clock_start;
    v.horizon = engine.horizon;
    if let Some(d) = spec.defaults.as_ref().and_then(|d| d.value.duration.as_ref()) {
        v.default_duration = match v.duration(d, "spec.defaults.duration") {
            Some(x) if x.micros() == 0 => {
                v.err(at(d), "spec.defaults.duration", "must be longer than 0");
                None
            }
            x => x,
        };
    }

    let snap = snapshot::read(&mut v, spec, base);
    let before_cluster = v.errors.len();
    let (mut nodes, fabric) = cluster::cluster(&mut v, &spec.cluster, base);
    if let Some(s) = &snap {
        for n in &s.nodes {
            if nodes.iter().any(|m| m.name == n.name) {
                v.err(s.at, "spec.snapshot", format!("node `{}` of the snapshot is also in spec.cluster", n.name));
            }
        }
        nodes.extend(s.nodes.iter().cloned());
    }
    v.cluster_broken = v.errors.len() > before_cluster;
    if nodes.is_empty() && v.errors.is_empty() {
        // Valid for enqueue-only studies (admission against queue quotas): no pod
        // can be placed.
        v.warn(
            EMPTY_CLUSTER,
            1,
            None,
            "spec.cluster",
            "the cluster has no nodes (no `nodeGroups`, `nodes` or `nodeList`): no pod can be placed, only enqueue decides",
        );
    }
    let decls = match (spec.cluster.hyper_nodes.as_ref().map(|h| (h, &h.value)), &snap) {
        (Some((h, RawHyperNodes::Path(p))), _) => manifests::hypernodes(&mut v, p, at(h), base, &spec.cluster, &nodes),
        (None, Some(s)) if !s.hypernodes.is_empty() => Some(snapshot::hypernodes(&mut v, s, &nodes)),
        _ => cluster::hypernodes(&mut v, &spec.cluster, &nodes),
    };
    let hypernode_label_keys: std::collections::BTreeSet<String> =
        decls.iter().flatten().flat_map(|d| d.label_keys.iter().cloned()).collect();
    // Pods of the starting state run on the nodes in the cluster at the start.
    let node_ids: BTreeMap<String, NodeId> = nodes
        .iter()
        .enumerate()
        .filter(|(_, n)| !v.absent_nodes.contains(&n.name))
        .map(|(i, n)| (n.name.clone(), NodeId(i as u32)))
        .collect();
    engine.absent_nodes = nodes
        .iter()
        .enumerate()
        .filter(|(_, n)| v.absent_nodes.contains(&n.name))
        .map(|(i, _)| NodeId(i as u32))
        .collect();
    // One registry of PriorityClasses: Kubernetes' built-in ones, `spec.priorityClasses`,
    // then the PriorityClass objects of every manifest source (a name defined twice
    // anywhere is an error).
    let classes = scheduler::priority_classes(&mut v, spec.priority_classes.as_deref());
    let mut manifest_docs = manifests::read_sources(&mut v, spec.workload.iter().flatten(), base, classes);
    if let Some(s) = &snap {
        let mut errs = Vec::new();
        lahar_workloads::manifest::priority_classes(&s.workload, &mut manifest_docs.classes, &mut errs);
        manifests::report(&mut v, errs);
    }
    let mut queues = match (spec.queues.as_ref().map(|q| (q, &q.value)), &snap) {
        (Some((q, RawQueues::Path(p))), _) => manifests::queues(&mut v, p, at(q), base),
        (Some((_, RawQueues::List(l))), _) => queues::queues(&mut v, Some(l.as_slice())),
        (None, Some(s)) => snapshot::queues(&mut v, s),
        (None, None) => queues::queues(&mut v, None),
    };
    // Queue objects written beside the jobs of a `manifests:` source.
    manifests::workload_queues(&mut v, &manifest_docs, &mut queues, spec.queues.is_none() && snap.is_none());
    let budgets = manifests::budgets(&mut v, &manifest_docs, snap.as_ref().map_or(&[][..], |s| &s.budgets));
    let queue_ids: BTreeMap<String, QueueId> =
        queues.iter().enumerate().map(|(i, q)| (q.name.clone(), QueueId(i as u32))).collect();

    let placement_mode = spec.placement.as_ref();
    let scheduler = match placement_mode {
        Some(_) => placement::scheduler(&mut v, spec.scheduler.as_ref()),
        None => scheduler::scheduler(&mut v, spec.scheduler.as_ref(), base),
    };
    let conf_text = scheduler::conf_text(&scheduler, spec.scheduler.as_ref(), base);
    let baseline_options = scheduler::baseline_options(&mut v, spec.scheduler.as_ref());
    // The confs the timeline reloads, read now: the budgets' warning counts them.
    let mut reloads =
        timeline::Reloads { base, first: &scheduler, confs: Vec::new(), read: BTreeMap::new(), texts: String::new() };
    let steps = spec.timeline.as_deref().unwrap_or_default();
    engine.timeline = timeline::steps(&mut v, steps, (&nodes, &hypernode_label_keys), &queue_ids, &mut reloads);
    let reloads_text = reloads.record();
    let reloads = reloads.confs;
    // Budgets only the pdb plugin reads: without it (in every conf of the run)
    // they change nothing.
    let reads_budgets = scheduler.has_plugin("pdb") || reloads.iter().any(|c| c.runs_plugin("pdb"));
    if !budgets.is_empty() && !reads_budgets {
        let first = &budgets[0];
        let message = format!(
            "{} PodDisruptionBudget(s) read (the first: {}/{}), but no `pdb` plugin in the scheduler conf reads them: they change nothing",
            budgets.len(),
            first.namespace,
            first.name
        );
        v.warn(BUDGETS_UNUSED, budgets.len() as u64, None, "spec.scheduler", message);
    }
    let device_map = scheduler.device_config_map();
    let vnpu = match device_map.clone() {
        Some(id) => {
            let models = scheduler.vnpu_policy().is_some();
            snapshot::device_config(&mut v, snap.as_ref(), id, &mut nodes, models)
        }
        None => None,
    };
    if let Some(s) = &snap {
        snapshot::unused_device_configs(&mut v, s, device_map.as_ref());
    }
    vgpu_warnings(&mut v, &nodes, &scheduler);
    vnpu_warnings(&mut v, snap.as_ref(), &nodes, &scheduler);
    numa_warnings(&mut v, &nodes, &scheduler);
    let comm = comm::comm_settings(&mut v, spec.comm.as_ref(), base);
    let mut tiers: BTreeMap<String, u32> = BTreeMap::new();
    for d in decls.iter().flatten().filter(|d| !d.tier_name.is_empty()) {
        tiers.entry(d.tier_name.clone()).or_insert(d.tier);
    }
    let targets =
        Targets { queues: &queue_ids, tiers: &tiers, node_ids: &node_ids, nodes: &nodes, vnpu: vnpu.as_ref() };
    // Run times of the traces named by `duration.empirical`, read once per (file, format).
    let mut empirical_cache: BTreeMap<(PathBuf, &'static str), Vec<SimDuration>> = BTreeMap::new();
    let mut sources = Vec::new();
    let placement = placement_mode.and_then(|p| placement::placement(&mut v, p, spec, &scheduler, &nodes, base));
    let faults = spec.faults.as_ref().map(|f| faults::faults(&mut v, f, &nodes, base));
    engine.services = services::services(&mut v, spec.services.as_deref().unwrap_or_default(), &nodes, base);
    engine.hpa = services::autoscaling(&mut v, spec.autoscaling.as_ref());
    for (s, src) in spec.workload.iter().flatten().enumerate().filter(|_| placement_mode.is_none()) {
        let path = format!("spec.workload[{s}]");
        let source = match &src.value {
            RawSource::Synthetic(syn) => {
                let ctx = synthetic::SynCtx { index: s, path: &path, at: at(src), targets: &targets, base };
                synthetic::source(&mut v, syn, &ctx, &mut empirical_cache)
            }
            RawSource::Trace(t) => trace(&mut v, t, &path, &queue_ids, base),
            RawSource::Manifests(_) => {
                let docs = manifest_docs.docs.remove(&s).unwrap_or_default();
                let unread = manifest_docs.unread.contains(&s);
                Some(manifests::source(&mut v, &docs, &manifest_docs.classes, &targets, at(src), &path, unread))
            }
            RawSource::Jobs(list) => Some(jobs::source(&mut v, list, &path, &targets, &manifest_docs.classes)),
        };
        sources.push(source.unwrap_or(Source::Jobs { jobs: Vec::new(), origins: Vec::new(), compact: false }));
    }
    // The snapshot's PodGroups and Pods: the starting workload, after the sources.
    let mut snapshot_source = None;
    if let Some(s) = snap.as_ref().filter(|s| !s.workload.is_empty()) {
        snapshot_source = Some(sources.len());
        sources.push(manifests::source(
            &mut v,
            &s.workload,
            &manifest_docs.classes,
            &targets,
            s.at,
            "spec.snapshot",
            false,
        ));
    }

    let mut output_dir = PathBuf::from("out").join(&name);
    let mut sample_at = None;
    if let Some(o) = &spec.output {
        if let Some(s) = &o.sample_interval {
            sample_at = Some(at(s));
            match v.duration(s, "spec.output.sampleInterval") {
                Some(d) if d.micros() == 0 => v.err(at(s), "spec.output.sampleInterval", "must be longer than 0"),
                Some(d) => engine.sample_interval = d,
                None => {}
            }
        }
        if let Some(d) = &o.dir {
            output_dir = lahar_core::util::files::join(base, d);
        }
    }
    if !v.errors.is_empty() {
        return Err(v.errors);
    }
    Ok(Validated {
        v,
        name,
        seed,
        engine,
        nodes,
        fabric,
        decls,
        queues,
        budgets,
        clock_start,
        scheduler,
        baseline_options,
        conf_text,
        reloads,
        reloads_text,
        comm,
        sources,
        snapshot_source,
        output_dir,
        sample_at,
        placement,
        faults,
    })
}

/// `seed`, `horizon`, `schedulePeriod` and `sessions`; the sample interval's default.
fn engine(v: &mut V<'_>, spec: &RawSpec, seed: u64) -> EngineConfig {
    let mut engine = EngineConfig { seed, sample_interval: SimDuration::from_secs(300), ..EngineConfig::default() };
    if let Some(h) = &spec.horizon {
        match v.duration(h, "spec.horizon") {
            // A zero horizon would stop before the first event: every metric empty.
            Some(d) if d.micros() == 0 => {
                v.err(at(h), "spec.horizon", "must be longer than 0 (leave it out to run until no event is left)")
            }
            d => engine.horizon = d.map(|d| SimTime(d.micros())),
        }
    }
    if let Some(p) = &spec.schedule_period {
        match v.duration(p, "spec.schedulePeriod") {
            Some(d) if d.micros() == 0 => v.err(at(p), "spec.schedulePeriod", "must be longer than 0"),
            d => engine.schedule_period = d,
        }
    }
    if let Some(s) = &spec.sessions {
        engine.max_sessions = v.count(s, "spec.sessions", 1).map(u64::from);
    }
    engine
}

/// What the jobs of a source are resolved against.
pub(crate) struct Targets<'a> {
    pub queues: &'a BTreeMap<String, QueueId>,
    /// HyperNode tiers by `tierName` (the first HyperNode to name one decides).
    pub tiers: &'a BTreeMap<String, u32>,
    pub node_ids: &'a BTreeMap<String, NodeId>,
    pub nodes: &'a [Node],
    /// The chip types of the conf's vNPU sharing, when it models it.
    pub vnpu: Option<&'a lahar_core::devices::vnpu::VnpuConfig>,
}

/// The most processors one pod of an SWF trace may take (`processorsPerPod`).
const MAX_PROCESSORS_PER_POD: i64 = 1 << 20;

/// A `trace:` source: its format, queue and per-GPU defaults; the file must open.
fn trace(
    v: &mut V<'_>,
    t: &RawTrace,
    path: &str,
    queue_ids: &BTreeMap<String, QueueId>,
    base: &Path,
) -> Option<Source> {
    let tpath = format!("{path}.trace");
    let Some(format) = lahar_traces::Format::from_name(&t.format.value) else {
        let known: Vec<&str> = lahar_traces::Format::ALL.iter().map(|f| f.name()).collect();
        v.err(
            at(&t.format),
            format!("{tpath}.format"),
            format!("unknown trace format `{}`; expected one of: {}", t.format.value, known.join(", ")),
        );
        return None;
    };
    let mut opts = lahar_traces::ImportOptions { strict: t.strict.unwrap_or(false), ..Default::default() };
    let qname = t.queue.as_ref().map(|q| q.value.as_str()).unwrap_or("default");
    let qat = t.queue.as_ref().map(at).unwrap_or(at(&t.path));
    let q = queues::queue_ref(v, queue_ids, qname, qat, &format!("{tpath}.queue"))?;
    opts.queues = lahar_traces::QueueMapping::Single(q);
    if let Some(c) = &t.cpu_per_gpu
        && let Some((_, x)) = v.quantity("cpu", &c.value, at(c), &format!("{tpath}.cpuPerGpu"))
    {
        opts.cpu_milli_per_gpu = x;
    }
    if let Some(m) = &t.memory_per_gpu
        && let Some((_, x)) = v.quantity("memory", &m.value, at(m), &format!("{tpath}.memoryPerGpu"))
    {
        opts.memory_per_gpu = x;
    }
    if let Some(x) = &t.time_scale {
        if x.value.is_finite() && x.value > 0.0 && x.value <= 1e6 {
            opts.time_scale = x.value;
        } else {
            v.err(
                at(x),
                format!("{tpath}.timeScale"),
                format!("expected a number above 0 and at most 10^6, got {}", x.value),
            );
        }
    }
    if let Some(x) = &t.processors_per_pod {
        if format != lahar_traces::Format::Swf {
            v.err(
                at(x),
                format!("{tpath}.processorsPerPod"),
                format!("applies to SWF traces only (this trace's format is `{}`)", format.name()),
            );
        } else if (1..=MAX_PROCESSORS_PER_POD).contains(&x.value) {
            opts.swf.procs_per_pod = Some(x.value as u32);
        } else {
            v.err(
                at(x),
                format!("{tpath}.processorsPerPod"),
                format!("expected an integer from 1 to {MAX_PROCESSORS_PER_POD}, got {}", x.value),
            );
        }
    }
    let file = lahar_core::util::files::join(base, &t.path.value);
    // Checked up front: a missing trace is reported with every other problem.
    if let Err(source) = lahar_core::util::files::open_regular(&file) {
        let e = lahar_traces::ImportError::Io { path: file, source };
        v.err(at(&t.path), format!("{tpath}.path"), e.to_string());
        return None;
    }
    Some(Source::Trace {
        format,
        file,
        opts,
        allow_empty: t.allow_empty.unwrap_or(false),
        at: at(&t.path),
        path: tpath,
    })
}

/// What a run makes of nodes with vGPU cards: nothing without
/// `deviceshare.VGPUEnable` (the cards change nothing; their resources are
/// plain extended resources), and no GPU metric either way (those count
/// `nvidia.com/gpu`).
fn numa_warnings(v: &mut V<'_>, nodes: &[lahar_core::model::cluster::Node], scheduler: &SchedulerChoice) {
    let with: Vec<&lahar_core::model::cluster::Node> = nodes.iter().filter(|n| n.numa.is_some()).collect();
    match (with.first(), scheduler.models_numa()) {
        (Some(first), false) => {
            let message = format!(
                "{} node(s) have a NUMA topology (the first: {}), but no `numa-aware` plugin is in the scheduler conf: the topologies change nothing",
                with.len(),
                first.name
            );
            v.warn(NUMA_UNUSED, with.len() as u64, None, "spec.cluster", message);
        }
        (None, true) => {
            let message = "the scheduler conf has `numa-aware`, but no node has a NUMA topology (a Numatopology in the snapshot, or `numa` on a compact node): Guaranteed pods with a topology policy other than none fit no node (`numa info is empty`), and other pods are not looked at";
            v.warn(NUMA_NO_TOPOLOGY, 1, None, "spec.scheduler", message.to_string());
        }
        _ => {}
    }
}

fn vnpu_warnings(
    v: &mut V<'_>,
    snap: Option<&snapshot::Parts>,
    nodes: &[lahar_core::model::cluster::Node],
    scheduler: &SchedulerChoice,
) {
    if scheduler.vnpu_policy().is_none() {
        let regs = snap.map_or(&[][..], |s| &s.npu[..]);
        let mut with: Vec<&str> = regs.iter().map(|r| r.node.as_str()).collect();
        with.extend(v.compact_npus.iter().map(|c| c.node.as_str()));
        with.dedup();
        if with.is_empty() {
            return;
        }
        let with: Vec<String> = with.into_iter().map(str::to_string).collect();
        let message = format!(
            "{} node(s) have Ascend chips (the first: {}), but no deviceshare plugin with `deviceshare.AscendHAMiVNPUEnable: true` is in the scheduler conf: the chips change nothing, and pods asking for them are placed by their resources alone",
            with.len(),
            with[0]
        );
        v.warn(VNPU_UNUSED, with.len() as u64, None, "spec.snapshot", message);
        return;
    }
    let with: Vec<&lahar_core::model::cluster::Node> = nodes.iter().filter(|n| !n.vnpu.is_empty()).collect();
    let Some(first) = with.first() else { return };
    let message = format!(
        "{} node(s) have Ascend vNPU chips (the first: {}); the GPU metrics (allocation, utilization, fragmentation) count `nvidia.com/gpu` only and leave these chips out",
        with.len(),
        first.name
    );
    v.warn(VNPU_NOT_IN_METRICS, with.len() as u64, None, "spec.cluster", message);
}

fn vgpu_warnings(v: &mut V<'_>, nodes: &[lahar_core::model::cluster::Node], scheduler: &SchedulerChoice) {
    let with: Vec<&lahar_core::model::cluster::Node> = nodes.iter().filter(|n| !n.vgpu.is_empty()).collect();
    let Some(first) = with.first() else { return };
    let (kind, message) = match scheduler.vgpu_policy() {
        None => (
            VGPU_UNUSED,
            format!(
                "{} node(s) have vGPU cards (the first: {}), but no deviceshare plugin with `deviceshare.VGPUEnable: true` is in the scheduler conf: the cards change nothing, and pods asking for vGPU are placed by their resources alone",
                with.len(),
                first.name
            ),
        ),
        Some(_) => (
            VGPU_NOT_IN_METRICS,
            format!(
                "{} node(s) have vGPU cards (the first: {}); the GPU metrics (allocation, utilization, fragmentation) count `nvidia.com/gpu` only and leave these cards out",
                with.len(),
                first.name
            ),
        ),
    };
    v.warn(kind, with.len() as u64, None, "spec.cluster", message);
}
