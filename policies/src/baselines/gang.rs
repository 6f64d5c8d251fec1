//! Helpers shared by the gang baselines (`fifo`, `sjf`, `tiresias`, `easy-backfill`):
//! PodGroup admission, all-or-nothing first-fit gang placement, and a job's work done
//! up to the session's instant.

use lahar_core::explain::{GPU_DEVICES_FULL, insufficient};
use lahar_core::model::cluster::NodeId;
use lahar_core::model::job::{JobId, PodGroupPhase, PodId, PodStatus, TaskSpec};
use lahar_core::model::resource::{DIMS, Resources};
use lahar_core::session::{Session, Statement};
use lahar_core::world::Job;

/// Where a gang's pods go: on idle resources (`allocate`) or on future-idle ones
/// (`pipeline`, resources that evicted pods will free).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Mode {
    /// `Session::allocate` on idle resources.
    Allocate,
    /// `Session::pipeline` on future-idle resources.
    Pipeline,
}

/// True if job `j` is a candidate at all: gated pods wait outside the
/// scheduler's queue (Kubernetes keeps them out of its active queue), so a job
/// whose gang needs some of them is skipped — it neither starts nor blocks (not
/// the head of `fifo` or `easy-backfill`) — until their gates are removed. A job
/// without gated pods always is.
pub(crate) fn eligible(ssn: &Session<'_>, j: JobId) -> bool {
    let Some(g) = ssn.gating(j) else { return true };
    let job = ssn.job(j);
    let free = job.count(PodStatus::Pending) - g.pods;
    free > 0 && job.ready_count() + free >= job.spec.min_available.max(1)
}

/// Admits the job's PodGroup (Pending → Inqueue); there is no separate enqueue step.
pub(crate) fn admit(ssn: &mut Session<'_>, j: JobId, reason: &'static str) {
    if ssn.job(j).pg_phase == PodGroupPhase::Pending {
        ssn.set_pod_group_phase(j, PodGroupPhase::Inqueue, reason);
    }
}

/// The job's gang is satisfied: at least `minAvailable` (≥ 1) pods Allocated, Running
/// or Succeeded.
pub(crate) fn is_whole(job: &Job) -> bool {
    job.ready_count() >= job.spec.min_available.max(1)
}

/// First node, in node order, whose resources (idle for `Allocate`, future idle for
/// `Pipeline`) and labels fit the pod.
pub(crate) fn first_fit(ssn: &Session<'_>, pod: PodId, mode: Mode) -> Option<NodeId> {
    let req = ssn.pod(pod).req;
    ssn.fitting_nodes(&req).find(|&n| fits(ssn, pod, n, mode))
}

/// True if the pod fits the node's resources for `mode` and the node's filters
/// (labels, taints, host ports).
pub(crate) fn fits(ssn: &Session<'_>, pod: PodId, n: NodeId, mode: Mode) -> bool {
    let req = ssn.pod(pod).req;
    let free = match mode {
        Mode::Allocate => ssn.idle(n),
        Mode::Pipeline => ssn.future_idle(n),
    };
    req.fits_in(&free) && ssn.gpu_fits(pod, n) && ssn.fits_filters(pod, n)
}

