//! Victim bundles of gangpreempt and gangreclaim (Volcano's
//! `actions/utils/bundle.go`): a victim job's candidate pods on a domain are split
//! into a *safe* bundle (pods its gang can lose: ready pods above `minAvailable`,
//! and above each role's minimum) and a *whole* bundle (the pods whose eviction
//! breaks the gang). Bundles are ordered safe first, then by the victim job (or
//! queue) order, then by return on investment: how much of the preemptor's need a
//! bundle covers per unit of the victim job's whole request it puts at risk.

use lahar_core::model::job::{JobId, PodId};
use lahar_core::model::queue::QueueId;
use lahar_core::model::resource::{DIMS, PODS, Resources};
use std::cmp::Ordering;

/// Safe before whole (Volcano's `BundleSafe = 0`, `BundleWhole = 1`).
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Debug)]
pub(crate) enum Kind {
    /// Evicting these pods leaves the victim's gang ready.
    Safe,
    /// Evicting these pods breaks the victim's gang.
    Whole,
}

/// A candidate victim as the bundles see it.
#[derive(Clone, Debug)]
pub(crate) struct Task {
    pub pod: PodId,
    /// Pod priority.
    pub priority: i32,
    /// The pod's name: Volcano's task UID in its ordering ties.
    pub uid: String,
    /// The pod's role (a task index standing for its role).
    pub role: u16,
    /// The pod's sub-job (0 for a job without sub-groups).
    pub sub: u32,
    pub req: Resources,
}

/// What the bundles need to know of a victim job.
#[derive(Clone, Debug)]
pub(crate) struct Gang {
    pub job: JobId,
    /// `namespace/name`: Volcano's job UID in its ordering ties.
    pub uid: String,
    pub queue: QueueId,
    /// Ready pods (Volcano's `ReadyTaskNum`).
    pub ready: u32,
    pub min_available: u32,
    /// Per role with a minimum: (role, its ready pods, its minimum); `None` when
    /// the job's minAvailable is below the roles' minimums together (Volcano then
    /// does not enforce them).
    pub roles: Option<Vec<(u16, u32, u32)>>,
    /// Σ requests of all the job's pods (a whole bundle's cost).
    pub total: Resources,
    /// For a job with sub-group policies: its sub-jobs' facts.
    pub subs: Option<SubGangs>,
}

/// A victim job's sub-jobs as the bundles see them (Volcano's `MinSubJobs`,
/// `SubJobs`): every policy is enforced, a `minSubGroups` of 0 included.
#[derive(Clone, Debug)]
pub(crate) struct SubGangs {
    /// Per sub-job: `None` when it has no pod (Volcano has no such sub-job), else
    /// its group (a policy; the default sub-job has a group of its own) and
    /// whether it is ready.
    pub sub_jobs: Vec<Option<(usize, bool)>>,
    /// Per group: its `minSubGroups` (0 for the default sub-job's).
    pub min: Vec<i64>,
}

/// A group of victims taken together.
#[derive(Clone, Debug)]
pub(crate) struct Bundle {
    pub kind: Kind,
    pub job: JobId,
    pub job_uid: String,
    pub queue: QueueId,
    pub tasks: Vec<Task>,
    /// Σ the bundle's requests.
    pub local: Resources,
    /// The victim job's whole request for a whole bundle; nothing for a safe one.
    pub global: Resources,
}

fn sum(tasks: &[Task]) -> Resources {
    tasks.iter().fold(Resources::ZERO, |a, t| a + t.req)
}

