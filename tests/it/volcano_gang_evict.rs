//! gangpreempt and gangreclaim over sessions: Volcano's e2e suite
//! (`test/e2e/gangevict/gangevict.go`, the GP-* and GR-* cases without
//! sub-groups, the GP-T* and GR-T* topology cases at the end) replayed with its
//! own conf, each with the outcome computed by hand. As in the suite: four nodes that each hold one pod of 1 cpu
//! and 1Gi, queues with a deserved share, victims running before the preemptor
//! (or reclaimer) arrives at 60 s. An evicted pod holds its node for the 30 s
//! grace period, so a preemptor that wins starts at 90 s.

use super::volcano::{Out, run_text};

/// Volcano's `gangEvictConfig`, as the e2e suite writes it
/// (examples/volcano/published/gangevict-e2e.conf).
pub(crate) const GANG_EVICT_CONF: &str = include_str!("../../examples/volcano/published/gangevict-e2e.conf");

/// A queue with a deserved share of `cpus` cpus and as many Gi (the suite's
/// `deservedCPU`); `extra` adds fields.
fn queue(name: &str, cpus: u32, extra: &str) -> String {
    format!("{{name: {name}, deserved: {{cpu: {cpus}, memory: {cpus}Gi}}{extra}}}")
}

/// A gang job of `replicas` one-cpu pods (the suite's `createGangJob`): 1 h long,
/// submitted at `at` seconds.
fn gang(name: &str, queue: &str, priority: i32, replicas: u32, min: u32, at: u32) -> String {
    format!(
        "{{name: {name}, queue: {queue}, priority: {priority}, submitAt: {at}s, minAvailable: {min}, duration: 1h, \
         tasks: [{{name: w, replicas: {replicas}, resources: {{cpu: 1, memory: 1Gi}}}}]}}"
    )
}

/// The suite's multi-role victim: ps (1 pod, minimum 1) and worker (3 pods,
/// minimum 2), job minimum 3.
fn roles(name: &str, queue: &str, priority: i32) -> String {
    format!(
        "{{name: {name}, queue: {queue}, priority: {priority}, minAvailable: 3, duration: 1h, tasks: [\
         {{name: ps, replicas: 1, minAvailable: 1, resources: {{cpu: 1, memory: 1Gi}}}}, \
         {{name: worker, replicas: 3, minAvailable: 2, resources: {{cpu: 1, memory: 1Gi}}}}]}}"
    )
}

fn run(conf: &str, queues: &[String], jobs: &[String]) -> Out {
    run_on(1, "", conf, queues, jobs)
}

/// [`run`] on four nodes of `cpu` cpus and Gi, with `cluster` added to the
/// cluster (HyperNodes).
fn run_on(cpu: u32, cluster: &str, conf: &str, queues: &[String], jobs: &[String]) -> Out {
    let mut s = String::from(
        "apiVersion: lahar.io/v1alpha1\nkind: Scenario\nmetadata: {name: gang-evict}\nspec:\n  cluster:\n    nodes:\n",
    );
    for i in 0..4 {
        s += &format!("      - {{name: kwok-node-{i}, cpu: {cpu}, memory: {cpu}Gi}}\n");
    }
    s += cluster;
    s += "  queues:\n";
    for q in queues {
        s += &format!("    - {q}\n");
    }
    s += "  scheduler:\n    inline: |\n";
    for l in conf.lines() {
        s += &format!("      {l}\n");
    }
    s += "  workload:\n    - jobs:\n";
    for j in jobs {
        s += &format!("      - {j}\n");
    }
    run_text(&s)
}

/// "t pod" of every eviction.
fn evicted(o: &Out) -> Vec<String> {
    o.of("evict").iter().map(|d| format!("{} {} {}", d["t_s"], d["action"], d["pod"])).collect()
}

/// "pod start end reason" of every pod record of `job` that ended before the run.
fn ended(o: &Out, job: &str) -> Vec<String> {
    o.pods
        .iter()
        .filter(|p| p["job"] == job && p["reason_end"] != "completed")
        .map(|p| format!("{} {} {} {}", p["pod"], p["start_s"], p["end_s"], p["reason_end"]))
        .collect()
}

fn start(o: &Out, job: &str) -> String {
    o.jobs.iter().find(|j| j["job"] == job).unwrap_or_else(|| panic!("no job {job}"))["start_s"].clone()
}

fn gp(jobs: &[String]) -> Out {
    run(GANG_EVICT_CONF, &[queue("gp-q", 4, "")], jobs)
}

/// GP-1: the victim (4 pods, minimum 2) loses its two surplus pods — the safe
/// bundle, lowest names first — and keeps its gang; the preemptor runs at 90 s.
#[test]
fn gp1_safe_bundle_preemption_keeps_the_victim_gang() {
    let o = gp(&[gang("victim-gp1", "gp-q", 10, 4, 2, 0), gang("preemptor-gp1", "gp-q", 100, 2, 2, 60)]);
    assert_eq!(evicted(&o), ["60 gangpreempt default/victim-gp1-w-0", "60 gangpreempt default/victim-gp1-w-1"]);
    assert_eq!(start(&o, "preemptor-gp1"), "90");
    assert_eq!(
        ended(&o, "victim-gp1"),
        ["default/victim-gp1-w-0 0 60 preempted", "default/victim-gp1-w-1 0 60 preempted"]
    );
}

