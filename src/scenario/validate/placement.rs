//! `spec.placement`: the FGD paper's placement-only evaluation. Its scheduler is
//! one of the paper's placement policies, its workload openb pod lists, and the
//! fields of a run in time have no meaning in it, so they are refused rather than
//! ignored.

use super::{TRACE_ROWS_SKIPPED, V, at};
use crate::placement::{Order, Placement};
use crate::scenario::SchedulerChoice;
use crate::scenario::raw::*;
use lahar_policies::placement::{NAMES, Policy};
use serde_saphyr::Spanned;
use std::path::Path;

/// Largest `demand` accepted (the paper goes to 1.3; a list re-sampled a
/// hundredfold is surely a typo).
const MAX_DEMAND: f64 = 100.0;

fn expected() -> String {
    format!(
        "placement mode takes a placement policy: `scheduler: {{baseline: NAME}}` with NAME one of {}",
        NAMES.join(", ")
    )
}

/// `spec.scheduler` in placement mode.
pub(super) fn scheduler(v: &mut V<'_>, s: Option<&Spanned<RawScheduler>>) -> SchedulerChoice {
    let fallback = SchedulerChoice::Baseline(Policy::Fgd.name().into());
    let Some(s) = s else {
        v.err(None, "spec.scheduler", expected());
        return fallback;
    };
    match (&s.value.baseline, &s.value.conf, &s.value.inline) {
        (Some(b), None, None) if Policy::from_name(&b.value).is_some() => SchedulerChoice::Baseline(b.value.clone()),
        (Some(b), None, None) => {
            v.err(at(b), "spec.scheduler.baseline", format!("`{}`: {}", b.value, expected()));
            fallback
        }
        _ => {
            v.err(
                at(s),
                "spec.scheduler",
                format!("{}; a Volcano conf's node order is not modelled in placement mode yet", expected()),
            );
            fallback
        }
    }
}

/// `spec.placement`, its workload and the fields it refuses.
pub(super) fn placement(
    v: &mut V<'_>,
    p: &Spanned<RawPlacement>,
    spec: &RawSpec,
    scheduler: &SchedulerChoice,
    nodes: &[lahar_core::model::cluster::Node],
    base: &Path,
) -> Option<Placement> {
    if !v.cluster_broken && nodes.iter().all(|n| n.allocatable.gpu_milli() == 0) {
        v.err(
            at(p),
            "spec.cluster",
            "placement mode needs nodes with GPUs: its demand is a multiple of the cluster's GPUs",
        );
    }
    let d = &p.value.demand;
    let demand = d.value;
    if !(demand.is_finite() && demand > 0.0 && demand <= MAX_DEMAND) {
        v.err(
            at(d),
            "spec.placement.demand",
            format!("expected a number above 0 and at most {MAX_DEMAND}, got {demand}"),
        );
    }
    let unused = |v: &mut V<'_>, present: Option<super::At>, path: &str| {
        if let Some(a) = present {
            v.err(a, path, "has no meaning in placement mode (`spec.placement`: pods never leave, times are ignored)");
        }
    };
    unused(v, spec.horizon.as_ref().map(at), "spec.horizon");
    unused(v, spec.schedule_period.as_ref().map(at), "spec.schedulePeriod");
    unused(v, spec.sessions.as_ref().map(at), "spec.sessions");
    unused(v, spec.snapshot.as_ref().map(at), "spec.snapshot");
    unused(v, spec.queues.as_ref().map(at), "spec.queues");
    unused(v, spec.comm.as_ref().map(at), "spec.comm");
    unused(v, spec.defaults.as_ref().map(at), "spec.defaults");
    unused(v, spec.faults.as_ref().map(at), "spec.faults");
    unused(v, spec.priority_classes.as_ref().and_then(|p| p.first()).map(at), "spec.priorityClasses");
    unused(v, spec.output.as_ref().and_then(|o| o.sample_interval.as_ref()).map(at), "spec.output.sampleInterval");
    let Some(sources) = spec.workload.as_ref().filter(|w| !w.is_empty()) else {
        v.err(at(p), "spec.workload", "placement mode needs a workload: `- trace: {format: openb, path: ...}`");
        return None;
    };
    let mut pods = Vec::new();
    for (s, src) in sources.iter().enumerate() {
        let path = format!("spec.workload[{s}]");
        let RawSource::Trace(t) = &src.value else {
            v.err(at(src), &path, "placement mode reads openb pod lists: `- trace: {format: openb, path: ...}`");
            continue;
        };
        let tpath = format!("{path}.trace");
        if t.format.value != "openb" {
            v.err(
                at(&t.format),
                format!("{tpath}.format"),
                format!("placement mode reads openb pod lists; got format `{}`", t.format.value),
            );
            continue;
        }
        unused(v, t.queue.as_ref().map(at), &format!("{tpath}.queue"));
        unused(v, t.cpu_per_gpu.as_ref().map(at), &format!("{tpath}.cpuPerGpu"));
        unused(v, t.memory_per_gpu.as_ref().map(at), &format!("{tpath}.memoryPerGpu"));
        unused(v, t.time_scale.as_ref().map(at), &format!("{tpath}.timeScale"));
        unused(v, t.processors_per_pod.as_ref().map(at), &format!("{tpath}.processorsPerPod"));
        let file = lahar_core::util::files::join(base, &t.path.value);
        match lahar_traces::openb::read_pods(&file, t.strict.unwrap_or(false)) {
            Ok(list) => {
                let skipped: u64 = list.skipped.values().sum();
                if skipped > 0 {
                    let why: Vec<String> = list.skipped.iter().map(|(r, n)| format!("{n} {}", r.as_str())).collect();
                    v.warn(
                        TRACE_ROWS_SKIPPED,
                        skipped,
                        at(&t.path),
                        format!("{tpath}.path"),
                        format!("{skipped} of {} rows skipped ({})", list.rows_read, why.join(", ")),
                    );
                }
                if list.pods.is_empty() && !t.allow_empty.unwrap_or(false) {
                    v.err(at(&t.path), format!("{tpath}.path"), format!("`{}` has no pods", file.display()));
                }
                pods.extend(list.pods);
            }
            Err(e) => v.err(at(&t.path), format!("{tpath}.path"), e.to_string()),
        }
    }
    let order = match p.value.order.as_ref() {
        None => Order::Shuffled,
        Some(o) if o.value == "shuffled" => Order::Shuffled,
        Some(o) if o.value == "trace" => Order::Trace,
        Some(o) => {
            v.err(at(o), "spec.placement.order", format!("expected `shuffled` or `trace`, got `{}`", o.value));
            Order::Shuffled
        }
    };
    // What the replay cannot model is found here, before any work.
    if !v.cluster_broken
        && let Err(e) = crate::placement::Setup::new(nodes, &pods)
    {
        v.err(at(p), "spec.cluster", e.to_string());
    }
    let SchedulerChoice::Baseline(name) = scheduler else { return None };
    let policy = Policy::from_name(name)?;
    Some(Placement { demand, order, policy, pods })
}