/// Volcano's `CreateJobBundles`: at most a safe and a whole bundle for one victim
/// job's candidates, taken in (priority, name) order.
pub(crate) fn job_bundles(gang: &Gang, mut local: Vec<Task>) -> Vec<Bundle> {
    if local.is_empty() {
        return Vec::new();
    }
    local.sort_by(|a, b| a.priority.cmp(&b.priority).then_with(|| a.uid.cmp(&b.uid)));
    let bundle = |kind, tasks: Vec<Task>| Bundle {
        kind,
        job: gang.job,
        job_uid: gang.uid.clone(),
        queue: gang.queue,
        local: sum(&tasks),
        global: if kind == Kind::Whole { gang.total } else { Resources::ZERO },
        tasks,
    };
    let mut surplus = gang.ready as i64 - gang.min_available as i64;
    // A gang already broken: nothing more to protect.
    if surplus < 0 {
        return vec![bundle(Kind::Safe, local)];
    }
    let mut roles: Vec<(u16, i64)> =
        gang.roles.iter().flatten().map(|&(r, ready, min)| (r, ready as i64 - min as i64)).collect();
    // Per group, ready sub-jobs to spare; a sub-job already missing a pod
    // ("broken") costs nothing more.
    let mut broken: Vec<bool> = Vec::new();
    let mut spare: Vec<i64> = Vec::new();
    if let Some(g) = &gang.subs {
        spare = g.min.iter().map(|m| -m).collect();
        broken = vec![false; g.sub_jobs.len()];
        for (s, sj) in g.sub_jobs.iter().enumerate() {
            match sj {
                Some((grp, true)) => spare[*grp] += 1,
                Some((_, false)) => broken[s] = true,
                None => {}
            }
        }
    }
    let (mut safe, mut whole) = (Vec::new(), Vec::new());
    for t in local {
        let role = roles.iter_mut().find(|(r, _)| *r == t.role);
        let role_safe = role.as_ref().is_none_or(|(_, s)| *s > 0);
        let group = gang.subs.as_ref().map(|g| g.sub_jobs[t.sub as usize]);
        let sub_safe = match group {
            None => true,
            // A pod of no known sub-job: whole, defensively, as Volcano does.
            Some(None) => false,
            Some(Some((grp, _))) => broken[t.sub as usize] || spare[grp] > 0,
        };
        if surplus > 0 && role_safe && sub_safe {
            surplus -= 1;
            if let Some((_, s)) = role {
                *s -= 1;
            }
            if let Some(Some((grp, _))) = group
                && !broken[t.sub as usize]
            {
                broken[t.sub as usize] = true;
                spare[grp] -= 1;
            }
            safe.push(t);
        } else {
            whole.push(t);
        }
    }
    let mut out = Vec::new();
    if !safe.is_empty() {
        out.push(bundle(Kind::Safe, safe));
    }
    if !whole.is_empty() {
        out.push(bundle(Kind::Whole, whole));
    }
    out
}

/// Volcano's `bundleROI`: the share of each needed resource the bundle covers,
/// summed, over the victim's whole request in units of the need, summed;
/// unbounded for a safe bundle (it costs no gang).
pub(crate) fn roi(b: &Bundle, need: &Resources) -> f64 {
    let dims = (0..DIMS).filter(|&d| d != PODS && need.get(d) > 0);
    let (mut local, mut global) = (0.0, 0.0);
    for d in dims {
        let n = need.get(d) as f64;
        local += (b.local.get(d) as f64).min(n) / n;
        global += b.global.get(d) as f64 / n;
    }
    if global == 0.0 { f64::INFINITY } else { local / global }
}

/// Volcano's `stableBundleLess`: job UID, first pod's UID, fewer pods.
fn stable(a: &Bundle, b: &Bundle) -> Ordering {
    let first = |x: &Bundle| x.tasks.first().map(|t| t.uid.clone()).unwrap_or_default();
    a.job_uid.cmp(&b.job_uid).then_with(|| first(a).cmp(&first(b))).then(a.tasks.len().cmp(&b.tasks.len()))
}

/// Sorts by kind (safe first), then `rank` (ascending), then ROI (highest first),
/// then [`stable`]; each bundle's rank and ROI are computed once.
fn sort_with(bundles: &mut Vec<Bundle>, need: &Resources, rank: impl Fn(&Bundle) -> usize) {
    // Sorts positions (bundles are large) by keys computed once per bundle.
    let keys: Vec<(usize, f64)> = bundles.iter().map(|b| (rank(b), roi(b, need))).collect();
    let mut at: Vec<usize> = (0..bundles.len()).collect();
    at.sort_by(|&i, &j| {
        let (a, b) = (&bundles[i], &bundles[j]);
        a.kind
            .cmp(&b.kind)
            .then(keys[i].0.cmp(&keys[j].0))
            .then_with(|| keys[j].1.partial_cmp(&keys[i].1).unwrap_or(Ordering::Equal))
            .then_with(|| stable(a, b))
    });
    let mut slots: Vec<Option<Bundle>> = std::mem::take(bundles).into_iter().map(Some).collect();
    *bundles = at.into_iter().map(|i| slots[i].take().expect("each position once")).collect();
}

