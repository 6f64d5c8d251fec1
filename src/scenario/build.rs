//! [`Validated`] → [`Scenario`]: the topology and cluster, and one pass over the
//! workload as the run will see it (synthetic jobs generated, traces read, every
//! source merged by submit time) for the checks that need every job — gangs
//! larger than the cluster, names used twice, the starting state, the
//! timeseries' size, jobs priced by their model — keeping only names and sums.
//! The jobs themselves are made again when the run reaches them
//! ([`super::workload`]).

use super::validate::{
    At, GANG_EXCEEDS_CLUSTER, MAX_SAMPLES, NO_RUN_TIME, Origin, Source, TRACE_ROWS_SKIPPED, UNSCHEDULABLE, V,
    Validated, fits_somewhere, largest, merge_warning,
};
use super::workload::{Health, Plan, Pricing, Tagged, Workload, merge};
use super::{Diagnostic, Scenario, ScenarioError, Warning};
use lahar_core::comm::runtime::CommRuntime;
use lahar_core::model::cluster::{Cluster, Node};
use lahar_core::model::job::JobSpec;
use lahar_core::model::resource::{PODS, Resources};
use lahar_core::model::topology::{Topology, TopologyError};
use lahar_core::util::time::SimTime;
use rustc_hash::{FxHashMap, FxHashSet};
use std::sync::Arc;

/// What a source's own checks found, reported in the sources' order before the
/// checks of the whole workload.
#[derive(Default)]
struct SourceFindings {
    /// Trace rows skipped: one warning per reason, never merged.
    skipped: Vec<Warning>,
    /// Jobs no node can hold (merged: one warning, counted).
    warnings: Vec<Warning>,
    /// Its errors (a trace that cannot be read or yields nothing, a job its model
    /// cannot run on): (where, field path, message).
    errors: Vec<(At, String, String)>,
    /// A synthetic source stops at its first job its model cannot run on (its
    /// position): the jobs from there on are not checked.
    stopped: Option<usize>,
}

