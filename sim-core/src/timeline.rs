//! What operators do to a live cluster, at given instants (`spec.timeline`): the
//! objects they delete, the queues they edit, the nodes they cordon. Each raises
//! what Volcano's controllers would see: a deleted pod is a pod gone from its node
//! after its grace period (the job controller's `PodEvicted`); a deleted job takes
//! its pods with it; an edited queue is read by the next session; a cordon is the
//! `node.kubernetes.io/unschedulable` taint; a `NoExecute` taint makes the taint
//! manager delete the pods that do not tolerate it; a node deleted takes its pods
//! with it; a node added brings its capacity; an edited scheduler conf schedules
//! the sessions from then on.

use crate::model::cluster::Taint;

use crate::model::ids::NodeId;
use crate::model::ids::QueueId;
use crate::model::queue::QueueState;
use crate::model::resource::ResourceList;
use crate::util::time::{SimDuration, SimTime};
use std::sync::Arc;

/// One operator's action.
#[derive(Clone, Debug, PartialEq)]
pub enum Operation {
    /// `kubectl delete pod`: the pod named (as lahar's outputs name it) in the
    /// namespace.
    DeletePod {
        /// Namespace.
        namespace: Arc<str>,
        /// Pod name.
        name: String,
        /// The deletion's grace period (`kubectl delete --grace-period`); `None`:
        /// the pod's own.
        grace: Option<SimDuration>,
    },
    /// `kubectl delete` of the job (its PodGroup and pods go with it).
    DeleteJob {
        /// Namespace.
        namespace: Arc<str>,
        /// Job name.
        name: String,
    },
    /// `vcctl job suspend` (a `bus/v1alpha1` Command with `AbortJob`): the job's
    /// pods are killed and it is Aborted; a later [`Operation::ResumeJob`] can
    /// start it again.
    SuspendJob {
        /// Namespace.
        namespace: Arc<str>,
        /// Job name.
        name: String,
    },
    /// `vcctl job resume` (a Command with `ResumeJob`): an Aborted job restarts
    /// (Volcano's Aborted state: Restarting, one more retry).
    ResumeJob {
        /// Namespace.
        namespace: Arc<str>,
        /// Job name.
        name: String,
    },
    /// `kubectl edit` of a VolcanoJob's gang sizes (the e2e suites' `UpdateJob`):
    /// the fields given change; the controller makes or deletes pods to match.
    ScaleJob {
        /// Namespace.
        namespace: Arc<str>,
        /// Job name.
        name: String,
        /// The task edited (`None`: the job's only task).
        task: Option<String>,
        /// `spec.tasks[].replicas`.
        replicas: Option<u32>,
        /// `spec.tasks[].minAvailable`.
        task_min_available: Option<u32>,
        /// `spec.minAvailable`.
        min_available: Option<u32>,
    },
    /// An edit of a queue's spec: the fields given change.
    Queue {
        /// The queue.
        queue: QueueId,
        /// `spec.weight`.
        weight: Option<u32>,
        /// `status.state` (`vcctl queue operate --action open|close`).
        state: Option<QueueState>,
        /// `spec.reclaimable`.
        reclaimable: Option<bool>,
        /// `spec.capability` (replaces the whole list).
        capability: Option<ResourceList>,
    },
    /// `kubectl cordon` of these nodes.
    Cordon(Vec<NodeId>),
    /// `kubectl uncordon` of these nodes.
    Uncordon(Vec<NodeId>),
    /// These nodes join the cluster (a node declared `absent`, or one removed
    /// before): their capacity is the scheduler's from the next session.
    AddNodes(Vec<NodeId>),
    /// `kubectl delete node` of these nodes: they leave the cluster, and the pod
    /// garbage collector deletes their pods at once (the job controller hears
    /// `PodEvicted` for each).
    RemoveNodes(Vec<NodeId>),
    /// `kubectl taint nodes … key=value:Effect --overwrite`: the taint replaces
    /// one of the same key and effect.
    Taint {
        /// The nodes.
        nodes: Vec<NodeId>,
        /// The taint (`NoSchedule` or `NoExecute`).
        taint: Taint,
    },
    /// A patch removing scheduling gates (`spec.schedulingGates`) from a pod, or
    /// from every live pod of a job: those named, or all. A pod left without
    /// gates may be scheduled from the next session. A pod made later (a
    /// replacement) carries its template's gates again, as in Kubernetes.
    Ungate {
        /// Namespace.
        namespace: Arc<str>,
        /// The pod's name, or the job's.
        name: String,
        /// `name` names a job (`ungateJob`), not a pod (`ungatePod`).
        job: bool,
        /// The gates to remove; every gate when `None`.
        gates: Option<Vec<String>>,
    },
    /// An edit of the scheduler's conf (`volcano-scheduler-configmap`, which
    /// Volcano's scheduler watches and reloads): from the next session on, the
    /// run is scheduled by a scheduler made then from the conf of this index
    /// (read and checked before the run; [`crate::engine::Engine::set_reloads`]).
    Conf(u32),
    /// `kubectl taint nodes … key[:Effect]-`: the taints of that key (and
    /// effect, when given) go.
    Untaint {
        /// The nodes.
        nodes: Vec<NodeId>,
        /// The key.
        key: String,
        /// The effect, or every effect.
        effect: Option<String>,
    },
    /// `kubectl label nodes … key=value --overwrite` (a value) or `kubectl
    /// label nodes … key-` (none): the nodes' label changes; pods running there
    /// stay (selectors and affinity are `IgnoredDuringExecution`), the next
    /// session's filters and scores see the new labels.
    Label {
        /// The nodes.
        nodes: Vec<NodeId>,
        /// The key.
        key: String,
        /// The new value, or `None` to remove the label.
        value: Option<String>,
    },
}

/// An action at its instant, with where and how it was written (for warnings
/// and timeline.csv).
#[derive(Clone, Debug, PartialEq)]
pub struct Step {
    /// When.
    pub at: SimTime,
    /// What.
    pub op: Operation,
    /// Its place in the scenario (`spec.timeline[3]`).
    pub place: String,
    /// The action's key as the scenario spells it (`deletePod`, `cordon`, `conf`).
    pub action: &'static str,
    /// Its value as written: the object, the node pattern, the queue, the conf file.
    pub target: String,
}
