//! The self-contained HTML report: scenario facts, summary and per-queue tables,
//! the comparison (with several runs) and every plot inlined as SVG, so the file
//! needs no network access and no other file to be viewed.
//!
//! The template is `templates/report.html.j2` (minijinja, auto-escaped); only the
//! SVG plots, which lahar renders itself, are inserted unescaped.

use crate::compare::{Comparison, HEADLINE, compare, fmt_value};
use crate::load::RunData;
use crate::plots::{PlotError, PlotKind, PlotStyle, svg};
use minijinja::value::Serde;
use minijinja::{Environment, Value, context};
use serde::Serialize;

const TEMPLATE: &str = include_str!("../templates/report.html.j2");

#[derive(Serialize)]
struct Plot {
    name: &'static str,
    title: &'static str,
    svg: String,
}

#[derive(Serialize)]
struct RunView {
    /// "Summary", or for a snapshot run "After N sessions".
    summary_title: String,
    label: String,
    scenario: String,
    sha: String,
    seed: String,
    scheduler: String,
    lahar_version: String,
    dir: String,
    metrics: Vec<(String, String)>,
    queue_header: Vec<&'static str>,
    queue_rows: Vec<Vec<String>>,
    service_header: Vec<&'static str>,
    service_rows: Vec<Vec<String>>,
    /// What the services held and took from the other jobs, in a sentence.
    serving: Option<String>,
    plots: Vec<Plot>,
    /// What was simulated: (fact, value) rows.
    setup: Vec<(String, String)>,
    /// The scenario and conf texts the run kept (input-scenario.yaml,
    /// input-scheduler.conf), empty when the directory has none.
    scenario_text: String,
    conf_text: String,
    /// The confs its timeline reloaded (input-timeline-confs.yaml), empty when none.
    reloads_text: String,
    /// The first rows of decisions.csv and explain.csv.
    decisions: Option<crate::load::Rows>,
    explain: Option<crate::load::Rows>,
    /// explain.txt: what `--explain` printed (the verdict, the tables).
    explain_text: Option<String>,
    /// The first rows of timeline.csv: the operators' steps and what came of them.
    timeline: Option<crate::load::Rows>,
    /// Why the plots are left out (a run of a session or two has nothing to draw).
    no_plots: Option<String>,
}

#[derive(Serialize)]
struct CompareView {
    runs: Vec<String>,
    header: Vec<String>,
    cells: Vec<Vec<String>>,
}

