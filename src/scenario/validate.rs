//! Raw scenario → validated [`Scenario`]. Collects every error with its location.

use super::raw::*;
use super::{InputError, Scenario, ScenarioError, SchedulerChoice, Warning};
use lahar_core::cluster::NodeId;
use lahar_core::cluster::{Cluster, GPU_PRODUCT_LABEL, IntraNode, Nics, Node};
use lahar_core::comm::runtime::JobProfile;
use lahar_core::engine::EngineConfig;
use lahar_core::job::{
    DEFAULT_TERMINATION_GRACE, JobSpec, NetworkTopology, Policy, PolicyAction, PolicyEvent, TaskSpec, TaskTopology,
};
use lahar_core::queue::{Queue, QueueId, QueueState};
use lahar_core::resource::{GPU, PODS, ResourceList, ResourceNames, Resources};
use lahar_core::rng::RngStreams;
use lahar_core::time::{SimDuration, SimTime, parse_duration};
use lahar_core::topology::{FabricTier, HyperNodeDecl, Member, Topology};
use lahar_core::world::MAX_NODE_GPUS;
use lahar_workloads::manifest::{PriorityClass, PriorityClasses};
use lahar_workloads::synthetic::{
    Arrival, DurationDist, IntervalDist, SyntheticSpec, generate, model_choices, named_gpus,
};
use rustc_hash::FxHashSet;
use serde_saphyr::Spanned;
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::sync::Arc;

pub mod comm;
mod manifests;

type At = Option<(u64, u64)>;

/// Nodes in one cluster, at most (a node costs about 1 KB with its state).
pub const MAX_NODES: usize = 1_000_000;
/// Jobs of one synthetic source, at most (about 1.4 KB each, alive or not).
pub const MAX_JOBS: usize = 10_000_000;
/// Replicas of one task, at most.
pub const MAX_REPLICAS: usize = 1_000_000;
/// Timeseries rows, at most (they are held until the run ends).
pub const MAX_SAMPLES: u64 = 5_000_000;

fn at<T>(s: &Spanned<T>) -> At {
    let l = &s.referenced;
    (l.line() > 0).then(|| (l.line(), l.column()))
}

struct V<'a> {
    file: &'a str,
    errors: Vec<InputError>,
    warnings: Vec<Warning>,
    names: ResourceNames,
    /// Queues that are some queue's `parent`: they hold no jobs.
    parent_queues: BTreeSet<String>,
    /// The cluster had errors, so its node list is incomplete: checks of whether
    /// pods fit a node would only repeat those errors as false cascades.
    cluster_broken: bool,
}

