//! The Volcano quick-start examples behave as Volcano's documentation says, under
//! Volcano's default configuration.

use super::*;

fn jobs_csv(r: &lahar::RunReport, name: &str) -> (Option<u64>, &'static str) {
    let row = r.rows().into_iter().find(|x| x.job == name).unwrap_or_else(|| panic!("no job {name}"));
    (row.start, row.state)
}

const PROPORTION_CONF: &str = "  scheduler:\n    inline: |\n      actions: \"enqueue, allocate, backfill\"\n      tiers:\n      - plugins:\n        - name: priority\n        - name: gang\n        - name: conformance\n      - plugins:\n        - name: drf\n        - name: predicates\n        - name: proportion\n        - name: nodeorder\n";

fn two_queues(conf: &str) -> lahar::RunReport {
    let mut jobs = String::new();
    for q in ["queue-a", "queue-b"] {
        for i in 0..6 {
            jobs += &format!(
                "      - {{name: {q}-job-{i}, queue: {q}, duration: 1h, tasks: [{{name: w, replicas: 1, resources: {{nvidia.com/gpu: 1, cpu: 1}}}}]}}\n"
            );
        }
    }
    run_str(&scenario(
        "    nodes:\n      - {name: n0, cpu: 16, memory: 64Gi, gpus: 6}",
        &format!(
            "{conf}  queues:\n    - {{name: queue-a, weight: 1}}\n    - {{name: queue-b, weight: 2}}\n  output: {{sampleInterval: 10m}}\n  workload:\n    - jobs:\n{jobs}"
        ),
    ))
}

/// Two queues of weight 1 and 2, six identical jobs each, on a cluster that fits
/// six of the twelve: while both queues have pending work, queue-b holds twice
/// queue-a's GPUs (± 10%). The conf is Volcano's default without `overcommit`, whose
/// admission reservations are the subject of the next test.
#[test]
fn proportion_shares_follow_weights() {
    let r = two_queues(PROPORTION_CONF);
    let started = |q: &str, t: u64| r.rows().iter().filter(|x| x.queue == q && x.start.is_some_and(|s| s <= t)).count();
    let waiting = |q: &str, t: u64| r.rows().iter().filter(|x| x.queue == q && x.start.is_none_or(|s| s > t)).count();
    let mut checked = 0;
    for s in &r.output.samples {
        let t = s.t.micros();
        if waiting("queue-a", t) > 0 && waiting("queue-b", t) > 0 {
            let (a, b) = (s.queue_gpu_milli[0] as f64, s.queue_gpu_milli[1] as f64);
            assert!(a > 0.0, "queue-a starved at t={t}");
            let ratio = b / a;
            assert!((1.8..=2.2).contains(&ratio), "t={t}: queue-b/queue-a = {b}/{a}");
            checked += 1;
        }
    }
    assert!(checked >= 3, "too few samples with both queues pending ({checked})");
    // First wave: 4 jobs of queue-b and 2 of queue-a run at once.
    assert_eq!((started("queue-a", 0), started("queue-b", 0)), (2, 4));
}

/// A Ray-style job (head + 2 workers, minAvailable 3) starts only whole: with room
/// for two pods it waits, then starts all three together.
#[test]
fn ray_style_job_starts_whole() {
    let r = run_str(&scenario(
        "    nodes:\n      - {name: n0, cpu: 6, memory: 64Gi}",
        "  workload:\n    - jobs:\n      - {name: filler, duration: 100s, tasks: [{name: w, replicas: 1, resources: {cpu: 2}}]}\n      - {name: ray, submitAt: 10s, minAvailable: 3, duration: 10m, tasks: [{name: head, replicas: 1, resources: {cpu: 2}}, {name: worker, replicas: 2, resources: {cpu: 2}}]}\n",
    ));
    assert_eq!(jobs_csv(&r, "ray"), (Some(100_000_000), "Completed"));
    let ray: Vec<_> = r.output.pods.iter().filter(|p| r.output.world.jobs[p.job].spec.name == "ray").collect();
    assert_eq!(ray.len(), 3);
    assert!(ray.iter().all(|p| p.start.micros() == 100_000_000), "the gang started in parts");
    // No pod of the gang was ever bound before t=100 s.
    assert!(
        r.output
            .decisions
            .iter()
            .filter(|d| d.kind == lahar_core::session::DecisionKind::Bind)
            .all(|d| { r.output.world.jobs[d.job].spec.name != "ray" || d.t.micros() == 100_000_000 })
    );
}

/// A PyTorchJob-style master + 2 workers with one GPU each starts only whole.
#[test]
fn pytorch_style_job_starts_whole() {
    let r = run_str(&scenario(
        "    nodes:\n      - {name: g0, cpu: 32, memory: 256Gi, gpus: 2}\n      - {name: g1, cpu: 32, memory: 256Gi, gpus: 2}",
        "  workload:\n    - jobs:\n      - {name: busy, duration: 300s, tasks: [{name: w, replicas: 1, resources: {nvidia.com/gpu: 2}}]}\n      - {name: pytorch, submitAt: 1s, minAvailable: 3, duration: 1h, tasks: [{name: master, replicas: 1, resources: {nvidia.com/gpu: 1}}, {name: worker, replicas: 2, resources: {nvidia.com/gpu: 1}}]}\n",
    ));
    // Only 2 GPUs free until t=300: the 3-GPU gang waits, then starts whole.
    assert_eq!(jobs_csv(&r, "pytorch"), (Some(300_000_000), "Completed"));
    let pods: Vec<_> = r.output.pods.iter().filter(|p| r.output.world.jobs[p.job].spec.name == "pytorch").collect();
    assert_eq!(pods.len(), 3);
    assert!(pods.iter().all(|p| p.start.micros() == 300_000_000));
}

/// Without a `scheduler` section a scenario runs Volcano's default conf.
#[test]
fn default_scheduler_is_volcano() {
    let r = run_str(&scenario(
        "    nodes:\n      - {name: n0, cpu: 4, memory: 4Gi}",
        "  workload:\n    - jobs:\n      - {name: j, duration: 1m, tasks: [{name: w, replicas: 1, resources: {cpu: 1}}]}\n",
    ));
    assert_eq!(r.meta.scheduler, "volcano");
    let actions: Vec<&str> = r.output.decisions.iter().map(|d| d.action).collect();
    assert!(actions.contains(&"enqueue") && actions.contains(&"allocate"), "{actions:?}");
}

/// With Volcano's default conf, `overcommit` admits PodGroups while the cluster
/// inflated by 1.2 has room for their minResources, queue by queue in queue order
/// (tied shares fall back to the queue name): queue-a's six jobs are admitted
/// before queue-b's first, so at first queue-b runs one job and queue-a two
/// (proportion still caps queue-a at its deserved 2 GPUs). Volcano behaves the same.
#[test]
fn overcommit_admission_order_under_the_default_conf() {
    let r = two_queues("");
    let s0 = &r.output.samples[0];
    assert_eq!((s0.queue_gpu_milli[0], s0.queue_gpu_milli[1]), (2000, 1000));
    let admitted: Vec<&str> = r
        .output
        .decisions
        .iter()
        .filter(|d| d.session == 1 && d.action == "enqueue")
        .map(|d| r.output.world.jobs[d.job].spec.name.as_str())
        .collect();
    assert_eq!(admitted.len(), 7, "6 GPUs x 1.2 admit seven 1-GPU groups: {admitted:?}");
    assert!(admitted[..6].iter().all(|n| n.starts_with("queue-a")), "{admitted:?}");
}