/// The report could not be rendered.
#[derive(Debug, thiserror::Error)]
pub enum HtmlError {
    /// A plot failed.
    #[error(transparent)]
    Plot(#[from] PlotError),
    /// The template failed.
    #[error("report template: {0}")]
    Template(#[from] minijinja::Error),
}

const QUEUE_HEADER: [&str; 10] = [
    "queue",
    "weight",
    "jobs",
    "completed",
    "JCT mean (h)",
    "queueing delay mean (h)",
    "GPU allocation (%)",
    "deserved share (%)",
    "rho mean",
    "SLO misses",
];

const SERVICE_HEADER: [&str; 10] = [
    "service",
    "kind",
    "offered",
    "unserved",
    "SLO attainment (%)",
    "replica-hours short",
    "catch-up mean (s)",
    "scale ups / downs",
    "max replicas",
    "pod starts",
];

/// summary.json's `metrics.services`, a row each; and `metrics.serving` in words.
fn services_view(s: &serde_json::Value) -> (Vec<Vec<String>>, Option<String>) {
    let num = |v: &serde_json::Value, p: &str, scale: f64| {
        fmt_value(v.pointer(p).and_then(|x| x.as_f64()).map(|x| x * scale))
    };
    // `offered` or `unserved` in the service's unit: "1,200 requests", "3.4e6 tokens".
    let amount = |v: &serde_json::Value, what: &str| match v["unit"].as_str() {
        Some(u) => format!("{} {u}", num(v, &format!("/{what}_{u}"), 1.0)),
        None => num(v, &format!("/{what}_requests"), 1.0),
    };
    let rows = s
        .pointer("/metrics/services")
        .and_then(|v| v.as_array())
        .map(|a| {
            a.iter()
                .map(|v| {
                    vec![
                        v["service"].as_str().unwrap_or("").to_string(),
                        v["kind"].as_str().unwrap_or("").to_string(),
                        amount(v, "offered"),
                        amount(v, "unserved"),
                        num(v, "/slo_attainment", 100.0),
                        num(v, "/replica_hours_short", 1.0),
                        num(v, "/catch_up_s/mean", 1.0),
                        format!("{} / {}", num(v, "/scale_ups", 1.0), num(v, "/scale_downs", 1.0)),
                        num(v, "/max_replicas", 1.0),
                        num(v, "/pod_starts", 1.0),
                    ]
                })
                .collect()
        })
        .unwrap_or_default();
    let serving = s.pointer("/metrics/serving").filter(|v| v.is_object()).map(|v| {
        format!(
            "The services held {} GPU-hours. To make room for their pods, {} pods of other jobs were preempted or \
             reclaimed ({} job preemptions), and those jobs lost {} GPU-hours of work; {} pods of the services \
             were preempted or reclaimed for other jobs.",
            num(v, "/gpu_hours", 1.0),
            num(v, "/batch_pods_evicted", 1.0),
            num(v, "/batch_preemptions", 1.0),
            num(v, "/batch_gpu_hours_lost", 1.0),
            num(v, "/pods_evicted", 1.0),
        )
    });
    (rows, serving)
}

fn run_view(r: &RunData, style: &PlotStyle) -> Result<RunView, PlotError> {
    let s = &r.summary;
    let text = |k: &str| match &s[k] {
        serde_json::Value::String(v) => v.clone(),
        serde_json::Value::Null => String::new(),
        v => v.to_string(),
    };
    let snapshot = s["snapshot"].as_bool() == Some(true);
    let metrics = if snapshot {
        snapshot_rows(r)
    } else {
        HEADLINE.iter().map(|m| (m.label.to_string(), fmt_value(r.metric(m.pointer).map(|v| v * m.scale)))).collect()
    };
    let summary_title = if snapshot {
        let n = s.pointer("/metrics/sessions").and_then(serde_json::Value::as_u64).unwrap_or(0);
        format!("After {n} session{}", if n == 1 { "" } else { "s" })
    } else {
        "Summary".to_string()
    };
    let mut queue_rows = Vec::new();
    if let Some(qs) = s["metrics"]["queues"].as_object().filter(|_| !snapshot) {
        // serde_json's map is ordered by key (no preserve_order feature): stable.
        for (name, q) in qs {
            // A run written before 0.2 calls the queue's allocation `gpu_share`.
            let get = |p: &str| {
                let old = crate::load::RENAMED.iter().find(|r| format!("/{}", r.2) == p).map(|r| format!("/{}", r.1));
                q.pointer(p).or_else(|| old.and_then(|o| q.pointer(&o))).and_then(|v| v.as_f64())
            };
            let f = |p: &str, scale: f64| fmt_value(get(p).map(|v| v * scale));
            queue_rows.push(vec![
                name.clone(),
                f("/weight", 1.0),
                f("/jobs", 1.0),
                f("/completed", 1.0),
                f("/jct_s/mean", 1.0 / 3600.0),
                f("/wait_s/mean", 1.0 / 3600.0),
                f("/gpu_allocation_rate", 100.0),
                f("/deserved_share", 100.0),
                f("/rho/mean", 1.0),
                f("/slo_misses", 1.0),
            ]);
        }
    }
    let (service_rows, serving) = if snapshot { (Vec::new(), None) } else { services_view(s) };
    let runs = std::slice::from_ref(r);
    // A snapshot's session or two leaves one or two samples: no line to draw.
    let sessions = s.pointer("/metrics/sessions").and_then(serde_json::Value::as_u64).unwrap_or(0);
    let no_plots = (r.ts.t.len() < 3).then(|| {
        format!(
            "No plots: the run has {} timeseries {} ({} {}); its decisions are above.",
            r.ts.t.len(),
            if r.ts.t.len() == 1 { "sample" } else { "samples" },
            sessions,
            if sessions == 1 { "session" } else { "sessions" }
        )
    });
    let plots = if no_plots.is_some() {
        Vec::new()
    } else {
        PlotKind::for_run(r)
            .into_iter()
            .map(|k| Ok(Plot { name: k.name(), title: k.title(), svg: svg(k, runs, style)? }))
            .collect::<Result<_, PlotError>>()?
    };
    let read = |name: &str| std::fs::read_to_string(r.dir.join(name)).unwrap_or_default();
    let num =
        |p: &str| s.pointer(p).and_then(serde_json::Value::as_f64).map(|x| fmt_value(Some(x))).unwrap_or_default();
    let tiers: Vec<String> = s["tiers"]
        .as_array()
        .map(|a| a.iter().filter_map(|v| v.as_str().map(String::from)).collect())
        .unwrap_or_default();
    let queues: Vec<String> = s["metrics"]["queues"]
        .as_object()
        .map(|qs| {
            qs.iter()
                .map(|(n, q)| {
                    format!("{n} (weight {})", q["weight"].as_f64().map(|w| fmt_value(Some(w))).unwrap_or_default())
                })
                .collect()
        })
        .unwrap_or_default();
    let jobs = num("/metrics/jobs");
    let horizon = num("/metrics/sim_time_s");
    let mut setup = Vec::new();
    if s.get("interrupted").is_some_and(|x| !x.is_null()) {
        setup.push((
            "interrupted".to_string(),
            format!(
                "by {} at {} s of simulated time, {} of {} jobs ended: every metric covers the run up to there",
                s.pointer("/interrupted/signal").and_then(serde_json::Value::as_str).unwrap_or("a signal"),
                num("/interrupted/at_s"),
                num("/interrupted/jobs_ended"),
                num("/interrupted/jobs"),
            ),
        ));
    }
    setup.extend([
        ("cluster".to_string(), format!("{} nodes, {} GPUs", num("/nodes"), num("/metrics/gpus_total"))),
        ("fabric tiers".to_string(), if tiers.is_empty() { "—".to_string() } else { tiers.join(" < ") }),
        ("queues".to_string(), queues.join(", ")),
        ("scheduler".to_string(), text("scheduler")),
        ("workload".to_string(), format!("{jobs} jobs over {horizon} s of simulated time")),
    ]);
    Ok(RunView {
        summary_title,
        setup,
        scenario_text: read("input-scenario.yaml"),
        conf_text: read("input-scheduler.conf"),
        reloads_text: read("input-timeline-confs.yaml"),
        label: r.label.clone(),
        scenario: text("scenario"),
        sha: text("scenario_sha256"),
        seed: text("seed"),
        scheduler: text("scheduler"),
        lahar_version: text("lahar_version"),
        dir: r.dir.display().to_string(),
        metrics,
        queue_header: QUEUE_HEADER.to_vec(),
        queue_rows,
        service_header: SERVICE_HEADER.to_vec(),
        service_rows,
        serving,
        plots,
        decisions: r.decisions.clone(),
        explain: r.explain.clone(),
        explain_text: r.explain_text.clone(),
        timeline: r.timeline.clone(),
        no_plots,
    })
}

/// What an operator's snapshot run did, in place of research metrics: the
/// decisions by kind (of the rows the report keeps), and the cluster at the end.
fn snapshot_rows(r: &RunData) -> Vec<(String, String)> {
    let mut rows = Vec::new();
    if let Some(d) = &r.decisions {
        let kind = d.header.iter().position(|h| h == "kind");
        let of = if d.more > 0 { format!(" (of the first {} decisions)", d.rows.len()) } else { String::new() };
        for (k, what) in [
            ("bind", "pods bound"),
            ("evict", "pods evicted"),
            ("pipeline", "pods pipelined"),
            ("phase", "PodGroup phase changes"),
        ] {
            let n = kind.map_or(0, |c| d.rows.iter().filter(|row| row.get(c).map(String::as_str) == Some(k)).count());
            rows.push((format!("{what}{of}"), n.to_string()));
        }
    }
    let last = |v: &[f64]| v.last().copied();
    if let (Some(a), Some(t)) = (last(&r.ts.allocated), last(&r.ts.total)) {
        rows.push(("GPUs in use at the end".to_string(), format!("{} of {}", fmt_value(Some(a)), fmt_value(Some(t)))));
    }
    if let (Some(p), Some(n)) = (last(&r.ts.pending), last(&r.ts.running)) {
        rows.push((
            "jobs pending / running at the end".to_string(),
            format!("{} / {}", fmt_value(Some(p)), fmt_value(Some(n))),
        ));
    }
    rows
}

/// Renders report.html for one or more runs (several: with the comparison to the
/// first and overlay plots), the plots drawn in `style`.
pub fn render(runs: &[RunData], version: &str, style: &PlotStyle) -> Result<String, HtmlError> {
    let views: Vec<RunView> = runs.iter().map(|r| run_view(r, style)).collect::<Result<_, _>>()?;
    let (comparison, overlay) = if runs.len() > 1 {
        let c: Comparison = compare(runs);
        let overlay: Vec<Plot> = PlotKind::OVERLAY
            .iter()
            .map(|&k| Ok(Plot { name: k.name(), title: k.title(), svg: svg(k, runs, style)? }))
            .collect::<Result<_, PlotError>>()?;
        (Some(CompareView { runs: c.runs.clone(), header: c.header(), cells: c.cells() }), overlay)
    } else {
        (None, Vec::new())
    };
    let title = if runs.len() == 1 {
        format!("lahar report: {}", runs[0].scenario())
    } else {
        format!("lahar report: {} runs compared", runs.len())
    };
    let mut env = Environment::new();
    env.add_template("report.html", TEMPLATE)?;
    let html = env.get_template("report.html")?.render(context! {
        title => title,
        version => version,
        runs => Value::from(Serde(&views)),
        comparison => Value::from(Serde(&comparison)),
        overlay => Value::from(Serde(&overlay)),
    })?;
    Ok(html)
}
