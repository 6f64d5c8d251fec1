//! `tdm` (Volcano's `plugins/tdm`, time-division multiplexing): nodes labelled
//! `volcano.sh/revocable-zone: <zone>` lend themselves to preemptable pods during
//! their zone's daily window (`tdm.revocable-zone.<zone>: "HH:MM-HH:MM"`, on the
//! cluster's wall clock, `spec.startTime`).
//!
//! - predicate: a revocable node takes pods only while its zone's window is open,
//!   and only pods with a revocable zone (`volcano.sh/revocable-zone: "*"`, or
//!   annotated `volcano.sh/preemptable: "true"`);
//! - node order: 100 for such a pod on an open revocable node, else 0;
//! - preemptable: only a preemptor that is not preemptable and has no revocable
//!   zone chooses victims: the Running preemptable pods on other (not revocable)
//!   nodes, at most a job's disruption budget per job;
//! - victims (for shuffle): once per `tdm.evict.period` (1m), the Running
//!   preemptable pods on nodes whose window is closed, at most each job's budget;
//! - job order: jobs whose PodGroup is not preemptable first; pipelined: the job's
//!   own gang count; starving: a job that is not preemptable with pending pods.
//!
//! A window is today's: it starts today at its first time and ends today at the
//! second, or tomorrow when the second is not later — so "22:00-2:00" is open from
//! 22:00 to midnight only, as in Volcano. lahar asks for a session when a window
//! opens or closes, and when the evict period ends; Volcano runs one every second.

use super::super::args::{ArgSpec, ArgType, ArgValue, Args, problem};
use super::super::plugin::{Hooks, Plugin, PluginSpec, Vote};
use lahar_core::model::budget::BudgetRule;
use lahar_core::model::cluster::NodeId;
use lahar_core::model::job::{JobId, PodId, PodStatus};
use lahar_core::session::Session;
use lahar_core::util::time::{DAY_SECS, SimDuration, SimTime};
use std::cell::Cell;
use std::cmp::Ordering;

/// The plugin's entry in [`super::ALL`].
pub const SPEC: PluginSpec = PluginSpec::new("tdm", |pc| Box::new(Tdm::new(&pc.args))).args(&[
    ArgSpec::new("tdm.revocable-zone.<zone>", ArgType::Str, "", "the zone's daily window, HH:MM-HH:MM")
        .checked(check_window),
    ArgSpec::new("tdm.evict.period", ArgType::Duration, "1m", "how often revocable pods are evicted"),
]);

/// A daily window Volcano would find open.
fn check_window(_: &str, v: &ArgValue) -> Vec<(String, String)> {
    match v {
        ArgValue::Str(w) if parse_window(w).is_none() => problem(format!(
            "expected a daily window such as 10:00-21:00 (hours 0–23, two-digit minutes), got `{w}` (Volcano finds the zone never open)"
        )),
        _ => Vec::new(),
    }
}

/// The node label naming a node's revocable zone.
pub const ZONE_LABEL: &str = "volcano.sh/revocable-zone";
const ZONE_ARG: &str = "tdm.revocable-zone.";

/// A zone's daily window: start and end, seconds into the day (Go's `15:04`
/// layout: an hour of 1 or 2 digits up to 23, minutes of 2 digits).
pub fn parse_window(raw: &str) -> Option<(i64, i64)> {
    let (a, b) = raw.trim().split_once('-')?;
    let hm = |s: &str| {
        let (h, m) = s.split_once(':')?;
        let ok = (1..=2).contains(&h.len()) && m.len() == 2 && (h.bytes().chain(m.bytes())).all(|c| c.is_ascii_digit());
        let (h, m) = (h.parse::<i64>().ok()?, m.parse::<i64>().ok()?);
        (ok && h <= 23 && m <= 59).then_some(h * 3600 + m * 60)
    };
    if b.contains('-') {
        return None;
    }
    Some((hm(a)?, hm(b)?))
}

/// The window's span in seconds when evaluated on a day (Volcano's
/// `end − start`): a second time not later than the first ends tomorrow.
pub fn window_span((start, end): (i64, i64)) -> i64 {
    if start >= end { end + DAY_SECS - start } else { end - start }
}

/// The plugin.
#[derive(Debug)]
pub struct Tdm {
    /// (zone, its window).
    zones: Vec<(String, (i64, i64))>,
    evict_period: SimDuration,
    /// When the victims function last ran (not throttled).
    last_evict: Cell<Option<SimTime>>,
}

