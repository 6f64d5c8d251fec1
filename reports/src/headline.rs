//! The headline metrics of a run: one table that `lahar compare`, `lahar report`,
//! `lahar sweep` (the columns of sweep.csv) and `lahar check` (the gate) share, so a
//! metric has one name, one unit and one direction everywhere.

use lahar_core::util::text::const_starts_with;
use serde_json::Value;

/// Which way a metric improves.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Better {
    /// Smaller is better (JCT, wait, slowdown, preemptions...).
    Lower,
    /// Larger is better (utilization, completed jobs, fairness index).
    Higher,
}

/// A headline metric of summary.json.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Headline {
    /// Machine name: the dotted path below `metrics` (`jct_s.mean`). Column name in
    /// sweep.csv and summary.csv, metric name of `lahar check --tolerance`.
    pub key: &'static str,
    /// Label with the unit of the scaled value, for tables.
    pub label: &'static str,
    /// JSON pointer below `metrics`.
    pub pointer: &'static str,
    /// Factor from the stored value to the label's unit.
    pub scale: f64,
    /// Direction of improvement.
    pub better: Better,
}

const fn h(key: &'static str, label: &'static str, pointer: &'static str, scale: f64, better: Better) -> Headline {
    Headline { key, label, pointer, scale, better }
}

const HOUR: f64 = 1.0 / 3600.0;

/// The headline metrics, in table order: [`ALL`] up to the first fault metric.
pub const HEADLINE: &[Headline] = ALL.split_at(first_optional()).0;

/// The index in [`ALL`] of the first metric of runs with faults or services
/// (`faults.*`, `serving.*`).
const fn first_optional() -> usize {
    let mut i = 0;
    while i < ALL.len() {
        if const_starts_with(ALL[i].key, "faults.") || const_starts_with(ALL[i].key, "serving.") {
            return i;
        }
        i += 1;
    }
    ALL.len()
}

/// The metrics of a placement run's summary.json (`spec.placement`), compared by
/// `lahar compare`.
pub const PLACEMENT: &[Headline] = &[
    h("gpu_allocation_rate", "GPU allocation rate (%)", "/gpu_allocation_rate", 100.0, Better::Higher),
    h("fragmentation", "fragmentation (% of free GPUs)", "/fragmentation", 100.0, Better::Lower),
    h("fragmented_gpus", "fragmented GPUs", "/fragmented_gpus", 1.0, Better::Lower),
    h("pods_placed", "pods placed", "/pods_placed", 1.0, Better::Higher),
    h("pods_unplaced", "pods unplaced", "/pods_unplaced", 1.0, Better::Lower),
];