/// Builds a validated scenario's cluster and checks its jobs.
pub(super) fn build(val: Validated<'_>) -> Result<Scenario, ScenarioError> {
    let Validated {
        mut v,
        name,
        seed,
        mut engine,
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
    } = val;
    // The topology needs no job: it is built first so the pass can price jobs,
    // and its errors are reported after the jobs', as a user fixes them.
    let mut topology_errors = Vec::new();
    let topology = match (fabric, decls) {
        (Some(f), _) => Topology::from_fabric(nodes.len(), &f).expect("fabric tiers validated"),
        (None, Some(d)) => match Topology::from_decls(nodes.len(), d, Vec::new()) {
            Ok(t) => t,
            Err(mut e) => {
                // The core knows nodes by index: name the node.
                if let TopologyError::TwoParents { what: "node", name, .. } = &mut e
                    && let Some(n) =
                        name.strip_prefix('#').and_then(|i| i.parse::<usize>().ok()).and_then(|i| nodes.get(i))
                {
                    *name = n.name.to_string();
                }
                topology_errors.push(e.to_string());
                Topology::flat(nodes.len())
            }
        },
        (None, None) => Topology::flat(nodes.len()),
    };
    let priced = sources.iter().any(|s| match s {
        Source::Synthetic { profile, mix, .. } => profile.iter().chain(mix).any(|p| p.iterations.is_some()),
        Source::Jobs { jobs, .. } => jobs.iter().any(|(_, p)| p.as_ref().is_some_and(|p| p.iterations.is_some())),
        Source::Trace { .. } => false,
    });
    super::validate::gpu_model::warnings(&mut v, &nodes, &comm.constants, priced);
    let mut price_errors: Vec<(&str, String)> = Vec::new();
    let pricing = match priced {
        false => None,
        true => match lahar_core::comm::CommModel::new(comm.constants.clone()) {
            Ok(model) => {
                let cluster = Cluster::new(nodes.clone(), v.names.clone(), topology.clone());
                let reference = CommRuntime::reference(&model, &cluster).map_err(|e| e.to_string());
                Some(Pricing { model, reference })
            }
            Err(e) => {
                price_errors.push(("spec.comm.constants", e.to_string()));
                None
            }
        },
    };
    // How each source makes its jobs; a trace is read once here for its order.
    let mut plans = Vec::with_capacity(sources.len());
    let mut findings: Vec<SourceFindings> = Vec::with_capacity(sources.len());
    let mut whence = Vec::with_capacity(sources.len());
    let mut checked = Vec::with_capacity(sources.len());
    for (s, source) in sources.into_iter().enumerate() {
        let mut f = SourceFindings::default();
        let here = |at: At| Origin { file: v.file.to_string(), at, path: format!("spec.workload[{s}]") };
        match source {
            Source::Synthetic { spec, profile, mix, network_topology, at, path } => {
                let field = if mix.is_empty() { "model" } else { "models" };
                checked.push(Check::Models(at, format!("{path}.synthetic.{field}")));
                plans.push(Plan::Synthetic { spec: Arc::new(*spec), seed, profile, mix: mix.into(), network_topology });
                whence.push(Whence::Source(here(at)));
            }
            Source::Trace { format, file, opts, allow_empty, at, path } => {
                let shown = file.display().to_string();
                plans.push(trace(&mut f, format, file, opts, allow_empty, at, &path));
                whence.push(Whence::Trace { file: shown, path: path.clone(), source: here(at) });
                checked.push(Check::Fits(at, path));
            }
            Source::Jobs { jobs, origins, compact } => {
                // Sorted by submit time (stable), each job's origin with it.
                let mut both: Vec<_> = jobs.into_iter().zip(origins).collect();
                both.sort_by_key(|((j, _), _)| j.submit);
                let (jobs, origins): (Vec<_>, Vec<_>) = both.into_iter().unzip();
                plans.push(Plan::Listed(jobs.into()));
                // Manifests' jobs are warned about at their source (their files
                // are not the scenario).
                whence.push(match compact {
                    true => Whence::Each(origins),
                    false => Whence::Manifests { each: origins, source: here(None) },
                });
                checked.push(Check::None);
            }
        }
        findings.push(f);
    }
    // The pass over every job.
    let total = nodes.iter().fold(Resources::ZERO, |a, n| a + n.allocatable);
    let mut gangs: Vec<Warning> = Vec::new();
    let mut unbounded: (usize, Option<String>) = (0, None);
    // `runTime: estimate` and jobs without one (they are planned with their run time).
    let estimates = baseline_options.run_time == lahar_policies::baselines::RunTime::Estimate;
    let mut no_estimate: (usize, Option<String>) = (0, None);
    // Jobs with a NUMA policy numa-aware will not look at (not Guaranteed).
    let numa = scheduler.models_numa();
    let mut burstable: (usize, Option<String>) = (0, None);
    // Jobs whose gang can never be valid: Volcano's gang plugin counts the pods
    // that exist, and dependent tasks' pods do not until their dependencies run.
    // Every conf of the run counts: the first and those the timeline reloads.
    let gang_confs = usize::from(scheduler.checks_gang()) + reloads.iter().filter(|c| c.runs_plugin("gang")).count();
    let gang_checked = gang_confs > 0;
    let mut short: (usize, Option<(String, u32, u32)>) = (0, None);
    // The latest end a job's own run time gives (a lower bound of the run's end).
    let mut last_end: Option<SimTime> = None;
    // Names by a 64-bit hash (8 bytes a job, not the names themselves); a hash
    // seen twice is checked by name in a second pass over those jobs alone.
    let mut names: FxHashSet<u64> = FxHashSet::default();
    let mut suspects: FxHashSet<u64> = FxHashSet::default();
    let mut last_submit: Option<SimTime> = None;
    // Some job has an autoscaler: the run has services.
    let mut autoscaled = false;
    // Services whose Serve deployment is missing or cannot be told.
    let mut serve_errors: Vec<Located> = Vec::new();
    let mut used = vec![Resources::ZERO; nodes.len()];
    let mut count = 0;
    // The fragmentation measure's target workload: every pod by shape.
    let models = lahar_core::frag::ModelTable::of_nodes(&nodes);
    let mut shapes: std::collections::BTreeMap<lahar_core::frag::Demand, u64> = Default::default();
    let health = Health::default();
    for mut t in merge(&plans, &health) {
        let f = &mut findings[t.source];
        if f.stopped.is_some() {
            continue;
        }
        match &checked[t.source] {
            Check::Models(at, field) => {
                if let Some(p) = &t.profile
                    && let Err(m) = p.check(t.job.total_gpus().max(0) as u32)
                {
                    f.errors.push((*at, field.clone(), format!("job `{}`: {m}", t.job.name)));
                    f.stopped = Some(t.index);
                    continue;
                }
            }
            Check::Fits(at, path) => unschedulable(&v, f, &nodes, &t.job, *at, path),
            Check::None => {}
        }
        count += 1;
        for task in &t.job.tasks {
            *shapes.entry(models.demand(task)).or_default() += u64::from(task.replicas);
        }
        gang(&v, &mut gangs, &t, &nodes, &total, &whence);
        if numa
            && t.job.tasks.iter().any(|task| {
                task.hints.as_ref().and_then(|h| h.numa.as_deref()).is_some_and(|a| {
                    !a.guaranteed && a.policy.is_some_and(|p| p != lahar_core::devices::numa::TopologyPolicy::None)
                })
            })
        {
            burstable.0 += 1;
            burstable.1.get_or_insert_with(|| format!("{}/{}", t.job.namespace, t.job.name));
        }
        if gang_checked && let Some(first) = first_wave_short(&t.job) {
            short.0 += 1;
            short.1.get_or_insert_with(|| (format!("{}/{}", t.job.namespace, t.job.name), first, t.job.min_available));
        }
        // A snapshot's pods say nothing of how long they run: with a session
        // limit (an operator's question about the next sessions) that is the
        // point, not a finding.
        let snapshot_limited = Some(t.source) == snapshot_source && engine.max_sessions.is_some();
        if estimates && t.job.estimate.is_none() {
            no_estimate.0 += 1;
            no_estimate.1.get_or_insert_with(|| format!("{}/{}", t.job.namespace, t.job.name));
        }
        // A job whose every task has its own run time ends when its pods have run it.
        let pods_end = !t.job.tasks.is_empty() && t.job.tasks.iter().all(|k| k.run_time.is_some());
        // A service serves until the run ends: that is what it is for.
        autoscaled |= t.job.autoscaler.is_some() || t.job.group.is_some() || t.job.ray_serve.is_some();
        let service = engine.services.iter().find(|sv| *sv.namespace == *t.job.namespace && sv.name == t.job.name);
        if let Some(sv) = service {
            serve_deployment(sv, &t.job, &mut serve_errors);
            serve_roles(sv, &t.job, &mut serve_errors);
        }
        if let Some((set, 0)) = &t.job.group
            && let Some(sv) = engine.services.iter().find(|sv| sv.namespace == set.namespace && sv.name == set.name)
        {
            serve_roles(sv, &t.job, &mut serve_errors);
        }
        let serves =
            t.job.autoscaler.is_some() || t.job.group.is_some() || t.job.ray_serve.is_some() || service.is_some();
        if t.job.duration.is_unbounded() && !snapshot_limited && !pods_end && !serves {
            unbounded.0 += 1;
            unbounded.1.get_or_insert_with(|| format!("{}/{}", t.job.namespace, t.job.name));
        }
        let h = name_hash(&t.job);
        if !names.insert(h) {
            suspects.insert(h);
        }
        last_submit = last_submit.max(Some(t.job.submit));
        if !t.job.duration.is_unbounded() {
            last_end = last_end.max(Some(t.job.submit.plus(t.job.duration)));
        }
        for &(task, _, n) in &t.job.initial {
            used[n.0 as usize] += t.job.tasks[task].requests;
        }
        if topology_errors.is_empty()
            && let Some(p) = &pricing
            && let Err(e) = p.price(&mut t.job, &t.profile)
        {
            price_errors.push(("spec.workload", e));
        }
    }
    drop(names);
    let stopped: Vec<usize> = findings.iter().map(|f| f.stopped.unwrap_or(usize::MAX)).collect();
    let twice = if suspects.is_empty() { Vec::new() } else { named_twice(&plans, &suspects, &stopped, &whence) };
    if let Some(e) = health.failure() {
        v.err(None, "spec.workload", e);
    }
    // What was found, in the order a user reads it: each source's own findings,
    // then the checks of the whole workload.
    for f in findings {
        v.warnings.extend(f.skipped);
        for w in f.warnings {
            v.warn_in(w);
        }
        for (at, path, msg) in f.errors {
            v.err(at, path, msg);
        }
    }
    for w in gangs {
        v.warn_in(w);
    }
    for (at, path, msg) in serve_errors {
        v.err(at, path, msg);
    }
    if let (n, Some(first)) = unbounded {
        run_times(&mut v, n, &first, &engine);
    }
    if let (n, Some(first)) = no_estimate {
        let message = format!(
            "{n} job{} no run-time estimate (SWF field 9, `lahar.io/estimate`, a Job's `activeDeadlineSeconds`, `estimate`, `estimateFactor`), the first `{first}`: `runTime: estimate` plans {} with {} actual run time",
            if n == 1 { " has" } else { "s have" },
            if n == 1 { "it" } else { "them" },
            if n == 1 { "its" } else { "their" },
        );
        let file = v.file.to_string();
        let path = "spec.scheduler.runTime".to_string();
        let kind = super::validate::NO_ESTIMATE;
        v.warnings.push(Warning { kind, count: n as u64, file, at: None, path, message, first_of_many: false });
    }
    if let (n, Some((first, pods, min))) = short {
        let confs = 1 + reloads.len();
        let (can, only) = if gang_confs == confs {
            ("can never start", String::new())
        } else {
            let k =
                format!("{gang_confs} of the run's {confs} confs (spec.scheduler's and those spec.timeline reloads)");
            ("cannot start while a conf with the gang plugin is in force", format!(" ({k} have it)"))
        };
        let message = format!(
            "{n} job(s) {can} (the first `{first}`: its gang needs {min} pods, and only {pods} exist before a task dependency (dependsOn) is met): Volcano's gang plugin{only} refuses a job with fewer pods than its minimum (`Not enough valid tasks for gang-scheduling`), so the first pods never run and the others are never created"
        );
        workload_warning(&mut v, super::validate::GANG_NEVER_VALID, n, message);
    }
    if let (n, Some(first)) = burstable {
        let message = format!(
            "{n} job(s) name a NUMA topology policy for pods that are not Guaranteed (the first `{first}`): numa-aware looks only at Guaranteed pods (CPU and memory limits on every container, requests equal to them), so their policy changes nothing"
        );
        workload_warning(&mut v, super::validate::NUMA_NOT_GUARANTEED, n, message);
    }
    for (first, second, key) in twice {
        v.errors.push(Diagnostic {
            file: second.file,
            at: second.at,
            path: second.path,
            message: format!(
                "job `{key}` is defined twice (first at {}); job names must be unique per namespace",
                first.describe()
            ),
        });
    }
    check_starting_state(&mut v, &used, &nodes);
    for e in topology_errors {
        v.err(None, "spec.cluster.hyperNodes", e);
    }
    if !v.errors.is_empty() {
        return Err(ScenarioError { errors: v.errors });
    }
    for (path, e) in price_errors {
        v.err(None, path, e);
    }
    if !v.errors.is_empty() {
        return Err(ScenarioError { errors: v.errors });
    }
    let target = lahar_core::frag::Target::typical(shapes, lahar_core::frag::POPULARITY_PCT);
    let workload = Workload::new(plans, pricing, count, target);
    let faults = faults.map(|d| super::validate::faults::resolve(&mut v, d, &topology));
    if !v.errors.is_empty() {
        return Err(ScenarioError { errors: v.errors });
    }
    // A listed outage's start (its recovery is bounded by the run) keeps the run
    // going too: the timeseries reaches it.
    let last_outage = faults.as_ref().and_then(|f| f.outages.iter().map(|o| o.at).max());
    // So does the timeline's last action.
    let last_outage = last_outage.max(engine.timeline.iter().map(|s| s.at).max());
    check_samples(&mut v, &engine, last_submit.max(last_end).max(last_outage), sample_at);
    if !v.errors.is_empty() {
        return Err(ScenarioError { errors: v.errors });
    }
    let cluster = Cluster::new(nodes, std::mem::take(&mut v.names), topology);
    engine.autoscaled = autoscaled;
    Ok(Scenario {
        name,
        seed,
        sha256: String::new(),
        cluster,
        queues,
        budgets,
        clock_start,
        scheduler,
        baseline_options,
        workload,
        comm,
        engine,
        output_dir,
        dir: std::path::PathBuf::new(),
        warnings: v.warnings,
        text: String::new(),
        conf_text,
        reloads,
        reloads_text,
        placement,
        faults,
    })
}