/// GP-2: two victims with one surplus pod each: both safe bundles are taken,
/// no gang broken.
#[test]
fn gp2_safe_bundles_across_gangs() {
    let o = gp(&[
        gang("victim-a-gp2", "gp-q", 10, 2, 1, 0),
        gang("victim-b-gp2", "gp-q", 10, 2, 1, 10),
        gang("preemptor-gp2", "gp-q", 100, 2, 2, 60),
    ]);
    // Safe bundles are ordered by the reverse of job order: the newer victim first.
    assert_eq!(evicted(&o), ["60 gangpreempt default/victim-b-gp2-w-0", "60 gangpreempt default/victim-a-gp2-w-0"]);
    assert_eq!(start(&o, "preemptor-gp2"), "90");
}

/// GP-3: two tight gangs, no surplus: exactly one whole bundle goes — the newer
/// job's (victim jobs are taken in reverse job order; equal ROI).
#[test]
fn gp3_whole_bundle_breaks_exactly_one_gang() {
    let o = gp(&[
        gang("victim-a-gp3", "gp-q", 10, 2, 2, 0),
        gang("victim-b-gp3", "gp-q", 10, 2, 2, 10),
        gang("preemptor-gp3", "gp-q", 100, 2, 2, 60),
    ]);
    assert_eq!(evicted(&o), ["60 gangpreempt default/victim-b-gp3-w-0", "60 gangpreempt default/victim-b-gp3-w-1"]);
    assert_eq!(start(&o, "preemptor-gp3"), "90");
}

/// GP-4: a preemptor of four pods takes both whole bundles.
#[test]
fn gp4_whole_bundles_of_both_gangs() {
    let o = gp(&[
        gang("victim-a-gp4", "gp-q", 10, 2, 2, 0),
        gang("victim-b-gp4", "gp-q", 10, 2, 2, 10),
        gang("preemptor-gp4", "gp-q", 100, 4, 4, 60),
    ]);
    assert_eq!(evicted(&o).len(), 4);
    assert_eq!(start(&o, "preemptor-gp4"), "90");
}

/// GP-5: a victim filling the cluster with no surplus: its whole bundle is every
/// pod of it (a bundle is taken whole), and the preemptor runs.
#[test]
fn gp5_basic_gang_preemption() {
    let o = gp(&[gang("victim-gp5", "gp-q", 10, 4, 4, 0), gang("preemptor-gp5", "gp-q", 100, 2, 2, 60)]);
    assert_eq!(evicted(&o).len(), 4);
    assert_eq!(start(&o, "preemptor-gp5"), "90");
}

/// GP-6: no victims across queues (q2 is not reclaimable, so gangreclaim cannot
/// take them either): the preemptor waits for the victim's end.
#[test]
fn gp6_no_preemption_across_queues() {
    let o = run(
        GANG_EVICT_CONF,
        &[queue("gp6-q1", 2, ""), queue("gp6-q2", 2, ", reclaimable: false")],
        &[gang("victim-gp6", "gp6-q2", 10, 4, 4, 0), gang("preemptor-gp6", "gp6-q1", 100, 2, 2, 60)],
    );
    assert!(evicted(&o).is_empty());
    assert_eq!(start(&o, "preemptor-gp6"), "3600");
}

/// GP-7: equal priority: no victim.
#[test]
fn gp7_equal_priority_is_not_preempted() {
    let o = gp(&[gang("victim-gp7", "gp-q", 50, 4, 4, 0), gang("preemptor-gp7", "gp-q", 50, 2, 2, 60)]);
    assert!(evicted(&o).is_empty());
    assert_eq!(start(&o, "preemptor-gp7"), "3600");
}

/// GP-8: a medium-priority preemptor needing four slots may only take the
/// low-priority gang's two: no plan, and the high-priority gang is untouched.
#[test]
fn gp8_higher_priority_victims_are_out_of_reach() {
    let o = gp(&[
        gang("gang-a-gp8", "gp-q", 100, 2, 2, 0),
        gang("gang-b-gp8", "gp-q", 10, 2, 2, 0),
        gang("preemptor-c-gp8", "gp-q", 50, 4, 4, 60),
    ]);
    assert!(evicted(&o).is_empty());
    assert_eq!(start(&o, "preemptor-c-gp8"), "3600");
}

/// GP-R1: one surplus pod, but ps is at its role minimum: the safe bundle is the
/// first worker; ps keeps running.
#[test]
fn gpr1_role_minimum_keeps_ps() {
    let o = gp(&[roles("victim-gpr1", "gp-q", 10), gang("preemptor-gpr1", "gp-q", 100, 1, 1, 60)]);
    assert_eq!(evicted(&o), ["60 gangpreempt default/victim-gpr1-worker-0"]);
    assert_eq!(start(&o, "preemptor-gpr1"), "90");
}

fn gr(queues: &[String], jobs: &[String]) -> Out {
    run(GANG_EVICT_CONF, queues, jobs)
}

fn two_queues(d1: u32, d2: u32, extra2: &str) -> Vec<String> {
    vec![queue("q1", d1, ""), queue("q2", d2, extra2)]
}

/// GR-1 (and GR-3): q2 uses 4 cpus of its 2 deserved: capacity lets its two
/// surplus pods go (each while q2 is still above its share), the safe bundle.
#[test]
fn gr1_safe_bundle_reclaim_keeps_the_victim_gang() {
    let o =
        gr(&two_queues(2, 2, ""), &[gang("victim-gr1", "q2", 10, 4, 2, 0), gang("reclaimer-gr1", "q1", 10, 2, 2, 60)]);
    assert_eq!(evicted(&o), ["60 gangreclaim default/victim-gr1-w-0", "60 gangreclaim default/victim-gr1-w-1"]);
    assert_eq!(start(&o, "reclaimer-gr1"), "90");
    assert_eq!(
        ended(&o, "victim-gr1"),
        ["default/victim-gr1-w-0 0 60 reclaimed", "default/victim-gr1-w-1 0 60 reclaimed"]
    );
}

