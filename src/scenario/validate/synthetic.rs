//! `synthetic:` sources: arrivals, GPU counts, run times, queues, models.

use super::{At, MAX_JOBS, Source, Targets, V, at, comm, fits_somewhere_with, jobs, largest, queues};
use crate::scenario::raw::*;
use lahar_core::comm::runtime::JobProfile;
use lahar_core::model::cluster::Node;
use lahar_core::model::resource::Resources;
use lahar_core::util::time::{SimDuration, SimTime, parse_duration};
use lahar_workloads::synthetic::{Arrival, DurationDist, IntervalDist, SyntheticSpec, named_gpus};
use serde_saphyr::Spanned;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// What [`synthetic`] needs besides the raw source.
pub(super) struct SynCtx<'a> {
    pub index: usize,
    pub path: &'a str,
    /// Where the source is written.
    pub at: At,
    pub targets: &'a Targets<'a>,
    pub base: &'a Path,
}

/// A `synthetic:` source: its spec, its model or model mix, and the
/// `networkTopology` its multi-pod gangs carry.
pub(super) fn source(
    v: &mut V<'_>,
    syn: &RawSynthetic,
    ctx: &SynCtx<'_>,
    empirical_cache: &mut BTreeMap<(PathBuf, &'static str), Vec<SimDuration>>,
) -> Option<Source> {
    let path = ctx.path;
    let profile =
        syn.model.as_ref().and_then(|m| comm::model_profile(v, m, &format!("{path}.synthetic.model")).map(Arc::new));
    let mix = model_mix(v, syn, path);
    let network_topology = syn
        .network_topology
        .as_ref()
        .map(|nt| jobs::network_topology(v, nt, &format!("{path}.synthetic.networkTopology")));
    let mut spec = synthetic(v, syn, ctx, empirical_cache)?;
    spec.model_weights = mix.iter().map(|m| m.1).collect();
    // A model's `iterations` set the run time only once the cluster prices them.
    let priced =
        profile.as_ref().is_some_and(|p| p.iterations.is_some()) || mix.iter().any(|m| m.0.iterations.is_some());
    if let (Some(f), true) = (&syn.estimate_factor, priced) {
        let m =
            "a model's `iterations` price the run time on the cluster; give the jobs a `duration` to have estimates";
        v.err(at(f), format!("{path}.synthetic.estimateFactor"), m);
    }
    check_synthetic_fit(v, &spec, ctx.targets.nodes, syn, path);
    Some(Source::Synthetic {
        spec: Box::new(spec),
        profile,
        mix: mix.into_iter().map(|m| Arc::new(m.0)).collect(),
        network_topology,
        at: ctx.at,
        path: path.to_string(),
    })
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
    let file = lahar_core::util::files::join(base, &e.trace.value);
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
    let (index, path, queues) = (ctx.index, ctx.path, ctx.targets.queues);
    let max_gpus_per_node = ctx.targets.nodes.iter().map(|n| n.allocatable.gpus_ceil()).max().unwrap_or(0);
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
                if let Some(q) = queues::queue_ref(v, queues, name, at(m), &format!("{path}.synthetic.queues.{name}")) {
                    out.push((q, w));
                }
            }
            out
        }
        None => queues.values().map(|&q| (q, 1.0)).collect(),
    };
    let start = s.start.as_ref().and_then(|d| v.duration(d, &format!("{path}.synthetic.start"))).unwrap_or_default();
    let checkpoint = s.checkpoint_interval.as_ref().and_then(|c| checkpoint_interval(v, c, path));
    let elastic = s.elastic.as_ref().map(|e| elastic(v, e, &format!("{path}.synthetic.elastic")));
    let estimate_factor = s.estimate_factor.as_ref().and_then(|f| {
        if f.value.is_finite() && f.value > 0.0 && f.value <= 1e6 {
            Some(f.value)
        } else {
            let m = format!("must be a number above 0 (at most 1e6), got {}", f.value);
            v.err(at(f), format!("{path}.synthetic.estimateFactor"), m);
            None
        }
    });
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
        estimate_factor,
        elastic,
        priority: s.priority.unwrap_or(0),
        model_weights: Vec::new(),
    })
}

fn check_synthetic_fit(v: &mut V<'_>, sp: &SyntheticSpec, nodes: &[Node], raw: &RawSynthetic, path: &str) {
    for &(g, _) in &sp.gpus {
        let per = g.min(sp.gpus_per_pod).max(if g == 0 { 0 } else { 1 });
        let scale = per.max(1) as i64;
        let req = Resources::new(sp.cpu_milli_per_gpu * scale, sp.memory_per_gpu * scale, per as i64 * 1000, 1);
        if !fits_somewhere_with(v, nodes, &req, |_| true) {
            v.err(at(&raw.gpus), format!("{path}.synthetic.gpus"), format!(
                "jobs of {g} GPUs get pods of {per} GPUs, {} CPU and {} bytes of memory, which no node can hold (largest node: {})",
                req.cpu() as f64 / 1000.0, req.memory(), largest(&v.names, nodes, &req)
            ));
        }
    }
}

/// `synthetic.elastic`: `{minFraction, scaling, resizeOverhead}`.
fn elastic(v: &mut V<'_>, e: &Spanned<RawSyntheticElastic>, path: &str) -> (f64, lahar_core::model::elastic::Elastic) {
    let fraction = match &e.value.min_fraction {
        Some(f) if f.value.is_finite() && f.value > 0.0 && f.value <= 1.0 => f.value,
        Some(f) => {
            v.err(
                at(f),
                format!("{path}.minFraction"),
                format!("expected a number above 0 and at most 1, got {}", f.value),
            );
            1.0
        }
        None => 1.0,
    };
    (fraction, super::jobs::elastic_settings(v, e.value.scaling.as_ref(), e.value.resize_overhead.as_ref(), path))
}