/// A job's (namespace, name) hashed (stable: the same on every machine).
fn name_hash(j: &JobSpec) -> u64 {
    use std::hash::{Hash, Hasher};
    let mut h = rustc_hash::FxHasher::default();
    (&*j.namespace, j.name.as_str()).hash(&mut h);
    h.finish()
}

/// Where a source's jobs were defined.
enum Whence {
    /// A `jobs:` list: each job's own place, in the plan's (submit) order.
    Each(Vec<Origin>),
    /// Manifests: each job's document, in the plan's order, and the source's place.
    Manifests { each: Vec<Origin>, source: Origin },
    /// Generated jobs: the source's place.
    Source(Origin),
    /// A trace: its file as shown and the source's field path (a job's row is
    /// found again when a message needs it), and the source's place.
    Trace { file: String, path: String, source: Origin },
}

impl Whence {
    /// Where the scenario's warnings about the source's job `index` point.
    fn warn_at(&self, index: usize) -> &Origin {
        match self {
            Whence::Each(each) => &each[index],
            Whence::Manifests { source, .. } | Whence::Source(source) | Whence::Trace { source, .. } => source,
        }
    }
}

impl Origin {
    /// `file:line:column path`, as an error's position reads.
    fn describe(&self) -> String {
        match self.at {
            Some((l, c)) => format!("{}:{l}:{c} {}", self.file, self.path),
            None => format!("{} {}", self.file, self.path),
        }
    }
}