impl Tdm {
    /// The plugin for its (checked) arguments.
    pub fn new(args: &Args) -> Tdm {
        let zones = args
            .with_prefix(ZONE_ARG)
            .filter_map(|(k, v)| match v {
                ArgValue::Str(s) => parse_window(s).map(|w| (k[ZONE_ARG.len()..].to_string(), w)),
                _ => None,
            })
            .collect();
        let period =
            args.str("tdm.evict.period").and_then(lahar_core::util::time::parse_go_duration).unwrap_or(60_000_000);
        Tdm { zones, evict_period: SimDuration(period), last_evict: Cell::new(None) }
    }

    fn zone_of<'a>(ssn: &'a Session<'_>, n: NodeId) -> Option<&'a str> {
        ssn.node(n).labels.get(ZONE_LABEL).map(String::as_str).filter(|z| !z.is_empty())
    }

    /// Volcano's `availableRevocableZone`: `Err` names why the zone is closed.
    fn open(&self, ssn: &Session<'_>, zone: &str) -> Result<(), String> {
        let Some((_, (s, e))) = self.zones.iter().find(|(z, _)| z == zone) else {
            return Err(format!("revocable zone {zone} not support"));
        };
        let now = ssn.wall_clock();
        let day = now.div_euclid(DAY_SECS) * DAY_SECS;
        let (start, end) = (day + s, day + s + window_span((*s, *e)));
        if now < start || now > end {
            return Err(format!("current time beyond revocable zone {zone}"));
        }
        Ok(())
    }

    fn revocable(ssn: &Session<'_>, p: PodId) -> bool {
        let pod = ssn.pod(p);
        ssn.job(pod.job).spec.tasks[pod.task as usize].hints.as_deref().is_some_and(|h| h.revocable)
    }

    /// The first `n` of a job's victims (Volcano's `maxVictims`), `n` from the
    /// job's disruption budget (`getMaxPodEvictNum`).
    fn max_victims(ssn: &Session<'_>, j: JobId, victims: &[PodId]) -> usize {
        let job = ssn.job(j);
        let total = job.pods.len() as u32;
        let running = job.count(PodStatus::Running);
        let n = match job.spec.disruption {
            Some(BudgetRule::MaxUnavailable(m)) => {
                let max = m.of(total);
                let fin = job.count(PodStatus::Succeeded) + job.count(PodStatus::Failed);
                let unavailable = total.saturating_sub(fin + running);
                max.saturating_sub(unavailable)
            }
            Some(BudgetRule::MinAvailable(m)) if running >= m.of(total) => running - m.of(total),
            _ => 1,
        };
        (n as usize).min(victims.len())
    }

    /// Per job (in order of first appearance), its first victims.
    fn by_job(ssn: &Session<'_>, pods: impl Iterator<Item = PodId>) -> Vec<PodId> {
        let mut jobs: Vec<(JobId, Vec<PodId>)> = Vec::new();
        for p in pods {
            let j = ssn.pod(p).job;
            match jobs.iter_mut().find(|(x, _)| *x == j) {
                Some((_, v)) => v.push(p),
                None => jobs.push((j, vec![p])),
            }
        }
        jobs.into_iter().flat_map(|(j, v)| v[..Self::max_victims(ssn, j, &v)].to_vec()).collect()
    }

    fn job_preemptable(ssn: &Session<'_>, j: JobId) -> bool {
        ssn.job(j).spec.preemptable.unwrap_or(false)
    }
}