/// GR-2: two tight gangs in q2: capacity allows the first two candidates in
/// bundle order (victim-a's, by job name at equal ROI) and then q2 is at its
/// share, so victim-b's whole bundle is not allowed: exactly victim-a is broken.
#[test]
fn gr2_whole_bundle_reclaim_breaks_exactly_one_gang() {
    let o = gr(
        &two_queues(2, 2, ""),
        &[
            gang("victim-a-gr2", "q2", 10, 2, 2, 0),
            gang("victim-b-gr2", "q2", 10, 2, 2, 0),
            gang("reclaimer-gr2", "q1", 10, 2, 2, 60),
        ],
    );
    assert_eq!(evicted(&o), ["60 gangreclaim default/victim-a-gr2-w-0", "60 gangreclaim default/victim-a-gr2-w-1"]);
    assert_eq!(start(&o, "reclaimer-gr2"), "90");
}

/// GR-4: q2 and q3 are within their deserved shares: capacity allows nothing.
#[test]
fn gr4_no_reclaim_within_deserved() {
    let queues = vec![queue("q1", 2, ""), queue("q2", 2, ""), queue("q3", 2, "")];
    let o = gr(
        &queues,
        &[
            gang("job-gr4-q2", "q2", 10, 2, 2, 0),
            gang("job-gr4-q3", "q3", 10, 2, 2, 0),
            gang("reclaimer-gr4", "q1", 10, 2, 2, 60),
        ],
    );
    assert!(evicted(&o).is_empty());
    assert_eq!(start(&o, "reclaimer-gr4"), "3600");
}

/// GR-5: q2 is not reclaimable: no candidate.
#[test]
fn gr5_not_reclaimable_queue() {
    let o = gr(
        &two_queues(2, 2, ", reclaimable: false"),
        &[gang("victim-gr5", "q2", 10, 4, 2, 0), gang("reclaimer-gr5", "q1", 10, 2, 2, 60)],
    );
    assert!(evicted(&o).is_empty());
    assert_eq!(start(&o, "reclaimer-gr5"), "3600");
}

/// GR-6: q2's guarantee of 2 cpus leaves only two pods to reclaim; the reclaimer
/// needs four. (It never runs: q2's guarantee also caps q1's real capability at
/// the other 2 cpus, so even the victim's end leaves it waiting.)
#[test]
fn gr6_guarantee_bounds_reclaim() {
    let queues = vec![queue("q1", 4, ""), queue("q2", 2, ", guarantee: {cpu: 2, memory: 2Gi}")];
    let o = gr(&queues, &[gang("victim-gr6", "q2", 10, 4, 2, 0), gang("reclaimer-gr6", "q1", 10, 4, 4, 60)]);
    assert!(evicted(&o).is_empty());
    assert_eq!(start(&o, "reclaimer-gr6"), "");
}

/// GR-7: q1 already uses 2 cpus of its 1 deserved: overused, so it does not
/// reclaim; and its own job has the reclaimer's priority, so gangpreempt takes
/// nothing either.
#[test]
fn gr7_overused_queue_does_not_reclaim() {
    let o = gr(
        &two_queues(1, 3, ""),
        &[
            gang("job-gr7-q1", "q1", 10, 2, 2, 0),
            gang("job-gr7-q2", "q2", 10, 2, 2, 0),
            gang("reclaimer-gr7", "q1", 10, 2, 2, 60),
        ],
    );
    assert!(evicted(&o).is_empty());
    assert_eq!(start(&o, "reclaimer-gr7"), "3600");
}

/// GR-R1: as GP-R1 across queues: the first worker is reclaimed, ps stays.
#[test]
fn grr1_role_minimum_keeps_ps() {
    let o = gr(&two_queues(1, 3, ""), &[roles("victim-grr1", "q2", 10), gang("reclaimer-grr1", "q1", 10, 1, 1, 60)]);
    assert_eq!(evicted(&o), ["60 gangreclaim default/victim-grr1-worker-0"]);
    assert_eq!(start(&o, "reclaimer-grr1"), "90");
}

// ---------------------------------------------------------------------------
// The `selectDomainBundles` cases of gangpreempt_test.go and gangreclaim_test.go,
// over one session each with VolcanoJobs (a PodGroup's `volcano.sh/preemptable`
// comes from its job's annotations). Their fake plugin, which permits every
// candidate, is gang here (its UnifiedEvictable permits every candidate too);
// priority orders the jobs so that a preemptor, once its victim is gone, is
// placed before the victim's new pod (with gang alone the older victim would
// take its place back, session after session, as Volcano would too), and the
// reclaimer's queue q1 is not reclaimable, so the victim's queue does not
// reclaim back.

const CLASSES: &str = "apiVersion: scheduling.k8s.io/v1\nkind: PriorityClass\nmetadata: {name: low}\nvalue: 10\n---\napiVersion: scheduling.k8s.io/v1\nkind: PriorityClass\nmetadata: {name: high}\nvalue: 100\n---\n";

/// A one-pod VolcanoJob of 1 cpu: `ann` goes into its annotations.
/// (The task's `minAvailable` is the job's: the webhook turns a job's 0 into
/// the tasks' sum, so a gang of none, as the unit tests build it, has a task of
/// none.)
fn vcjob(name: &str, queue: &str, class: &str, min: u32, ann: &str) -> String {
    format!(
        "apiVersion: batch.volcano.sh/v1alpha1\nkind: Job\nmetadata:\n  name: {name}\n  annotations: {{lahar.io/duration: 1h{ann}}}\nspec:\n  queue: {queue}\n  minAvailable: {min}\n  priorityClassName: {class}\n  tasks:\n    - replicas: 1\n      name: w\n      minAvailable: {min}\n      template:\n        spec:\n          containers: [{{name: c, resources: {{requests: {{cpu: \"1\"}}}}}}]\n---\n"
    )
}