/// A job found by (source, position in the source's submit order).
type Found = (usize, usize);

/// The jobs, in the stream's order, whose (namespace, name) an earlier job has:
/// where the earlier and the later one were defined, and the name. A pass over
/// the jobs whose name hash is in `suspects` (a source's jobs from
/// `stopped[source]` on were not checked); a trace's rows are found again only
/// for the jobs named here.
fn named_twice(
    plans: &[Plan],
    suspects: &FxHashSet<u64>,
    stopped: &[usize],
    whence: &[Whence],
) -> Vec<(Origin, Origin, String)> {
    let mut seen: FxHashMap<(String, String), Found> = FxHashMap::default();
    let mut twice: Vec<(Found, Found, String)> = Vec::new();
    for t in merge(plans, &Health::default()) {
        if t.index >= stopped[t.source] || !suspects.contains(&name_hash(&t.job)) {
            continue;
        }
        let key = (t.job.namespace.to_string(), t.job.name.clone());
        match seen.get(&key) {
            Some(&first) => twice.push((first, (t.source, t.index), format!("{}/{}", key.0, key.1))),
            None => {
                seen.insert(key, (t.source, t.index));
            }
        }
    }
    let rows = trace_rows(plans, whence, twice.iter().flat_map(|(a, b, _)| [*a, *b]));
    let origin = |(s, i): Found| -> Origin {
        match &whence[s] {
            Whence::Each(each) | Whence::Manifests { each, .. } => each[i].clone(),
            Whence::Source(o) => Origin { path: format!("{} (its generated job {})", o.path, i + 1), ..o.clone() },
            Whence::Trace { file, path, source } => match rows.get(&(s, i)) {
                Some(l) => {
                    Origin { file: file.clone(), at: Some((l.line, 1)), path: format!("{path} (row {})", l.row) }
                }
                None => source.clone(),
            },
        }
    };
    twice.into_iter().map(|(a, b, key)| (origin(a), origin(b), key)).collect()
}

