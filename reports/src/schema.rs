//! The columns of the CSVs a run streams, declared once: name, unit (as
//! docs/outputs.md shows it) and what the column holds. The writers take their
//! headers and their column positions from here (a position is found by name at
//! compile time), and a test holds docs/outputs.md's tables to these lists.

/// One column of an output CSV.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Column {
    /// Header name.
    pub name: &'static str,
    /// Unit as docs/outputs.md writes it (`s`, `GPUs`, `count`...; empty: none).
    pub unit: &'static str,
    /// What it holds, briefly (docs/outputs.md has the whole definition).
    pub doc: &'static str,
    /// Whether it holds text (names, states, reasons), else numbers: a loader
    /// (pandas, in the Python package) keeps a text column as text, so a name
    /// such as `007` stays `007`.
    pub text: bool,
}

/// A column of numbers (empty where there is none).
const fn c(name: &'static str, unit: &'static str, doc: &'static str) -> Column {
    Column { name, unit, doc, text: false }
}

/// A column of text.
const fn t(name: &'static str, unit: &'static str, doc: &'static str) -> Column {
    Column { name, unit, doc, text: true }
}

/// jobs.csv: one row per submitted job.
pub const JOBS: [Column; 19] = [
    t("job", "", "job name"),
    t("queue", "", "queue name"),
    c("priority", "", "job priority"),
    c("gpus", "GPUs", "GPUs requested by all its pods"),
    c("submit_s", "s", "submission time"),
    c("start_s", "s", "first time its gang ran"),
    c("end_s", "s", "time it reached a final state"),
    t("state", "", "final phase"),
    c("jct_s", "s", "end − submit"),
    c("wait_s", "s", "start − submit (or − its last scale-up from zero replicas)"),
    c("ideal_s", "s", "run time under ideal placement"),
    c("slowdown", "ratio", "jct_s / ideal_s"),
    c("preemptions", "count", "sessions in which it lost pods to eviction"),
    c("nodes_spanned", "count", "distinct nodes at its last start"),
    c("highest_tier", "tier", "highest fabric tier its placement crossed"),
    c("retries", "count", "restarts by its lifecycle policies"),
    c("lost_gpu_s", "GPU·s", "work lost at stops × its GPUs"),
    t("kind", "", "what the job came from"),
    c("deadline_s", "s", "how long after submit_s it may be active, if it has a deadline"),
];

/// pods.csv: one row per pod placement interval.
pub const PODS: [Column; 9] = [
    t("job", "", "its job"),
    t("pod", "", "the pod's name"),
    t("task", "", "task name"),
    c("index", "", "replica index within the task"),
    t("node", "", "node name"),
    c("gpus", "GPUs", "GPUs the pod held"),
    c("start_s", "s", "start of the interval"),
    c("end_s", "s", "end of the interval"),
    t("reason_end", "", "why it ended"),
];

/// timeseries.csv: one row per sample; the last column only in runs with faults.
pub const TIMESERIES: [Column; 12] = [
    c("t_s", "s", "sample time"),
    c("gpus_total", "GPUs", "GPUs in the cluster"),
    c("gpus_allocated", "GPUs", "GPUs held by pods"),
    c("gpus_busy_effective", "GPUs", "GPUs of progressing jobs weighted by their speed"),
    c("gpus_stalled", "GPUs", "GPUs held by pods of jobs making no progress"),
    c("gpus_releasing", "GPUs", "GPUs held by Releasing pods"),
    c("jobs_pending", "count", "submitted jobs not making progress"),
    c("jobs_running", "count", "jobs making progress"),
    c("fragmentation", "ratio", "fragmented idle GPUs / idle GPUs"),
    c("gpus_fragmented", "GPUs", "fragmented idle GPUs"),
    c("gpus_unavailable", "GPUs", "GPUs out of service or cordoned (runs with faults only)"),
    c("gpus_serving", "GPUs", "GPUs held by services' pods (runs with services only)"),
];

/// The columns of timeseries.csv (indices into [`TIMESERIES`]) in a run with
/// or without faults and services: `gpus_unavailable` and `gpus_serving` are
/// written only by runs that have them.
pub fn timeseries_columns(faults: bool, services: bool) -> Vec<usize> {
    (0..TIMESERIES.len())
        .filter(|&i| match TIMESERIES[i].name {
            "gpus_unavailable" => faults,
            "gpus_serving" => services,
            _ => true,
        })
        .collect()
}

/// queues.csv: one row per queue per sample.
pub const QUEUES: [Column; 4] = [
    c("t_s", "s", "sample time"),
    t("queue", "", "the queue's name"),
    c("gpus_allocated", "GPUs", "GPUs held by the queue's pods"),
    c("gpus_deserved", "GPUs", "the queue's deserved share"),
];

