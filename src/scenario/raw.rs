//! The scenario file exactly as written: serde structs that reject unknown fields.
#![allow(missing_docs)] // field meanings are documented in docs/scenario.md
//! Values that need checks beyond their YAML type are wrapped in [`Spanned`] so
//! validation can point at their line and column.

use serde::Deserialize;
use serde::de::{self, Visitor};
use serde_saphyr::Spanned;
use std::collections::BTreeMap;
use std::fmt;

/// A Kubernetes quantity as written: a string (`500m`, `4Gi`) or a number (`8`).
#[derive(Clone, Debug, PartialEq)]
pub struct Quantity(pub String);

impl<'de> Deserialize<'de> for Quantity {
    fn deserialize<D: de::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl Visitor<'_> for V {
            type Value = Quantity;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a Kubernetes quantity such as 8, 500m, 1.5 or 4Gi")
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<Quantity, E> {
                Ok(Quantity(v.to_string()))
            }
            fn visit_u64<E: de::Error>(self, v: u64) -> Result<Quantity, E> {
                Ok(Quantity(v.to_string()))
            }
            fn visit_i64<E: de::Error>(self, v: i64) -> Result<Quantity, E> {
                Ok(Quantity(v.to_string()))
            }
            fn visit_f64<E: de::Error>(self, v: f64) -> Result<Quantity, E> {
                Ok(Quantity(v.to_string()))
            }
        }
        d.deserialize_any(V)
    }
}

/// The whole file.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct RawScenario {
    pub api_version: Spanned<String>,
    pub kind: Spanned<String>,
    pub metadata: RawMetadata,
    pub spec: RawSpec,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawMetadata {
    pub name: Spanned<String>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct RawSpec {
    pub seed: Option<u64>,
    pub horizon: Option<Spanned<String>>,
    pub schedule_period: Option<Spanned<String>>,
    pub sessions: Option<Spanned<i64>>,
    /// The wall-clock date and time of t = 0 (`YYYY-MM-DDTHH:MM[:SS]`).
    pub start_time: Option<Spanned<String>>,
    #[serde(default)]
    pub cluster: RawCluster,
    /// A cluster snapshot (`kubectl get ... -o yaml`): nodes, queues, HyperNodes and
    /// the starting workload.
    pub snapshot: Option<Spanned<String>>,
    pub queues: Option<Spanned<RawQueues>>,
    pub scheduler: Option<Spanned<RawScheduler>>,
    pub workload: Option<Vec<Spanned<RawSource>>>,
    pub output: Option<RawOutput>,
    pub comm: Option<Spanned<RawComm>>,
    pub priority_classes: Option<Vec<Spanned<RawPriorityClass>>>,
    pub defaults: Option<Spanned<RawDefaults>>,
    /// The FGD paper's placement-only evaluation instead of a run in time.
    pub placement: Option<Spanned<RawPlacement>>,
    /// Failures, repairs and drains (docs/scenario.md, "Faults").
    pub faults: Option<Spanned<RawFaults>>,
    /// Operators' actions during the run (docs/scenario.md, "spec.timeline").
    pub timeline: Option<Vec<Spanned<RawStep>>>,
    /// Services: a workload's request demand and what a replica serves
    /// (docs/scenario.md, "spec.services").
    pub services: Option<Vec<Spanned<RawService>>>,
    /// The HorizontalPodAutoscaler controller's settings.
    pub autoscaling: Option<Spanned<RawAutoscaling>>,
}

/// `spec.services[]`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct RawService {
    /// `namespace/name` (or `name` in `default`) of the workload.
    pub workload: Spanned<String>,
    /// `requests` (default) or `tokens`: what the demand and capacity count.
    pub unit: Option<Spanned<String>>,
    pub demand: Spanned<RawDemand>,
    /// Requests (or tokens) per second one ready replica serves (required
    /// unless `capacityByRole` gives it by role).
    pub capacity: Option<Spanned<f64>>,
    pub capacity_by_gpu_model: Option<Spanned<BTreeMap<String, Spanned<f64>>>>,
    /// For a kthena ModelServing: what one ready replica of each role serves;
    /// a serving group serves the least over these roles of its ready
    /// replicas × the role's.
    pub capacity_by_role: Option<Spanned<BTreeMap<String, Spanned<f64>>>>,
    /// From a pod's start until it serves.
    pub startup: Option<Spanned<String>>,
    /// For a RayService: the Serve deployment (`application/deployment`, or
    /// the deployment alone) whose replicas serve the demand.
    pub deployment: Option<Spanned<String>>,
}