/// The rows of the trace jobs among `found`, read again (one pass per trace
/// concerned); a trace that cannot be read again gives none.
fn trace_rows(
    plans: &[Plan],
    whence: &[Whence],
    found: impl Iterator<Item = Found>,
) -> FxHashMap<Found, lahar_traces::Location> {
    let mut wanted: std::collections::BTreeMap<usize, std::collections::BTreeSet<usize>> = Default::default();
    for (s, i) in found {
        if matches!(whence[s], Whence::Trace { .. }) {
            wanted.entry(s).or_default().insert(i);
        }
    }
    let mut rows = FxHashMap::default();
    for (s, indices) in wanted {
        let Plan::Trace { format, file, opts, origin, rank, .. } = &plans[s] else { continue };
        // The plan's positions are in submit order; the file's, in file order.
        let in_file: Vec<(usize, usize)> = match rank {
            None => indices.iter().map(|&i| (i, i)).collect(),
            Some(rank) => {
                let mut v: Vec<(usize, usize)> = rank
                    .iter()
                    .enumerate()
                    .filter(|(_, r)| indices.contains(&(**r as usize)))
                    .map(|(k, r)| (k, *r as usize))
                    .collect();
                v.sort_unstable();
                v
            }
        };
        let positions: Vec<usize> = in_file.iter().map(|(k, _)| *k).collect();
        if let Ok(found) = lahar_traces::locate(*format, file, opts, *origin, &positions) {
            for ((_, i), l) in in_file.into_iter().zip(found) {
                if let Some(l) = l {
                    rows.insert((s, i), l);
                }
            }
        }
    }
    rows
}

