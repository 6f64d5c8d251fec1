//! Spark operator SparkApplication with `batchScheduler: volcano`: the operator
//! creates a PodGroup with `minMember: 1` and `minResources` = driver + executors
//! (or `batchSchedulerOptions.resources`); the driver starts first and creates the
//! executors, so the executor task depends on the driver.

use super::common::{self, Ck, JobHead, PodShape, join};
use super::yaml::{At, Doc, Node, Val};
use super::{Context, ImportedJob};
use lahar_core::model::job::Dependency;
use lahar_core::model::resource::{CPU, MEMORY, PODS, Resources};
use std::collections::BTreeMap;

/// A Spark memory string (`512m`, `4g`, `1t`; binary units, plain = bytes).
pub(crate) fn spark_memory(s: &str) -> Option<i64> {
    let s = s.trim().to_ascii_lowercase();
    let s = s.strip_suffix('b').unwrap_or(&s);
    let (num, mult) = match s.chars().last()? {
        'k' => (&s[..s.len() - 1], 1i64 << 10),
        'm' => (&s[..s.len() - 1], 1 << 20),
        'g' => (&s[..s.len() - 1], 1 << 30),
        't' => (&s[..s.len() - 1], 1 << 40),
        _ => (s, 1),
    };
    num.parse::<i64>().ok().filter(|&x| x >= 0).and_then(|x| x.checked_mul(mult))
}

/// The requests of the driver or an executor pod: cores (or `coreRequest`), memory
/// plus overhead (`memoryOverhead`, else max(`factor` × memory, 384Mi) as Spark
/// computes it), and `gpu: {name, quantity}`. In `v1beta1`, `cores` is a number
/// (`0.1`: 100 millicores); in `v1beta2` an integer.
fn role(ck: &mut Ck<'_>, cx: &mut Context<'_>, n: &Node, path: &str, factor: f64, float_cores: bool) -> PodShape {
    let mut r = Resources::ZERO;
    let cores = n.get("cores");
    let cpu = match ck.opt_str(n, "coreRequest", path) {
        Some(q) => lahar_core::util::quantity::parse_quantity(&q, 1000)
            .map_err(|e| ck.err(n.get("coreRequest").and_then(|x| x.at), &join(path, "coreRequest"), e.to_string()))
            .unwrap_or(0),
        None if float_cores && matches!(cores.map(|c| &c.val), Some(Val::Float(_))) => match cores.map(|c| &c.val) {
            Some(Val::Float(x)) if *x > 0.0 && x.is_finite() => (x * 1000.0).round() as i64,
            _ => {
                ck.err(cores.and_then(|c| c.at), &join(path, "cores"), "expected a number of cores above 0");
                0
            }
        },
        None => ck.opt_int(n, "cores", path, 1).unwrap_or(1) * 1000,
    };
    r.set(CPU, cpu);
    let mem_at: At = n.get("memory").and_then(|x| x.at);
    let mem = match ck.opt_str(n, "memory", path) {
        Some(m) => spark_memory(&m).unwrap_or_else(|| {
            ck.err(
                mem_at,
                &join(path, "memory"),
                format!("expected a Spark memory size such as 512m or 4g, got `{m}`"),
            );
            0
        }),
        None => 1 << 30, // spark.driver.memory / spark.executor.memory default 1g
    };
    let overhead = match ck.opt_str(n, "memoryOverhead", path) {
        Some(m) => spark_memory(&m).unwrap_or_else(|| {
            let at = n.get("memoryOverhead").and_then(|x| x.at);
            ck.err(at, &join(path, "memoryOverhead"), format!("expected a Spark memory size such as 512m, got `{m}`"));
            0
        }),
        None => ((mem as f64 * factor) as i64).max(384 << 20),
    };
    r.set(MEMORY, mem + overhead);
    if let Some(g) = n.get("gpu") {
        let gp = join(path, "gpu");
        let name = ck.opt_str(g, "name", &gp).unwrap_or_else(|| lahar_core::model::resource::GPU_RESOURCE.into());
        let q = ck.opt_int(g, "quantity", &gp, 0).unwrap_or(0);
        match cx.names.dim_or_register(&name) {
            Ok(d) => r.set(d, q * 1000),
            Err(e) => ck.err(g.at, &join(&gp, "name"), e.to_string()),
        }
    }
    r.set(PODS, 1);
    let node_selector: Vec<(String, String)> =
        ck.string_map(n, "nodeSelector", path).into_iter().map(|(k, (v, _))| (k, v)).collect();
    PodShape {
        requests: r,
        written: r,
        node_selector,
        node_label_in: common::placement_fields(ck, n, path, false, false),
        priority: cx.priority_classes.global_default().unwrap_or(1),
        preemptable: true,
        tolerations: common::tolerations(ck, n, path),
        never_preempts: cx
            .priority_classes
            .by_name
            .values()
            .any(|c| c.global_default && c.preemption_policy == "Never"),
        hints: None,
        scheduler_name: None,
        labels: BTreeMap::new(),
        annotations: BTreeMap::new(),
        grace: ck.opt_secs(n, "terminationGracePeriodSeconds", path),
    }
}