/// A service's demand: exactly one of the forms.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct RawDemand {
    pub constant: Option<Spanned<f64>>,
    pub steps: Option<Spanned<Vec<Spanned<RawDemandStep>>>>,
    pub diurnal: Option<Spanned<RawDemandDiurnal>>,
    pub bursts: Option<Spanned<RawDemandBursts>>,
    pub trace: Option<Spanned<RawDemandTrace>>,
}

/// A request trace as a demand: its requests counted per `bin`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct RawDemandTrace {
    pub path: Spanned<String>,
    pub format: Option<Spanned<String>>,
    pub bin: Option<Spanned<String>>,
    pub scale: Option<Spanned<f64>>,
    pub start: Option<Spanned<String>>,
    pub repeat: Option<Spanned<u64>>,
    pub every: Option<Spanned<String>>,
    /// A service in tokens: `input`, `output` or `total` (default) tokens of
    /// each request.
    pub tokens: Option<Spanned<String>>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct RawDemandStep {
    pub at: Spanned<String>,
    pub rate: Spanned<f64>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct RawDemandDiurnal {
    /// A service in requests: requests per second for each hour.
    pub requests_per_second: Option<Spanned<Vec<f64>>>,
    /// A service in tokens: tokens per second for each hour.
    pub tokens_per_second: Option<Spanned<Vec<f64>>>,
    pub weekly: Option<Spanned<Vec<f64>>>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct RawDemandBursts {
    pub base: Spanned<f64>,
    pub peak: Spanned<f64>,
    pub every: Spanned<String>,
    pub lasting: Spanned<String>,
    pub first: Option<Spanned<String>>,
}

/// `spec.autoscaling`: kube-controller-manager's HPA flags.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct RawAutoscaling {
    pub sync_period: Option<Spanned<String>>,
    pub tolerance: Option<Spanned<f64>>,
    pub downscale_stabilization: Option<Spanned<String>>,
}

/// `spec.timeline[]`: one operator's action at `at`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct RawStep {
    pub at: Spanned<String>,
    pub delete_pod: Option<Spanned<String>>,
    /// With `deletePod`: the deletion's grace period (`kubectl delete
    /// --grace-period`), over the pod's own.
    pub grace_period: Option<Spanned<String>>,
    pub delete_job: Option<Spanned<String>>,
    pub suspend_job: Option<Spanned<String>>,
    pub resume_job: Option<Spanned<String>>,
    pub scale_job: Option<Spanned<String>>,
    pub task: Option<Spanned<String>>,
    pub replicas: Option<Spanned<i64>>,
    pub task_min_available: Option<Spanned<i64>>,
    pub min_available: Option<Spanned<i64>>,
    pub queue: Option<Spanned<String>>,
    pub weight: Option<Spanned<i64>>,
    pub state: Option<Spanned<String>>,
    pub reclaimable: Option<Spanned<bool>>,
    pub capability: Option<Spanned<BTreeMap<String, Quantity>>>,
    pub cordon: Option<Spanned<String>>,
    pub uncordon: Option<Spanned<String>>,
    pub add_nodes: Option<Spanned<String>>,
    pub remove_nodes: Option<Spanned<String>>,
    pub taint: Option<Spanned<String>>,
    pub untaint: Option<Spanned<String>>,
    /// `kubectl label nodes PATTERN key=value --overwrite`.
    pub label: Option<Spanned<String>>,
    /// `kubectl label nodes PATTERN key-`.
    pub unlabel: Option<Spanned<String>>,
    pub ungate_pod: Option<Spanned<String>>,
    pub ungate_job: Option<Spanned<String>>,
    pub gates: Option<Spanned<Vec<Spanned<String>>>>,
    /// A volcano-scheduler.conf the scheduler reloads at `at` (relative to the
    /// scenario's folder).
    pub conf: Option<Spanned<String>>,
    pub key: Option<Spanned<String>>,
    pub value: Option<Spanned<String>>,
    pub effect: Option<Spanned<String>>,
}