/// events.csv (runs with faults): one row per failure, repair and drain step.
pub const EVENTS: [Column; 8] = [
    c("t_s", "s", "instant"),
    t("event", "", "fail, repair, cordon, evict or uncordon"),
    t("scope", "", "node, gpu, switch or drain"),
    t("target", "", "the node or HyperNode"),
    c("nodes", "count", "nodes the outage covers"),
    c("gpus", "GPUs", "GPUs the event made unavailable or gave back"),
    c("pods", "count", "pods killed or evicted"),
    t("cause", "", "the rule, trace line or drain that made it"),
];

/// decisions.csv: one row per scheduling decision, in the order made.
pub const DECISIONS: [Column; 9] = [
    c("session", "", "scheduling session number"),
    c("t_s", "s", "time of the session"),
    t("action", "", "what made it"),
    t("kind", "", "bind, evict, pipeline or phase"),
    t("job", "", "job name"),
    t("pod", "", "namespace/name of the pod"),
    t("node", "", "node name"),
    t("phase", "", "the PodGroup's new phase, on phase rows"),
    t("reason", "", "why, in words"),
];

/// explain.csv (`--explain`): one row per check of a watched pod.
pub const EXPLAIN: [Column; 8] = [
    c("session", "", "session number"),
    c("t_s", "s", "session time"),
    t("pod", "", "the watched pod"),
    t("node", "", "node the row is about"),
    t("plugin", "", "the plugin or step"),
    t("passed", "", "true or false on pass/fail rows"),
    t("reason", "", "what happened, in words"),
    c("score", "", "the plugin's node score on score rows"),
];

/// services.csv (runs with services): each service at every sample instant.
pub const SERVICES: [Column; 14] = [
    c("t_s", "s", "instant"),
    t("service", "", "the workload, named as jobs.csv names it"),
    t("kind", "", "its kind"),
    c("demand_rps", "requests/s", "the demand offered (a service in requests)"),
    c("capacity_rps", "requests/s", "what its ready pods serve together (a service in requests)"),
    c("served_rps", "requests/s", "min(demand, capacity) (a service in requests)"),
    c("replicas", "count", "the replicas it asks for"),
    c("pending", "count", "its pods waiting for a node"),
    c("starting", "count", "its pods running but not serving yet"),
    c("ready", "count", "its pods serving"),
    c("gpus", "GPUs", "GPUs its running pods hold"),
    c("demand_tps", "tokens/s", "the demand offered (a service in tokens)"),
    c("capacity_tps", "tokens/s", "what its ready pods serve together (a service in tokens)"),
    c("served_tps", "tokens/s", "min(demand, capacity) (a service in tokens)"),
];

/// scaling.csv (runs with an autoscaler): one row per change of replicas.
pub const SCALING: [Column; 7] = [
    c("t_s", "s", "the sync's (or KEDA poll's) instant"),
    t("autoscaler", "", "the HPA or KEDA ScaledObject that decided, namespace/name"),
    t("target", "", "Kind NAME of the workload"),
    c("from", "count", "replicas before"),
    c("to", "count", "replicas after"),
    c("proposed", "count", "what the metrics proposed"),
    t("reason", "", "the controller's reason"),
];

/// timeline.csv (runs with `spec.timeline`): one row per step carried out.
pub const TIMELINE: [Column; 6] = [
    c("t_s", "s", "the step's instant"),
    t("step", "", "its place in the scenario, spec.timeline[i]"),
    t("action", "", "its action key as the scenario spells it"),
    t("target", "", "the action's value as written"),
    t("outcome", "", "done, missed or ignored"),
    t("note", "", "why it was missed or ignored"),
];

/// Every CSV a run writes row by row and its columns, for docs and tests
/// (summary.csv's columns follow summary.json's metrics: `write::SUMMARY_COLUMNS`).
pub const FILES: [(&str, &[Column]); 10] = [
    ("jobs.csv", &JOBS),
    ("pods.csv", &PODS),
    ("timeseries.csv", &TIMESERIES),
    ("queues.csv", &QUEUES),
    ("events.csv", &EVENTS),
    ("decisions.csv", &DECISIONS),
    ("explain.csv", &EXPLAIN),
    ("services.csv", &SERVICES),
    ("scaling.csv", &SCALING),
    ("timeline.csv", &TIMELINE),
];

/// The header of `cols`, as a constant.
pub const fn header<const N: usize>(cols: &[Column; N]) -> [&'static str; N] {
    let mut out = [""; N];
    let mut i = 0;
    while i < N {
        out[i] = cols[i].name;
        i += 1;
    }
    out
}

/// The position of column `name` in `cols` (a name not there does not compile
/// where it is evaluated in a constant).
pub const fn at(cols: &[Column], name: &str) -> usize {
    let mut i = 0;
    while i < cols.len() {
        if lahar_core::util::text::const_eq(cols[i].name, name) {
            return i;
        }
        i += 1;
    }
    panic!("no such column")
}

/// The header names of `cols`.
pub fn names(cols: &[Column]) -> Vec<&'static str> {
    cols.iter().map(|c| c.name).collect()
}