/// The memory overhead factor: `spec.memoryOverheadFactor`, else Spark's default,
/// 0.4 for non-JVM applications (`type: Python` or `R`) and 0.1 for JVM ones.
fn overhead_factor(ck: &mut Ck<'_>, spec: &Node) -> f64 {
    if let Some(f) = ck.opt_str(spec, "memoryOverheadFactor", "spec") {
        match f.trim().parse::<f64>() {
            Ok(x) if x.is_finite() && x >= 0.0 => return x,
            _ => ck.err(
                spec.get("memoryOverheadFactor").and_then(|n| n.at),
                "spec.memoryOverheadFactor",
                format!("expected a non-negative number such as 0.1, got `{f}`"),
            ),
        }
    }
    match ck.opt_str(spec, "type", "spec").as_deref() {
        Some("Python" | "R") => 0.4,
        _ => 0.1,
    }
}

pub(crate) fn job(d: &Doc, cx: &mut Context<'_>, ck: &mut Ck<'_>) -> Option<ImportedJob> {
    let root = &d.root;
    let meta = common::meta(ck, root, "", true);
    let empty = Node { at: root.at, val: Val::Null };
    let spec = root.get("spec").unwrap_or(&empty);
    // No batchScheduler: the operator's default (`--default-batch-scheduler=volcano`);
    // another scheduler's application was skipped (`support_object`). Its type
    // is still checked.
    ck.opt_str(spec, "batchScheduler", "spec");
    let factor = overhead_factor(ck, spec);
    let float_cores = common::kind_of(root).0.ends_with("/v1beta1");
    let driver = role(ck, cx, spec.get("driver").unwrap_or(&empty), "spec.driver", factor, float_cores);
    let executor = role(ck, cx, spec.get("executor").unwrap_or(&empty), "spec.executor", factor, float_cores);
    let given = spec.get("executor").and_then(|e| ck.opt_count(e, "instances", "spec.executor", 0));
    let mut dynamic = false;
    let mut started = None;
    let instances = match spec.get("dynamicAllocation") {
        // Spark starts max(minExecutors, initialExecutors, spark.executor.instances),
        // and grows to maxExecutors while tasks wait: with a bound, the job is
        // elastic up to it.
        Some(da) if ck.opt_bool(da, "enabled", "spec.dynamicAllocation").unwrap_or(false) => {
            let dp = "spec.dynamicAllocation";
            let initial = ck.opt_count(da, "initialExecutors", dp, 0).unwrap_or(0);
            let min = ck.opt_count(da, "minExecutors", dp, 0).unwrap_or(0);
            let start = initial.max(min).max(given.unwrap_or(0));
            started = Some(start as u32);
            match ck.opt_count(da, "maxExecutors", dp, 0) {
                Some(max) => {
                    dynamic = true;
                    max.max(start)
                }
                None => start,
            }
        }
        _ => given.unwrap_or(1),
    } as u32;
    let opts = spec.get("batchSchedulerOptions");
    let op = "spec.batchSchedulerOptions";
    let (mut queue, mut qat, mut class, mut min_res) = ("default".to_string(), root.at, None, None);
    if let Some(o) = opts {
        if let Some(q) = ck.opt_str(o, "queue", op) {
            queue = q;
            qat = o.get("queue").and_then(|n| n.at);
        }
        class = ck.opt_str(o, "priorityClassName", op);
        min_res = ck.resource_vec(o, "resources", op, cx.names);
    }
    let q = common::queue(ck, cx, &queue, qat, &join(op, "queue"));
    let timing = common::timing(ck, cx, &meta.annotations, meta.at, "");
    if !ck.ok() {
        return None;
    }
    let mut drv = common::task("driver", 1, 1, &driver);
    let mut exe = common::task("executor", instances, 0, &executor);
    // Pods get the class of batchSchedulerOptions (the operator sets it on both roles).
    if let Some(c) = class.as_ref().and_then(|c| cx.priority_classes.by_name.get(c)) {
        drv.priority = c.value;
        exe.priority = c.value;
    }
    exe.depends_on = vec![Dependency::running(0)];
    // The pods' labels, as the operator passes them to spark-submit: the
    // application's own (but Kueue's), the role's `labels`, then its own: the
    // application and the pod's role.
    let app_labels: Vec<(String, String)> = meta
        .labels
        .iter()
        .filter(|(k, _)| !k.starts_with("kueue.x-k8s.io/"))
        .map(|(k, (v, _))| (k.clone(), v.clone()))
        .collect();
    let app = meta.name.clone();
    for (task, role) in [(&mut drv, "driver"), (&mut exe, "executor")] {
        let own = spec.get(role).map(|r| ck.string_map(r, "labels", &join("spec", role))).unwrap_or_default();
        let all: Vec<(&str, &str)> = app_labels
            .iter()
            .map(|(k, v)| (k.as_str(), v.as_str()))
            .chain(own.iter().map(|(k, (v, _))| (k.as_str(), v.as_str())))
            .chain([("sparkoperator.k8s.io/app-name", app.as_str()), ("spark-role", role)])
            .collect();
        common::add_labels(task, &all);
    }
    let head = JobHead {
        name: meta.name,
        namespace: meta.namespace,
        kind: "SparkApplication".into(),
        queue: q?,
        priority_class: class,
        min_available: 1,
        timing: timing?,
        grace: driver.grace.max(executor.grace.filter(|_| instances > 0)),
    };
    let driver_pod = spec.get("driver").and_then(|d| d.get("podName")).and_then(Node::scalar);
    let (mut j, profile) = common::assemble(head, vec![drv, exe], cx);
    // Pods as the operator and Spark name them: the driver `<app>-driver` (or
    // `driver.podName`), executors `<prefix>-exec-<id>` from 1, where Spark's prefix
    // is `<app>-<16 random hex digits>`: lahar uses `<app>` alone.
    j.pod_names = Some(Box::new(vec![
        vec![driver_pod.unwrap_or_else(|| format!("{}-driver", j.name))],
        (1..=instances).map(|k| format!("{}-exec-{k}", j.name)).collect(),
    ]));
    j.min_resources = match min_res {
        Some(r) => r,
        // The operator's minResources count the executors Spark starts with.
        None => j.tasks[0].requests + j.tasks[1].requests.times(i64::from(started.unwrap_or(instances))),
    };
    if dynamic && j.elastic.is_none() {
        j.elastic = Some(lahar_core::model::elastic::Elastic::default());
    }
    Some(ImportedJob { spec: j, profile, file: d.file.clone(), doc: d.label(), at: root.at })
}

#[cfg(test)]
mod tests {
    #[test]
    fn spark_memory_sizes() {
        assert_eq!(super::spark_memory("512m"), Some(512 << 20));
        assert_eq!(super::spark_memory("4g"), Some(4 << 30));
        assert_eq!(super::spark_memory("1024"), Some(1024));
        assert_eq!(super::spark_memory("2gb"), Some(2 << 30));
        assert_eq!(super::spark_memory("lots"), None);
    }
}
