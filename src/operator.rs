//! What `lahar run` prints for a Volcano operator: a snapshot run's decisions and
//! end state (instead of a research run's headline metrics), and for each
//! `--explain` pod or job the node × plugin table of the last session that looked
//! at it and, for a gang still waiting, the member and the step that keep it
//! waiting, with the step's own numbers.
//!
//! Everything here reads what the run recorded (the decision rows kept in memory,
//! the explain rows, the final world); nothing is read back from files.

use lahar_core::engine::RunOutput;
use lahar_core::explain::ExplainRow;
use lahar_core::model::job::{JobEnd, JobId, JobSpec, PodGroupPhase, PodStatus};
use lahar_reports::KeptDecisions;
use lahar_reports::metrics::{job_label, pod_label};
use std::collections::BTreeMap;

/// Decision rows a snapshot run keeps in memory to print (the rest are counted).
pub const DECISIONS_SHOWN: usize = 200;

/// Nodes listed one by one in an explain table; on larger clusters the nodes
/// that fail are folded into one line per reason.
const NODES_LISTED: usize = 16;

/// Steps of a node row that report an outcome rather than a predicate.
const OUTCOMES: [&str; 10] = [
    "best-node",
    "result",
    "backfill",
    "prioritize",
    "chosen",
    "preempt",
    "reclaim",
    "gangpreempt",
    "gangreclaim",
    "allocate",
];

/// A score with at most two decimals.
fn score(x: f64) -> String {
    let s = format!("{x:.2}");
    s.trim_end_matches('0').trim_end_matches('.').to_string()
}

fn table(header: Vec<String>, rows: Vec<Vec<String>>) -> String {
    let mut t = comfy_table::Table::new();
    t.load_preset(comfy_table::presets::UTF8_BORDERS_ONLY);
    t.set_header(header);
    for r in rows {
        t.add_row(r);
    }
    t.to_string()
}

/// The decisions of a snapshot run as a table (time, action, decision, job, pod,
/// node, phase, reason), with how many more decisions.csv has.
pub fn decisions_table(k: &KeptDecisions) -> String {
    if k.rows.is_empty() {
        return "decisions: none (no pod bound, pipelined or evicted, no PodGroup changed phase)".to_string();
    }
    let header = ["session", "t (s)", "action", "decision", "job", "pod", "node", "phase", "reason"];
    let rows = k.rows.iter().map(|r| r.to_vec()).collect();
    let mut s = format!("decisions:\n{}", table(header.map(String::from).to_vec(), rows));
    if k.more > 0 {
        s.push_str(&format!("\n… and {} more in decisions.csv", k.more));
    }
    s
}

/// How a snapshot run ended: decisions by kind, PodGroups by phase, the pods still
/// pending (by job), the GPUs in use.
pub fn snapshot_summary(out: &RunOutput, k: Option<&KeptDecisions>, sessions: u64) -> String {
    let w = &out.world;
    let mut kinds: BTreeMap<&str, u64> = BTreeMap::new();
    if let Some(k) = k {
        for r in &k.rows {
            *kinds.entry(r[3].as_str()).or_default() += 1;
        }
    }
    let made: Vec<String> = kinds
        .iter()
        .map(|(&k, n)| {
            let what = match k {
                "bind" => "pod(s) bound",
                "pipeline" => "pod(s) pipelined",
                "evict" => "pod(s) evicted",
                "phase" => "PodGroup phase change(s)",
                other => other,
            };
            format!("{n} {what}")
        })
        .collect();
    let mut phases: BTreeMap<&str, u64> = BTreeMap::new();
    let mut pending: Vec<String> = Vec::new();
    for job in w.jobs.iter() {
        *phases.entry(job.pg_phase.as_str()).or_default() += 1;
        let n = job.pods.iter().filter(|&&p| w.pods[p].status == PodStatus::Pending).count();
        if n > 0 {
            pending.push(format!("{} ({n})", job_label(&job.spec)));
        }
    }
    let gpus: f64 = w.cluster.nodes.iter().map(|n| n.allocatable.gpu_milli() as f64).sum::<f64>() / 1000.0;
    let used: f64 = w.nodes.iter().map(|n| n.used.gpu_milli() as f64).sum::<f64>() / 1000.0;
    let phases: Vec<String> = phases.iter().map(|(p, n)| format!("{n} {p}")).collect();
    let mut s = format!(
        "after {sessions} session{}: {}\nPodGroups: {}\nGPUs in use: {} of {}",
        if sessions == 1 { "" } else { "s" },
        if made.is_empty() { "no decision".to_string() } else { made.join(", ") },
        phases.join(", "),
        score(used),
        score(gpus)
    );
    if !pending.is_empty() {
        let shown = pending.len().min(10);
        let more = if pending.len() > shown { format!(", … {} more", pending.len() - shown) } else { String::new() };
        s.push_str(&format!("\npods still pending: {}{more}", pending[..shown].join(", ")));
    }
    s
}