/// `spec.faults`: random failures, a failure trace, drains.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct RawFaults {
    pub random: Option<Vec<Spanned<RawFaultRule>>>,
    pub trace: Option<Spanned<String>>,
    pub drains: Option<Vec<Spanned<RawDrain>>>,
}

/// `spec.faults.random[]`: a population that fails at random.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct RawFaultRule {
    pub name: Option<Spanned<String>>,
    pub scope: Option<Spanned<String>>,
    pub nodes: Option<Spanned<String>>,
    pub gpus: Option<Spanned<i64>>,
    pub tier: Option<Spanned<i64>>,
    pub between: Spanned<RawDist>,
    pub repair: Spanned<RawDist>,
}

/// A distribution of durations.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct RawDist {
    pub distribution: Spanned<String>,
    pub mean: Option<Spanned<String>>,
    pub scale: Option<Spanned<String>>,
    pub median: Option<Spanned<String>>,
    pub value: Option<Spanned<String>>,
    pub shape: Option<Spanned<f64>>,
    pub sigma: Option<Spanned<f64>>,
}

/// `spec.faults.drains[]`: a planned drain (maintenance).
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct RawDrain {
    pub at: Spanned<String>,
    pub nodes: Spanned<String>,
    pub deadline: Option<Spanned<String>>,
    pub duration: Spanned<String>,
}

/// `spec.placement`: pods placed in arrival order, never leaving, until the
/// arrived GPU request is `demand` × the cluster's GPUs.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct RawPlacement {
    pub demand: Spanned<f64>,
    pub order: Option<Spanned<String>>,
}

/// `spec.defaults`: what jobs whose input does not say get.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct RawDefaults {
    /// Run time of jobs without one (`lahar.io/duration`, a compact job's `duration`).
    pub duration: Option<Spanned<String>>,
}

/// `spec.priorityClasses[]`: a Kubernetes PriorityClass for compact jobs (and
/// manifests) to name.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct RawPriorityClass {
    pub name: Spanned<String>,
    pub value: Spanned<i64>,
    pub global_default: Option<Spanned<bool>>,
    pub preemption_policy: Option<Spanned<String>>,
}

/// `spec.comm`: the communication model's settings.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct RawComm {
    pub constants: Option<Spanned<RawConstants>>,
    pub link_sharing: Option<Spanned<String>>,
}

/// Overrides of the comm constants: a path to a YAML file, or the overrides inline.
#[derive(Debug)]
pub enum RawConstants {
    Path(String),
    Inline(serde_json::Value),
}

impl<'de> Deserialize<'de> for RawConstants {
    fn deserialize<D: de::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = RawConstants;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a path to a YAML file of comm constants, or a map of overrides")
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<RawConstants, E> {
                Ok(RawConstants::Path(v.to_string()))
            }
            fn visit_map<A: de::MapAccess<'de>>(self, map: A) -> Result<RawConstants, A::Error> {
                serde_json::Value::deserialize(de::value::MapAccessDeserializer::new(map)).map(RawConstants::Inline)
            }
        }
        d.deserialize_any(V)
    }
}

/// `model:` a catalog name, or a profile.
#[derive(Debug)]
pub enum RawModel {
    Name(String),
    Spec(Box<RawModelSpec>),
}

impl<'de> Deserialize<'de> for RawModel {
    fn deserialize<D: de::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = RawModel;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a model name from the catalog, or a map with `name`, `tensorParallel`, `iterations`...")
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<RawModel, E> {
                Ok(RawModel::Name(v.to_string()))
            }
            fn visit_map<A: de::MapAccess<'de>>(self, map: A) -> Result<RawModel, A::Error> {
                RawModelSpec::deserialize(de::value::MapAccessDeserializer::new(map))
                    .map(|s| RawModel::Spec(Box::new(s)))
            }
        }
        d.deserialize_any(V)
    }
}