/// Volcano's `SortBundlesForPreempt`: safe first, then victim jobs by `rank`
/// (their position in Volcano's `less`, a total order: gangpreempt passes the
/// reverse of job order), then ROI, highest first.
pub(crate) fn sort_for_preempt(bundles: &mut Vec<Bundle>, need: &Resources, rank: Option<&dyn Fn(JobId) -> usize>) {
    sort_with(bundles, need, |b| rank.map_or(0, |r| r(b.job)));
}

/// Volcano's `SortBundlesForReclaim`: safe first, then victim queues by `rank`
/// (gangreclaim passes the victim-queue order), then ROI, highest first.
pub(crate) fn sort_for_reclaim(bundles: &mut Vec<Bundle>, need: &Resources, rank: Option<&dyn Fn(QueueId) -> usize>) {
    sort_with(bundles, need, |b| rank.map_or(0, |r| r(b.queue)));
}

/// Volcano's `ApplyAllowedTasks`: a whole bundle stays only if every pod of it is
/// allowed; a safe bundle keeps its allowed pods. `allowed` is sorted.
pub(crate) fn apply_allowed(bundles: Vec<Bundle>, allowed: &[PodId]) -> Vec<Bundle> {
    let ok = |t: &Task| allowed.binary_search(&t.pod).is_ok();
    bundles
        .into_iter()
        .filter_map(|mut b| match b.kind {
            Kind::Whole => b.tasks.iter().all(ok).then_some(b),
            Kind::Safe => {
                b.tasks.retain(ok);
                b.local = sum(&b.tasks);
                (!b.tasks.is_empty()).then_some(b)
            }
        })
        .filter(|b| !b.tasks.is_empty())
        .collect()
}

#[cfg(test)]
mod tests {
    //! Volcano's `actions/utils/bundle_test.go`, case by case (cpu in millicores).
    //! `SelectBundles` is used by no action.
    use super::*;

    fn cpu(m: i64) -> Resources {
        Resources::new(m, 0, 0, 0)
    }

    fn task(pod: u32, uid: &str, priority: i32, role: u16, m: i64) -> Task {
        Task { pod: PodId(pod), priority, uid: uid.into(), role, sub: 0, req: cpu(m) }
    }

    fn gang(job: u32, uid: &str, ready: u32, min: u32, roles: Option<Vec<(u16, u32, u32)>>, total: i64) -> Gang {
        Gang {
            job: JobId(job),
            uid: uid.into(),
            queue: QueueId(0),
            ready,
            min_available: min,
            roles,
            total: cpu(total),
            subs: None,
        }
    }