/// For each job of the pods `--explain` named, in order: what keeps it waiting
/// (if it does) and each named pod's table of the last session that looked at it.
pub fn explain_report(out: &RunOutput, named: &[(JobId, u16, u32)]) -> String {
    let mut by_job: BTreeMap<JobId, Vec<(u16, u32)>> = BTreeMap::new();
    for &(j, t, i) in named {
        by_job.entry(j).or_default().push((t, i));
    }
    let mut parts = Vec::new();
    for (j, members) in by_job {
        let rows: Vec<&ExplainRow> = out.explain.iter().filter(|r| out.world.pods[r.pod].job == j).collect();
        let Some(last) = rows.iter().map(|r| r.session).max() else {
            let label = job_label(&out.world.jobs[j].spec);
            let fate = fate(out, j).map(|f| format!("\n  {f}")).unwrap_or_default();
            parts.push(format!("explain {label}: no session looked at it within --explain-window{fate}"));
            continue;
        };
        let rows: Vec<&ExplainRow> = rows.into_iter().filter(|r| r.session == last).collect();
        let mut part = vec![verdict(out, j, &rows)];
        for (t, i) in members {
            let mine: Vec<&ExplainRow> = rows
                .iter()
                .copied()
                .filter(|r| {
                    let p = &out.world.pods[r.pod];
                    (p.task, p.index) == (t, i)
                })
                .collect();
            let name = pod_label(&out.world.jobs[j].spec, t, i);
            if mine.is_empty() {
                part.push(format!("{name}: not looked at in session {last}"));
            } else {
                part.push(pod_table(out, &name, &mine));
            }
        }
        parts.push(part.join("\n"));
    }
    parts.join("\n\n")
}

/// The job's line: placed, or waiting and why (the first cause among its
/// members' rows of the session, by [`rank`]).
fn verdict(out: &RunOutput, j: JobId, rows: &[&ExplainRow]) -> String {
    let job = &out.world.jobs[j];
    let label = job_label(&job.spec);
    let (session, t) = rows.first().map(|r| (r.session, r.t.as_secs_f64())).unwrap_or_default();
    let when = format!("session {session} at t = {} s", score(t));
    let pending = job.pods.iter().filter(|&&p| out.world.pods[p].status == PodStatus::Pending).count();
    let facts = format!(
        "queue {}, minAvailable {}, PodGroup {}",
        out.world.queues[job.spec.queue].spec.name,
        job.spec.min_available,
        job.pg_phase.as_str()
    );
    let fate = fate(out, j).map(|f| format!("\n  {f}")).unwrap_or_default();
    if pending == 0 && job.pg_phase != PodGroupPhase::Pending {
        return format!(
            "explain {label} ({facts}): no pod pending at the end; the last session that looked at it: {when}{fate}"
        );
    }
    let cause = rows
        .iter()
        .filter(|r| r.node.is_none() && r.passed == Some(false))
        .min_by_key(|r| rank(r))
        .map(|r| {
            let p = &out.world.pods[r.pod];
            let member = pod_label(&job.spec, p.task, p.index);
            let reason = if r.plugin == "allocate" && r.reason.starts_with("no feasible node") {
                format!("no node fits it: {}", failing_nodes(rows, r.pod))
            } else {
                r.reason.clone()
            };
            format!("blocked by {member} at {}: {reason}", r.plugin)
        })
        .unwrap_or_else(|| "no step rejected its pods in that session".to_string());
    format!("explain {label} ({facts}): {pending} pod(s) pending; in {when}, {cause}{fate}")
}

/// What job `j`'s controller did beyond running it: how it ended (its phase
/// and when), its retries, and the lifecycle policy that acted on it last
/// (the event heard, about which pod, with which exit code).
fn fate(out: &RunOutput, j: JobId) -> Option<String> {
    let job = &out.world.jobs[j];
    let mut parts = Vec::new();
    if job.phase.is_terminal() {
        let at = match job.end {
            Some(t) => format!("at {} s", score(t.as_secs_f64())),
            None => "(its pods still going at the end of the run)".to_string(),
        };
        parts.push(format!("{} {at}", job.phase.as_str()));
        parts.extend(job.end_cause.and_then(|c| end_cause(&job.spec, c)));
    }
    if job.retries > 0 && job.end_cause != Some(JobEnd::MaxRetry) {
        parts.push(format!("{} retr{}", job.retries, if job.retries == 1 { "y" } else { "ies" }));
    }
    if let Some(p) = &job.last_policy {
        let pod = p.pod.map(|(t, i)| format!(" for {}", pod_label(&job.spec, t, i))).unwrap_or_default();
        let code = p.exit.map(|c| format!(" (exit code {c})")).unwrap_or_default();
        parts.push(format!(
            "the last lifecycle policy to act: {} on {}{pod}{code} at {} s",
            p.action.as_str(),
            p.event.name(),
            score(p.at.as_secs_f64())
        ));
    }
    (!parts.is_empty()).then(|| parts.join("; "))
}