/// A model profile: a catalog model (`name`) with overrides, or custom numbers.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct RawModelSpec {
    pub name: Option<Spanned<String>>,
    pub grad_bytes: Option<Spanned<Quantity>>,
    pub step_time: Option<Spanned<String>>,
    pub overlap: Option<Spanned<f64>>,
    pub layers: Option<Spanned<i64>>,
    pub hidden: Option<Spanned<i64>>,
    pub seq_len: Option<Spanned<i64>>,
    pub tokens_per_step: Option<Spanned<i64>>,
    pub tensor_parallel: Option<Spanned<i64>>,
    pub pipeline_parallel: Option<Spanned<i64>>,
    pub iterations: Option<Spanned<i64>>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct RawCluster {
    pub node_groups: Option<Vec<Spanned<RawNode>>>,
    pub nodes: Option<Vec<Spanned<RawNode>>>,
    pub fabric: Option<Vec<Spanned<RawTier>>>,
    pub hyper_nodes: Option<Spanned<RawHyperNodes>>,
    pub node_list: Option<Spanned<RawNodeList>>,
}

/// `cluster.nodeList`: nodes read from a trace's machine list.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct RawNodeList {
    pub format: Spanned<String>,
    pub path: Spanned<String>,
    pub pods: Option<Spanned<i64>>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct RawHyperNode {
    pub name: Spanned<String>,
    pub tier: Spanned<i64>,
    pub tier_name: Option<String>,
    pub members: Vec<String>,
}

/// A node group (with `count`) or an explicit node (without).
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct RawNode {
    pub name: Spanned<String>,
    pub count: Option<Spanned<i64>>,
    pub gpu_model: Option<String>,
    pub gpus: Option<Spanned<i64>>,
    pub cpu: Option<Spanned<Quantity>>,
    pub memory: Option<Spanned<Quantity>>,
    pub pods: Option<Spanned<i64>>,
    pub intra_node: Option<Spanned<String>>,
    pub nics: Option<RawNics>,
    pub speed: Option<Spanned<f64>>,
    pub labels: Option<BTreeMap<String, String>>,
    pub extended_resources: Option<Spanned<BTreeMap<String, Quantity>>>,
    pub vgpu: Option<RawVgpu>,
    pub vnpu: Option<Spanned<RawVnpu>>,
    pub numa: Option<Spanned<RawNuma>>,
    pub absent: Option<bool>,
}

/// A node's Ascend chips of one type, as Project-HAMi's ascend-device-plugin
/// registers them for Volcano's vNPU sharing.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct RawVnpu {
    #[serde(rename = "type")]
    pub kind: Spanned<String>,
    pub chips: Spanned<i64>,
    pub count: Spanned<i64>,
    pub memory: Spanned<i64>,
    pub cores: Spanned<i64>,
    pub hami_core: Option<bool>,
}

/// A node's NUMA topology, laid out as Linux numbers CPUs.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct RawNuma {
    pub numa_nodes: Spanned<i64>,
    pub sockets: Option<Spanned<i64>>,
    pub threads_per_core: Option<Spanned<i64>>,
    pub topology_policy: Spanned<String>,
    pub cpu_manager_policy: Option<Spanned<String>>,
    pub reserved: Option<Spanned<i64>>,
}