/// The per-job check a source's kind needs in the pass.
enum Check {
    /// A synthetic source's models must run on each job's GPUs (field path of the models).
    Models(At, String),
    /// A trace's jobs should fit some node (where the source's path is written, its field path).
    Fits(At, String),
    /// Jobs given whole were checked as they were read.
    None,
}

/// Reads a trace source once: its skipped rows become one warning per reason, an
/// empty trace an error, and the plan re-reads it in submit order.
fn trace(
    f: &mut SourceFindings,
    format: lahar_traces::Format,
    file: std::path::PathBuf,
    opts: lahar_traces::ImportOptions,
    allow_empty: bool,
    at: At,
    tpath: &str,
) -> Plan {
    let mut submits: Vec<SimTime> = Vec::new();
    let read = lahar_traces::origin(format, &file, &opts).and_then(|origin| {
        let report = lahar_traces::stream_from(format, &file, &opts, origin, &mut |j: JobSpec| {
            submits.push(j.submit);
            Ok(())
        })?;
        Ok((origin, report))
    });
    let (origin, report) = match read {
        Ok(r) => r,
        Err(e) => {
            f.errors.push((at, format!("{tpath}.path"), e.to_string()));
            return Plan::Broken;
        }
    };
    let shown = file.display().to_string();
    for (reason, &n) in &report.skipped {
        let first = report.first_skipped.get(reason);
        let (at_row, why) = match first {
            Some((l, m)) => (Some((l.line, 1)), format!("; the first at line {} (row {}): {m}", l.line, l.row)),
            None => (None, String::new()),
        };
        // One warning per reason, already counted: never merged.
        f.skipped.push(Warning {
            kind: TRACE_ROWS_SKIPPED,
            count: n,
            file: shown.clone(),
            at: at_row,
            path: tpath.to_string(),
            message: format!("{n} trace rows skipped ({reason}){why}"),
            first_of_many: false,
        });
    }
    if submits.is_empty() && !allow_empty {
        f.errors.push((at, format!("{tpath}.path"), format!(
            "the trace yields no job ({} rows read, {} skipped); set `allowEmpty: true` on the source if that is expected",
            report.rows_read, report.skipped_total()
        )));
    }
    // Each job's place in submit order (stable), kept only when the file is not
    // in that order already.
    let rank = (!submits.is_sorted()).then(|| {
        let mut order: Vec<u32> = (0..submits.len() as u32).collect();
        order.sort_by_key(|&k| submits[k as usize]);
        let mut rank = vec![0u32; submits.len()];
        for (r, k) in order.into_iter().enumerate() {
            rank[k as usize] = r as u32;
        }
        rank.into()
    });
    Plan::Trace { format, file, opts, origin, count: submits.len(), rank }
}

/// A trace job with a pod no node can hold stays (pending), with a warning.
fn unschedulable(v: &V<'_>, f: &mut SourceFindings, nodes: &[Node], j: &JobSpec, at: At, tpath: &str) {
    let Some(task) = j.tasks.iter().find(|task| task.replicas > 0 && !fits_somewhere(v, nodes, task)) else {
        return;
    };
    let labels: Vec<String> = task
        .node_selector
        .iter()
        .map(|(k, v)| format!("{k}={v}"))
        .chain(task.node_label_in.iter().map(|(k, vs)| format!("{k} in {}", vs.join("|"))))
        .collect();
    let labelled = if labels.is_empty() { String::new() } else { format!(" on nodes labelled {}", labels.join(", ")) };
    let message = format!(
        "job `{}` of the trace requests pods that no node can hold{labelled} ({} GPUs, {} CPU, {} bytes of memory; largest node: {}); it stays pending",
        j.name,
        task.requests.gpu_milli() as f64 / 1000.0,
        task.requests.cpu() as f64 / 1000.0,
        task.requests.memory(),
        largest(&v.names, nodes, &task.requests)
    );
    let file = v.file.to_string();
    let w = Warning { kind: UNSCHEDULABLE, count: 1, file, at, path: tpath.to_string(), message, first_of_many: true };
    merge_warning(&mut f.warnings, w);
}