/// A scenario of one node of `cpus` cpus, `queues` and `conf`, with `manifests`
/// (after the PriorityClasses `low` and `high`) as its workload, in a temp dir.
fn vc_dir(conf: &str, queues: &str, cpus: u32, manifests: &str) -> tempfile::TempDir {
    let dir = tempfile::tempdir().expect("tempdir");
    let mut s = format!(
        "apiVersion: lahar.io/v1alpha1\nkind: Scenario\nmetadata: {{name: t}}\nspec:\n  horizon: 2h\n  cluster:\n    nodes:\n      - {{name: n1, cpu: {cpus}, memory: 8Gi}}\n  queues: {queues}\n  scheduler:\n    inline: |\n"
    );
    for l in conf.lines() {
        s += &format!("      {l}\n");
    }
    s += "  workload:\n    - manifests: jobs.yaml\n";
    std::fs::write(dir.path().join("scenario.yaml"), s).expect("write");
    std::fs::write(dir.path().join("jobs.yaml"), format!("{CLASSES}{manifests}")).expect("write");
    dir
}

/// Runs `manifests` on one node of `cpus` cpus under `conf`; the evicted pods.
fn vc_evictions(conf: &str, queues: &str, cpus: u32, manifests: &str) -> Vec<String> {
    let dir = vc_dir(conf, queues, cpus, manifests);
    super::volcano::run_file(&dir.path().join("scenario.yaml")).evictions()
}

fn gp_unit(args: &str, victim_min: u32, victim_ann: &str) -> Vec<String> {
    let conf = format!(
        "actions: \"enqueue, allocate, gangpreempt\"\ntiers:\n- plugins:\n  - name: priority\n  - name: gang\nconfigurations:\n- name: gangpreempt\n  arguments: {{{args}}}\n"
    );
    let jobs = vcjob("victim", "q1", "low", victim_min, victim_ann)
        + &vcjob("preemptor", "q1", "high", 1, ", lahar.io/submit-at: 60s");
    vc_evictions(&conf, "[{name: q1}]", 1, &jobs)
}

/// `TestSelectDomainVictims_RespectAllowWholeBundle`: the victim has no pod to
/// spare (minAvailable 1): its only bundle is whole, taken only when whole
/// bundles are allowed.
#[test]
fn select_domain_victims_respect_allow_whole_bundle() {
    assert!(gp_unit("allowWholeBundle: false", 1, "").is_empty());
    assert_eq!(gp_unit("allowWholeBundle: true", 1, ""), ["default/victim-w-0"]);
    // `TestParseArguments`: the values are read (maxDomains checked, kept).
    assert_eq!(gp_unit("maxDomains: 3, allowWholeBundle: false", 1, ""), Vec::<String>::new());
}

/// `TestSelectDomainVictims_RespectVictimJobPreemptable`: the victim's PodGroup
/// says `volcano.sh/preemptable: "false"`.
#[test]
fn select_domain_victims_respect_victim_job_preemptable() {
    assert!(gp_unit("", 1, ", volcano.sh/preemptable: \"false\"").is_empty());
    // Go's ParseBool spellings are read as Volcano reads them.
    assert!(gp_unit("", 1, ", volcano.sh/preemptable: \"F\"").is_empty());
    assert_eq!(gp_unit("", 1, ", volcano.sh/preemptable: \"1\""), ["default/victim-w-0"]);
}

/// `TestSelectDomainVictims_AllowVictimJobWhenPreemptableUnset`: no annotation
/// or label: allowed; minAvailable 0 makes the pod a safe bundle.
#[test]
fn select_domain_victims_allow_victim_job_when_preemptable_unset() {
    assert_eq!(gp_unit("allowWholeBundle: false", 0, ""), ["default/victim-w-0"]);
}

fn gr_unit(victim_ann: &str) -> Vec<String> {
    let conf = "actions: \"enqueue, allocate, gangreclaim\"\ntiers:\n- plugins:\n  - name: priority\n  - name: gang\n";
    let jobs = vcjob("victim", "q2", "low", 1, victim_ann)
        + &vcjob("other", "q3", "low", 1, "")
        + &vcjob("reclaimer", "q1", "high", 1, ", lahar.io/submit-at: 60s");
    vc_evictions(conf, "[{name: q1, reclaimable: false}, {name: q2}, {name: q3, reclaimable: false}]", 2, &jobs)
}

/// `TestSelectDomainVictims_ReclaimableCrossQueueOnly`: the victim's queue q2 is
/// reclaimable, the other pod's q3 is not: only the victim goes.
#[test]
fn select_domain_victims_reclaimable_cross_queue_only() {
    assert_eq!(gr_unit(""), ["default/victim-w-0"]);
}

/// gangreclaim's `TestSelectDomainVictims_RespectVictimJobPreemptable`.
/// Its positive twin is `select_domain_victims_reclaimable_cross_queue_only`
/// above: the same `gr_unit` without `volcano.sh/preemptable: "false"` on the
/// victim job, where `default/victim-w-0` is reclaimed.
#[test]
fn select_domain_victims_reclaim_respect_victim_job_preemptable() {
    assert!(gr_unit(", volcano.sh/preemptable: \"false\"").is_empty());
}