/// Why a job reached its terminal phase, in words; `None` where the phase
/// says it (its work done) or the policy clause does.
fn end_cause(spec: &JobSpec, cause: JobEnd) -> Option<String> {
    let ended = match spec.total_replicas() {
        1 => "its 1 pod ended".to_string(),
        n => format!("its {n} pods all ended"),
    };
    Some(match cause {
        JobEnd::WorkDone | JobEnd::Policy => return None,
        JobEnd::PodsEnded { succeeded } if succeeded < spec.min_available => {
            format!("{ended}, {succeeded} succeeded: fewer than minAvailable {}", spec.min_available)
        }
        JobEnd::PodsEnded { succeeded } => format!("{ended}, {succeeded} succeeded"),
        JobEnd::TaskShort { task, succeeded } => {
            let t = &spec.tasks[usize::from(task)];
            format!(
                "{ended}; task {} had {succeeded} succeeded: fewer than its minAvailable {}",
                t.name, t.min_available
            )
        }
        JobEnd::MinSuccess => format!(
            "its succeeded pods reached minSuccess {}; its others were killed",
            spec.min_success.unwrap_or_default()
        ),
        JobEnd::MinSuccessMissed { succeeded } => {
            format!("{ended}, {succeeded} succeeded: fewer than minSuccess {}", spec.min_success.unwrap_or_default())
        }
        JobEnd::Deadline => match spec.deadline {
            Some(d) => format!("its activeDeadlineSeconds ({} s) passed: DeadlineExceeded", score(d.as_secs_f64())),
            None => "its activeDeadlineSeconds passed: DeadlineExceeded".to_string(),
        },
        // Only `count_retry` counts retries; the one that reaches the limit
        // fails the job.
        JobEnd::MaxRetry => match spec.batch {
            Some(_) => format!(
                "its pods that ended without succeeding passed backoffLimit {}",
                spec.max_retry.saturating_sub(1)
            ),
            None => format!("its retries reached maxRetry {}", spec.max_retry),
        },
        JobEnd::BackoffOnFailure { restarts } => format!(
            "its containers restarted {restarts} time{} under restartPolicy OnFailure, reaching backoffLimit {}: \
             BackoffLimitExceeded",
            if restarts == 1 { "" } else { "s" },
            spec.batch.as_ref().map_or(0, |b| b.backoff_limit)
        ),
        JobEnd::PodsGone => "no pod of it was left alive (pods without a controller are not replaced)".to_string(),
        JobEnd::Replaced => "its CronJob's next run replaced it (concurrencyPolicy: Replace)".to_string(),
        JobEnd::ScaledIn => "its serving workload scaled in and removed it".to_string(),
        JobEnd::Deleted => "an operator deleted it (the timeline's deleteJob)".to_string(),
        JobEnd::Suspended => "an operator suspended it (the timeline's suspendJob) and nothing resumed it".to_string(),
    })
}

/// How directly a pod-level rejection names a cause: gates, admission and the
/// queue's quota first, then a pod no node fits, then the rest; the gang's
/// shortfall, pods skipped after a sibling failed, and preempt's or reclaim's
/// "not tried" are consequences, last.
fn rank(r: &ExplainRow) -> u8 {
    match r.plugin.as_ref() {
        "scheduling-gates" | "enqueue" | "allocatable" => 0,
        "allocate" if r.reason.starts_with("skipped") => 3,
        "allocate" => 1,
        "gang" | "result" => 3,
        _ if r.reason.starts_with("not tried") => 3,
        _ => 2,
    }
}

/// The nodes' failures for one pod, by reason: `3 nodes Insufficient
/// nvidia.com/gpu, 1 node <plugin>: <reason>`.
fn failing_nodes(rows: &[&ExplainRow], pod: lahar_core::model::job::PodId) -> String {
    let mut by: BTreeMap<String, usize> = BTreeMap::new();
    for r in rows.iter().filter(|r| r.pod == pod && r.node.is_some() && r.passed == Some(false)) {
        *by.entry(fit_reason(r)).or_default() += 1;
    }
    let mut v: Vec<(String, usize)> = by.into_iter().collect();
    v.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
    let parts: Vec<String> =
        v.iter().map(|(why, n)| format!("{n} node{} {why}", if *n == 1 { "" } else { "s" })).collect();
    if parts.is_empty() { "no node was looked at".to_string() } else { parts.join(", ") }
}