/// Places the job's Pending pods in task order, each on the node `choose` returns
/// (`None`: the pod is left Pending), in one statement. Returns the open statement if
/// at least one pod was placed and the gang is then satisfied (ready + placed ≥
/// `minAvailable`); otherwise discards it and returns `None`. Stops early once the
/// pods left cannot complete the gang. `choose` must return a node that fits the pod
/// for `mode`.
pub(crate) fn place_gang(
    ssn: &mut Session<'_>,
    j: JobId,
    mode: Mode,
    choose: impl FnMut(&Session<'_>, PodId) -> Option<NodeId>,
) -> Option<Statement> {
    let stmt = ssn.statement();
    place_gang_in(ssn, j, mode, stmt, choose)
}

/// [`place_gang`] in the statement `stmt` (empty).
fn place_gang_in(
    ssn: &mut Session<'_>,
    j: JobId,
    mode: Mode,
    mut stmt: Statement,
    mut choose: impl FnMut(&Session<'_>, PodId) -> Option<NodeId>,
) -> Option<Statement> {
    let job = ssn.job(j);
    let min = job.spec.min_available.max(1);
    let ready = job.ready_count();
    let needed = min.saturating_sub(ready);
    let pending = ssn.pending_pods(j);
    let total = pending.len() as u32;
    if mode == Mode::Allocate && !ssn.explaining_job(j) && !may_fit_idle(ssn, j) {
        return None;
    }
    let mut placed = 0u32;
    let mut tried: Vec<PodId> = Vec::new();
    for (i, p) in pending.into_iter().enumerate() {
        let choice = choose(ssn, p);
        if ssn.explaining(p) {
            explain_fit(ssn, p, mode, choice);
            tried.push(p);
        }
        match choice {
            Some(n) => {
                let ok = match mode {
                    Mode::Allocate => ssn.allocate(&mut stmt, p, n),
                    Mode::Pipeline => ssn.pipeline(&mut stmt, p, n),
                };
                if ok.is_ok() {
                    placed += 1;
                }
            }
            None if placed + (total - i as u32 - 1) < needed => break,
            None => {}
        }
    }
    if placed > 0 && ready + placed >= min {
        Some(stmt)
    } else {
        for p in tried {
            let why = format!("gang not satisfied: {ready} ready + {placed} placed of minAvailable {min}; discarded");
            ssn.explain(p, None, "gang", Some(false), why, None);
        }
        ssn.discard(stmt);
        None
    }
}

/// `--explain` rows for a watched pod: each node's fit and the node `choice` the
/// policy made.
pub(crate) fn explain_fit(ssn: &mut Session<'_>, p: PodId, mode: Mode, choice: Option<NodeId>) {
    explain_nodes(ssn, p, mode);
    match choice {
        Some(n) => ssn.explain(p, Some(n), "chosen", Some(true), "chosen by the policy's node order", None),
        None => ssn.explain(p, None, "chosen", Some(false), "no node fits", None),
    }
}

/// `--explain` rows for a watched pod: each node's fit (resources for `mode`, then
/// the node selector).
pub(crate) fn explain_nodes(ssn: &mut Session<'_>, p: PodId, mode: Mode) {
    let req = ssn.pod(p).req;
    let mut rows: Vec<(NodeId, &'static str, bool, String)> = Vec::new();
    for n in (0..ssn.node_count() as u32).map(NodeId) {
        let free = match mode {
            Mode::Allocate => ssn.idle(n),
            Mode::Pipeline => ssn.future_idle(n),
        };
        if let Some(r) = insufficient(&ssn.cluster().resource_names, &req, &free) {
            rows.push((n, "resources", false, r));
        } else if !ssn.gpu_fits(p, n) {
            rows.push((n, "gpu-devices", false, GPU_DEVICES_FULL.to_string()));
        } else if ssn.port_conflict(p, n) {
            rows.push((n, "ports", false, crate::volcano::plugins::predicates::PORTS_TAKEN.to_string()));
        } else if !ssn.selector_matches(p, n) {
            rows.push((n, "selector", false, "node(s) didn't match Pod's node selector".to_string()));
        } else if let Some(r) = ssn.affinity_refusal(p, n) {
            rows.push((n, "affinity", false, r.reason().to_string()));
        } else {
            rows.push((n, "fit", true, String::new()));
        }
    }
    for (n, plugin, passed, reason) in rows {
        ssn.explain(p, Some(n), plugin, Some(passed), reason, None);
    }
}

/// [`place_gang`] with first-fit node choice.
pub(crate) fn place_gang_first_fit(ssn: &mut Session<'_>, j: JobId, mode: Mode) -> Option<Statement> {
    place_gang(ssn, j, mode, |s, p| first_fit(s, p, mode))
}

/// [`place_gang_first_fit`] for a placement the caller will discard (a
/// trial): its pods' moves are not filed ([`Session::unfiled_statement`]).
/// The statement returned must be discarded.
pub(crate) fn try_gang_first_fit(ssn: &mut Session<'_>, j: JobId, mode: Mode) -> Option<Statement> {
    let stmt = ssn.unfiled_statement();
    place_gang_in(ssn, j, mode, stmt, |s, p| first_fit(s, p, mode))
}

/// False when the job's gang cannot be completed on idle resources (checked
/// on the cluster's totals, in O(pods)); true otherwise, and always with
/// `--exhaustive` or when the gang is already complete. The pods the gang
/// needs take at least the `needed` smallest requests of each dimension, and
/// no placement on idle resources finds more than every node's idle summed.
pub(crate) fn may_fit_idle(ssn: &Session<'_>, j: JobId) -> bool {
    may_fit_total(ssn, j, Mode::Allocate)
}

/// [`may_fit_idle`] for `mode`: against every node's future-idle resources
/// summed for [`Mode::Pipeline`].
pub(crate) fn may_fit_total(ssn: &Session<'_>, j: JobId, mode: Mode) -> bool {
    let job = ssn.job(j);
    let needed = job.spec.min_available.max(1).saturating_sub(job.ready_count()) as u64;
    if needed == 0 || ssn.is_exhaustive() {
        return true;
    }
    // A task's pods all request the task's resources.
    let count = needed + u64::from(ssn.planted.wrong_skip);
    let idle = match mode {
        Mode::Allocate => ssn.idle_total(),
        Mode::Pipeline => ssn.future_idle_total(),
    };
    if let [task] = job.spec.tasks.as_slice() {
        let pending = u64::from(job.task_count(0, PodStatus::Pending));
        return count <= pending && least_grouped(&[(task.requests, pending)], count).fits_in(&idle);
    }
    let tasks = job.spec.tasks.iter().enumerate();
    let groups: Vec<(Resources, u64)> = tasks
        .map(|(t, task)| (task.requests, u64::from(job.task_count(t, PodStatus::Pending))))
        .filter(|&(_, n)| n > 0)
        .collect();
    count <= groups.iter().map(|g| g.1).sum::<u64>() && least_grouped(&groups, count).fits_in(&idle)
}

/// What each task's run of the job's Pending pods (one request, one node
/// selector; [`task_runs`]) must place for the gang to complete, `needed` pods
/// in all: a gang of one task, `needed`; several tasks whose Pending pods are
/// all needed, each run whole. `None` when several tasks have more Pending pods
/// than needed (no run must place a known number). A deliberately wrong skip
/// (tests) asks one pod more of each.
pub(crate) fn run_demands(ssn: &Session<'_>, j: JobId, needed: u64) -> Option<Vec<(PodId, u64)>> {
    let pending = ssn.pending_pods(j);
    let mut runs = task_runs(ssn, &pending);
    if runs.len() > 1 && needed < pending.len() as u64 {
        return None;
    }
    let slack = u64::from(ssn.planted.wrong_skip);
    let single = runs.len() == 1;
    for run in &mut runs {
        run.1 = if single { needed } else { run.1 } + slack;
    }
    Some(runs)
}

/// False when first fit cannot complete the job's gang for `mode`, counted node
/// by node: for each task's run of Pending pods, the copies of its pod that each
/// node with room for one (the free-resource index, future-idle) holds in its
/// free resources for `mode`, summed over the nodes whose filters (labels,
/// taints) pass, against what the run must place ([`run_demands`]). Other pods
/// of the gang, GPU devices, host ports and affinity only lower what first fit
/// places, so this is an upper bound. Stops counting once a run has enough.
/// True with `--exhaustive`, when explaining the job, or with nothing needed.
pub(crate) fn may_fit_nodes(ssn: &Session<'_>, j: JobId, mode: Mode) -> bool {
    let job = ssn.job(j);
    let needed = job.spec.min_available.max(1).saturating_sub(job.ready_count()) as u64;
    if needed == 0 || ssn.is_exhaustive() || ssn.explaining_job(j) {
        return true;
    }
    let Some(runs) = run_demands(ssn, j, needed) else { return true };
    runs.iter().all(|&(p, want)| {
        let req = ssn.pod(p).req;
        let mut found = 0u64;
        for n in ssn.fitting_nodes(&req) {
            let free = match mode {
                Mode::Allocate => ssn.idle(n),
                Mode::Pipeline => ssn.future_idle(n),
            };
            if req.fits_in(&free) && ssn.fits_filters(p, n) {
                found += u64::from(free.copies_of(&req));
                if found >= want {
                    return true;
                }
            }
        }
        false
    })
}

/// [`least`] over pods given as (request, how many).
fn least_grouped(groups: &[(Resources, u64)], count: u64) -> Resources {
    let mut out = Resources::ZERO;
    if let [(r, _)] = groups {
        for d in 0..DIMS {
            out.set(d, r.get(d).saturating_mul(count as i64));
        }
        return out;
    }
    let mut values: Vec<(i64, u64)> = Vec::with_capacity(groups.len());
    for d in 0..DIMS {
        values.clear();
        values.extend(groups.iter().map(|&(r, n)| (r.get(d), n)));
        values.sort_unstable();
        let (mut left, mut sum) = (count, 0i64);
        for &(v, n) in &values {
            let k = n.min(left);
            sum = sum.saturating_add(v.saturating_mul(k as i64));
            left -= k;
            if left == 0 {
                break;
            }
        }
        out.set(d, sum);
    }
    out
}

/// The explain rows of a gang [`Misses`] skipped.
pub(crate) fn explain_miss(ssn: &mut Session<'_>, j: JobId) {
    for p in ssn.explained_pods(j) {
        let why = "skipped: a job of the same pod shape needing no more pods found no room in this session";
        ssn.explain(p, None, "gang", Some(false), why, None);
    }
}

/// Per dimension, the sum of the `count` smallest of `reqs` (`count` ≤ its
/// length): what any `count` of these pods take together at least.
pub(crate) fn least(reqs: &[Resources], count: usize) -> Resources {
    let groups: Vec<(Resources, u64)> = reqs.iter().map(|&r| (r, 1)).collect();
    least_grouped(&groups, count as u64)
}

/// The runs of `pending` (in task order) that belong to one task, each as its
/// first pod and its length: pods of a run share a request and a node selector.
pub(crate) fn task_runs(ssn: &Session<'_>, pending: &[PodId]) -> Vec<(PodId, u64)> {
    let mut runs: Vec<(PodId, u64)> = Vec::new();
    for &p in pending {
        match runs.last_mut() {
            Some(run) if ssn.pod(p).task == ssn.pod(run.0).task => run.1 += 1,
            _ => runs.push((p, 1)),
        }
    }
    runs
}

/// Gangs that found no room on idle resources in one session, by pod shape.
///
/// A gang whose Pending pods all request the same resources, with no node
/// filter and no tolerations, places `min(pods, room)` of them by first fit,
/// where `room` (how many such pods the idle resources of the nodes whose
/// taints do not repel them take: the same nodes for every such gang, the
/// taints changing only between sessions) only shrinks while a session
/// allocates. So once a gang of a shape needing `n`
/// pods (with at least `n` Pending) fails, any later gang of that shape needing
/// `n` or more fails too, until the session ends or frees resources
/// ([`Misses::clear`]). Heterogeneous gangs are never skipped: first fit is not
/// monotone in the room it is given.
#[derive(Debug, Clone, Default)]
pub(crate) struct Misses(Vec<(Resources, u32)>);

impl Misses {
    /// Forgets every miss (a new session).
    pub(crate) fn clear(&mut self) {
        self.0.clear();
    }

    /// The job's (pod shape, pods needed, pods Pending) when the rule applies.
    fn key(ssn: &Session<'_>, j: JobId) -> Option<(Resources, u32, u32)> {
        let job = ssn.job(j);
        let needed = job.spec.min_available.max(1).saturating_sub(job.ready_count());
        // A gang with gated pods may fail for its gates, not for room.
        let tolerates = |t: &TaskSpec| !t.tolerations.is_empty() && !ssn.planted.wrong_class_tolerations;
        if needed == 0
            || ssn.affinity_on()
            || ssn.gating(j).is_some()
            || job.spec.tasks.iter().any(|t| t.has_node_filter() || tolerates(t))
        {
            return None;
        }
        let mut shape: Option<Resources> = None;
        let mut pending = 0u32;
        for (t, task) in job.spec.tasks.iter().enumerate() {
            let n = job.task_count(t, PodStatus::Pending);
            if n == 0 {
                continue;
            }
            if shape.is_some_and(|r| r != task.requests) {
                return None;
            }
            shape = Some(task.requests);
            pending += n;
        }
        shape.map(|r| (r, needed, pending))
    }

    /// True if a gang of the job's shape needing no more pods already failed.
    pub(crate) fn hopeless(&self, ssn: &Session<'_>, j: JobId) -> bool {
        !self.0.is_empty() && !ssn.is_exhaustive() && self.knows(Self::key(ssn, j))
    }

    fn knows(&self, key: Option<(Resources, u32, u32)>) -> bool {
        key.is_some_and(|(r, n, _)| self.0.iter().any(|&(mr, mn)| mr == r && n >= mn))
    }

    /// The job's gang found no room on idle resources.
    pub(crate) fn record(&mut self, ssn: &Session<'_>, j: JobId) {
        self.note(Self::key(ssn, j));
    }

    fn note(&mut self, key: Option<(Resources, u32, u32)>) {
        if let Some((r, n, _)) = key.filter(|&(_, n, pending)| pending >= n) {
            self.0.push((r, n));
        }
    }
}

/// [`place_gang_first_fit`] on idle resources, skipping a gang [`Misses`]
/// knows cannot fit (its watched pods get an explain row saying so) and
/// recording a gang that does not.
pub(crate) fn allocate_gang(ssn: &mut Session<'_>, j: JobId, misses: &mut Misses) -> Option<Statement> {
    let key = Misses::key(ssn, j);
    if !ssn.is_exhaustive() && misses.knows(key) {
        explain_miss(ssn, j);
        return None;
    }
    let placed = place_gang_first_fit(ssn, j, Mode::Allocate);
    if placed.is_none() {
        misses.note(key);
    }
    placed
}

#[cfg(test)]
mod tests {
    use super::*;

    fn r(cpu: i64, gpu: i64) -> Resources {
        Resources::new(cpu, 0, gpu, 1)
    }

    /// Per dimension, the smallest requests: of (8 CPU, 1 GPU), (2, 4), (4, 2)
    /// any two take at least 2 + 4 = 6 CPUs and 1 + 2 = 3 GPUs (no pair of pods
    /// has both), and two pod slots.
    #[test]
    fn least_takes_the_smallest_of_each_dimension() {
        let reqs = [r(8, 1), r(2, 4), r(4, 2)];
        assert_eq!(least(&reqs, 2), r(6, 3) + Resources::new(0, 0, 0, 1));
        assert_eq!(least(&reqs, 3), r(14, 7) + Resources::new(0, 0, 0, 2));
        assert_eq!(least(&reqs, 0), Resources::ZERO);
        assert_eq!(least(&[r(8, 1); 4], 3), Resources::new(24, 0, 3, 3));
    }

    /// The same over (request, count) groups: 3 × (1, 8) and 2 × (6, 0); four
    /// pods take at least 1+1+1+6 = 9 CPUs, 0+0+8+8 = 16 GPUs.
    #[test]
    fn least_grouped_counts_each_group() {
        let groups = [(r(1, 8), 3), (r(6, 0), 2)];
        assert_eq!(least_grouped(&groups, 4), Resources::new(9, 0, 16, 4));
        assert_eq!(least_grouped(&groups, 5), Resources::new(15, 0, 24, 5));
        assert_eq!(least_grouped(&[(r(2, 1), 7)], 3), Resources::new(6, 0, 3, 3));
    }
}