/// A PodGroup's `volcano.sh/preemptable` that Go's ParseBool does not read is
/// refused at its place (Volcano logs it and takes false), exit 2.
#[test]
fn bad_group_preemptable_is_refused() {
    let conf = "actions: \"allocate, gangpreempt\"\ntiers:\n- plugins:\n  - name: gang\n";
    let dir = vc_dir(conf, "[{name: q1}]", 1, &vcjob("v", "q1", "low", 1, ", volcano.sh/preemptable: maybe"));
    let out = super::lahar().arg("validate").arg(dir.path().join("scenario.yaml")).assert().code(2);
    let err = String::from_utf8_lossy(&out.get_output().stderr).to_string();
    assert!(
        err.contains("jobs.yaml:15:")
            && err.contains("metadata.annotations.volcano.sh/preemptable: expected true or false, got `maybe`"),
        "{err}"
    );
}

/// The actions' arguments are checked where they are written: `maxDomains`
/// below 1 (Volcano silently replaces it with 8, `TestParseArguments_InvalidMaxDomainsFallsBackToDefault`)
/// and a non-boolean `allowWholeBundle` are refused together, exit 2.
#[test]
fn bad_gang_arguments_are_refused() {
    let err = super::conf_errors(
        "actions: \"allocate, gangpreempt, gangreclaim\"\ntiers:\n- plugins:\n  - name: gang\nconfigurations:\n- name: gangpreempt\n  arguments: {maxDomains: 0}\n- name: gangreclaim\n  arguments: {allowWholeBundle: sometimes, maxDomains: -1}\n",
    );
    for want in [
        "configurations[0].arguments.maxDomains: expected an integer ≥ 1",
        "configurations[1].arguments.allowWholeBundle: expected true or false",
        "configurations[1].arguments.maxDomains: expected an integer ≥ 1",
    ] {
        assert!(err.contains(want), "{want} not in {err}");
    }
}

/// priority_test.go `TestUnifiedEvictableFn_GangReclaimPermitsAll`: with priority
/// alone choosing, gangreclaim may take a pod of a job above the reclaimer's
/// priority (1000 over 500) as well as one below (100); gangpreempt only the one
/// below. The candidates share a 2-cpu node, in their own namespaces.
#[test]
fn unified_evictable_fn_gang_reclaim_permits_all() {
    let classes = "apiVersion: scheduling.k8s.io/v1\nkind: PriorityClass\nmetadata: {name: low-priority}\nvalue: 100\n---\napiVersion: scheduling.k8s.io/v1\nkind: PriorityClass\nmetadata: {name: high-priority}\nvalue: 1000\n---\napiVersion: scheduling.k8s.io/v1\nkind: PriorityClass\nmetadata: {name: mid}\nvalue: 500\n---\n";
    let job = |name: &str, ns: &str, queue: &str, class: &str, cpus: u32, ann: &str| {
        format!(
            "apiVersion: batch.volcano.sh/v1alpha1\nkind: Job\nmetadata:\n  name: {name}\n  namespace: {ns}\n  annotations: {{lahar.io/duration: 1h{ann}}}\nspec:\n  queue: {queue}\n  minAvailable: 1\n  priorityClassName: {class}\n  tasks:\n    - replicas: 1\n      name: task\n      template:\n        spec:\n          containers: [{{name: c, resources: {{requests: {{cpu: \"{cpus}\"}}}}}}]\n---\n"
        )
    };
    let run = |action: &str, victims_queue: &str, cpus: u32| {
        let conf = format!(
            "actions: \"enqueue, allocate, {action}\"\ntiers:\n- plugins:\n  - name: priority\n    enablePreemptable: false\n    enableReclaimable: false\n"
        );
        let jobs = classes.to_string()
            + &job("high", "ns1", victims_queue, "high-priority", 1, "")
            + &job("low", "ns2", victims_queue, "low-priority", 1, "")
            + &job("reclaimer", "ns3", "q1", "mid", cpus, ", lahar.io/submit-at: 60s");
        let mut e = vc_evictions(&conf, "[{name: q1, reclaimable: false}, {name: q2}]", 2, &jobs)
            .into_iter()
            .filter(|p| !p.starts_with("ns3/"))
            .collect::<Vec<_>>();
        e.dedup();
        e
    };
    // The reclaimer needs both cpus: both candidates are allowed.
    assert_eq!(run("gangreclaim", "q2", 2), ["ns1/high-task-0", "ns2/low-task-0"]);
    // gangpreempt takes only the lower-priority one: a one-cpu preemptor runs on it.
    assert_eq!(run("gangpreempt", "q1", 1), ["ns2/low-task-0"]);
    // ...and a two-cpu preemptor finds too little room: nothing is evicted.
    assert!(run("gangpreempt", "q1", 2).is_empty());
}

/// examples/volcano/gang-evict.yaml behaves as its comments say.
#[test]
fn gang_evict_example() {
    let p = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/volcano/gang-evict.yaml");
    let o = super::volcano::run_file(&p);
    let by_job = |t: &str, job: &str| o.of("evict").iter().filter(|d| d["t_s"] == t && d["job"] == job).count();
    assert_eq!((by_job("600", "sweep"), by_job("600", "pretrain")), (8, 0));
    assert_eq!((by_job("1200", "sweep"), by_job("1200", "pretrain")), (0, 2));
    assert_eq!(o.evictions().len(), 10);
    let job = |n: &str| {
        let j = o.jobs.iter().find(|j| j["job"] == n).expect("job");
        (j["start_s"].clone(), j["end_s"].clone())
    };
    assert_eq!(job("finetune"), ("630".to_string(), "7830".to_string()));
    assert_eq!(job("eval"), ("1230".to_string(), "4830".to_string()));
    assert_eq!(job("sweep"), ("60".to_string(), "14460".to_string()));
    assert_eq!(job("pretrain"), ("0".to_string(), "33630".to_string()));
}