/// A node's vGPU cards, as Volcano's vGPU device plugin registers them.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawVgpu {
    pub cards: Spanned<i64>,
    pub memory: Spanned<i64>,
    pub split: Option<Spanned<i64>>,
    #[serde(rename = "type")]
    pub kind: Option<String>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawNics {
    pub count: Spanned<i64>,
    pub gbps: Spanned<i64>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawTier {
    pub tier: Spanned<i64>,
    pub name: String,
    pub fanout: Spanned<i64>,
    pub oversubscription: Option<Spanned<f64>>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawQueue {
    pub name: Spanned<String>,
    pub weight: Option<Spanned<i64>>,
    pub capability: Option<Spanned<BTreeMap<String, Quantity>>>,
    pub guarantee: Option<Spanned<BTreeMap<String, Quantity>>>,
    pub deserved: Option<Spanned<BTreeMap<String, Quantity>>>,
    pub reclaimable: Option<bool>,
    pub parent: Option<Spanned<String>>,
    pub priority: Option<i32>,
    pub state: Option<Spanned<String>>,
    pub affinity: Option<RawAffinity>,
}

/// A queue's `affinity`, as Volcano's Queue spells it.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct RawAffinity {
    pub node_group_affinity: Option<RawNodeGroups>,
    pub node_group_anti_affinity: Option<RawNodeGroups>,
}

/// Node group names, required and preferred.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawNodeGroups {
    #[serde(rename = "requiredDuringSchedulingIgnoredDuringExecution")]
    pub required: Option<Vec<String>>,
    #[serde(rename = "preferredDuringSchedulingIgnoredDuringExecution")]
    pub preferred: Option<Vec<String>>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawScheduler {
    pub baseline: Option<Spanned<String>>,
    /// `actual` or `estimate`: the run time `sjf` and `easy-backfill` plan with.
    #[serde(rename = "runTime")]
    pub run_time: Option<Spanned<String>>,
    /// `tiresias`: its queue thresholds in GPU·seconds, ascending.
    pub thresholds: Option<Spanned<Vec<Spanned<i64>>>>,
    /// `tiresias`: its starvation guard's `PROMOTE_KNOB` (0: no guard).
    #[serde(rename = "promoteKnob")]
    pub promote_knob: Option<Spanned<i64>>,
    /// `tiresias`: a preempted job saves its work (true) or loses it since its
    /// last checkpoint (false).
    pub suspend: Option<Spanned<bool>>,
    pub conf: Option<Spanned<String>>,
    pub inline: Option<Spanned<String>>,
}

/// One workload source (externally tagged: `- synthetic: {...}` or `- jobs: [...]`).
#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
#[allow(clippy::large_enum_variant)] // parsed once per source
pub enum RawSource {
    Synthetic(RawSynthetic),
    Jobs(Vec<Spanned<RawJob>>),
    Trace(RawTrace),
    Manifests(RawManifests),
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct RawTrace {
    pub format: Spanned<String>,
    pub path: Spanned<String>,
    pub strict: Option<bool>,
    pub queue: Option<Spanned<String>>,
    pub cpu_per_gpu: Option<Spanned<Quantity>>,
    pub memory_per_gpu: Option<Spanned<Quantity>>,
    pub allow_empty: Option<bool>,
    pub time_scale: Option<Spanned<f64>>,
    pub processors_per_pod: Option<Spanned<i64>>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct RawSynthetic {
    pub jobs: Spanned<i64>,
    pub name_prefix: Option<String>,
    pub start: Option<Spanned<String>>,
    pub arrival: RawArrival,
    pub gpus: Spanned<RawGpus>,
    pub gpus_per_pod: Option<Spanned<i64>>,
    pub cpu_per_gpu: Option<Spanned<Quantity>>,
    pub memory_per_gpu: Option<Spanned<Quantity>>,
    pub duration: RawDuration,
    pub queues: Option<Spanned<BTreeMap<String, f64>>>,
    pub checkpoint_interval: Option<Spanned<RawInterval>>,
    /// Each job's run-time estimate is its run time times this.
    pub estimate_factor: Option<Spanned<f64>>,
    pub priority: Option<i32>,
    pub model: Option<Spanned<RawModel>>,
    pub models: Option<Spanned<BTreeMap<String, f64>>>,
    pub network_topology: Option<Spanned<RawNetworkTopology>>,
    pub elastic: Option<Spanned<RawSyntheticElastic>>,
}

/// `synthetic.elastic`: multi-pod jobs made elastic.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct RawSyntheticElastic {
    pub min_fraction: Option<Spanned<f64>>,
    pub scaling: Option<Spanned<String>>,
    pub resize_overhead: Option<Spanned<String>>,
}

/// `synthetic.gpus`: a named distribution (`philly`) or a map GPU count → weight.
#[derive(Debug)]
pub enum RawGpus {
    Named(String),
    Map(BTreeMap<u32, f64>),
}

impl<'de> Deserialize<'de> for RawGpus {
    fn deserialize<D: de::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = RawGpus;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a named GPU-count distribution (philly, pai) or a map GPU count → weight")
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<RawGpus, E> {
                Ok(RawGpus::Named(v.to_string()))
            }
            fn visit_map<A: de::MapAccess<'de>>(self, map: A) -> Result<RawGpus, A::Error> {
                BTreeMap::deserialize(de::value::MapAccessDeserializer::new(map)).map(RawGpus::Map)
            }
        }
        d.deserialize_any(V)
    }
}