/// One warning counts the jobs without a run time (`n`, the first `first`): they
/// run until the run ends.
fn run_times(v: &mut V<'_>, n: usize, first: &str, engine: &lahar_core::engine::EngineConfig) {
    let until = match (engine.horizon, engine.max_sessions) {
        (Some(h), _) => format!("the horizon ({} s)", h.secs_string()),
        (None, Some(n)) => format!("the session limit ({n})"),
        (None, None) => "the last other event".to_string(),
    };
    let message = format!(
        "{n} job{} no run time (no `lahar.io/duration`, no `duration`, no `spec.defaults.duration`), the first `{first}`: {} until {until}",
        if n == 1 { " has" } else { "s have" },
        if n == 1 { "it runs" } else { "they run" },
    );
    v.warnings.push(Warning {
        kind: NO_RUN_TIME,
        count: n as u64,
        file: v.file.to_string(),
        at: None,
        path: "spec.defaults.duration".into(),
        message,
        first_of_many: false,
    });
}

/// The timeseries is sampled every interval up to the end: refuse one that would
/// be unreasonably long before any work (the end is the horizon, else at least the
/// last submission, the latest end of a job's own run time or a listed outage).
fn check_samples(
    v: &mut V<'_>,
    engine: &lahar_core::engine::EngineConfig,
    last_submit: Option<SimTime>,
    sample_at: Option<At>,
) {
    let sample = engine.sample_interval;
    let last = engine.horizon.map(|h| h.micros()).or(last_submit.map(|t| t.micros()));
    let Some(end) = last else { return };
    let rows = end / sample.micros().max(1);
    if rows > MAX_SAMPLES {
        let why = format!(
            "the timeseries would have at least {rows} rows up to {} s (at most {MAX_SAMPLES}); choose a longer interval",
            SimTime(end).secs_string()
        );
        v.err(sample_at.flatten(), "spec.output.sampleInterval", why);
    }
}

/// A warning about `n` jobs of the whole workload, after the workload's own.
fn workload_warning(v: &mut V<'_>, kind: &'static str, n: usize, message: String) {
    let file = v.file.to_string();
    let path = "spec.workload".into();
    v.warnings.push(Warning { kind, count: n as u64, file, at: None, path, message, first_of_many: false });
}

/// The pods a job has before any dependency is met (its tasks without
/// `dependsOn`), when they are fewer than its gang minimum that all its pods
/// reach: such a job is never valid for Volcano's gang plugin.
fn first_wave_short(job: &JobSpec) -> Option<u32> {
    let first: u32 = job.tasks.iter().filter(|t| t.depends_on.is_empty()).map(|t| t.replicas).sum();
    (first < job.min_available && job.total_replicas() >= job.min_available).then_some(first)
}

/// A starting state must fit the nodes (`used`: what the pods given as running
/// take on each node).
fn check_starting_state(v: &mut V<'_>, used: &[Resources], nodes: &[Node]) {
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
}

/// Warns about a job whose gang minimum (its smallest `minAvailable` pods) needs
/// more than the whole cluster (`total`) has: it can never start.
fn gang(v: &V<'_>, gangs: &mut Vec<Warning>, t: &Tagged, nodes: &[Node], total: &Resources, whence: &[Whence]) {
    let j = &t.job;
    if v.cluster_broken || nodes.is_empty() {
        return;
    }
    // A pod no node holds is reported already.
    if j.tasks.iter().any(|t| t.replicas > 0 && !fits_somewhere(v, nodes, t)) {
        return;
    }
    let mut pods: Vec<Resources> =
        j.tasks.iter().flat_map(|t| std::iter::repeat_n(t.requests, t.replicas as usize)).collect();
    pods.sort_by_key(|r| (r.gpu_milli(), r.cpu(), r.memory()));
    let need = pods.iter().take(j.min_available as usize).fold(Resources::ZERO, |a, r| a + *r);
    if !need.fits_in(total) {
        // Only the resources the gang asks more of than the cluster has: the
        // limit may be pod slots or an extended resource, not CPU or GPUs.
        let show = |d: usize, x: i64| if d == PODS { format!("{x} pod slots") } else { v.names.show(d, x as f64) };
        let over: Vec<usize> = (0..v.names.len()).filter(|&d| need.get(d) > total.get(d)).collect();
        let message = format!(
            "job `{}`: its gang of {} pods needs at least {}, more than the whole cluster has ({}); it can never start",
            j.name,
            j.min_available,
            over.iter().map(|&d| show(d, need.get(d))).collect::<Vec<_>>().join(" and "),
            over.iter().map(|&d| show(d, total.get(d))).collect::<Vec<_>>().join(", ")
        );
        let Origin { file, at, path } = whence[t.source].warn_at(t.index).clone();
        let w = Warning { kind: GANG_EXCEEDS_CLUSTER, count: 1, file, at, path, message, first_of_many: true };
        merge_warning(gangs, w);
    }
}