/// A preemptor with a hard network topology that no HyperNode of its tiers can
/// hold has no domain: nothing is evicted, and `--explain` says why.
#[test]
fn a_hard_topology_preemptor_without_a_domain_is_explained() {
    let mut s = String::from(
        "apiVersion: lahar.io/v1alpha1\nkind: Scenario\nmetadata: {name: hard}\nspec:\n  horizon: 2h\n  cluster:\n    nodes:\n",
    );
    for i in 0..4 {
        s += &format!("      - {{name: kwok-node-{i}, cpu: 1, memory: 1Gi}}\n");
    }
    s += "    hyperNodes:\n      - {name: s0, tier: 1, members: [kwok-node-0, kwok-node-1]}\n      - {name: s1, tier: 1, members: [kwok-node-2, kwok-node-3]}\n";
    s += "  queues:\n    - {name: gp-q, deserved: {cpu: 4, memory: 4Gi}}\n  scheduler:\n    inline: |\n";
    for l in GANG_EVICT_CONF.lines() {
        s += &format!("      {l}\n");
    }
    s += "  workload:\n    - jobs:\n";
    s += &format!("      - {}\n", gang("victim", "gp-q", 10, 4, 2, 0));
    s += "      - {name: preemptor, queue: gp-q, priority: 100, submitAt: 60s, minAvailable: 3, duration: 600s, networkTopology: {mode: hard, highestTierAllowed: 1}, tasks: [{name: w, replicas: 3, resources: {cpu: 1, memory: 1Gi}}]}\n";
    let sc = lahar::scenario::load_str(&s, "hard.yaml", std::path::Path::new("")).unwrap_or_else(|e| panic!("{e}"));
    let out = tempfile::tempdir().expect("tempdir");
    let opts = lahar::RunOptions {
        out_dir: Some(out.path().to_path_buf()),
        explain: vec!["default/preemptor-w-0".to_string()],
        ..Default::default()
    };
    lahar::run(sc, &opts).expect("run");
    let decisions = std::fs::read_to_string(out.path().join("decisions.csv")).expect("decisions");
    assert!(!decisions.contains(",evict,"), "{decisions}");
    let explain = std::fs::read_to_string(out.path().join("explain.csv")).expect("explain");
    assert!(
        explain.contains(
            "gangpreempt,false,no HyperNode domain: the network-topology-aware plugin's eviction gradient has none"
        ),
        "{explain}"
    );
}

// ---------------------------------------------------------------------------
// Hard network topology (the e2e suite's GP-T* and GR-T* cases).

/// The suite's topology cluster (`setupTopoHyperNodes` over `install-kwok-nodes
/// 4`): KWOK nodes of `cpu` cpus and as many Gi (the suite's are 8), tier-1
/// HyperNodes s0 (nodes 0, 1) and s1 (nodes 2, 3) under the tier-2 s2.
fn run_topo(cpu: u32, queues: &[String], jobs: &[String]) -> Out {
    let hns = "    hyperNodes:\n      - {name: s0, tier: 1, members: [kwok-node-0, kwok-node-1]}\n      - {name: s1, tier: 1, members: [kwok-node-2, kwok-node-3]}\n      - {name: s2, tier: 2, members: [s0, s1]}\n";
    run_on(cpu, hns, GANG_EVICT_CONF, queues, jobs)
}

/// The suite's `createTopologyGangJob`: `replicas` pods of `cpu` cpus and Gi, a
/// hard topology up to `tier`, submitted at `at` seconds.
fn topo_gang(
    name: &str,
    queue: &str,
    priority: i32,
    (replicas, min, cpu): (u32, u32, u32),
    tier: u32,
    at: u32,
) -> String {
    format!(
        "{{name: {name}, queue: {queue}, priority: {priority}, submitAt: {at}s, minAvailable: {min}, duration: 1h, \
         networkTopology: {{mode: hard, highestTierAllowed: {tier}}}, \
         tasks: [{{name: w, replicas: {replicas}, resources: {{cpu: {cpu}, memory: {cpu}Gi}}}}]}}"
    )
}

/// The nodes of `job`'s pods that started, sorted.
fn nodes_of(o: &Out, job: &str) -> Vec<String> {
    let mut v: Vec<String> = o.pods.iter().filter(|p| p["job"] == job).map(|p| p["node"].clone()).collect();
    v.sort();
    v
}

/// Whether `nodes` are all in one tier-1 HyperNode.
fn one_tier1(nodes: &[String]) -> bool {
    let s0 = ["kwok-node-0", "kwok-node-1"];
    nodes.iter().all(|n| s0.contains(&n.as_str())) || nodes.iter().all(|n| !s0.contains(&n.as_str()))
}