/// `synthetic.checkpointInterval`: a duration, or a distribution of them.
#[derive(Debug)]
#[allow(clippy::large_enum_variant)] // parsed once per source
pub enum RawInterval {
    Fixed(String),
    Dist(RawIntervalDist),
}

impl<'de> Deserialize<'de> for RawInterval {
    fn deserialize<D: de::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = RawInterval;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a duration (e.g. 30m), or {uniform: {min, max}} or {lognormal: {median, sigma}}")
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<RawInterval, E> {
                Ok(RawInterval::Fixed(v.to_string()))
            }
            fn visit_map<A: de::MapAccess<'de>>(self, map: A) -> Result<RawInterval, A::Error> {
                RawIntervalDist::deserialize(de::value::MapAccessDeserializer::new(map)).map(RawInterval::Dist)
            }
        }
        d.deserialize_any(V)
    }
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct RawIntervalDist {
    pub uniform: Option<Spanned<RawUniform>>,
    pub lognormal: Option<Spanned<RawLognormal>>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawUniform {
    pub min: Spanned<String>,
    pub max: Spanned<String>,
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum RawArrival {
    Poisson(RawPoisson),
    Bursts(RawBursts),
    Diurnal(RawDiurnal),
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct RawDiurnal {
    pub rate_per_hour: Spanned<Vec<f64>>,
    pub weekly: Option<Spanned<Vec<f64>>>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct RawBursts {
    pub size: Spanned<i64>,
    pub every: Spanned<String>,
    pub jitter: Option<Spanned<String>>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct RawPoisson {
    pub rate_per_hour: Spanned<f64>,
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum RawDuration {
    Lognormal(RawLognormal),
    Weibull(RawWeibull),
    Empirical(RawEmpirical),
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawEmpirical {
    pub trace: Spanned<String>,
    pub format: Spanned<String>,
    pub min: Option<Spanned<String>>,
    pub max: Option<Spanned<String>>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawWeibull {
    pub shape: Spanned<f64>,
    pub scale: Spanned<String>,
    pub min: Option<Spanned<String>>,
    pub max: Option<Spanned<String>>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawLognormal {
    pub median: Spanned<String>,
    pub sigma: Spanned<f64>,
    pub min: Option<Spanned<String>>,
    pub max: Option<Spanned<String>>,
}

/// An explicit job (lahar's compact form of a VolcanoJob).
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct RawJob {
    pub name: Spanned<String>,
    pub namespace: Option<String>,
    pub submit_at: Option<Spanned<String>>,
    pub queue: Option<Spanned<String>>,
    pub priority: Option<i32>,
    pub priority_class_name: Option<Spanned<String>>,
    pub min_available: Option<Spanned<i64>>,
    pub duration: Option<Spanned<String>>,
    /// The user's run-time estimate (a time limit), for baselines that use one.
    pub estimate: Option<Spanned<String>>,
    pub max_retry: Option<Spanned<i64>>,
    pub checkpoint_interval: Option<Spanned<String>>,
    pub scaling: Option<Spanned<String>>,
    pub resize_overhead: Option<Spanned<String>>,
    pub termination_grace_period: Option<Spanned<String>>,
    pub policies: Option<Vec<Spanned<RawPolicy>>>,
    pub network_topology: Option<Spanned<RawNetworkTopology>>,
    pub tasks: Vec<Spanned<RawTask>>,
    pub running: Option<Spanned<BTreeMap<String, Vec<String>>>>,
    pub model: Option<Spanned<RawModel>>,
    pub task_topology: Option<Spanned<RawTaskTopology>>,
}

/// `jobs[].taskTopology`: Volcano's `volcano.sh/task-topology-*` annotations.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct RawTaskTopology {
    pub affinity: Option<Vec<Vec<String>>>,
    pub anti_affinity: Option<Vec<Vec<String>>>,
    pub task_order: Option<Vec<String>>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct RawTask {
    pub name: Spanned<String>,
    pub replicas: Spanned<i64>,
    pub min_available: Option<Spanned<i64>>,
    pub resources: Option<Spanned<BTreeMap<String, Quantity>>>,
    pub priority: Option<i32>,
    pub depends_on: Option<Spanned<RawDependsOn>>,
    pub node_selector: Option<BTreeMap<String, String>>,
    pub host_ports: Option<Vec<Spanned<i64>>>,
    pub policies: Option<Vec<Spanned<RawPolicy>>>,
    pub preemptable: Option<bool>,
    pub partition_policy: Option<Spanned<RawPartitionPolicy>>,
    pub topology_policy: Option<Spanned<String>>,
    pub vnpu_mode: Option<Spanned<String>>,
    pub duration: Option<Spanned<String>>,
    /// The pods' container exits with a failure after running this long.
    pub fail_after: Option<Spanned<String>>,
    /// With `failAfter`: the exit code (1–255, default 1).
    pub exit_code: Option<Spanned<i64>>,
    /// The container's exit code when the kubelet stops it because its pod was
    /// deleted (0–255, default 143).
    pub stop_exit_code: Option<Spanned<i64>>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct RawPartitionPolicy {
    pub total_partitions: Spanned<i64>,
    pub partition_size: Spanned<i64>,
    pub min_partitions: Option<Spanned<i64>>,
    pub network_topology: Option<Spanned<RawNetworkTopology>>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawDependsOn {
    pub name: Vec<String>,
    pub iteration: Option<String>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawPolicy {
    pub event: Spanned<String>,
    pub action: Spanned<String>,
    pub timeout: Option<Spanned<String>>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct RawNetworkTopology {
    pub mode: Option<String>,
    pub highest_tier_allowed: Option<Spanned<i64>>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct RawOutput {
    pub dir: Option<String>,
    pub sample_interval: Option<Spanned<String>>,
}

/// `spec.queues`: inline queues, or a path to Volcano Queue manifests.
#[derive(Debug)]
pub enum RawQueues {
    List(Vec<Spanned<RawQueue>>),
    Path(String),
}

/// `spec.cluster.hyperNodes`: inline HyperNodes, or a path to HyperNode manifests.
#[derive(Debug)]
pub enum RawHyperNodes {
    List(Vec<Spanned<RawHyperNode>>),
    Path(String),
}

/// Reads a path (string) or an inline list.
macro_rules! list_or_path {
    ($ty:ident, $item:ty, $what:literal) => {
        impl<'de> Deserialize<'de> for $ty {
            fn deserialize<D: de::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
                struct V;
                impl<'de> Visitor<'de> for V {
                    type Value = $ty;
                    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                        f.write_str($what)
                    }
                    fn visit_str<E: de::Error>(self, v: &str) -> Result<$ty, E> {
                        Ok($ty::Path(v.to_string()))
                    }
                    fn visit_seq<A: de::SeqAccess<'de>>(self, seq: A) -> Result<$ty, A::Error> {
                        Vec::<$item>::deserialize(de::value::SeqAccessDeserializer::new(seq)).map($ty::List)
                    }
                }
                d.deserialize_any(V)
            }
        }
    };
}

list_or_path!(RawQueues, Spanned<RawQueue>, "a list of queues, or a path to Volcano Queue manifests");
list_or_path!(RawHyperNodes, Spanned<RawHyperNode>, "a list of HyperNodes, or a path to HyperNode manifests");

/// `- manifests: PATH_OR_GLOB` or a list of them.
#[derive(Debug)]
pub struct RawManifests(pub Vec<String>);

impl<'de> Deserialize<'de> for RawManifests {
    fn deserialize<D: de::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = RawManifests;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a path or glob of manifest files (e.g. jobs/*.yaml), or a list of them")
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<RawManifests, E> {
                Ok(RawManifests(vec![v.to_string()]))
            }
            fn visit_seq<A: de::SeqAccess<'de>>(self, seq: A) -> Result<RawManifests, A::Error> {
                Vec::<String>::deserialize(de::value::SeqAccessDeserializer::new(seq)).map(RawManifests)
            }
        }
        d.deserialize_any(V)
    }
}