impl Plugin for Tdm {
    fn name(&self) -> &'static str {
        "tdm"
    }
    fn hooks(&self) -> Hooks {
        Hooks::PREDICATE.and(Hooks::NODE_SCORE).and(Hooks::PREEMPTABLE).and(Hooks::VICTIM_TASKS).and(Hooks::JOB_ORDER)
    }
    fn open(&mut self, ssn: &mut Session<'_>) {
        // A session when a window next opens or closes, and when the evict period ends.
        let now = ssn.wall_clock();
        let day = now.div_euclid(DAY_SECS) * DAY_SECS;
        let mut next: Option<i64> = None;
        for (_, (s, e)) in &self.zones {
            for edge in [day + s, day + s + window_span((*s, *e)) + 1, day + DAY_SECS + s] {
                if edge > now {
                    next = Some(next.map_or(edge, |n| n.min(edge)));
                }
            }
        }
        if let Some(w) = next {
            ssn.request_wakeup(ssn.now().plus(SimDuration::from_secs((w - now) as u64)));
        }
        if let Some(last) = self.last_evict.get() {
            let due = last.plus(self.evict_period);
            if due > ssn.now() {
                ssn.request_wakeup(due);
            }
        }
    }
    fn predicate(&self, ssn: &Session<'_>, pod: PodId, node: NodeId) -> Option<Result<(), String>> {
        let Some(zone) = Self::zone_of(ssn, node) else { return Some(Ok(())) };
        if let Err(e) = self.open(ssn, zone) {
            return Some(Err(e));
        }
        if !Self::revocable(ssn, pod) {
            return Some(Err("not allow to dispatch to revocable node".into()));
        }
        Some(Ok(()))
    }
    fn score_by_node(&self, _: &Session<'_>, _: PodId) -> bool {
        // The score reads the pod's zone and the clock.
        false
    }
    fn node_score(&self, ssn: &Session<'_>, pod: PodId, node: NodeId) -> Option<f64> {
        let Some(zone) = Self::zone_of(ssn, node) else { return Some(0.0) };
        let open = self.open(ssn, zone).is_ok();
        Some(if open && Self::revocable(ssn, pod) { 100.0 } else { 0.0 })
    }
    fn preemptable(&self, ssn: &Session<'_>, preemptor: PodId, cands: &[PodId]) -> Option<Vec<PodId>> {
        if ssn.pod(preemptor).preemptable || Self::revocable(ssn, preemptor) {
            return Some(Vec::new());
        }
        let on_regular = cands.iter().copied().filter(|&c| {
            let p = ssn.pod(c);
            p.preemptable && p.status == PodStatus::Running && p.node.is_some_and(|n| Self::zone_of(ssn, n).is_none())
        });
        Some(Self::by_job(ssn, on_regular))
    }
    fn victim_tasks(&self, ssn: &Session<'_>, _: &[PodId]) -> Option<Vec<PodId>> {
        if self.last_evict.get().is_some_and(|last| last.plus(self.evict_period) > ssn.now()) {
            return Some(Vec::new());
        }
        let mut out = Vec::new();
        for (zone, _) in &self.zones {
            if self.open(ssn, zone).is_ok() {
                continue;
            }
            let pods = (0..ssn.node_count() as u32)
                .map(NodeId)
                .filter(|&n| Self::zone_of(ssn, n) == Some(zone.as_str()))
                .flat_map(|n| ssn.node_state(n).pods.iter().copied())
                .filter(|&p| ssn.pod(p).preemptable && ssn.pod(p).status == PodStatus::Running);
            out.extend(Self::by_job(ssn, pods));
        }
        self.last_evict.set(Some(ssn.now()));
        Some(out)
    }
    fn job_order_key(&self, ssn: &Session<'_>, j: JobId) -> Option<f64> {
        Some(Self::job_preemptable(ssn, j) as u8 as f64)
    }
    fn job_order(&self, ssn: &Session<'_>, l: JobId, r: JobId) -> Option<Ordering> {
        Some(Self::job_preemptable(ssn, l).cmp(&Self::job_preemptable(ssn, r)))
    }
    fn job_pipelined(&self, ssn: &Session<'_>, j: JobId) -> Option<Vote> {
        Some(if super::gang::pipelined_count(ssn, j) { 1 } else { -1 })
    }
    fn job_starving(&self, ssn: &Session<'_>, j: JobId) -> Option<bool> {
        Some(!Self::job_preemptable(ssn, j) && ssn.job(j).count(PodStatus::Pending) > 0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Volcano's `Test_parseRevocableZone`, cases 0–8: the window's span in
    /// seconds, or an error.
    #[test]
    fn parse_revocable_zone() {
        let cases: [(&str, Option<i64>); 9] = [
            ("00:00_01:00", None),
            ("00:00-01:00", Some(3600)),
            ("0:00-23:59", Some(23 * 3600 + 59 * 60)),
            ("0:00", None),
            ("1:00-0:00", Some(23 * 3600)),
            ("1:0-0:0", None),
            ("   1:00-0:00    ", Some(82_800)),
            ("23:59-23:59", Some(86_400)),
            ("63:59-23:59", None),
        ];
        for (i, (raw, want)) in cases.iter().enumerate() {
            assert_eq!(parse_window(raw).map(window_span), *want, "case {i}: {raw}");
        }
    }
}