/// GP-T1..T4 and GR-T1..T4 on the suite's 8-cpu KWOK nodes: the 4-cpu victims
/// leave room, so every preemptor or reclaimer that can run is placed by
/// allocate in its topology and none is evicted; the 3×5-cpu one cannot be
/// bin-packed into a tier-1 HyperNode (2 × 8 cpus), and gangpreempt's plan in
/// that domain fails too, so the victim keeps running.
#[test]
fn topology_cases_of_the_e2e_suite() {
    let q = |cpu| vec![queue("gp-q", cpu, "")];
    let victim = |name: &str, min| topo_gang(name, "gp-q", 10, (4, min, 1), 2, 0);
    // GP-T1: tier 1, 2 pods; GP-T4: tier 2, 2 pods, in one tier-1 HyperNode.
    for (name, tier) in [("gpt1", 1), ("gpt4", 2)] {
        let p = format!("preemptor-{name}");
        let o = run_topo(
            8,
            &q(4),
            &[victim(&format!("victim-{name}"), 2), topo_gang(&p, "gp-q", 100, (2, 2, 1), tier, 60)],
        );
        assert_eq!(start(&o, &p), "60", "{name}");
        assert!(one_tier1(&nodes_of(&o, &p)), "{name}: {:?}", nodes_of(&o, &p));
        assert!(evicted(&o).is_empty(), "{name}");
    }
    // GP-T2: 3 × 5 cpus in a tier-1 HyperNode of 2 × 8 cpus: never.
    let o =
        run_topo(8, &q(16), &[victim("victim-gpt2", 4), topo_gang("preemptor-gpt2", "gp-q", 100, (3, 3, 5), 1, 60)]);
    assert_eq!(start(&o, "preemptor-gpt2"), "");
    assert!(evicted(&o).is_empty());
    // GP-T3: tier 2, 3 pods.
    let o = run_topo(8, &q(4), &[victim("victim-gpt3", 2), topo_gang("preemptor-gpt3", "gp-q", 100, (3, 3, 1), 2, 60)]);
    assert_eq!(start(&o, "preemptor-gpt3"), "60");
    // GR-T1..T4: the same shapes across two queues.
    let qs = |d| vec![queue("q1", d, ""), queue("q2", d, "")];
    let v = |name: &str, min| topo_gang(name, "q2", 10, (4, min, 1), 2, 0);
    for (name, tier, n) in [("grt1", 1, 2), ("grt3", 2, 3), ("grt4", 2, 2)] {
        let r = format!("reclaimer-{name}");
        let o = run_topo(8, &qs(2), &[v(&format!("victim-{name}"), 2), topo_gang(&r, "q1", 10, (n, n, 1), tier, 60)]);
        assert_eq!(start(&o, &r), "60", "{name}");
        assert!(tier == 2 && n == 3 || one_tier1(&nodes_of(&o, &r)), "{name}: {:?}", nodes_of(&o, &r));
        assert!(evicted(&o).is_empty(), "{name}");
    }
    let o = run_topo(8, &qs(16), &[v("victim-grt2", 4), topo_gang("reclaimer-grt2", "q1", 10, (3, 3, 5), 1, 60)]);
    assert_eq!(start(&o, "reclaimer-grt2"), "");
    assert!(evicted(&o).is_empty());
}

/// The same shapes on nodes that hold one pod each, so that eviction is needed,
/// with the outcomes computed by hand. The victim (4 pods, minimum 2, tier 2) is
/// placed one pod per node: its first step finds no tier-1 HyperNode that holds
/// the sub-job's four pending pods (Volcano's sub-job gradient asks for all of
/// them, not the minimum), so the gang of two goes to s2, on kwok-node-2 (the
/// first node of the tie) and kwok-node-3 (the same leaf scores 1): w-0 and w-1
/// in s1. Each later step places one more pod, in s0 (both leaves score 0 for
/// the binpack of four pods; the first wins): w-2 on kwok-node-1, w-3 on
/// kwok-node-0.
///
/// - Tier 1, 2 pods: the eviction gradient has s0 and s1 (2 cpus each, enough
///   for the preemptor's minimum); in s0 the victim's two pods there (w-2, w-3)
///   are its safe bundle, the plan places the preemptor on them: they go, and
///   the preemptor starts at 90 s in s0.
/// - Tier 2, 2 pods: the gradient is s2, then s0, s1 (widest first); in s2 the
///   safe bundle is the two lowest names (w-0, w-1, in s1): the preemptor starts
///   at 90 s on their nodes.
/// - Tier 1, 3 pods: no tier-1 HyperNode holds 3 cpus: no domain, nothing
///   evicted, the preemptor waits.
/// - Tier 2, 3 pods: only s2; the safe bundle (2 pods) is too little, with the
///   whole bundle all 4 pods go, and the preemptor starts at 90 s.
#[test]
fn hard_topology_preemption_in_domains() {
    let q = vec![queue("gp-q", 4, "")];
    let victim = topo_gang("victim", "gp-q", 10, (4, 2, 1), 2, 0);
    let case = |tier: u32, n: u32| {
        let o = run_topo(1, &q, &[victim.clone(), topo_gang("preemptor", "gp-q", 100, (n, n, 1), tier, 60)]);
        (evicted(&o), start(&o, "preemptor"), nodes_of(&o, "preemptor"))
    };
    let pair = |a: usize, b: usize| {
        [format!("60 gangpreempt default/victim-w-{a}"), format!("60 gangpreempt default/victim-w-{b}")]
    };
    for (tier, ev_want, nodes_want) in
        [(1, pair(2, 3), ["kwok-node-0", "kwok-node-1"]), (2, pair(0, 1), ["kwok-node-2", "kwok-node-3"])]
    {
        let (ev, at, nodes) = case(tier, 2);
        assert_eq!(ev, ev_want, "tier {tier}");
        assert_eq!((at.as_str(), nodes), ("90", nodes_want.map(String::from).to_vec()), "tier {tier}");
    }
    let (ev, at, _) = case(1, 3);
    assert!(ev.is_empty());
    assert_eq!(at, "");
    let (ev, at, nodes) = case(2, 3);
    assert_eq!(ev.len(), 4);
    assert_eq!((at.as_str(), nodes.len()), ("90", 3));
}