    /// A job of running 1-cpu workers in sub-jobs (Volcano's
    /// `newJobForSubJobBundling`, `newSubJob`, `addRunningTaskToSubJob`): per
    /// sub-job (group, gang, running pods as (uid, priority)); `min` per group.
    /// Returns the gang and every task, pod ids in order.
    /// A test sub-job: (group, gang, running pods as (uid, priority)).
    type TestSub<'a> = (usize, u32, &'a [(&'a str, i32)]);

    fn sub_gang(min_available: u32, min: &[i64], subs: &[TestSub<'_>]) -> (Gang, Vec<Task>) {
        let mut tasks = Vec::new();
        let mut sub_jobs = Vec::new();
        for (s, &(grp, gang_min, pods)) in subs.iter().enumerate() {
            sub_jobs.push(Some((grp, pods.len() as u32 >= gang_min)));
            for &(uid, prio) in pods {
                tasks.push(Task { sub: s as u32, ..task(tasks.len() as u32, uid, prio, 0, 1000) });
            }
        }
        let mut g = gang(1, "ns/j", tasks.len() as u32, min_available, Some(vec![]), 1000 * tasks.len() as i64);
        g.subs = Some(SubGangs { sub_jobs, min: min.to_vec() });
        (g, tasks)
    }

    fn pick(tasks: &[Task], uids: &[&str]) -> Vec<Task> {
        uids.iter().map(|u| tasks.iter().find(|t| t.uid == *u).expect("a task").clone()).collect()
    }

    /// `TestCreateJobBundles_SubJobGroupSlackCapsSafe`: three ready sub-jobs of
    /// two, the group needs two: only the lowest-priority pod is safe.
    #[test]
    fn create_job_bundles_sub_job_group_slack_caps_safe() {
        let pods = |a: &'static str, b: &'static str, p: i32| -> Vec<(&'static str, i32)> { vec![(a, p), (b, p + 1)] };
        let (p1, p2, p3) = (pods("t1a", "t1b", 100), pods("t2a", "t2b", 102), pods("t3a", "t3b", 104));
        let (g, tasks) = sub_gang(4, &[2], &[(0, 2, &p1), (0, 2, &p2), (0, 2, &p3)]);
        let b = job_bundles(&g, pick(&tasks, &["t1a", "t2a", "t3a"]));
        assert_eq!(b.len(), 2);
        assert_eq!((b[0].kind, uids(&b[0])), (Kind::Safe, vec!["t1a"]));
        assert_eq!((b[1].kind, uids(&b[1]).len()), (Kind::Whole, 2));
    }

    /// `TestCreateJobBundles_MixedLegacyAndSubJobBothEnforced`: the master goes
    /// safe on its group's slack; the worker (role minimum 5 of 5) is whole.
    #[test]
    fn create_job_bundles_mixed_legacy_and_sub_job_both_enforced() {
        let subs: [TestSub<'_>; 5] = [
            (0, 1, &[("m1", 0)]),
            (0, 1, &[("m2", 10)]),
            (1, 2, &[("w1a", 1)]),
            (1, 2, &[("w2a", 11), ("w2b", 12)]),
            (1, 2, &[("w3a", 13), ("w3b", 14)]),
        ];
        let (mut g, mut tasks) = sub_gang(5, &[1, 2], &subs);
        // Role 1 is the worker: its minimum is 5, its ready pods 5.
        for t in tasks.iter_mut().filter(|t| t.uid.starts_with('w')) {
            t.role = 1;
        }
        g.roles = Some(vec![(1, 5, 5)]);
        let b = job_bundles(&g, pick(&tasks, &["m1", "w1a"]));
        assert_eq!(b.len(), 2);
        assert_eq!((b[0].kind, uids(&b[0])), (Kind::Safe, vec!["m1"]));
        assert_eq!((b[1].kind, uids(&b[1])), (Kind::Whole, vec!["w1a"]));
    }

    /// `TestCreateJobBundles_AlreadyBrokenSubJobIsSubjectToFurtherEviction`: sj1
    /// (one pod of two) is broken, so its pod is safe though the group has no
    /// ready sub-job to spare; the ready ones' pods are whole.
    #[test]
    fn create_job_bundles_already_broken_sub_job_is_subject_to_further_eviction() {
        let subs: [TestSub<'_>; 3] =
            [(0, 2, &[("sj1a", 1)]), (0, 2, &[("sj2a", 2), ("sj2b", 3)]), (0, 2, &[("sj3a", 4), ("sj3b", 5)])];
        let (g, tasks) = sub_gang(3, &[2], &subs);
        let b = job_bundles(&g, pick(&tasks, &["sj1a", "sj2a", "sj3a"]));
        assert_eq!(b.len(), 2);
        assert_eq!((b[0].kind, uids(&b[0])), (Kind::Safe, vec!["sj1a"]));
        assert_eq!((b[1].kind, uids(&b[1])), (Kind::Whole, vec!["sj2a", "sj3a"]));
    }

    fn bundle(kind: Kind, job: u32, uid: &str, queue: u32, local: i64, global: i64) -> Bundle {
        Bundle {
            kind,
            job: JobId(job),
            job_uid: uid.into(),
            queue: QueueId(queue),
            tasks: vec![task(job * 10, &format!("{uid}-t"), 0, 0, local)],
            local: cpu(local),
            global: cpu(global),
        }
    }

    fn uids(b: &Bundle) -> Vec<&str> {
        b.tasks.iter().map(|t| t.uid.as_str()).collect()
    }

    /// `TestCreateJobBundles_SafeAndWhole`: minAvailable 3 (worker minimum 3), five
    /// Running workers a..e of priorities 0..4: the two above the gang are safe.
    #[test]
    fn create_job_bundles_safe_and_whole() {
        let g = gang(1, "ns/j", 5, 3, Some(vec![(0, 5, 3)]), 5000);
        let tasks = ["a", "b", "c", "d", "e"].iter().enumerate().map(|(i, u)| task(i as u32, u, i as i32, 0, 1000));
        let b = job_bundles(&g, tasks.rev().collect());
        assert_eq!(b.len(), 2);
        assert_eq!((b[0].kind, uids(&b[0])), (Kind::Safe, vec!["a", "b"]));
        assert_eq!((b[1].kind, b[1].tasks.len()), (Kind::Whole, 3));
        assert_eq!((b[0].global, b[1].global, b[1].local), (Resources::ZERO, cpu(5000), cpu(3000)));
    }

    /// `TestCreateJobBundles_NoTaskMinAvailableTreatsAllRolesAsUnconstrained`.
    #[test]
    fn create_job_bundles_no_task_min_available_treats_all_roles_as_unconstrained() {
        let g = gang(1, "ns/j", 4, 2, None, 4000);
        let b = job_bundles(
            &g,
            ["a", "b", "c", "d"].iter().enumerate().map(|(i, u)| task(i as u32, u, i as i32, 0, 1000)).collect(),
        );
        assert_eq!((b[0].kind, b[0].tasks.len(), b[1].kind, b[1].tasks.len()), (Kind::Safe, 2, Kind::Whole, 2));
    }

    /// `TestCreateJobBundles_JobNotReadyShortCircuitsAllSafe`: minAvailable 10 with
    /// two ready pods: already broken, so both are safe.
    #[test]
    fn create_job_bundles_job_not_ready_short_circuits_all_safe() {
        let g = gang(1, "ns/j", 2, 10, None, 2000);
        let b = job_bundles(&g, vec![task(0, "a", 0, 0, 1000), task(1, "b", 1, 0, 1000)]);
        assert_eq!((b.len(), b[0].kind, b[0].tasks.len()), (1, Kind::Safe, 2));
    }

    /// `TestApplyAllowedTasks_WholeAtomicAndSafeShrink`: allowed {t1, t3x}: the
    /// safe bundle shrinks to t1, the whole bundle [t3] goes.
    #[test]
    fn apply_allowed_tasks_whole_atomic_and_safe_shrink() {
        let mut safe = bundle(Kind::Safe, 1, "ns/j", 0, 0, 0);
        safe.tasks = vec![task(1, "t1", 0, 0, 1000), task(2, "t2", 0, 0, 1000)];
        let mut whole = bundle(Kind::Whole, 1, "ns/j", 0, 1000, 3000);
        whole.tasks = vec![task(3, "t3", 0, 0, 1000)];
        let valid = apply_allowed(vec![safe, whole], &[PodId(1), PodId(33)]);
        assert_eq!(valid.len(), 1);
        assert_eq!((valid[0].kind, uids(&valid[0]), valid[0].local), (Kind::Safe, vec!["t1"], cpu(1000)));
    }

    /// `TestSortBundlesForPreempt_TypePriorityAndROI`: safe first; then, within a
    /// job, the whole bundle that risks less of the job (ROI 0.5 before 0.25).
    #[test]
    fn sort_bundles_for_preempt_type_priority_and_roi() {
        let prio = |j: JobId| if j == JobId(1) { 10 } else { 1 };
        let w1 = bundle(Kind::Whole, 2, "ns/w", 0, 1000, 4000);
        let mut w2 = bundle(Kind::Whole, 2, "ns/w", 0, 1000, 2000);
        w2.tasks[0].uid = "w2".into();
        let s1 = bundle(Kind::Safe, 1, "ns/s", 0, 1000, 0);
        let mut v = vec![w1, s1, w2];
        // less = l.Priority < r.Priority: ranked by priority.
        let rank = |j: JobId| prio(j) as usize;
        sort_for_preempt(&mut v, &cpu(1000), Some(&rank));
        assert_eq!(
            v.iter().map(|b| (b.kind, b.global)).collect::<Vec<_>>(),
            [(Kind::Safe, Resources::ZERO), (Kind::Whole, cpu(2000)), (Kind::Whole, cpu(4000))]
        );
    }

    /// `TestSortBundlesForPreempt_UsesVictimJobOrder`: equal ROI, `less` = UID
    /// descending: job "b" first.
    #[test]
    fn sort_bundles_for_preempt_uses_victim_job_order() {
        let mut v = vec![bundle(Kind::Whole, 1, "a", 0, 1000, 2000), bundle(Kind::Whole, 2, "b", 0, 1000, 2000)];
        // less = l.UID > r.UID: ranked by UID, descending.
        let rank = |j: JobId| usize::MAX - j.0 as usize;
        sort_for_preempt(&mut v, &cpu(1000), Some(&rank));
        assert_eq!(v[0].job_uid, "b");
    }

    /// `TestSortBundlesForReclaim_UsesQueueOrderThenROI`: queue order first (by
    /// name: "a"), and without one, ROI ("d": 0.5 before 0.25).
    #[test]
    fn sort_bundles_for_reclaim_uses_queue_order_then_roi() {
        let mut v = vec![bundle(Kind::Whole, 2, "b", 2, 1000, 2000), bundle(Kind::Whole, 1, "a", 1, 1000, 4000)];
        // lessQueue by name: queue 1 ("a") before queue 2 ("b").
        let by_name = |q: QueueId| q.0 as usize;
        sort_for_reclaim(&mut v, &cpu(1000), Some(&by_name));
        assert_eq!(v[0].job_uid, "a");
        let mut v = vec![bundle(Kind::Whole, 3, "c", 3, 1000, 4000), bundle(Kind::Whole, 4, "d", 4, 1000, 2000)];
        sort_for_reclaim(&mut v, &cpu(1000), None);
        assert_eq!(v[0].job_uid, "d");
    }

    /// `TestSortBundlesForReclaim_DeterministicTieBreaker`: same queue, equal ROI:
    /// job UID decides.
    #[test]
    fn sort_bundles_for_reclaim_deterministic_tie_breaker() {
        let mut v = vec![bundle(Kind::Whole, 2, "b", 0, 1000, 2000), bundle(Kind::Whole, 1, "a", 0, 1000, 2000)];
        let by_name = |q: QueueId| q.0 as usize;
        sort_for_reclaim(&mut v, &cpu(1000), Some(&by_name));
        assert_eq!((v[0].job_uid.as_str(), v[1].job_uid.as_str()), ("a", "b"));
    }

    /// A role at its minimum keeps its pods out of the safe bundle even when the
    /// job has pods to spare (Volcano's role surplus).
    #[test]
    fn role_minimum_keeps_pods_whole() {
        // ps: 1 ready, minimum 1; worker: 3 ready, minimum 1; minAvailable 2.
        let g = gang(1, "ns/j", 4, 2, Some(vec![(0, 1, 1), (1, 3, 1)]), 4000);
        let b = job_bundles(
            &g,
            vec![
                task(0, "ps-0", 0, 0, 1000),
                task(1, "w-0", 0, 1, 1000),
                task(2, "w-1", 0, 1, 1000),
                task(3, "w-2", 0, 1, 1000),
            ],
        );
        assert_eq!(uids(&b[0]), ["w-0", "w-1"]);
        assert_eq!(uids(&b[1]), ["ps-0", "w-2"]);
    }
}