/// [`HEADLINE`], the fault metrics of runs with `spec.faults` (summary.json's
/// `metrics.faults`) and the serving metrics of runs with services
/// (`metrics.serving`): a sweep whose cells have some shows them too (sweep.csv,
/// summary.csv, plots); `lahar check` and `lahar compare` keep to [`HEADLINE`].
pub const ALL: &[Headline] = &[
    h("completed", "jobs completed", "/completed", 1.0, Better::Higher),
    h("unfinished", "jobs unfinished", "/unfinished", 1.0, Better::Lower),
    h("jct_s.mean", "JCT mean (h)", "/jct_s/mean", HOUR, Better::Lower),
    h("jct_s.p50", "JCT p50 (h)", "/jct_s/p50", HOUR, Better::Lower),
    h("jct_s.p90", "JCT p90 (h)", "/jct_s/p90", HOUR, Better::Lower),
    h("jct_s.p99", "JCT p99 (h)", "/jct_s/p99", HOUR, Better::Lower),
    h("wait_s.mean", "queueing delay mean (h)", "/wait_s/mean", HOUR, Better::Lower),
    h("wait_s.p90", "queueing delay p90 (h)", "/wait_s/p90", HOUR, Better::Lower),
    h("slowdown.mean", "slowdown mean", "/slowdown/mean", 1.0, Better::Lower),
    h("slowdown.p99", "slowdown p99", "/slowdown/p99", 1.0, Better::Lower),
    h("makespan_s", "makespan (h)", "/makespan_s", HOUR, Better::Lower),
    h("gpu_allocation_rate", "GPU allocation rate (%)", "/gpu_allocation_rate", 100.0, Better::Higher),
    h(
        "gpu_effective_utilization",
        "GPU effective utilization (%)",
        "/gpu_effective_utilization",
        100.0,
        Better::Higher,
    ),
    h("gpu_time.stalled", "GPUs held without progress (%)", "/gpu_time/stalled", 100.0, Better::Lower),
    h("cpu_allocation_rate", "CPU allocation rate (%)", "/cpu_allocation_rate", 100.0, Better::Higher),
    h("fragmentation", "fragmentation (% of idle GPU-time)", "/fragmentation", 100.0, Better::Lower),
    h("jain_fairness", "Jain's fairness index (queues)", "/jain_fairness", 1.0, Better::Higher),
    h("rho.mean", "finish-time fairness rho mean", "/rho/mean", 1.0, Better::Lower),
    h("rho.max", "finish-time fairness rho max", "/rho/max", 1.0, Better::Lower),
    h("preemptions", "preemptions", "/preemptions", 1.0, Better::Lower),
    h("gpu_hours_lost", "GPU-hours lost", "/gpu_hours_lost", 1.0, Better::Lower),
    h("gang_wait_s.mean", "gang wait mean (s)", "/gang_wait_s/mean", 1.0, Better::Lower),
    h("slo_misses", "SLO misses", "/slo_misses", 1.0, Better::Lower),
    h("faults.goodput", "goodput (%)", "/faults/goodput", 100.0, Better::Higher),
    h(
        "faults.gpu_hours_lost_to_failures",
        "GPU-hours lost to failures",
        "/faults/gpu_hours_lost_to_failures",
        1.0,
        Better::Lower,
    ),
    h("serving.unserved_requests", "requests not served", "/serving/unserved_requests", 1.0, Better::Lower),
    h("serving.unserved_tokens", "tokens not served", "/serving/unserved_tokens", 1.0, Better::Lower),
    h("serving.slo_attainment", "serving SLO attainment (%)", "/serving/slo_attainment", 100.0, Better::Higher),
    h(
        "serving.batch_preemptions",
        "preemptions of other jobs for services",
        "/serving/batch_preemptions",
        1.0,
        Better::Lower,
    ),
    h(
        "serving.batch_gpu_hours_lost",
        "GPU-hours other jobs lost to services",
        "/serving/batch_gpu_hours_lost",
        1.0,
        Better::Lower,
    ),
];

impl Headline {
    /// The values the metric can take, stored (unscaled): shares and Jain's index
    /// lie in 0..=1, every other headline metric is at least 0.
    pub fn range(&self) -> (f64, f64) {
        if self.scale == 100.0 || self.key == "jain_fairness" { (0.0, 1.0) } else { (0.0, f64::INFINITY) }
    }

    /// The metric's stored value (unscaled) in a summary.json document; `None` when
    /// absent or `null` (no samples).
    pub fn value(&self, summary: &Value) -> Option<f64> {
        summary.get("metrics").and_then(|m| m.pointer(self.pointer)).and_then(Value::as_f64)
    }

    /// The metric's value in a `metrics` object read back from a file: `None`
    /// when absent or `null`; an error (what was expected and found) for
    /// anything else but a number from 0 to 1e15 — every headline metric is a
    /// count, a time, a rate or a share, and a run writes none outside that.
    pub fn read(&self, metrics: &Value) -> Result<Option<f64>, String> {
        match metrics.pointer(self.pointer) {
            None | Some(Value::Null) => Ok(None),
            Some(x) => {
                x.as_f64().filter(|f| (0.0..=1e15).contains(f)).map(Some).ok_or_else(|| {
                    format!("metrics{}: expected a number from 0 to 1e15 or null, found {x}", self.pointer)
                })
            }
        }
    }
}

/// Checks every headline metric (of runs in time and placement runs) that a
/// summary.json's `metrics` holds, as [`Headline::read`] does.
pub fn check_all(metrics: &Value) -> Result<(), String> {
    ALL.iter().chain(PLACEMENT).try_for_each(|m| m.read(metrics).map(|_| ()))
}

/// The headline metric named `key`.
pub fn by_key(key: &str) -> Option<&'static Headline> {
    HEADLINE.iter().find(|m| m.key == key)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_are_unique_and_match_pointers() {
        assert_eq!(HEADLINE.last().map(|m| m.key), Some("slo_misses"));
        for (i, m) in ALL.iter().enumerate() {
            assert!(ALL[..i].iter().all(|o| o.key != m.key), "{} twice", m.key);
            assert_eq!(m.pointer, format!("/{}", m.key.replace('.', "/")), "{}", m.key);
        }
        let s: Value = serde_json::json!({"metrics": {"jct_s": {"mean": 7200.0}, "makespan_s": null}});
        assert_eq!(by_key("jct_s.mean").unwrap().value(&s), Some(7200.0));
        assert_eq!(by_key("makespan_s").unwrap().value(&s), None);
        assert!(by_key("nope").is_none());
    }
}
