//! [`Validated`] → [`Scenario`]: the jobs built (synthetic jobs generated, traces
//! imported, every source merged into one stream by submit time), the checks that
//! need the whole stream (gangs larger than the cluster, names used twice, the
//! starting state, the timeseries' size), the topology and cluster, and jobs priced
//! by their model.

use super::validate::{
    GANG_EXCEEDS_CLUSTER, MAX_SAMPLES, NO_RUN_TIME, Profile, Source, TRACE_ROWS_SKIPPED, UNSCHEDULABLE, V, Validated,
    fits_somewhere, largest,
};
use super::{Scenario, ScenarioError, Warning};
use lahar_core::cluster::{Cluster, Node};
use lahar_core::job::JobSpec;
use lahar_core::resource::Resources;
use lahar_core::rng::RngStreams;
use lahar_core::time::{SimDuration, SimTime};
use lahar_core::topology::Topology;
use lahar_workloads::synthetic::{generate, model_choices};
use rustc_hash::FxHashSet;

/// Builds a validated scenario's jobs and cluster.
pub(super) fn build(val: Validated<'_>) -> Result<Scenario, ScenarioError> {
    let Validated {
        mut v,
        name,
        seed,
        engine,
        nodes,
        fabric,
        decls,
        queues,
        scheduler,
        conf_text,
        comm,
        sources,
        output_dir,
        sample_at,
    } = val;
    let streams = RngStreams::new(seed);
    // (submit, source, position) orders the merged stream deterministically.
    let mut tagged: Vec<Tagged> = Vec::new();
    let mut compact = Vec::with_capacity(sources.len());
    for (s, source) in sources.into_iter().enumerate() {
        compact.push(matches!(source, Source::Jobs { compact: true, .. }));
        match source {
            Source::Synthetic { spec, profile, mix, network_topology, at, path } => {
                let picks = model_choices(&spec, &streams);
                let field = if mix.is_empty() { "model" } else { "models" };
                for (i, mut j) in generate(&spec, &streams).into_iter().enumerate() {
                    // Gangs that span nodes carry the constraint, as users would set it.
                    if j.min_available > 1 {
                        j.network_topology = network_topology.clone();
                    }
                    let prof = match picks.get(i) {
                        Some(&k) => Some(mix[k].clone()),
                        None => profile.clone(),
                    };
                    if let Some(p) = &prof
                        && let Err(m) = p.check(j.total_gpus().max(0) as u32)
                    {
                        v.err(at, format!("{path}.synthetic.{field}"), format!("job `{}`: {m}", j.name));
                        break;
                    }
                    tagged.push(Tagged { source: s, index: i, job: j, profile: prof });
                }
            }
            Source::Trace { format, file, opts, allow_empty, at, path } => {
                trace(&mut v, s, &mut tagged, &nodes, (format, &file, &opts), allow_empty, at, &path)
            }
            Source::Jobs { jobs, .. } => {
                for (i, (job, profile)) in jobs.into_iter().enumerate() {
                    tagged.push(Tagged { source: s, index: i, job, profile });
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
    let job_path = |s: usize, i: usize| match compact[s] {
        true => format!("spec.workload[{s}].jobs[{i}]"),
        false => format!("spec.workload[{s}]"),
    };
    check_gangs(&mut v, &tagged, &nodes, job_path);
    check_run_times(&mut v, &tagged, &engine);
    check_names(&mut v, &tagged);
    let (mut jobs, models): (Vec<JobSpec>, Vec<Profile>) = tagged.into_iter().map(|t| (t.job, t.profile)).unzip();
    check_samples(&mut v, &engine, &jobs, sample_at);
    if !v.errors.is_empty() {
        return Err(ScenarioError { errors: v.errors });
    }
    check_starting_state(&mut v, &jobs, &nodes);
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
    price(&mut v, &mut jobs, &models, &cluster, &comm.constants);
    if !v.errors.is_empty() {
        return Err(ScenarioError { errors: v.errors });
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
        comm,
        engine,
        output_dir,
        warnings: v.warnings,
        text: String::new(),
        conf_text,
    })
}

/// Imports a trace source into `tagged`: skipped rows become one warning per
/// reason, jobs no node can hold stay (pending) with a warning.
#[allow(clippy::too_many_arguments)]
fn trace(
    v: &mut V<'_>,
    s: usize,
    tagged: &mut Vec<Tagged>,
    nodes: &[Node],
    (format, file, opts): (lahar_traces::Format, &std::path::Path, &lahar_traces::ImportOptions),
    allow_empty: bool,
    at: super::validate::At,
    tpath: &str,
) {
    let imported = match lahar_traces::import(format, file, opts) {
        Ok(i) => i,
        Err(e) => return v.err(at, format!("{tpath}.path"), e.to_string()),
    };
    let shown = file.display().to_string();
    for (reason, &n) in &imported.report.skipped {
        let first = imported.report.first_skipped.get(reason);
        let (at_row, why) = match first {
            Some((l, m)) => (Some((l.line, 1)), format!("; the first at line {} (row {}): {m}", l.line, l.row)),
            None => (None, String::new()),
        };
        // One warning per reason, already counted: never merged.
        v.warnings.push(Warning {
            kind: TRACE_ROWS_SKIPPED,
            count: n,
            file: shown.clone(),
            at: at_row,
            path: tpath.to_string(),
            message: format!("{n} trace rows skipped ({reason}){why}"),
            first_of_many: false,
        });
    }
    if imported.jobs.is_empty() && !allow_empty {
        v.err(at, format!("{tpath}.path"), format!(
            "the trace yields no job ({} rows read, {} skipped); set `allowEmpty: true` on the source if that is expected",
            imported.report.rows_read, imported.report.skipped_total()
        ));
    }
    for (i, j) in imported.jobs.into_iter().enumerate() {
        if let Some(task) = j
            .tasks
            .iter()
            .find(|task| task.replicas > 0 && !fits_somewhere(v, nodes, &task.requests, &task.node_selector))
        {
            let msg = format!(
                "job `{}` of the trace requests pods that no node can hold ({} GPUs, {} CPU, {} bytes of memory; largest node: {}); it stays pending",
                j.name,
                task.requests.gpu_milli() as f64 / 1000.0,
                task.requests.cpu() as f64 / 1000.0,
                task.requests.memory(),
                largest(nodes)
            );
            v.warn(UNSCHEDULABLE, 1, at, tpath.to_string(), msg);
        }
        tagged.push(Tagged { source: s, index: i, job: j, profile: None });
    }
}

/// One warning counts the jobs without a run time: they run until the run ends.
fn check_run_times(v: &mut V<'_>, tagged: &[Tagged], engine: &lahar_core::engine::EngineConfig) {
    let unbounded: Vec<&Tagged> = tagged.iter().filter(|t| t.job.duration.is_unbounded()).collect();
    let Some(first) = unbounded.first() else { return };
    let until = match (engine.horizon, engine.max_sessions) {
        (Some(h), _) => format!("the horizon ({} s)", h.secs_string()),
        (None, Some(n)) => format!("the session limit ({n})"),
        (None, None) => "the last other event".to_string(),
    };
    let n = unbounded.len();
    let message = format!(
        "{n} job{} no run time (no `lahar.io/duration`, no `duration`, no `spec.defaults.duration`), the first `{}/{}`: {} until {until}",
        if n == 1 { " has" } else { "s have" },
        first.job.namespace,
        first.job.name,
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

/// Job names are unique per namespace. Membership only: errors follow the jobs'
/// order, never the set's.
fn check_names(v: &mut V<'_>, tagged: &[Tagged]) {
    let mut seen: FxHashSet<(&str, &str)> = FxHashSet::default();
    let mut twice = Vec::new();
    for t in tagged {
        if !seen.insert((&t.job.namespace, &t.job.name)) {
            twice.push((t.source, format!("{}/{}", t.job.namespace, t.job.name)));
        }
    }
    for (source, key) in twice {
        v.err(
            None,
            format!("spec.workload[{source}]"),
            format!("job `{key}` is defined twice; job names must be unique per namespace"),
        );
    }
}

/// The timeseries is sampled every interval up to the end: refuse one that would
/// not fit in memory before any work (the end is the horizon, else at least the
/// last submission).
fn check_samples(
    v: &mut V<'_>,
    engine: &lahar_core::engine::EngineConfig,
    jobs: &[JobSpec],
    sample_at: Option<super::validate::At>,
) {
    let sample = engine.sample_interval;
    let last = engine.horizon.map(|h| h.micros()).or_else(|| jobs.iter().map(|j| j.submit.micros()).max());
    let Some(end) = last else { return };
    let rows = end / sample.micros().max(1);
    if rows > MAX_SAMPLES {
        let why = format!(
            "the timeseries would have at least {rows} rows up to {} (at most {MAX_SAMPLES}); choose a longer interval",
            SimTime(end).secs_string()
        );
        v.err(sample_at.flatten(), "spec.output.sampleInterval", why);
    }
}

/// A starting state must fit the nodes.
fn check_starting_state(v: &mut V<'_>, jobs: &[JobSpec], nodes: &[Node]) {
    let mut used = vec![Resources::ZERO; nodes.len()];
    for j in jobs {
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
}

/// `iterations` jobs: their work is priced on the cluster's fastest node kind.
fn price(
    v: &mut V<'_>,
    jobs: &mut [JobSpec],
    models: &[Profile],
    cluster: &Cluster,
    constants: &lahar_core::comm::CommConstants,
) {
    if !models.iter().flatten().any(|p| p.iterations.is_some()) {
        return;
    }
    let cm = match lahar_core::comm::CommModel::new(constants.clone()) {
        Ok(cm) => cm,
        Err(e) => return v.err(None, "spec.comm.constants", e.to_string()),
    };
    for (j, p) in jobs.iter_mut().zip(models) {
        let Some(p) = p else { continue };
        let Some(n) = p.iterations else { continue };
        let gpus = j.total_gpus().max(0) as u32;
        match lahar_core::comm::runtime::CommRuntime::reference_iteration_us(&cm, cluster, p, gpus) {
            Ok(us) => j.duration = SimDuration((us * n as f64).ceil() as u64),
            Err(e) => v.err(None, "spec.workload", format!("job `{}`: cannot price model `{}`: {e}", j.name, p.name)),
        }
    }
}

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
    if v.cluster_broken || nodes.is_empty() {
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
