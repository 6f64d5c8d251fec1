//! The one-line summary of each `--explain` pod printed at the end of a run: where
//! and when it was placed, or how long it stayed pending, and which steps rejected
//! it in what share of the sessions that looked at it (all sessions, also those
//! outside `--explain-window`).

use lahar_core::engine::RunOutput;
use lahar_core::model::job::{JobId, PodStatus};
use lahar_core::record::EndReason;

/// A duration in the largest unit that reads well.
fn human(s: f64) -> String {
    if s >= 2.0 * 86400.0 {
        format!("{:.1} d", s / 86400.0)
    } else if s >= 2.0 * 3600.0 {
        format!("{:.1} h", s / 3600.0)
    } else if s >= 120.0 {
        format!("{:.0} min", s / 60.0)
    } else {
        format!("{s:.0} s")
    }
}

/// One line per pod `--explain` named (`named`), in pod order.
pub fn lines(out: &RunOutput, named: &[(JobId, u16, u32)]) -> Vec<String> {
    let end = out.stats.end.as_secs_f64();
    let mut lines = Vec::new();
    for (&(j, t, i), tally) in out.explain_tallies.iter().filter(|(k, _)| named.contains(k)) {
        let job = &out.world.jobs[j];
        let name = lahar_reports::metrics::pod_label(&job.spec, t, i);
        let submit = job.spec.submit.as_secs_f64();
        let first = out.pods.iter().filter(|r| r.job == j && r.task == t && r.index == i).min_by_key(|r| r.start);
        // The pods of its current incarnation (an explained job is never retired).
        let mine = || job.pods.iter().map(|&p| &out.world.pods[p]).filter(|p| p.task == t && p.index == i);
        let running = mine().filter(|p| p.status == PodStatus::Running && p.node.is_some()).min_by_key(|p| p.started);
        let pending_at_end = mine().next_back().is_some_and(|p| p.status == PodStatus::Pending);
        let node_name = |n: lahar_core::model::cluster::NodeId| out.world.cluster.node(n).name.clone();
        let placed = match (first, running) {
            (Some(r), Some(p)) if p.started < r.start => Some((p.started, p.node.expect("running"))),
            (Some(r), _) => Some((r.start, r.node)),
            (None, Some(p)) => Some((p.started, p.node.expect("running"))),
            (None, None) => None,
        };
        let fate = match placed {
            Some((at, n)) if !pending_at_end => format!(
                "first bound to {} at {} (after {} pending)",
                node_name(n),
                human(at.as_secs_f64()),
                human(at.as_secs_f64() - submit)
            ),
            Some((at, n)) => {
                format!("ran on {} from {}, pending again at the end of the run", node_name(n), human(at.as_secs_f64()))
            }
            None => format!("never placed: pending {} until the end of the run", human(end - submit)),
        };
        let mut why: Vec<(&String, &u64)> = tally.rejected.iter().filter(|(k, _)| k.as_str() != "result").collect();
        why.sort_by(|a, b| b.1.cmp(a.1).then(a.0.cmp(b.0)));
        let pct = |n: u64| 100.0 * n as f64 / tally.sessions.max(1) as f64;
        let reasons: Vec<String> = why.iter().take(3).map(|&(k, &n)| format!("{k} in {n} ({:.0}%)", pct(n))).collect();
        let sessions =
            if tally.sessions == 1 { "1 session".to_string() } else { format!("{} sessions", tally.sessions) };
        let looked = if reasons.is_empty() {
            format!("looked at in {sessions}")
        } else {
            format!("looked at in {sessions}; rejected by {}", reasons.join(", "))
        };
        // Its runs that ended otherwise than with their job (or the run): why and when.
        let cut: Vec<String> = out
            .pods
            .iter()
            .filter(|r| r.job == j && r.task == t && r.index == i)
            .filter(|r| !matches!(r.reason, EndReason::Completed | EndReason::Running))
            .map(|r| format!("{} at {}", r.reason.as_str(), human(r.end.as_secs_f64())))
            .collect();
        let cut = match cut.len() {
            0 => String::new(),
            n if n <= 3 => format!("; its runs ended: {}", cut.join(", ")),
            n => format!("; its runs ended: {}, … {} more", cut[..3].join(", "), n - 3),
        };
        lines.push(format!("{name}: {fate}{cut}; {looked}"));
    }
    lines
}