/// An error at its place: (line and column, field path, message).
type Located = (Option<(u64, u64)>, String, String);

/// Checks the roles of service `sv` (`capacityByRole`), whose workload is
/// `job` (its first serving group): a kthena ModelServing sized by an
/// autoscaler (lahar measures a workload of groups as one service only then),
/// with each role in its template.
fn serve_roles(
    sv: &lahar_core::serving::ServiceSpec,
    job: &lahar_core::model::job::JobSpec,
    errors: &mut Vec<Located>,
) {
    let Some((_, _, at)) = sv.capacity_by_role.first() else { return };
    let path = format!("{}.capacityByRole", sv.place);
    let is_group = job.group.is_some() && matches!(&*job.kind, "ModelServing" | "ModelBooster");
    if !is_group {
        let why = format!(
            "{}/{} is a {}{}: capacities by role are for a kthena ModelServing sized by an autoscaler",
            job.namespace,
            job.name,
            job.kind,
            if job.group.is_none() && &*job.kind == "ModelServing" {
                " serving group without an autoscaler"
            } else {
                ""
            }
        );
        errors.push((*at, path, why));
        return;
    }
    let roles: Vec<&str> = (0..job.tasks.len())
        .filter_map(|t| {
            let labels = job.tasks[t].hints.as_ref()?.labels.as_ref()?;
            labels.iter().find(|(k, _)| k == "modelserving.volcano.sh/role").map(|(_, v)| v.as_str())
        })
        .collect();
    for (role, _, at) in &sv.capacity_by_role {
        if !roles.contains(&&**role) {
            let mut all = roles.clone();
            all.dedup();
            let name = job.group.as_ref().map_or(job.name.as_str(), |(g, _)| g.name.as_str());
            let msg =
                format!("ModelServing {}/{name} has no role {role}; its roles: {}", job.namespace, all.join(", "));
            errors.push((*at, format!("{path}.{role}"), msg));
        }
    }
}

/// Checks the Serve deployment of service `sv`, whose workload is `job`: a
/// named one must be one of the RayService's; an unnamed one must follow from
/// the RayService (the only deployment asking for GPUs, else the only one
/// autoscaled, else the only one).
fn serve_deployment(
    sv: &lahar_core::serving::ServiceSpec,
    job: &lahar_core::model::job::JobSpec,
    errors: &mut Vec<Located>,
) {
    let path = format!("{}.deployment", sv.place);
    match (&sv.deployment, &job.ray_serve) {
        (Some((_, at)), None) => errors.push((
            *at,
            path,
            format!("{}/{} is a {}, not a RayService with Serve deployments", job.namespace, job.name, job.kind),
        )),
        (Some((name, at)), Some(rs)) => {
            if let Err(e) = rs.find(name) {
                errors.push((*at, path, format!("RayService {}/{}: {e}", job.namespace, job.name)));
            }
        }
        (None, Some(rs)) if rs.serving.is_none() => {
            let all: Vec<&str> = rs.deployments.iter().map(|d| d.name.as_str()).collect();
            errors.push((
                None,
                path,
                format!(
                    "RayService {}/{} has several Serve deployments ({}), none the only one asking for GPUs or autoscaled: name the one whose replicas serve the demand",
                    job.namespace,
                    job.name,
                    all.join(", ")
                ),
            ));
        }
        _ => {}
    }
}