/// Reclaim in a domain: the reclaimer (tier 1, 2 pods) in q1 takes the victim's
/// surplus in s0 only (q2 holds 4 cpus over its deserved 2): w-2 and w-3 (the
/// victim's layout is the one above).
#[test]
fn hard_topology_reclaim_in_a_domain() {
    let qs = vec![queue("q1", 2, ""), queue("q2", 2, "")];
    let o = run_topo(
        1,
        &qs,
        &[topo_gang("victim", "q2", 10, (4, 2, 1), 2, 0), topo_gang("reclaimer", "q1", 10, (2, 2, 1), 1, 60)],
    );
    assert_eq!(evicted(&o), ["60 gangreclaim default/victim-w-2", "60 gangreclaim default/victim-w-3"]);
    assert_eq!(start(&o, "reclaimer"), "90");
    assert_eq!(nodes_of(&o, "reclaimer"), ["kwok-node-0", "kwok-node-1"]);
}

/// The suite's `createSubGroupTopologyGangJob`: `2 × 2` pods of 1 cpu in two
/// partitions of two (`minPartitions: 1`, so the task's minimum is 2), job
/// minimum 2, a hard topology up to tier 2, submitted at 0.
fn sub_group_victim(name: &str, queue: &str, priority: i32) -> String {
    format!(
        "{{name: {name}, queue: {queue}, priority: {priority}, minAvailable: 2, duration: 1h, \
         networkTopology: {{mode: hard, highestTierAllowed: 2}}, \
         tasks: [{{name: w, replicas: 4, resources: {{cpu: 1, memory: 1Gi}}, \
         partitionPolicy: {{totalPartitions: 2, partitionSize: 2, minPartitions: 1}}}}]}}"
    )
}

/// GP-S1 and GR-S1 ("sub-group group-slack caps safe, gang preserved") on the
/// suite's 8-cpu KWOK nodes: the 2-pod preemptor (reclaimer) fits beside the
/// victim, allocate places it, and the victim keeps all four pods.
#[test]
fn gps1_and_grs1_on_the_suite_nodes() {
    let o = run_topo(
        8,
        &[queue("gp-q", 4, "")],
        &[sub_group_victim("victim", "gp-q", 10), topo_gang("preemptor", "gp-q", 100, (2, 2, 1), 2, 60)],
    );
    assert_eq!(start(&o, "preemptor"), "60");
    assert!(evicted(&o).is_empty());
    assert_eq!(nodes_of(&o, "victim").len(), 4);
    let qs = [queue("q1", 2, ""), queue("q2", 2, "")];
    let o =
        run_topo(8, &qs, &[sub_group_victim("victim", "q2", 10), topo_gang("reclaimer", "q1", 10, (2, 2, 1), 2, 60)]);
    assert_eq!(start(&o, "reclaimer"), "60");
    assert!(evicted(&o).is_empty());
}

/// GP-S1 and GR-S1 on nodes that hold one pod each, computed by hand.
///
/// The victim's first step puts its required partition (partition 0: the
/// lowest match index) in s0, where both tier-1 HyperNodes tie and s0 comes
/// first: w-0, w-1 (one per node, the two nodes tying); its next step finds s0
/// full and puts partition 1 in s1: w-2, w-3.
///
/// The preemptor (2 pods, tier 2) has no room. Its first domain is s2 (widest
/// first). There the victim's bundles are: surplus 4 − 2 = 2, the task's minimum 2
/// of 4 ready, and one ready partition to spare (2 ready, `minPartitions` 1), in
/// (priority, name) order: w-0 is safe and breaks partition 0, which uses up the
/// spare; w-1 is in the broken partition, so safe too; w-2 and w-3 are whole (no
/// surplus left). The safe bundle frees 2 cpus, enough: the plan evicts w-0 and
/// w-1, and the preemptor starts at 90 s on their nodes. The victim keeps
/// partition 1: two pods, its minimum, and `minPartitions` still holds.
/// GR-S1 is the same from another queue.
#[test]
fn gps1_and_grs1_evict_one_partition() {
    let o = run_topo(
        1,
        &[queue("gp-q", 4, "")],
        &[sub_group_victim("victim", "gp-q", 10), topo_gang("preemptor", "gp-q", 100, (2, 2, 1), 2, 60)],
    );
    let at = |o: &Out, pod: &str| -> String {
        o.pods
            .iter()
            .find(|p| p["pod"] == format!("default/victim-w-{pod}"))
            .map(|p| p["node"].clone())
            .unwrap_or_default()
    };
    // Within a leaf, the two nodes tie (the seeded stream picks).
    let s0 = ["kwok-node-0", "kwok-node-1"];
    assert!(["0", "1"].iter().all(|p| s0.contains(&at(&o, p).as_str())), "partition 0 in s0");
    assert!(["2", "3"].iter().all(|p| !s0.contains(&at(&o, p).as_str()) && !at(&o, p).is_empty()), "partition 1 in s1");
    assert_eq!(evicted(&o), ["60 gangpreempt default/victim-w-0", "60 gangpreempt default/victim-w-1"]);
    assert_eq!(start(&o, "preemptor"), "90");
    assert_eq!(nodes_of(&o, "preemptor"), ["kwok-node-0", "kwok-node-1"]);
    let qs = [queue("q1", 2, ""), queue("q2", 2, "")];
    let o =
        run_topo(1, &qs, &[sub_group_victim("victim", "q2", 10), topo_gang("reclaimer", "q1", 10, (2, 2, 1), 2, 60)]);
    assert_eq!(evicted(&o), ["60 gangreclaim default/victim-w-0", "60 gangreclaim default/victim-w-1"]);
    assert_eq!(start(&o, "reclaimer"), "90");
    assert_eq!(nodes_of(&o, "reclaimer"), ["kwok-node-0", "kwok-node-1"]);
}