impl V<'_> {
    /// A warning about the scenario file itself.
    fn warn(&mut self, kind: &'static str, count: u64, at: At, path: impl Into<String>, message: impl Into<String>) {
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
    fn warn_in(&mut self, w: Warning) {
        match self
            .warnings
            .iter_mut()
            .find(|x| x.kind == w.kind && x.file == w.file && group(&x.path) == group(&w.path))
        {
            Some(first) => first.count += w.count,
            None => self.warnings.push(w),
        }
    }
    fn err(&mut self, at: At, path: impl Into<String>, message: impl Into<String>) {
        self.errors.push(InputError { file: self.file.to_string(), at, path: path.into(), message: message.into() });
    }

    fn duration(&mut self, s: &Spanned<String>, path: &str) -> Option<SimDuration> {
        parse_duration(&s.value).map_err(|e| self.err(at(s), path, e.to_string())).ok()
    }

    fn count(&mut self, s: &Spanned<i64>, path: &str, min: i64) -> Option<u32> {
        if s.value < min || s.value > u32::MAX as i64 {
            self.err(at(s), path, format!("must be an integer ≥ {min}, got {}", s.value));
            return None;
        }
        Some(s.value as u32)
    }

    fn quantity(&mut self, resource: &str, q: &Quantity, at: At, path: &str) -> Option<(usize, i64)> {
        let d = match self.names.dim_or_register(resource) {
            Ok(d) => d,
            Err(e) => {
                self.err(at, path, e.to_string());
                return None;
            }
        };
        match lahar_core::quantity::parse_quantity(&q.0, ResourceNames::scale(d)) {
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

    fn resource_list(&mut self, m: &Spanned<BTreeMap<String, Quantity>>, path: &str) -> ResourceList {
        let mut list = ResourceList::default();
        for (k, q) in &m.value {
            if let Some((d, v)) = self.quantity(k, q, at(m), &format!("{path}.{k}")) {
                list.put(d, v);
            }
        }
        list
    }
}

/// Validates a parsed scenario.
pub(super) fn validate(raw: RawScenario, file: &str, base: &Path) -> Result<Scenario, ScenarioError> {
    let mut v = V {
        file,
        errors: Vec::new(),
        warnings: Vec::new(),
        names: ResourceNames::default(),
        parent_queues: BTreeSet::new(),
        cluster_broken: false,
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
    if name.is_empty() || name.contains(['/', '\\']) {
        v.err(at(&raw.metadata.name), "metadata.name", "expected a non-empty name without slashes");
    }
    let spec = raw.spec;
    let seed = spec.seed.unwrap_or(0);

    let mut engine = EngineConfig { seed, ..EngineConfig::default() };
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

    let before_cluster = v.errors.len();
    let (nodes, fabric) = cluster(&mut v, &spec.cluster, base);
    v.cluster_broken = v.errors.len() > before_cluster;
    let decls = match spec.cluster.hyper_nodes.as_ref().map(|h| (h, &h.value)) {
        Some((h, RawHyperNodes::Path(p))) => manifests::hypernodes(&mut v, p, at(h), base, &spec.cluster, &nodes),
        _ => hypernodes(&mut v, &spec.cluster, &nodes),
    };
    let node_ids: BTreeMap<String, NodeId> =
        nodes.iter().enumerate().map(|(i, n)| (n.name.clone(), NodeId(i as u32))).collect();
    let queues = match spec.queues.as_ref().map(|q| (q, &q.value)) {
        Some((q, RawQueues::Path(p))) => manifests::queues(&mut v, p, at(q), base),
        Some((_, RawQueues::List(l))) => queues(&mut v, Some(l.as_slice())),
        None => queues(&mut v, None),
    };
    let queue_ids: BTreeMap<String, QueueId> =
        queues.iter().enumerate().map(|(i, q)| (q.name.clone(), QueueId(i as u32))).collect();

    let scheduler = scheduler(&mut v, spec.scheduler.as_ref(), base);
    // The conf text, kept for the run's record (input-scheduler.conf).
    let conf_text = match &scheduler {
        SchedulerChoice::Baseline(_) => None,
        SchedulerChoice::Volcano(_) => match spec.scheduler.as_ref().map(|s| (&s.value.conf, &s.value.inline)) {
            Some((Some(c), _)) => lahar_core::files::read_to_string(&base.join(&c.value)).ok(),
            Some((None, Some(t))) => Some(t.value.clone()),
            _ => Some(lahar_policies::volcano::conf::DEFAULT_CONF.to_string()),
        },
    };
    let max_gpus_per_node = nodes.iter().map(|n| n.allocatable.gpus_ceil()).max().unwrap_or(0);
    let streams = RngStreams::new(seed);
    // (submit, source, position) orders the merged stream deterministically.
    let mut tagged: Vec<Tagged> = Vec::new();
    let model = |v: &mut V<'_>, m: Option<&Spanned<RawModel>>, path: &str| -> Profile {
        comm::model_profile(v, m?, path).map(Arc::new)
    };
    let comm_settings = comm::comm_settings(&mut v, spec.comm.as_ref(), base);
    // One registry of PriorityClasses: Kubernetes' built-in ones, `spec.priorityClasses`,
    // then the PriorityClass objects of every manifest source (a name defined twice
    // anywhere is an error).
    let classes = priority_classes(&mut v, spec.priority_classes.as_deref());
    let mut manifest_docs = manifests::read_sources(&mut v, spec.workload.iter().flatten(), base, classes);
    // Run times of the traces named by `duration.empirical`, read once per (file, format).
    let mut empirical_cache: BTreeMap<(PathBuf, &'static str), Vec<SimDuration>> = BTreeMap::new();
    for (s, src) in spec.workload.iter().flatten().enumerate() {
        let path = format!("spec.workload[{s}]");
        match &src.value {
            RawSource::Synthetic(syn) => {
                let prof = model(&mut v, syn.model.as_ref(), &format!("{path}.synthetic.model"));
                let mix: Vec<(Arc<JobProfile>, f64)> =
                    model_mix(&mut v, syn, &path).into_iter().map(|(p, w)| (Arc::new(p), w)).collect();
                let nt = syn
                    .network_topology
                    .as_ref()
                    .map(|nt| network_topology(&mut v, nt, &format!("{path}.synthetic.networkTopology")));
                let ctx = SynCtx { index: s, path: &path, queues: &queue_ids, max_gpus_per_node, base };
                if let Some(mut sp) = synthetic(&mut v, syn, &ctx, &mut empirical_cache) {
                    sp.model_weights = mix.iter().map(|m| m.1).collect();
                    check_synthetic_fit(&mut v, &sp, &nodes, syn, &path);
                    let picks = model_choices(&sp, &streams);
                    let field = if mix.is_empty() { "model" } else { "models" };
                    for (i, mut j) in generate(&sp, &streams).into_iter().enumerate() {
                        // Gangs that span nodes carry the constraint, as users would set it.
                        if j.min_available > 1 {
                            j.network_topology = nt.clone();
                        }
                        let prof = match picks.get(i) {
                            Some(&k) => Some(mix[k].0.clone()),
                            None => prof.clone(),
                        };
                        if let Some(p) = &prof
                            && let Err(m) = p.check(j.total_gpus().max(0) as u32)
                        {
                            v.err(at(src), format!("{path}.synthetic.{field}"), format!("job `{}`: {m}", j.name));
                            break;
                        }
                        tagged.push(Tagged { source: s, index: i, job: j, profile: prof });
                    }
                }
            }
            RawSource::Trace(t) => {
                let tpath = format!("{path}.trace");
                let Some(format) = lahar_traces::Format::from_name(&t.format.value) else {
                    let known: Vec<&str> = lahar_traces::Format::ALL.iter().map(|f| f.name()).collect();
                    v.err(
                        at(&t.format),
                        format!("{tpath}.format"),
                        format!("unknown trace format `{}`; expected one of: {}", t.format.value, known.join(", ")),
                    );
                    continue;
                };
                let mut opts = lahar_traces::ImportOptions { strict: t.strict.unwrap_or(false), ..Default::default() };
                let qname = t.queue.as_ref().map(|q| q.value.as_str()).unwrap_or("default");
                let qat = t.queue.as_ref().map(at).unwrap_or(at(&t.path));
                let Some(q) = queue_ref(&mut v, &queue_ids, qname, qat, &format!("{tpath}.queue")) else { continue };
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
                let file = base.join(&t.path.value);
                match lahar_traces::import(format, &file, &opts) {
                    Ok(imported) => {
                        let shown = file.display().to_string();
                        for (reason, &n) in &imported.report.skipped {
                            let first = imported.report.first_skipped.get(reason);
                            let (at_row, why) = match first {
                                Some((l, m)) => {
                                    (Some((l.line, 1)), format!("; the first at line {} (row {}): {m}", l.line, l.row))
                                }
                                None => (None, String::new()),
                            };
                            // One warning per reason, already counted: never merged.
                            v.warnings.push(Warning {
                                kind: TRACE_ROWS_SKIPPED,
                                count: n,
                                file: shown.clone(),
                                at: at_row,
                                path: tpath.clone(),
                                message: format!("{n} trace rows skipped ({reason}){why}"),
                                first_of_many: false,
                            });
                        }
                        if imported.jobs.is_empty() && !t.allow_empty.unwrap_or(false) {
                            v.err(at(&t.path), format!("{tpath}.path"), format!(
                                "the trace yields no job ({} rows read, {} skipped); set `allowEmpty: true` on the source if that is expected",
                                imported.report.rows_read, imported.report.skipped_total()
                            ));
                        }
                        for (i, j) in imported.jobs.into_iter().enumerate() {
                            if let Some(task) = j.tasks.iter().find(|task| {
                                task.replicas > 0 && !fits_somewhere(&v, &nodes, &task.requests, &task.node_selector)
                            }) {
                                let msg = format!(
                                    "job `{}` of the trace requests pods that no node can hold ({} GPUs, {} CPU, {} bytes of memory; largest node: {}); it stays pending",
                                    j.name,
                                    task.requests.gpu_milli() as f64 / 1000.0,
                                    task.requests.cpu() as f64 / 1000.0,
                                    task.requests.memory(),
                                    largest(&nodes)
                                );
                                v.warn(UNSCHEDULABLE, 1, at(&t.path), tpath.clone(), msg);
                            }
                            tagged.push(Tagged { source: s, index: i, job: j, profile: None });
                        }
                    }
                    Err(e) => v.err(at(&t.path), format!("{tpath}.path"), e.to_string()),
                }
            }
            RawSource::Manifests(_) => {
                let docs = manifest_docs.docs.remove(&s).unwrap_or_default();
                let ctx = manifests::Targets { queues: &queue_ids, node_ids: &node_ids, nodes: &nodes };
                let errors_before = v.errors.len();
                let jobs = manifests::jobs(&mut v, &docs, &manifest_docs.classes, &ctx);
                // A source of PriorityClasses only is a class source; any other source
                // that yields no job (empty files, comments only) is a mistake.
                let classes_only = !docs.is_empty()
                    && docs
                        .iter()
                        .all(|d| d.root.get("kind").and_then(|k| k.scalar()).as_deref() == Some("PriorityClass"));
                if jobs.is_empty() && !classes_only && v.errors.len() == errors_before {
                    v.err(
                        at(src),
                        format!("{path}.manifests"),
                        format!("the manifests yield no job ({} objects read)", docs.len()),
                    );
                }
                for (i, (j, prof)) in jobs.into_iter().enumerate() {
                    tagged.push(Tagged { source: s, index: i, job: j, profile: prof.map(Arc::new) });
                }
            }
            RawSource::Jobs(list) => {
                for (i, rj) in list.iter().enumerate() {
                    let jpath = format!("{path}.jobs[{i}]");
                    let prof = model(&mut v, rj.value.model.as_ref(), &format!("{jpath}.model"));
                    let iterations = prof.as_ref().is_some_and(|p| p.iterations.is_some());
                    if let Some(j) = job(&mut v, rj, &jpath, &queue_ids, &node_ids, &manifest_docs.classes, iterations)
                    {
                        check_job_fit(&mut v, &j, &nodes, rj, &jpath);
                        if let (Some(p), Some(m)) = (&prof, &rj.value.model)
                            && let Err(e) = p.check(j.total_gpus().max(0) as u32)
                        {
                            v.err(at(m), format!("{jpath}.model"), e);
                        }
                        tagged.push(Tagged { source: s, index: i, job: j, profile: prof });
                    }
                }
            }
        }
    }
    // Sorted by moving each job once, not by moving jobs around a sort (a million
    // generated jobs usually arrive in order already).
    let key = |t: &Tagged| (t.job.submit, t.source, t.index);
    if !tagged.is_sorted_by_key(key) {
        let mut order: Vec<(SimTime, usize, usize, u32)> =
            tagged.iter().enumerate().map(|(k, t)| (t.job.submit, t.source, t.index, k as u32)).collect();
        order.sort_unstable();
        let mut slots: Vec<Option<Tagged>> = tagged.into_iter().map(Some).collect();
        tagged = order.into_iter().map(|o| slots[o.3 as usize].take().expect("each job once")).collect();
    }
    // Where each source's jobs are: compact jobs by index, the others by source.
    let job_path = |s: usize, i: usize| match spec.workload.iter().flatten().nth(s).map(|x| &x.value) {
        Some(RawSource::Jobs(_)) => format!("spec.workload[{s}].jobs[{i}]"),
        _ => format!("spec.workload[{s}]"),
    };
    check_gangs(&mut v, &tagged, &nodes, job_path);
    // Membership only: errors follow the jobs' order, never the set's.
    let mut seen: FxHashSet<(&str, &str)> = FxHashSet::default();
    let mut twice = Vec::new();
    for t in &tagged {
        if !seen.insert((&t.job.namespace, &t.job.name)) {
            twice.push((t.source, format!("{}/{}", t.job.namespace, t.job.name)));
        }
    }
    drop(seen);
    for (source, key) in twice {
        v.err(
            None,
            format!("spec.workload[{source}]"),
            format!("job `{key}` is defined twice; job names must be unique per namespace"),
        );
    }
    let (jobs, models): (Vec<JobSpec>, Vec<Profile>) = tagged.into_iter().map(|t| (t.job, t.profile)).unzip();

    let mut sample = SimDuration::from_secs(300);
    let mut output_dir = PathBuf::from("out").join(&name);
    if let Some(o) = &spec.output {
        if let Some(s) = &o.sample_interval {
            match v.duration(s, "spec.output.sampleInterval") {
                Some(d) if d.micros() == 0 => v.err(at(s), "spec.output.sampleInterval", "must be longer than 0"),
                Some(d) => sample = d,
                None => {}
            }
        }
        if let Some(d) = &o.dir {
            output_dir = base.join(d);
        }
    }
    engine.sample_interval = sample;
    // The timeseries is sampled every interval up to the end: refuse one that
    // would not fit in memory before any work (the end is the horizon, else at
    // least the last submission).
    let last = engine.horizon.map(|h| h.micros()).or_else(|| jobs.iter().map(|j| j.submit.micros()).max());
    if let Some(end) = last {
        let rows = end / sample.micros().max(1);
        if rows > MAX_SAMPLES {
            let why = format!(
                "the timeseries would have at least {rows} rows up to {} (at most {MAX_SAMPLES}); choose a longer interval",
                SimTime(end).secs_string()
            );
            match spec.output.as_ref().and_then(|o| o.sample_interval.as_ref()) {
                Some(s) => v.err(at(s), "spec.output.sampleInterval", why),
                None => v.err(None, "spec.output.sampleInterval", why),
            }
        }
    }

    if !v.errors.is_empty() {
        return Err(ScenarioError { errors: v.errors });
    }
    // A starting state must fit the nodes.
    let mut used = vec![Resources::ZERO; nodes.len()];
    for j in &jobs {
        for &(t, _, n) in &j.initial {
            used[n.0 as usize] += j.tasks[t].requests;
        }
    }
    for (i, u) in used.iter().enumerate() {
        if !u.fits_in(&nodes[i].allocatable) {
            v.err(
                None,
                "spec.workload",
                format!(
                    "pods given as running on node `{}` need more than it has ({:?} > {:?})",
                    nodes[i].name, u, nodes[i].allocatable
                ),
            );
        }
    }
    let topology = match (fabric, decls) {
        (Some(f), _) => Topology::from_fabric(nodes.len(), &f).expect("fabric tiers validated"),
        (None, Some(d)) => match Topology::from_decls(nodes.len(), d, Vec::new()) {
            Ok(t) => t,
            Err(e) => {
                v.err(None, "spec.cluster.hyperNodes", e.to_string());
                Topology::flat(nodes.len())
            }
        },
        (None, None) => Topology::flat(nodes.len()),
    };
    if !v.errors.is_empty() {
        return Err(ScenarioError { errors: v.errors });
    }
    let cluster = Cluster::new(nodes, std::mem::take(&mut v.names), topology);
    let mut jobs = jobs;
    // `iterations` jobs: their work is priced on the cluster's fastest node kind.
    if models.iter().flatten().any(|p| p.iterations.is_some()) {
        match lahar_core::comm::CommModel::new(comm_settings.constants.clone()) {
            Ok(cm) => {
                for (j, p) in jobs.iter_mut().zip(&models) {
                    let Some(p) = p else { continue };
                    let Some(n) = p.iterations else { continue };
                    let gpus = j.total_gpus().max(0) as u32;
                    match lahar_core::comm::runtime::CommRuntime::reference_iteration_us(&cm, &cluster, p, gpus) {
                        Ok(us) => j.duration = SimDuration((us * n as f64).ceil() as u64),
                        Err(e) => v.err(
                            None,
                            "spec.workload",
                            format!("job `{}`: cannot price model `{}`: {e}", j.name, p.name),
                        ),
                    }
                }
            }
            Err(e) => v.err(None, "spec.comm.constants", e.to_string()),
        }
        if !v.errors.is_empty() {
            return Err(ScenarioError { errors: v.errors });
        }
    }
    Ok(Scenario {
        name,
        seed,
        sha256: String::new(),
        cluster,
        queues,
        scheduler,
        jobs,
        models,
        comm: comm_settings,
        engine,
        output_dir,
        warnings: v.warnings,
        text: String::new(),
        conf_text,
    })
}

fn volcano_conf(v: &mut V<'_>, text: &str, conf_file: Option<&str>, inline_at: At, path: &str) -> SchedulerChoice {
    match lahar_policies::volcano::conf::parse(text) {
        Ok(c) => SchedulerChoice::Volcano(Box::new(c)),
        Err(e) => {
            for i in e.issues {
                let p = if i.path.is_empty() { path.to_string() } else { format!("{path}: {}", i.path) };
                match conf_file {
                    Some(f) => {
                        v.errors.push(InputError { file: f.to_string(), at: i.at, path: i.path, message: i.message })
                    }
                    None => {
                        // Inline block scalar: its text starts on the line after the key.
                        let at = match (inline_at, i.at) {
                            (Some((l0, _)), Some((l, c))) => Some((l0 + l, c)),
                            _ => inline_at,
                        };
                        v.err(
                            at,
                            p,
                            format!("{} (line {} of the inline conf)", i.message, i.at.map(|x| x.0).unwrap_or(0)),
                        );
                    }
                }
            }
            SchedulerChoice::Baseline("gang-fifo".into())
        }
    }
}

fn scheduler(v: &mut V<'_>, s: Option<&Spanned<RawScheduler>>, base: &Path) -> SchedulerChoice {
    let default = || {
        SchedulerChoice::Volcano(Box::new(
            lahar_policies::volcano::conf::parse(lahar_policies::volcano::conf::DEFAULT_CONF).expect("built-in conf"),
        ))
    };
    let Some(s) = s else { return default() };
    match (&s.value.baseline, &s.value.conf, &s.value.inline) {
        (Some(b), None, None) => {
            if !lahar_policies::BASELINES.contains(&b.value.as_str()) {
                v.err(
                    at(b),
                    "spec.scheduler.baseline",
                    format!(
                        "unknown baseline `{}`; expected one of: {}",
                        b.value,
                        lahar_policies::BASELINES.join(", ")
                    ),
                );
            }
            SchedulerChoice::Baseline(b.value.clone())
        }
        (None, Some(c), None) => {
            let p = base.join(&c.value);
            match lahar_core::files::read_to_string(&p) {
                Ok(text) => volcano_conf(v, &text, Some(&p.display().to_string()), None, "spec.scheduler.conf"),
                Err(e) => {
                    v.err(at(c), "spec.scheduler.conf", format!("cannot read `{}`: {e}", p.display()));
                    default()
                }
            }
        }
        (None, None, Some(t)) => volcano_conf(v, &t.value, None, at(t), "spec.scheduler.inline"),
        _ => {
            v.err(
                at(s),
                "spec.scheduler",
                "expected exactly one of `baseline`, `conf` (a volcano-scheduler.conf path) or `inline` (its text)",
            );
            default()
        }
    }
}

fn hypernodes(v: &mut V<'_>, c: &RawCluster, nodes: &[Node]) -> Option<Vec<HyperNodeDecl>> {
    let RawHyperNodes::List(list) = &c.hyper_nodes.as_ref()?.value else { return None };
    if c.fabric.is_some() {
        v.err(None, "spec.cluster.hyperNodes", "give either `fabric` or `hyperNodes`, not both");
    }
    let by_name: BTreeMap<&str, usize> = nodes.iter().enumerate().map(|(i, n)| (n.name.as_str(), i)).collect();
    let hn_names: BTreeSet<&str> = list.iter().map(|h| h.value.name.value.as_str()).collect();
    let mut out = Vec::new();
    for (i, h) in list.iter().enumerate() {
        let path = format!("spec.cluster.hyperNodes[{i}]");
        let tier = v.count(&h.value.tier, &format!("{path}.tier"), 1).unwrap_or(1);
        let mut members = Vec::new();
        for m in &h.value.members {
            if let Some(&n) = by_name.get(m.as_str()) {
                members.push(Member::Node(NodeId(n as u32)));
            } else if hn_names.contains(m.as_str()) {
                members.push(Member::HyperNode(m.clone()));
            } else {
                v.err(at(h), format!("{path}.members"), format!("`{m}` is neither a node nor a HyperNode"));
            }
        }
        out.push(HyperNodeDecl {
            name: h.value.name.value.clone(),
            tier,
            tier_name: h.value.tier_name.clone().unwrap_or_default(),
            members,
        });
    }
    Some(out)
}

fn cluster(v: &mut V<'_>, c: &RawCluster, base: &Path) -> (Vec<Node>, Option<Vec<FabricTier>>) {
    let mut nodes = Vec::new();
    let mut names: BTreeMap<String, String> = BTreeMap::new();
    let mut add = |v: &mut V<'_>, node: Node, path: &str, at: At| {
        if let Some(prev) = names.insert(node.name.clone(), path.to_string()) {
            v.err(at, path, format!("node name `{}` is already used by {prev}", node.name));
        }
        nodes.push(node);
    };
    // Nodes the groups expand to so far.
    let mut grouped = 0usize;
    for (i, g) in c.node_groups.iter().flatten().enumerate() {
        let path = format!("spec.cluster.nodeGroups[{i}]");
        let Some(count) = &g.value.count else {
            v.err(at(g), &path, "a node group needs `count`");
            continue;
        };
        let mut count = v.count(count, &format!("{path}.count"), 0);
        if let Some(c) = count.filter(|&c| grouped + c as usize > MAX_NODES) {
            // Refused before a single node is built: a huge count would exhaust memory.
            let total = grouped + c as usize;
            let why = format!("the cluster would have {total} nodes; lahar simulates at most {MAX_NODES}");
            v.err(at(g.value.count.as_ref().expect("checked above")), format!("{path}.count"), why);
            count = None;
        }
        if let (Some(template), Some(count)) = (node(v, &g.value, &path), count) {
            grouped += count as usize;
            for k in 0..count {
                let mut n = template.clone();
                n.name = format!("{}-{k}", template.name);
                add(v, n, &path, at(g));
            }
        }
    }
    for (i, n) in c.nodes.iter().flatten().enumerate() {
        let path = format!("spec.cluster.nodes[{i}]");
        if let Some(cnt) = &n.value.count {
            v.err(at(cnt), format!("{path}.count"), "`count` belongs to nodeGroups; an explicit node is one node");
        }
        if let Some(node) = node(v, &n.value, &path) {
            add(v, node, &path, at(n));
        }
    }
    if let Some(list) = &c.node_list {
        for (node, path) in node_list(v, list, base) {
            add(v, node, &path, at(list));
        }
    }
    if nodes.is_empty() && v.errors.is_empty() {
        v.err(None, "spec.cluster", "the cluster has no nodes; add `nodeGroups`, `nodes` or `nodeList`");
    }
    let fabric = c.fabric.as_ref().map(|tiers| {
        let mut out = Vec::new();
        for (i, t) in tiers.iter().enumerate() {
            let path = format!("spec.cluster.fabric[{i}]");
            let tier = t.value.tier.value;
            if tier != i as i64 + 1 {
                v.err(
                    at(&t.value.tier),
                    format!("{path}.tier"),
                    format!("tiers must be listed as 1, 2, 3... in order; expected {}, got {tier}", i + 1),
                );
            }
            let fanout = v.count(&t.value.fanout, &format!("{path}.fanout"), 1).unwrap_or(1);
            let over = t.value.oversubscription.as_ref().map(|o| o.value).unwrap_or(1.0);
            if let Some(o) = &t.value.oversubscription
                && !(o.value >= 1.0 && o.value.is_finite())
            {
                v.err(
                    at(o),
                    format!("{path}.oversubscription"),
                    format!("must be a number ≥ 1.0 (1.0 = non-blocking), got {}", o.value),
                );
            }
            out.push(FabricTier {
                tier: tier.max(1) as u32,
                name: t.value.name.clone(),
                fanout,
                oversubscription: over,
            });
        }
        out
    });
    (nodes, fabric)
}

/// Nodes of a trace's machine list (`cluster.nodeList`), in file order, each with
/// the path that names it in errors. Only openb's node lists describe machines
/// (`sn,cpu_milli,memory_mib,gpu,model`); GPU nodes get the model as their
/// `nvidia.com/gpu.product` label (what openb's `gpu_spec` selects) and PCIe
/// intra-node links (the list does not say; the trace's jobs carry no model whose
/// run time would depend on it).
fn node_list(v: &mut V<'_>, list: &Spanned<RawNodeList>, base: &Path) -> Vec<(Node, String)> {
    let l = &list.value;
    let path = "spec.cluster.nodeList";
    if l.format.value != "openb" {
        v.err(
            at(&l.format),
            format!("{path}.format"),
            format!("unknown node-list format `{}`; expected openb", l.format.value),
        );
        return Vec::new();
    }
    let pods = match &l.pods {
        Some(p) => v.count(p, &format!("{path}.pods"), 1).unwrap_or(110),
        None => 110,
    };
    let file = base.join(&l.path.value);
    // Strict: a machine list is the cluster, so a bad row is an error, not a skip.
    let read = match lahar_traces::openb::read_nodes(&file, true) {
        Ok(r) => r,
        Err(e) => {
            v.err(at(&l.path), format!("{path}.path"), e.to_string());
            return Vec::new();
        }
    };
    let mut out = Vec::with_capacity(read.nodes.len());
    for (i, n) in read.nodes.into_iter().enumerate() {
        let npath = format!("{path} ({}, node {} `{}`)", l.path.value, i + 1, n.name);
        if n.gpus > MAX_NODE_GPUS {
            v.err(at(&l.path), &npath, format!("at most {MAX_NODE_GPUS} GPUs per node, got {}", n.gpus));
            continue;
        }
        let mut alloc = Resources::ZERO;
        alloc.set(lahar_core::resource::CPU, n.cpu_milli);
        alloc.set(lahar_core::resource::MEMORY, n.memory_bytes);
        alloc.set(GPU, i64::from(n.gpus) * 1000);
        alloc.set(PODS, i64::from(pods));
        let gpu_model = n.model.unwrap_or_default();
        let mut labels = BTreeMap::new();
        if !gpu_model.is_empty() {
            labels.insert(GPU_PRODUCT_LABEL.to_string(), gpu_model.clone());
        }
        let node = Node {
            name: n.name,
            labels,
            allocatable: alloc,
            gpu_model,
            intra_node: IntraNode::Pcie,
            nics: Nics::default(),
        };
        out.push((node, npath));
    }
    out
}

fn node(v: &mut V<'_>, n: &RawNode, path: &str) -> Option<Node> {
    let errors_before = v.errors.len();
    if n.name.value.is_empty() {
        v.err(at(&n.name), format!("{path}.name"), "expected a non-empty name");
    }
    let mut alloc = Resources::ZERO;
    match &n.cpu {
        Some(q) => {
            if let Some((d, x)) = v.quantity("cpu", &q.value, at(q), &format!("{path}.cpu")) {
                alloc.set(d, x);
            }
        }
        None => v.err(at(&n.name), path, "missing `cpu` (e.g. cpu: 96)"),
    }
    match &n.memory {
        Some(q) => {
            if let Some((d, x)) = v.quantity("memory", &q.value, at(q), &format!("{path}.memory")) {
                alloc.set(d, x);
            }
        }
        None => v.err(at(&n.name), path, "missing `memory` (e.g. memory: 1Ti)"),
    }
    let gpus = match &n.gpus {
        Some(g) => v.count(g, &format!("{path}.gpus"), 0).unwrap_or(0),
        None => 0,
    };
    if gpus > MAX_NODE_GPUS
        && let Some(g) = &n.gpus
    {
        v.err(at(g), format!("{path}.gpus"), format!("at most {MAX_NODE_GPUS} GPUs per node, got {gpus}"));
    }
    alloc.set(GPU, gpus as i64 * 1000);
    let pods = match &n.pods {
        Some(p) => v.count(p, &format!("{path}.pods"), 1).unwrap_or(110),
        None => 110,
    };
    alloc.set(PODS, pods as i64);
    if let Some(ext) = &n.extended_resources {
        for (k, q) in &ext.value {
            let p = format!("{path}.extendedResources.{k}");
            if k == "cpu" || k == "memory" || k == "pods" || k == lahar_core::resource::GPU_RESOURCE {
                v.err(at(ext), p, format!("`{k}` has its own field"));
                continue;
            }
            if let Some((d, x)) = v.quantity(k, q, at(ext), &p) {
                alloc.set(d, x);
            }
        }
    }
    let intra = match &n.intra_node {
        Some(s) => IntraNode::parse(&s.value).unwrap_or_else(|| {
            v.err(
                at(s),
                format!("{path}.intraNode"),
                format!("unknown intra-node fabric `{}`; expected nvswitch, nvlink-pairs or pcie", s.value),
            );
            IntraNode::Pcie
        }),
        None if gpus > 0 => IntraNode::NvSwitch,
        None => IntraNode::Pcie,
    };
    let nics = match &n.nics {
        Some(x) => Nics {
            count: v.count(&x.count, &format!("{path}.nics.count"), 0).unwrap_or(0),
            gbps: v.count(&x.gbps, &format!("{path}.nics.gbps"), 1).unwrap_or(1),
        },
        None => Nics::default(),
    };
    let mut labels = n.labels.clone().unwrap_or_default();
    let gpu_model = n.gpu_model.clone().unwrap_or_default();
    if !gpu_model.is_empty() {
        labels.entry(GPU_PRODUCT_LABEL.to_string()).or_insert_with(|| gpu_model.clone());
    }
    (v.errors.len() == errors_before).then(|| Node {
        name: n.name.value.clone(),
        labels,
        allocatable: alloc,
        gpu_model,
        intra_node: intra,
        nics,
    })
}

fn queues(v: &mut V<'_>, raw: Option<&[Spanned<RawQueue>]>) -> Vec<Queue> {
    let Some(raw) = raw else { return vec![Queue::new("default")] };
    if raw.is_empty() {
        v.err(None, "spec.queues", "list at least one queue, or leave `queues` out for a single `default` queue");
    }
    let mut out = Vec::new();
    let mut seen = BTreeSet::new();
    for (i, rq) in raw.iter().enumerate() {
        let path = format!("spec.queues[{i}]");
        let r = &rq.value;
        let mut q = Queue::new(r.name.value.clone());
        if r.name.value.is_empty() {
            v.err(at(&r.name), format!("{path}.name"), "expected a non-empty name");
        }
        if !seen.insert(r.name.value.clone()) {
            v.err(at(&r.name), format!("{path}.name"), format!("queue `{}` is defined twice", r.name.value));
        }
        if let Some(w) = &r.weight {
            q.weight = v.count(w, &format!("{path}.weight"), 1).unwrap_or(1);
        }
        if let Some(c) = &r.capability {
            q.capability = v.resource_list(c, &format!("{path}.capability"));
        }
        if let Some(c) = &r.guarantee {
            q.guarantee = v.resource_list(c, &format!("{path}.guarantee"));
        }
        if let Some(c) = &r.deserved {
            q.deserved = v.resource_list(c, &format!("{path}.deserved"));
        }
        q.reclaimable = r.reclaimable.unwrap_or(true);
        q.parent = r.parent.as_ref().map(|p| p.value.clone());
        q.priority = r.priority.unwrap_or(0);
        if let Some(s) = &r.state {
            q.state = match s.value.as_str() {
                "Open" => QueueState::Open,
                "Closing" => QueueState::Closing,
                "Closed" => QueueState::Closed,
                other => {
                    v.err(
                        at(s),
                        format!("{path}.state"),
                        format!("unknown queue state `{other}`; expected Open, Closing or Closed"),
                    );
                    QueueState::Open
                }
            };
        }
        out.push(q);
    }
    queue_tree(v, raw, &out);
    out
}

/// The queue tree (`parent`): every parent exists (`root` may be implicit), the root
/// queue has no parent, and there is no cycle.
fn queue_tree(v: &mut V<'_>, raw: &[Spanned<RawQueue>], queues: &[Queue]) {
    let index: BTreeMap<&str, usize> = queues.iter().enumerate().map(|(i, q)| (q.name.as_str(), i)).collect();
    for (i, rq) in raw.iter().enumerate() {
        let Some(p) = &rq.value.parent else { continue };
        let path = format!("spec.queues[{i}].parent");
        if queues[i].name == "root" {
            v.err(at(p), path, "the `root` queue is the top of the queue tree and cannot have a parent");
            continue;
        }
        if p.value == queues[i].name {
            v.err(at(p), path, format!("queue `{}` cannot be its own parent", p.value));
            continue;
        }
        if p.value != "root" && !index.contains_key(p.value.as_str()) {
            let known: Vec<&str> = index.keys().copied().collect();
            v.err(
                at(p),
                path,
                format!("parent queue `{}` does not exist; defined queues: {} (or `root`)", p.value, known.join(", ")),
            );
            continue;
        }
        v.parent_queues.insert(p.value.clone());
        // Walk up; coming back to this queue is a cycle (reported once per member).
        let mut cur = index.get(p.value.as_str()).copied();
        let mut steps = 0;
        while let Some(c) = cur {
            if c == i {
                v.err(
                    at(p),
                    path.clone(),
                    format!("queue `{}` is its own ancestor (cycle in `parent`)", queues[i].name),
                );
                break;
            }
            steps += 1;
            if steps > queues.len() {
                break;
            }
            cur = queues[c].parent.as_deref().and_then(|n| index.get(n).copied());
        }
    }
}

fn queue_ref(v: &mut V<'_>, queues: &BTreeMap<String, QueueId>, name: &str, at: At, path: &str) -> Option<QueueId> {
    let q = queues.get(name).copied();
    if q.is_none() {
        let known: Vec<&str> = queues.keys().map(String::as_str).collect();
        v.err(at, path, format!("queue `{name}` does not exist; defined queues: {}", known.join(", ")));
    } else if v.parent_queues.contains(name) {
        v.err(at, path, format!("queue `{name}` has child queues; jobs go to leaf queues (Volcano rejects them)"));
        return None;
    }
    q
}

/// What [`synthetic`] needs besides the raw source.
struct SynCtx<'a> {
    index: usize,
    path: &'a str,
    queues: &'a BTreeMap<String, QueueId>,
    max_gpus_per_node: i64,
    base: &'a Path,
}

/// `synthetic.models`: catalog models and their weights, in name order; empty when
/// absent or after an error.
fn model_mix(v: &mut V<'_>, s: &RawSynthetic, path: &str) -> Vec<(JobProfile, f64)> {
    let Some(m) = &s.models else { return Vec::new() };
    let mpath = format!("{path}.synthetic.models");
    if s.model.is_some() {
        v.err(at(m), &mpath, "give either `model` (one model) or `models` (a mix), not both");
        return Vec::new();
    }
    if m.value.is_empty() {
        v.err(at(m), &mpath, "expected a map of catalog model → positive weight, e.g. {resnet-50: 3, llama-7b: 1}");
        return Vec::new();
    }
    let before = v.errors.len();
    let mut out = Vec::new();
    for (name, &w) in &m.value {
        if !(w > 0.0 && w.is_finite()) {
            v.err(at(m), format!("{mpath}.{name}"), format!("weight must be a positive number, got {w}"));
        }
        match lahar_core::comm::runtime::lookup(name) {
            Some(p) => out.push((JobProfile::from_catalog(p), w)),
            None => {
                let known: Vec<&str> = lahar_core::comm::runtime::CATALOG.iter().map(|c| c.name).collect();
                v.err(
                    at(m),
                    format!("{mpath}.{name}"),
                    format!("unknown model `{name}`; the catalog has: {}", known.join(", ")),
                );
            }
        }
    }
    if v.errors.len() > before { Vec::new() } else { out }
}

/// The run times of `duration.empirical`'s trace, streamed once per (file, format).
fn empirical_durations(
    v: &mut V<'_>,
    e: &RawEmpirical,
    base: &Path,
    cache: &mut BTreeMap<(PathBuf, &'static str), Vec<SimDuration>>,
    dpath: &str,
) -> Option<Vec<SimDuration>> {
    let Some(format) = lahar_traces::Format::from_name(&e.format.value) else {
        let known: Vec<&str> = lahar_traces::Format::ALL.iter().map(|f| f.name()).collect();
        v.err(
            at(&e.format),
            format!("{dpath}.format"),
            format!("unknown trace format `{}`; expected one of: {}", e.format.value, known.join(", ")),
        );
        return None;
    };
    let file = base.join(&e.trace.value);
    let key = (file.clone(), format.name());
    if let Some(d) = cache.get(&key) {
        return Some(d.clone());
    }
    let mut durations = Vec::new();
    // Only run times are kept, so submit times need no origin pass: a fixed origin of
    // 0 reads the file once (every format's submit times are ≥ 0).
    let opts = lahar_traces::ImportOptions { origin: lahar_traces::TimeOrigin::At(0), ..Default::default() };
    match lahar_traces::stream(format, &file, &opts, &mut |j| {
        durations.push(j.duration);
        Ok(())
    }) {
        Ok(_) if durations.is_empty() => {
            v.err(at(&e.trace), format!("{dpath}.trace"), format!("`{}` has no job with a run time", file.display()));
            None
        }
        Ok(_) => {
            cache.insert(key, durations.clone());
            Some(durations)
        }
        Err(err) => {
            v.err(at(&e.trace), format!("{dpath}.trace"), err.to_string());
            None
        }
    }
}

/// `synthetic.checkpointInterval`.
fn checkpoint_interval(v: &mut V<'_>, c: &Spanned<RawInterval>, path: &str) -> Option<IntervalDist> {
    let cpath = format!("{path}.synthetic.checkpointInterval");
    match &c.value {
        RawInterval::Fixed(d) => match parse_duration(d) {
            Ok(d) => Some(IntervalDist::Fixed(d)),
            Err(e) => {
                v.err(at(c), cpath, e.to_string());
                None
            }
        },
        RawInterval::Dist(d) => match (&d.uniform, &d.lognormal) {
            (Some(u), None) => {
                let upath = format!("{cpath}.uniform");
                let min = v.duration(&u.value.min, &format!("{upath}.min"))?;
                let max = v.duration(&u.value.max, &format!("{upath}.max"))?;
                if max < min || max == SimDuration::ZERO {
                    v.err(at(&u.value.max), format!("{upath}.max"), "must be longer than 0 and at least `min`");
                    return None;
                }
                Some(IntervalDist::Uniform { min, max })
            }
            (None, Some(ln)) => {
                let lpath = format!("{cpath}.lognormal");
                let (median, sigma, min, max) = lognormal_parts(v, &ln.value, &lpath)?;
                Some(IntervalDist::LogNormal { median, sigma, min, max })
            }
            _ => {
                v.err(
                    at(c),
                    cpath,
                    "expected a duration, or exactly one of `uniform: {min, max}`, `lognormal: {median, sigma}`",
                );
                None
            }
        },
    }
}

// `min` (default 1 s) and `max` (default 365 d) of a run-time distribution.
fn clamps(
    v: &mut V<'_>,
    min: &Option<Spanned<String>>,
    max: &Option<Spanned<String>>,
    dpath: &str,
) -> (SimDuration, SimDuration) {
    let min = min.as_ref().and_then(|m| v.duration(m, &format!("{dpath}.min"))).unwrap_or(SimDuration::from_secs(1));
    let max = max
        .as_ref()
        .and_then(|m| v.duration(m, &format!("{dpath}.max")))
        .unwrap_or(SimDuration::from_secs(365 * 86400));
    (min, max)
}

/// A lognormal's `(median, sigma, min, max)`; `None` after an error.
fn lognormal_parts(
    v: &mut V<'_>,
    ln: &RawLognormal,
    dpath: &str,
) -> Option<(SimDuration, f64, SimDuration, SimDuration)> {
    let before = v.errors.len();
    let median = v.duration(&ln.median, &format!("{dpath}.median"));
    if median == Some(SimDuration::ZERO) {
        v.err(at(&ln.median), format!("{dpath}.median"), "must be longer than 0");
    }
    if !(ln.sigma.value >= 0.0 && ln.sigma.value.is_finite()) {
        v.err(at(&ln.sigma), format!("{dpath}.sigma"), format!("must be a number ≥ 0, got {}", ln.sigma.value));
    }
    let (min, max) = clamps(v, &ln.min, &ln.max, dpath);
    (v.errors.len() == before).then(|| (median.unwrap_or_default(), ln.sigma.value, min, max))
}

fn synthetic(
    v: &mut V<'_>,
    s: &RawSynthetic,
    ctx: &SynCtx<'_>,
    empirical_cache: &mut BTreeMap<(PathBuf, &'static str), Vec<SimDuration>>,
) -> Option<SyntheticSpec> {
    let (index, path, queues, max_gpus_per_node) = (ctx.index, ctx.path, ctx.queues, ctx.max_gpus_per_node);
    let before = v.errors.len();
    let mut jobs = v.count(&s.jobs, &format!("{path}.synthetic.jobs"), 0).unwrap_or(0);
    if jobs as usize > MAX_JOBS {
        v.err(
            at(&s.jobs),
            format!("{path}.synthetic.jobs"),
            format!("{jobs} jobs; lahar simulates at most {MAX_JOBS} per run"),
        );
        jobs = 0;
    }
    let arrival = match &s.arrival {
        RawArrival::Poisson(p) => {
            let rate = p.rate_per_hour.value;
            if !(rate > 0.0 && rate.is_finite()) {
                v.err(
                    at(&p.rate_per_hour),
                    format!("{path}.synthetic.arrival.poisson.ratePerHour"),
                    format!("must be a positive number, got {rate}"),
                );
            }
            Arrival::Poisson { rate_per_hour: rate }
        }
        RawArrival::Bursts(b) => {
            let bpath = format!("{path}.synthetic.arrival.bursts");
            let size = v.count(&b.size, &format!("{bpath}.size"), 1).unwrap_or(1);
            let every = v.duration(&b.every, &format!("{bpath}.every"));
            if every == Some(SimDuration::ZERO) {
                v.err(at(&b.every), format!("{bpath}.every"), "must be longer than 0");
            }
            let jitter = b.jitter.as_ref().and_then(|j| v.duration(j, &format!("{bpath}.jitter"))).unwrap_or_default();
            Arrival::Bursts { size, every: every.unwrap_or_default(), jitter }
        }
        RawArrival::Diurnal(d) => {
            let dpath = format!("{path}.synthetic.arrival.diurnal");
            let factors = |v: &mut V<'_>, x: &Spanned<Vec<f64>>, field: &str, want: usize| -> Vec<f64> {
                let p = format!("{dpath}.{field}");
                if x.value.len() != want {
                    v.err(at(x), &p, format!("expected {want} numbers ≥ 0, got {}", x.value.len()));
                } else if let Some((i, r)) = x.value.iter().enumerate().find(|(_, r)| !(**r >= 0.0 && r.is_finite())) {
                    v.err(at(x), format!("{p}[{i}]"), format!("must be a number ≥ 0, got {r}"));
                } else if x.value.iter().all(|&r| r == 0.0) {
                    v.err(at(x), &p, "at least one value must be positive");
                } else {
                    return x.value.clone();
                }
                vec![1.0; want]
            };
            let rates = factors(v, &d.rate_per_hour, "ratePerHour", 24);
            let weekly = d.weekly.as_ref().map(|w| factors(v, w, "weekly", 7)).unwrap_or_else(|| vec![1.0; 7]);
            Arrival::Diurnal {
                rate_per_hour: rates.try_into().expect("24 values"),
                weekly: weekly.try_into().expect("7 values"),
            }
        }
    };
    let gpus: Vec<(u32, f64)> = match &s.gpus.value {
        RawGpus::Map(m) => {
            let g: Vec<(u32, f64)> = m.iter().map(|(&g, &w)| (g, w)).collect();
            if g.is_empty() || g.iter().any(|&(_, w)| !(w > 0.0 && w.is_finite())) {
                v.err(
                    at(&s.gpus),
                    format!("{path}.synthetic.gpus"),
                    "expected a map of GPU count → positive weight, e.g. {1: 60, 8: 30, 32: 10}",
                );
            }
            g
        }
        RawGpus::Named(n) => match named_gpus(n) {
            Some(d) => d.to_vec(),
            None => {
                let known: Vec<&str> = lahar_workloads::synthetic::NAMED_GPU_DISTS.iter().map(|(n, _)| *n).collect();
                v.err(
                    at(&s.gpus),
                    format!("{path}.synthetic.gpus"),
                    format!(
                        "unknown GPU-count distribution `{n}`; expected one of: {}, or a map GPU count → weight",
                        known.join(", ")
                    ),
                );
                Vec::new()
            }
        },
    };
    let gpus_per_pod = match &s.gpus_per_pod {
        Some(g) => v.count(g, &format!("{path}.synthetic.gpusPerPod"), 1).unwrap_or(1),
        None => max_gpus_per_node.max(1) as u32,
    };
    let cpu = match &s.cpu_per_gpu {
        Some(q) => v.quantity("cpu", &q.value, at(q), &format!("{path}.synthetic.cpuPerGpu")).map(|x| x.1).unwrap_or(0),
        None => 1000,
    };
    let mem = match &s.memory_per_gpu {
        Some(q) => {
            v.quantity("memory", &q.value, at(q), &format!("{path}.synthetic.memoryPerGpu")).map(|x| x.1).unwrap_or(0)
        }
        None => 4 << 30,
    };
    let duration = match &s.duration {
        RawDuration::Lognormal(ln) => {
            let dpath = format!("{path}.synthetic.duration.lognormal");
            let (median, sigma, min, max) = lognormal_parts(v, ln, &dpath).unwrap_or_default();
            DurationDist::LogNormal { median, sigma, min, max }
        }
        RawDuration::Weibull(w) => {
            let dpath = format!("{path}.synthetic.duration.weibull");
            let scale = v.duration(&w.scale, &format!("{dpath}.scale"));
            if scale == Some(SimDuration::ZERO) {
                v.err(at(&w.scale), format!("{dpath}.scale"), "must be longer than 0");
            }
            if !(w.shape.value > 0.0 && w.shape.value.is_finite()) {
                v.err(at(&w.shape), format!("{dpath}.shape"), format!("must be a number > 0, got {}", w.shape.value));
            }
            let (min, max) = clamps(v, &w.min, &w.max, &dpath);
            DurationDist::Weibull { shape: w.shape.value, scale: scale.unwrap_or_default(), min, max }
        }
        RawDuration::Empirical(e) => {
            let dpath = format!("{path}.synthetic.duration.empirical");
            let (min, max) = clamps(v, &e.min, &e.max, &dpath);
            let durations = empirical_durations(v, e, ctx.base, empirical_cache, &dpath).unwrap_or_default();
            DurationDist::Empirical { durations, min, max }
        }
    };
    let queue_list = match &s.queues {
        Some(m) => {
            let mut out = Vec::new();
            for (name, &w) in &m.value {
                if !(w > 0.0 && w.is_finite()) {
                    v.err(
                        at(m),
                        format!("{path}.synthetic.queues.{name}"),
                        format!("weight must be positive, got {w}"),
                    );
                }
                if let Some(q) = queue_ref(v, queues, name, at(m), &format!("{path}.synthetic.queues.{name}")) {
                    out.push((q, w));
                }
            }
            out
        }
        None => queues.values().map(|&q| (q, 1.0)).collect(),
    };
    let start = s.start.as_ref().and_then(|d| v.duration(d, &format!("{path}.synthetic.start"))).unwrap_or_default();
    let checkpoint = s.checkpoint_interval.as_ref().and_then(|c| checkpoint_interval(v, c, path));
    (v.errors.len() == before).then(|| SyntheticSpec {
        source: index,
        name_prefix: s.name_prefix.clone().unwrap_or_else(|| format!("syn{index}")),
        jobs,
        start: SimTime(start.micros()),
        arrival,
        gpus,
        gpus_per_pod,
        cpu_milli_per_gpu: cpu,
        memory_per_gpu: mem,
        duration,
        queues: queue_list,
        checkpoint_interval: checkpoint,
        priority: s.priority.unwrap_or(0),
        model_weights: Vec::new(),
    })
}

/// Whether some node can hold a pod. Pods "fit" a cluster that had errors (its node
/// list is incomplete): the cluster's own errors say what is wrong.
/// The source a warning's field path belongs to (`spec.workload[2]`), so warnings of
/// one kind about one source are counted together.
fn group(path: &str) -> &str {
    match path.find("].") {
        Some(i) if path.starts_with("spec.workload[") => &path[..=i],
        _ => path,
    }
}

fn fits_somewhere(v: &V<'_>, nodes: &[Node], req: &Resources, selector: &[(String, String)]) -> bool {
    v.cluster_broken
        || nodes
            .iter()
            .any(|n| req.fits_in(&n.allocatable) && selector.iter().all(|(k, val)| n.labels.get(k) == Some(val)))
}

fn largest(nodes: &[Node]) -> String {
    let m = nodes.iter().fold(Resources::ZERO, |a, n| a.max(&n.allocatable));
    format!(
        "{} GPUs, {} CPU, {} bytes of memory, {} pods",
        m.gpus_ceil(),
        m.cpu() as f64 / 1000.0,
        m.memory(),
        m.pods()
    )
}

fn check_synthetic_fit(v: &mut V<'_>, sp: &SyntheticSpec, nodes: &[Node], raw: &RawSynthetic, path: &str) {
    for &(g, _) in &sp.gpus {
        let per = g.min(sp.gpus_per_pod).max(if g == 0 { 0 } else { 1 });
        let scale = per.max(1) as i64;
        let req = Resources::new(sp.cpu_milli_per_gpu * scale, sp.memory_per_gpu * scale, per as i64 * 1000, 1);
        if !fits_somewhere(v, nodes, &req, &[]) {
            v.err(at(&raw.gpus), format!("{path}.synthetic.gpus"), format!(
                "jobs of {g} GPUs get pods of {per} GPUs, {} CPU and {} bytes of memory, which no node can hold (largest node: {})",
                req.cpu() as f64 / 1000.0, req.memory(), largest(nodes)
            ));
        }
    }
}

fn check_job_fit(v: &mut V<'_>, j: &JobSpec, nodes: &[Node], raw: &Spanned<RawJob>, path: &str) {
    for (i, t) in j.tasks.iter().enumerate() {
        if t.replicas > 0 && !fits_somewhere(v, nodes, &t.requests, &t.node_selector) {
            let why =
                if t.node_selector.is_empty() { String::new() } else { " with a matching nodeSelector".to_string() };
            v.warn(UNSCHEDULABLE, 1, at(&raw.value.tasks[i]), format!("{path}.tasks[{i}]"), format!(
                "job `{}` task `{}`: a pod requests {} GPUs, {} CPU, {} bytes of memory, but no node{why} can hold it (largest node: {}); the job stays pending",
                j.name, t.name, t.requests.gpu_milli() as f64 / 1000.0, t.requests.cpu() as f64 / 1000.0, t.requests.memory(), largest(nodes)
            ));
            return;
        }
    }
}

/// Warning kind: a job with a pod no node can hold.
pub(super) const UNSCHEDULABLE: &str = "unschedulable-pods";
/// Warning kind: a gang whose minimum exceeds the whole cluster.
const GANG_EXCEEDS_CLUSTER: &str = "gang-exceeds-cluster";
/// Warning kind: trace rows skipped.
const TRACE_ROWS_SKIPPED: &str = "trace-rows-skipped";

/// A job's model profile, shared by the jobs of a source that names one.
type Profile = Option<Arc<JobProfile>>;

/// A job with where it came from: the merged stream is ordered by (submit,
/// source, position in the source).
struct Tagged {
    source: usize,
    index: usize,
    job: JobSpec,
    profile: Profile,
}

/// Warns about jobs whose gang minimum (its smallest `minAvailable` pods) needs more
/// than the whole cluster has: they can never start.
fn check_gangs(v: &mut V<'_>, tagged: &[Tagged], nodes: &[Node], job_path: impl Fn(usize, usize) -> String) {
    if v.cluster_broken {
        return;
    }
    let total = nodes.iter().fold(Resources::ZERO, |a, n| a + n.allocatable);
    for Tagged { source: s, index: i, job: j, .. } in tagged {
        // A pod no node holds is reported already.
        if j.tasks.iter().any(|t| t.replicas > 0 && !fits_somewhere(v, nodes, &t.requests, &t.node_selector)) {
            continue;
        }
        let mut pods: Vec<Resources> =
            j.tasks.iter().flat_map(|t| std::iter::repeat_n(t.requests, t.replicas as usize)).collect();
        pods.sort_by_key(|r| (r.gpu_milli(), r.cpu(), r.memory()));
        let need = pods.iter().take(j.min_available as usize).fold(Resources::ZERO, |a, r| a + *r);
        if !need.fits_in(&total) {
            v.warn(GANG_EXCEEDS_CLUSTER, 1, None, job_path(*s, *i), format!(
                "job `{}`: its gang of {} pods needs {} GPUs, {} CPU, {} bytes of memory at least, more than the whole cluster has ({} GPUs, {} CPU, {} bytes); it can never start",
                j.name, j.min_available, need.gpu_milli() as f64 / 1000.0, need.cpu() as f64 / 1000.0, need.memory(),
                total.gpu_milli() as f64 / 1000.0, total.cpu() as f64 / 1000.0, total.memory()
            ));
        }
    }
}

fn policies(v: &mut V<'_>, raw: Option<&Vec<Spanned<RawPolicy>>>, path: &str) -> Vec<Policy> {
    let mut out = Vec::new();
    for (i, p) in raw.into_iter().flatten().enumerate() {
        let ev = PolicyEvent::parse(&p.value.event.value);
        let ac = PolicyAction::parse(&p.value.action.value);
        if ev.is_none() {
            v.err(
                at(&p.value.event),
                format!("{path}.policies[{i}].event"),
                format!(
                    "unknown event `{}`; expected *, PodEvicted, PodFailed, TaskCompleted or Unknown",
                    p.value.event.value
                ),
            );
        }
        if ac.is_none() {
            v.err(at(&p.value.action), format!("{path}.policies[{i}].action"), format!("unknown action `{}`; expected RestartJob, RestartTask, RestartPod, AbortJob, TerminateJob or CompleteJob", p.value.action.value));
        }
        if let (Some(event), Some(action)) = (ev, ac) {
            out.push(Policy { event, action });
        }
    }
    out
}

/// `spec.priorityClasses`: user classes added to Kubernetes' built-in ones.
fn priority_classes(v: &mut V<'_>, list: Option<&[Spanned<RawPriorityClass>]>) -> PriorityClasses {
    let mut out = PriorityClasses::builtin();
    for (i, c) in list.unwrap_or_default().iter().enumerate() {
        let path = format!("spec.priorityClasses[{i}]");
        let r = &c.value;
        let global_default = r.global_default.as_ref().is_some_and(|g| g.value);
        let preemption_policy = match &r.preemption_policy {
            Some(p) if !["PreemptLowerPriority", "Never"].contains(&p.value.as_str()) => {
                v.err(
                    at(p),
                    format!("{path}.preemptionPolicy"),
                    format!("expected `PreemptLowerPriority` or `Never`, got `{}`", p.value),
                );
                continue;
            }
            Some(p) => p.value.clone(),
            None => "PreemptLowerPriority".into(),
        };
        if r.name.value.is_empty() {
            v.err(at(&r.name), format!("{path}.name"), "expected a non-empty name");
            continue;
        }
        if r.value.value < i64::from(i32::MIN) {
            v.err(
                at(&r.value),
                format!("{path}.value"),
                format!("must be at least {}, got {}", i32::MIN, r.value.value),
            );
            continue;
        }
        if let Some((field, m)) = out.check(&r.name.value, r.value.value, global_default) {
            let at = match field {
                "value" => at(&r.value),
                "globalDefault" => r.global_default.as_ref().map_or(at(c), at),
                _ => at(&r.name),
            };
            v.err(at, format!("{path}.{field}"), m);
            continue;
        }
        out.by_name.insert(
            r.name.value.clone(),
            PriorityClass { value: r.value.value as i32, global_default, preemption_policy },
        );
    }
    out
}

fn job(
    v: &mut V<'_>,
    rj: &Spanned<RawJob>,
    path: &str,
    queues: &BTreeMap<String, QueueId>,
    node_ids: &BTreeMap<String, NodeId>,
    classes: &PriorityClasses,
    iterations: bool,
) -> Option<JobSpec> {
    let before = v.errors.len();
    let r = &rj.value;
    // Job priority: the named class's value (as Volcano reads the PodGroup's class),
    // else `priority`, else the global-default class, else 0. Pods without their own
    // `priority` get the class's value too (Kubernetes admission).
    let class = r.priority_class_name.as_ref().and_then(|c| match classes.by_name.get(&c.value) {
        Some(pc) => {
            if r.priority.is_some() {
                v.err(
                    at(c),
                    format!("{path}.priorityClassName"),
                    "give either `priority` or `priorityClassName`, not both (the class sets the priority)",
                );
            }
            Some((c.value.clone(), pc.value))
        }
        None => {
            let known: Vec<&str> = classes.by_name.keys().map(String::as_str).collect();
            v.err(
                at(c),
                format!("{path}.priorityClassName"),
                format!("PriorityClass `{}` does not exist; defined classes: {}", c.value, known.join(", ")),
            );
            None
        }
    });
    let job_priority = match &class {
        Some((_, value)) => *value,
        None => r.priority.or(classes.global_default()).unwrap_or(0),
    };
    let pod_priority = class.as_ref().map(|c| c.1).or(classes.global_default()).unwrap_or(1);
    if r.name.value.is_empty() {
        v.err(at(&r.name), format!("{path}.name"), "expected a non-empty name");
    }
    let submit = r.submit_at.as_ref().and_then(|d| v.duration(d, &format!("{path}.submitAt"))).unwrap_or_default();
    let queue = match &r.queue {
        Some(q) => queue_ref(v, queues, &q.value, at(q), &format!("{path}.queue")),
        None => queue_ref(v, queues, "default", at(rj), &format!("{path}.queue")),
    };
    let duration = match (&r.duration, iterations) {
        (Some(d), false) => v.duration(d, &format!("{path}.duration")),
        (None, true) => Some(SimDuration::ZERO), // priced from the model once the cluster is known
        (Some(d), true) => {
            v.err(at(d), format!("{path}.duration"), "give either `duration` or `model.iterations`, not both");
            None
        }
        (None, false) => {
            v.err(at(rj), format!("{path}.duration"), "expected `duration` (e.g. 2h), or a `model` with `iterations`");
            None
        }
    };
    if r.tasks.is_empty() {
        v.err(at(rj), format!("{path}.tasks"), "a job needs at least one task");
    }
    let mut task_names: BTreeMap<String, usize> = BTreeMap::new();
    for (i, t) in r.tasks.iter().enumerate() {
        if task_names.insert(t.value.name.value.clone(), i).is_some() {
            v.err(
                at(&t.value.name),
                format!("{path}.tasks[{i}].name"),
                format!("task `{}` is defined twice", t.value.name.value),
            );
        }
    }
    let mut tasks = Vec::new();
    for (i, rt) in r.tasks.iter().enumerate() {
        let t = &rt.value;
        let tpath = format!("{path}.tasks[{i}]");
        let mut replicas = v.count(&t.replicas, &format!("{tpath}.replicas"), 0).unwrap_or(0);
        if replicas as usize > MAX_REPLICAS {
            let why = format!("{replicas} replicas; a task has at most {MAX_REPLICAS}");
            v.err(at(&t.replicas), format!("{tpath}.replicas"), why);
            replicas = 0;
        }
        let min_available = match &t.min_available {
            Some(m) => {
                let x = v.count(m, &format!("{tpath}.minAvailable"), 0).unwrap_or(0);
                if x > replicas {
                    v.err(
                        at(m),
                        format!("{tpath}.minAvailable"),
                        format!("must not exceed replicas ({replicas}), got {x}"),
                    );
                }
                x
            }
            None => replicas,
        };
        let mut requests = Resources::ZERO;
        if let Some(res) = &t.resources {
            for (k, q) in &res.value {
                if k == "pods" {
                    v.err(
                        at(res),
                        format!("{tpath}.resources.pods"),
                        "every pod takes one `pods` slot; do not request it",
                    );
                    continue;
                }
                if let Some((d, x)) = v.quantity(k, q, at(res), &format!("{tpath}.resources.{k}")) {
                    requests.set(d, x);
                }
            }
        }
        requests.set(PODS, 1);
        let mut depends_on = Vec::new();
        let mut depends_any = false;
        if let Some(d) = &t.depends_on {
            for n in &d.value.name {
                match task_names.get(n) {
                    Some(&k) if k == i => {
                        v.err(at(d), format!("{tpath}.dependsOn"), format!("task `{n}` cannot depend on itself"))
                    }
                    Some(&k) => depends_on.push(k),
                    None => v.err(
                        at(d),
                        format!("{tpath}.dependsOn"),
                        format!("task `{n}` does not exist in job `{}`", r.name.value),
                    ),
                }
            }
            depends_any = match d.value.iteration.as_deref() {
                None | Some("all") => false,
                Some("any") => true,
                Some(other) => {
                    v.err(
                        at(d),
                        format!("{tpath}.dependsOn.iteration"),
                        format!("expected `any` or `all`, got `{other}`"),
                    );
                    false
                }
            };
        }
        tasks.push(TaskSpec {
            name: lahar_core::text::shared(&t.name.value),
            replicas,
            min_available,
            requests,
            priority: t.priority.unwrap_or(pod_priority),
            depends_on,
            depends_any,
            node_selector: t.node_selector.clone().unwrap_or_default().into_iter().collect(),
            policies: policies(v, t.policies.as_ref(), &tpath),
            preemptable: t.preemptable.unwrap_or(true),
        });
    }
    if let Some(cycle) = lahar_core::job::dependency_cycle(&tasks) {
        v.err(at(rj), format!("{path}.tasks"), format!("dependsOn cycle: {cycle}"));
    }
    let total: u32 = tasks.iter().map(|t| t.replicas).sum();
    let sum_min: u32 = tasks.iter().map(|t| t.min_available).sum();
    let min_available = match &r.min_available {
        Some(m) => {
            let x = v.count(m, &format!("{path}.minAvailable"), 0).unwrap_or(0);
            if x > total {
                v.err(
                    at(m),
                    format!("{path}.minAvailable"),
                    format!("must not exceed the total replicas of all tasks ({total}), got {x}"),
                );
            }
            x
        }
        None => sum_min,
    };
    let max_retry = r.max_retry.as_ref().and_then(|m| v.count(m, &format!("{path}.maxRetry"), 0)).unwrap_or(3);
    let checkpoint = r.checkpoint_interval.as_ref().and_then(|d| v.duration(d, &format!("{path}.checkpointInterval")));
    let grace = r
        .termination_grace_period
        .as_ref()
        .and_then(|d| v.duration(d, &format!("{path}.terminationGracePeriod")))
        .unwrap_or(DEFAULT_TERMINATION_GRACE);
    let network_topology = r.network_topology.as_ref().map(|nt| {
        let hard = match nt.value.mode.as_deref() {
            None | Some("hard") => true,
            Some("soft") => false,
            Some(other) => {
                v.err(
                    at(nt),
                    format!("{path}.networkTopology.mode"),
                    format!("expected `hard` or `soft`, got `{other}`"),
                );
                true
            }
        };
        let tier = nt
            .value
            .highest_tier_allowed
            .as_ref()
            .and_then(|t| v.count(t, &format!("{path}.networkTopology.highestTierAllowed"), 1));
        NetworkTopology { hard, highest_tier_allowed: tier }
    });
    let job_policies = policies(v, r.policies.as_ref(), path);
    let mut initial = Vec::new();
    if let Some(run) = &r.running {
        if submit.micros() != 0 {
            v.err(
                at(run),
                format!("{path}.running"),
                "pods can only be running from the start: leave `submitAt` out or 0",
            );
        }
        for (task, names) in &run.value {
            let Some(&t) = task_names.get(task) else {
                v.err(
                    at(run),
                    format!("{path}.running.{task}"),
                    format!("task `{task}` does not exist in job `{}`", r.name.value),
                );
                continue;
            };
            if names.len() as u32 > tasks[t].replicas {
                v.err(
                    at(run),
                    format!("{path}.running.{task}"),
                    format!("{} pods given as running but the task has {} replicas", names.len(), tasks[t].replicas),
                );
            }
            for (k, n) in names.iter().enumerate() {
                match node_ids.get(n) {
                    Some(&node) => initial.push((t, k as u32, node)),
                    None => v.err(at(run), format!("{path}.running.{task}[{k}]"), format!("node `{n}` does not exist")),
                }
            }
        }
    }
    let task_topology =
        r.task_topology.as_ref().map(|tt| task_topology(v, tt, &task_names, &format!("{path}.taskTopology")));
    if v.errors.len() != before {
        return None;
    }
    let mut j = JobSpec {
        name: r.name.value.clone(),
        namespace: lahar_core::text::shared(r.namespace.as_deref().unwrap_or("default")),
        kind: "VolcanoJob".into(),
        queue: queue?,
        priority_class: class.map(|c| c.0),
        priority: job_priority,
        submit: SimTime(submit.micros()),
        min_available,
        tasks,
        policies: job_policies,
        max_retry,
        min_resources: Resources::ZERO,
        network_topology,
        duration: duration?,
        checkpoint_interval: checkpoint,
        termination_grace: grace,
        user: lahar_core::text::shared(""),
        task_topology: task_topology.map(Box::new),
        initial,
        pod_names: None,
    };
    j.min_resources = j.compute_min_resources();
    Some(j)
}

/// `taskTopology`: every name is a task of the job, and no name repeats within a
/// group or in `taskOrder` (Volcano ignores the whole annotation otherwise).
fn task_topology<T>(
    v: &mut V<'_>,
    tt: &Spanned<RawTaskTopology>,
    task_names: &BTreeMap<String, T>,
    path: &str,
) -> TaskTopology {
    let check = |v: &mut V<'_>, group: &[String], gpath: String| {
        let mut seen = BTreeSet::new();
        for (k, name) in group.iter().enumerate() {
            // Empty names are skipped, as Volcano skips them.
            if name.is_empty() {
                continue;
            }
            if !task_names.contains_key(name) {
                let known: Vec<&str> = task_names.keys().map(String::as_str).collect();
                v.err(
                    at(tt),
                    format!("{gpath}[{k}]"),
                    format!("task `{name}` does not exist in the job; tasks: {}", known.join(", ")),
                );
            } else if !seen.insert(name.as_str()) {
                v.err(at(tt), format!("{gpath}[{k}]"), format!("task `{name}` is listed twice"));
            }
        }
    };
    let t = &tt.value;
    for (i, g) in t.affinity.iter().flatten().enumerate() {
        check(v, g, format!("{path}.affinity[{i}]"));
    }
    for (i, g) in t.anti_affinity.iter().flatten().enumerate() {
        check(v, g, format!("{path}.antiAffinity[{i}]"));
    }
    if let Some(o) = &t.task_order {
        check(v, o, format!("{path}.taskOrder"));
    }
    let clean = |g: &Vec<String>| g.iter().filter(|n| !n.is_empty()).cloned().collect::<Vec<String>>();
    let groups = |v: &Option<Vec<Vec<String>>>| {
        v.iter().flatten().map(clean).filter(|g| !g.is_empty()).collect::<Vec<Vec<String>>>()
    };
    TaskTopology {
        affinity: groups(&t.affinity),
        anti_affinity: groups(&t.anti_affinity),
        task_order: t.task_order.as_ref().map(clean).unwrap_or_default(),
    }
}

fn network_topology(v: &mut V<'_>, nt: &Spanned<RawNetworkTopology>, path: &str) -> NetworkTopology {
    let hard = match nt.value.mode.as_deref() {
        None | Some("hard") => true,
        Some("soft") => false,
        Some(other) => {
            v.err(at(nt), format!("{path}.mode"), format!("expected `hard` or `soft`, got `{other}`"));
            true
        }
    };
    let tier =
        nt.value.highest_tier_allowed.as_ref().and_then(|t| v.count(t, &format!("{path}.highestTierAllowed"), 1));
    NetworkTopology { hard, highest_tier_allowed: tier }
}
