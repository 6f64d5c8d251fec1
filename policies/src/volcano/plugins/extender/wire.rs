//! What the extender receives: lahar's state in the shape of Volcano's scheduler
//! objects (`api.TaskInfo`, `api.NodeInfo`, `api.JobInfo`, `api.QueueInfo`), which
//! Go encodes with their field names as keys. lahar sends the fields it has (no
//! full Pod or Node objects: their `metadata` name, namespace and labels, and the
//! pod's node); extenders written against Volcano's types decode them.

use lahar_core::model::cluster::NodeId;
use lahar_core::model::job::{JobId, PodId, PodStatus};
use lahar_core::model::queue::QueueId;
use lahar_core::model::resource::{CPU, DIMS, MEMORY, PODS, Resources};
use lahar_core::session::Session;
use serde_json::{Map, Value, json};

/// `api.Resource`: `MilliCPU`, `Memory` (bytes), `ScalarResources` (milli-units
/// by name: GPUs and extended resources), `MaxTaskNum` (pods).
pub fn resource(ssn: &Session<'_>, r: &Resources) -> Value {
    let names = &ssn.cluster().resource_names;
    let mut scalars = Map::new();
    for d in 0..DIMS {
        if d != CPU && d != MEMORY && d != PODS && r.get(d) != 0 {
            scalars.insert(names.name(d).to_string(), json!(r.get(d) as f64));
        }
    }
    json!({
        "MilliCPU": r.get(CPU) as f64,
        "Memory": r.get(MEMORY) as f64,
        "ScalarResources": if scalars.is_empty() { Value::Null } else { Value::Object(scalars) },
        "MaxTaskNum": r.get(PODS),
    })
}

/// `api.TaskStatus` as Volcano numbers it (a bit per status).
pub fn status(s: PodStatus) -> u32 {
    match s {
        PodStatus::Pending => 1,
        PodStatus::Allocated => 1 << 1,
        PodStatus::Pipelined => 1 << 2,
        PodStatus::Running => 1 << 5,
        PodStatus::Releasing => 1 << 6,
        PodStatus::Succeeded => 1 << 7,
        _ => 1 << 9,
    }
}

/// A pod's `UID`: `namespace/name`, which the extender's victims name back.
pub fn pod_uid(ssn: &Session<'_>, p: PodId) -> String {
    let pod = ssn.pod(p);
    let spec = &ssn.job(pod.job).spec;
    format!("{}/{}", spec.namespace, spec.pod_name(pod.task as usize, pod.index))
}

/// `api.TaskInfo`.
pub fn task(ssn: &Session<'_>, p: PodId) -> Value {
    let pod = ssn.pod(p);
    let job = ssn.job(pod.job);
    let name = job.spec.pod_name(pod.task as usize, pod.index);
    let node = pod.node.map(|n| ssn.node(n).name.clone()).unwrap_or_default();
    let queue = &ssn.queue(job.spec.queue).spec.name;
    let labels: Map<String, Value> =
        job.spec.pod_labels(pod.task as usize, queue).into_iter().map(|(k, v)| (k, Value::String(v))).collect();
    json!({
        "UID": pod_uid(ssn, p),
        "Job": format!("{}/{}", job.spec.namespace, job.spec.name),
        "Name": name,
        "Namespace": &*job.spec.namespace,
        "TaskRole": &*job.spec.tasks[pod.task as usize].name,
        "Resreq": resource(ssn, &pod.req),
        "InitResreq": resource(ssn, &pod.req),
        "NodeName": node,
        "Status": status(pod.status),
        "Priority": pod.priority,
        "Preemptable": pod.preemptable,
        "BestEffort": pod.best_effort,
        "Pod": {
            "metadata": {"name": name, "namespace": &*job.spec.namespace, "labels": labels},
            "spec": {"nodeName": node, "priority": pod.priority},
        },
    })
}

/// `api.NodeInfo`, with its pods as `Tasks` (by UID).
pub fn node(ssn: &Session<'_>, n: NodeId) -> Value {
    let node = ssn.node(n);
    let st = ssn.node_state(n);
    let tasks: Map<String, Value> = st.pods.iter().map(|&p| (pod_uid(ssn, p), task(ssn, p))).collect();
    let labels: Map<String, Value> = node.labels.iter().map(|(k, v)| (k.clone(), Value::String(v.clone()))).collect();
    json!({
        "Name": &node.name,
        "Allocatable": resource(ssn, &node.allocatable),
        "Capacity": resource(ssn, &node.allocatable),
        "Idle": resource(ssn, &ssn.idle(n)),
        "Used": resource(ssn, &st.used),
        "Releasing": resource(ssn, &st.releasing),
        "Pipelined": resource(ssn, &st.pipelined),
        "Tasks": tasks,
        "Node": {"metadata": {"name": &node.name, "labels": labels}},
    })
}

/// `api.JobInfo`.
pub fn job(ssn: &Session<'_>, j: JobId) -> Value {
    let job = ssn.job(j);
    let tasks: Map<String, Value> = job.pods.iter().map(|&p| (pod_uid(ssn, p), task(ssn, p))).collect();
    let mut total = Resources::ZERO;
    for t in &job.spec.tasks {
        for _ in 0..t.replicas {
            total += t.requests;
        }
    }
    json!({
        "UID": format!("{}/{}", job.spec.namespace, job.spec.name),
        "Name": &job.spec.name,
        "Namespace": &*job.spec.namespace,
        "Queue": &ssn.queue(job.spec.queue).spec.name,
        "Priority": job.spec.priority,
        "MinAvailable": job.spec.min_available,
        "TotalRequest": resource(ssn, &total),
        "Allocated": resource(ssn, &job.allocated),
        "Tasks": tasks,
        "PodGroup": {"status": {"phase": job.pg_phase.as_str()}},
    })
}

/// `api.QueueInfo`.
pub fn queue(ssn: &Session<'_>, q: QueueId) -> Value {
    let s = &ssn.queue(q).spec;
    json!({"UID": &s.name, "Name": &s.name, "Weight": s.weight, "Reclaimable": s.reclaimable})
}

/// The session's snapshot (`OnSessionOpenRequest`).
pub fn snapshot(ssn: &Session<'_>) -> Value {
    let jobs: Map<String, Value> =
        ssn.jobs().map(|j| (format!("{}/{}", ssn.job(j).spec.namespace, ssn.job(j).spec.name), job(ssn, j))).collect();
    let nodes: Map<String, Value> =
        (0..ssn.node_count()).map(|i| NodeId(i as u32)).map(|n| (ssn.node(n).name.clone(), node(ssn, n))).collect();
    let queues: Map<String, Value> = (0..ssn.queues().len())
        .map(|i| QueueId(i as u32))
        .map(|q| (ssn.queue(q).spec.name.clone(), queue(ssn, q)))
        .collect();
    json!({
        "Jobs": jobs,
        "Nodes": nodes,
        "Queues": queues,
        "NamespaceInfo": {},
        "RevocableNodes": {},
        "NodeList": Value::Null,
    })
}