/// A failing predicate row as a cell: the reason, named by its plugin unless it
/// is the resource fit or the predicates plugin.
fn fit_reason(r: &ExplainRow) -> String {
    match r.plugin.as_ref() {
        "resources" | "predicates" => r.reason.clone(),
        p => format!("{p}: {}", r.reason),
    }
}

/// One pod's rows of one session: a node × plugin table (fit, each score, total,
/// outcome), then its pod-level steps.
fn pod_table(out: &RunOutput, name: &str, rows: &[&ExplainRow]) -> String {
    let (session, t) = (rows[0].session, rows[0].t.as_secs_f64());
    // Score plugins in the order first recorded, `total` last.
    let mut scores: Vec<&str> = Vec::new();
    #[derive(Default)]
    struct Node {
        fit: Option<String>,
        scores: BTreeMap<String, f64>,
        total: Option<f64>,
        outcome: Vec<String>,
    }
    let mut nodes: BTreeMap<u32, Node> = BTreeMap::new();
    let mut steps: Vec<String> = Vec::new();
    for r in rows {
        let Some(n) = r.node else {
            let mark = match r.passed {
                Some(false) => "✗ ",
                Some(true) => "✓ ",
                None => "",
            };
            let score = r.score.map(|s| format!(" (score {})", score(s))).unwrap_or_default();
            steps.push(format!("  {mark}{}: {}{score}", r.plugin, r.reason));
            continue;
        };
        let node = nodes.entry(n.0).or_default();
        match (r.passed, r.score) {
            (None, Some(s)) if r.plugin == "total" => node.total = Some(s),
            (None, Some(s)) => {
                if !scores.contains(&r.plugin.as_ref()) {
                    scores.push(r.plugin.as_ref());
                }
                node.scores.insert(r.plugin.to_string(), s);
            }
            (Some(passed), _) if OUTCOMES.contains(&r.plugin.as_ref()) => {
                let mark = if passed { "" } else { "✗ " };
                let why = if r.reason.is_empty() { String::new() } else { format!(": {}", r.reason) };
                node.outcome.push(format!("{mark}{}{why}", r.plugin));
            }
            (Some(false), _) => node.fit = Some(fit_reason(r)),
            (Some(true), _) => {
                if node.fit.is_none() {
                    node.fit = Some(if r.reason.is_empty() { "ok".to_string() } else { format!("ok ({})", r.reason) });
                }
            }
            (None, None) => node.outcome.push(format!("{}: {}", r.plugin, r.reason)),
        }
    }
    let fails = |n: &Node| n.fit.as_deref().is_some_and(|f| !f.starts_with("ok")) && n.outcome.is_empty();
    let mut folded: BTreeMap<String, usize> = BTreeMap::new();
    if nodes.len() > NODES_LISTED {
        nodes.retain(|_, n| {
            if fails(n) {
                *folded.entry(n.fit.clone().unwrap_or_default()).or_default() += 1;
                false
            } else {
                true
            }
        });
    }
    let has_total = nodes.values().any(|n| n.total.is_some());
    let has_outcome = nodes.values().any(|n| !n.outcome.is_empty());
    let mut header = vec!["node".to_string(), "fit".to_string()];
    header.extend(scores.iter().map(|s| s.to_string()));
    header.extend(has_total.then(|| "total".to_string()));
    header.extend(has_outcome.then(|| "outcome".to_string()));
    let cluster = &out.world.cluster;
    let body: Vec<Vec<String>> = nodes
        .iter()
        .map(|(&n, node)| {
            let mut row = vec![
                cluster.node(lahar_core::model::cluster::NodeId(n)).name.clone(),
                node.fit.clone().unwrap_or_default(),
            ];
            row.extend(scores.iter().map(|s| node.scores.get(*s).map(|&x| score(x)).unwrap_or_default()));
            if has_total {
                row.push(node.total.map(score).unwrap_or_default());
            }
            if has_outcome {
                row.push(node.outcome.join("; "));
            }
            row
        })
        .collect();
    let mut s = format!("{name} — session {session} at t = {} s:", score(t));
    let listed = !body.is_empty();
    if listed {
        s.push('\n');
        s.push_str(&table(header, body));
    }
    let mut folded: Vec<(String, usize)> = folded.into_iter().collect();
    folded.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
    let more = if listed { " more" } else { "" };
    for (why, n) in folded {
        s.push_str(&format!("\n  {n}{more} node{}: {why}", if n == 1 { "" } else { "s" }));
    }
    for step in steps {
        s.push('\n');
        s.push_str(&step);
    }
    s
}
