//! `deviceshare` (Volcano's `plugins/deviceshare`), GPU-number mode: with
//! `deviceshare.GPUNumberEnable: true` a pod asking for `volcano.sh/gpu-number: k`
//! (the resource Volcano's device plugin advertises with `--gpu-strategy=number`)
//! needs k GPUs of the node that no Allocated, Running or (in the session)
//! Pipelined pod holds — Volcano's `checkNodeGPUNumberPredicate` on its devices'
//! pods: `NodeInfo.AddTask` adds no device for a Releasing pod, so an evicted
//! pod's GPUs are free for the device check at once (the resource check still
//! counts them as releasing), and the allocate event charges a pipelined one.
//! Refusal: `GpuNumber no enough gpu number on node <name>`.
//! The number mode scores nothing (`GPUDevices.ScoreNode` is 0), so
//! `deviceshare.SchedulePolicy` and `deviceshare.ScheduleWeight` change nothing
//! there; `deviceshare.NodeLockEnable` takes no lock in that mode.
//!
//! GPU sharing by memory (`deviceshare.GPUSharingEnable: true`): a pod asking for
//! `volcano.sh/gpu-memory: m` (MiB) needs one card of the node with m MiB idle —
//! each card has the node's `volcano.sh/gpu-memory` over its
//! `volcano.sh/gpu-number`, and the Allocated, Running and (in the session)
//! Pipelined pods of the node hold memory on one card each (the world's
//! `MemoryCards`, the lowest fitting card taken when a pod is placed, as
//! Volcano's `Allocate` takes `predicateGPUbyMemory`'s first; an evicted pod's
//! memory is free at once). Refusal: `GpuShare no enough gpu memory on node
//! <name>`. The sharing mode scores nothing either.
//!
//! vGPU (`deviceshare.VGPUEnable: true`, HAMi-core): a node's cards come from
//! its `volcano.sh/node-vgpu-register` annotation (see [`lahar_core::devices::vgpu`]); a
//! pod whose containers name `volcano.sh/vgpu-number` or `volcano.sh/vgpu-memory`
//! in their limits needs cards that pass Volcano's card-by-card fit, tried in
//! `deviceshare.SchedulePolicy`'s order (`binpack`: most memory in use first;
//! `spread`: fewest sharers first; anything else: highest index first). A node
//! without cards passes (only the resource check stops such a pod). Refusal:
//! `hami-vgpuDeviceSharing error`, Volcano's fixed reason, with its resolvable
//! `Unschedulable` code. With `deviceshare.ScheduleWeight` > 0 a node scores
//! `⌊s + 0.5⌋ × weight`, s the fit's Σ over the cards taken of 100 × memory in
//! use after placing ÷ card memory under `binpack` (0 under the other policies,
//! as in Volcano, where spread's score is taken after the pod is counted).
//!
//! A node whose last card is registered in `mig` mode, with geometries for its
//! model in the device ConfigMap, is a MIG node: a container takes the smallest
//! instance of the card's geometry group that holds its memory, and the card
//! charges the instance's memory (see [`lahar_core::devices::vgpu::find_match`]); a pod's
//! `volcano.sh/vgpu-mode` must be its node's mode.
//!
//! Every refusal of this plugin is resolvable: preempt and reclaim keep the
//! node as a candidate, and preempt asks again after each eviction, as Volcano's
//! `preemptorFitsOnNode` does, until the pod's cards fit.
//!
//! `deviceshare.GPUExclusiveRules` (label sets): a pod matching rules keeps off
//! cards holding a pod (releasing ones included) that matches one of the same
//! rules.
//!
//! Ascend vNPU, HAMi mode (`deviceshare.AscendHAMiVNPUEnable: true`): a node's
//! chips come from its `hami.io/node-register-<commonWord>` annotations, one per
//! chip type of the device ConfigMap (see [`lahar_core::devices::vnpu`]); a pod whose
//! containers name a type's count or memory resource in their limits needs
//! chips of that type that pass Volcano's chip-by-chip fit, tried in
//! `deviceshare.SchedulePolicy`'s order (`binpack`: most memory in use first;
//! `spread`: unshared chips first). A node without chips of the type passes.
//! Refusal: `no ascend device available`, resolvable (`Unschedulable`) when
//! too few chips fit, not when a container asks several chips with part of
//! their memory (Volcano's `Error` code: preempt and reclaim leave the node
//! out). With `deviceshare.ScheduleWeight` > 0 a node scores `⌊s + 0.5⌋ ×
//! weight`, s the Σ over the types of [`lahar_core::devices::vnpu::node_score`]; the
//! chips a placed pod takes are chosen in the policy's order only then
//! (Volcano's `Allocate` reads the policy its score leaves on the node: without
//! a score, registration order).
//!
//! Ascend MindCluster vNPU (`deviceshare.AscendMindClusterVNPUEnable`) and
//! `deviceshare.NodeLockEnable` with the memory, vGPU or vNPU mode are refused
//! by the conf loader.

use super::super::args::{ArgSpec, ArgType, ArgValue, Args, problem};
use super::super::plugin::{Hooks, Plugin, PluginSpec};
use lahar_core::devices::GPU_MEMORY;
use lahar_core::devices::vgpu::{ExclusiveRules, Refusal, VgpuFit, VgpuPolicy};
use lahar_core::devices::vnpu::NpuPolicy;
use lahar_core::model::cluster::NodeId;
use lahar_core::model::job::PodId;
use lahar_core::session::Session;
use std::cell::OnceCell;
use vnpu::VnpuShare;

mod vnpu;

/// The resource of GPU-number mode.
pub use lahar_core::devices::GPU_NUMBER;

/// The plugin's entry in [`super::ALL`].
pub const SPEC: PluginSpec = PluginSpec::new("deviceshare", |pc| Box::new(DeviceShare::new(&pc.args)))
    .args(&[
        ArgSpec::new("deviceshare.GPUNumberEnable", ArgType::Bool, "false", "whole GPUs by volcano.sh/gpu-number"),
        ArgSpec::new("deviceshare.NodeLockEnable", ArgType::Bool, "false", "the device node lock"),
        ArgSpec::new("deviceshare.GPUSharingEnable", ArgType::Bool, "false", "GPU sharing by memory"),
        ArgSpec::new("deviceshare.VGPUEnable", ArgType::Bool, "false", "vGPU on HAMi-core and MIG cards"),
        ArgSpec::new(
            "deviceshare.AscendMindClusterVNPUEnable",
            ArgType::Bool,
            "false",
            "Ascend vNPU in MindCluster mode (true refused)",
        )
        .checked(check_mindcluster),
        ArgSpec::new("deviceshare.AscendHAMiVNPUEnable", ArgType::Bool, "false", "Ascend vNPU in HAMi mode"),
        ArgSpec::new("deviceshare.SchedulePolicy", ArgType::Str, "", "binpack or spread"),
        ArgSpec::new("deviceshare.KnownGeometriesCMName", ArgType::Str, "", "the device ConfigMap's name"),
        ArgSpec::new("deviceshare.KnownGeometriesCMNamespace", ArgType::Str, "", "the device ConfigMap's namespace"),
        ArgSpec::new("deviceshare.ScheduleWeight", ArgType::Int, "0", "the node score's weight"),
        ArgSpec::new(
            "deviceshare.GPUExclusiveRules",
            ArgType::List,
            "",
            "label maps of pods that take cards exclusively",
        )
        .checked(check_rules),
    ])
    .conflicts(argument_conflicts);

/// MindCluster vNPU on, which is not modelled.
fn check_mindcluster(_: &str, v: &ArgValue) -> Vec<(String, String)> {
    match v {
        ArgValue::Bool(true) => problem(
            "Ascend vNPU sharing in MindCluster mode (dynamic 310P templates with Ascend's own device info ConfigMaps) is not modelled; HAMi mode (deviceshare.AscendHAMiVNPUEnable) and the NVIDIA modes are",
        ),
        _ => Vec::new(),
    }
}

/// [`check_exclusive_rules`] as an argument check.
fn check_rules(_: &str, v: &ArgValue) -> Vec<(String, String)> {
    check_exclusive_rules(v).err().map(problem).unwrap_or_default()
}

/// The plugin.
#[derive(Debug)]
pub struct DeviceShare {
    number: bool,
    sharing: bool,
    /// vGPU mode.
    vgpu: bool,
    /// Ascend vNPU, HAMi mode.
    vnpu: Option<VnpuShare>,
    policy: VgpuPolicy,
    weight: i64,
    /// `deviceshare.GPUExclusiveRules`.
    rules: ExclusiveRules,
    /// The dimension of `volcano.sh/gpu-number`, if the run has it.
    dim: OnceCell<Option<usize>>,
    /// The dimension of `volcano.sh/gpu-memory`, if the run has it.
    memory_dim: OnceCell<Option<usize>>,
}

impl DeviceShare {
    /// Reads validated arguments.
    pub fn new(args: &Args) -> DeviceShare {
        DeviceShare {
            number: args.bool("deviceshare.GPUNumberEnable", false),
            sharing: args.bool("deviceshare.GPUSharingEnable", false),
            vgpu: args.bool("deviceshare.VGPUEnable", false),
            vnpu: args
                .bool("deviceshare.AscendHAMiVNPUEnable", false)
                .then(|| VnpuShare::new(NpuPolicy::parse(args.str("deviceshare.SchedulePolicy").unwrap_or("")))),
            policy: VgpuPolicy::parse(args.str("deviceshare.SchedulePolicy").unwrap_or("")),
            weight: args.int("deviceshare.ScheduleWeight", 0),
            rules: exclusive_rules(args),
            dim: OnceCell::new(),
            memory_dim: OnceCell::new(),
        }
    }

    fn dim(&self, ssn: &Session<'_>) -> Option<usize> {
        *self.dim.get_or_init(|| ssn.cluster().resource_names.dim(GPU_NUMBER))
    }

    fn memory_dim(&self, ssn: &Session<'_>) -> Option<usize> {
        *self.memory_dim.get_or_init(|| ssn.cluster().resource_names.dim(GPU_MEMORY))
    }

    /// The card order vGPU pods are placed in and the exclusive rules, when this
    /// conf models vGPU.
    pub fn vgpu_policy(args: &Args) -> Option<(VgpuPolicy, ExclusiveRules)> {
        args.bool("deviceshare.VGPUEnable", false)
            .then(|| (VgpuPolicy::parse(args.str("deviceshare.SchedulePolicy").unwrap_or("")), exclusive_rules(args)))
    }

    /// The chip order vNPU pods take chips in, when this conf models Ascend
    /// vNPU sharing: the policy when the plugin scores (Volcano's `Allocate`
    /// reads the policy `ScoreNode` leaves on the node), else none.
    pub fn vnpu_policy(args: &Args) -> Option<NpuPolicy> {
        args.bool("deviceshare.AscendHAMiVNPUEnable", false).then(|| {
            if args.int("deviceshare.ScheduleWeight", 0) > 0 {
                NpuPolicy::parse(args.str("deviceshare.SchedulePolicy").unwrap_or(""))
            } else {
                NpuPolicy::Other
            }
        })
    }

    fn asks_vnpu(ssn: &Session<'_>, pod: PodId) -> bool {
        VnpuShare::ask(ssn, pod).is_some()
    }

    /// The vGPU fit of a pod on a node: `None` when the pod asks no vGPU or the
    /// node has no cards.
    fn vgpu_fit(&self, ssn: &Session<'_>, pod: PodId, node: NodeId) -> Option<Result<VgpuFit, Refusal>> {
        let p = ssn.pod(pod);
        let ask = ssn.job(p.job).spec.tasks[p.task as usize].hints.as_ref()?.vgpu.as_deref()?;
        let n = ssn.node(node);
        if n.vgpu.is_empty() {
            return None;
        }
        let rules = if self.rules.is_empty() {
            0
        } else {
            let job = &ssn.job(p.job).spec;
            lahar_core::devices::vgpu::rule_mask(
                &self.rules,
                &job.pod_labels(p.task as usize, &ssn.queue(job.queue).spec.name),
            )
        };
        Some(lahar_core::devices::vgpu::fit_exclusive(
            &n.vgpu,
            &ssn.node_state(node).vgpu,
            ask,
            p.job,
            rules,
            self.policy,
        ))
    }

    fn asks_vgpu(ssn: &Session<'_>, pod: PodId) -> bool {
        let p = ssn.pod(pod);
        ssn.job(p.job).spec.tasks[p.task as usize].hints.as_ref().is_some_and(|h| h.vgpu.is_some())
    }

    /// Volcano's `checkNodeGPUSharingPredicate`: a card with the pod's memory idle.
    fn sharing_fits(&self, ssn: &Session<'_>, pod: PodId, node: NodeId) -> Option<Result<(), String>> {
        let d = self.memory_dim(ssn)?;
        let mib = ssn.pod(pod).req.get(d) / 1000;
        if mib <= 0 {
            return None;
        }
        Some(if ssn.node_state(node).gpu_memory.fitting(mib).next().is_some() {
            Ok(())
        } else {
            Err(format!("GpuShare no enough gpu memory on node {}", ssn.node(node).name))
        })
    }

    /// Volcano's `checkNodeGPUNumberPredicate`.
    fn number_fits(&self, ssn: &Session<'_>, pod: PodId, node: NodeId) -> Option<Result<(), String>> {
        let d = self.dim(ssn)?;
        let want = ssn.pod(pod).req.get(d);
        if want <= 0 {
            return None;
        }
        // Releasing pods hold no device in Volcano's view (`NodeInfo.AddTask` adds
        // none for them): their GPUs count as idle. Pods pipelined in this session
        // hold theirs (Volcano's allocate event charges a pipelined pod).
        let ns = ssn.node_state(node);
        let idle = ssn.node(node).allocatable.get(d) - ns.used.get(d) + ns.releasing.get(d) - ns.pipelined.get(d);
        Some(if want <= idle {
            Ok(())
        } else {
            Err(format!("GpuNumber no enough gpu number on node {}", ssn.node(node).name))
        })
    }
}

/// `deviceshare.GPUExclusiveRules` (checked by the conf loader): a list of label
/// maps.
fn exclusive_rules(args: &Args) -> ExclusiveRules {
    let Some(ArgValue::List(l)) = args.0.get("deviceshare.GPUExclusiveRules") else { return Vec::new() };
    l.iter()
        .filter_map(|r| match r {
            ArgValue::Map(m) => Some(
                m.iter()
                    .filter_map(|(k, v)| if let ArgValue::Str(s) = v { Some((k.clone(), s.clone())) } else { None })
                    .collect(),
            ),
            _ => None,
        })
        .collect()
}

/// Arguments that cannot go together: (argument, why). vGPU with either other
/// mode makes Volcano's scheduler exit; the node lock with the memory or vGPU
/// mode fails a second allocation on a node within the session, which lahar
/// does not model (the number mode takes no lock).
pub fn argument_conflicts(args: &Args) -> Vec<(&'static str, &'static str)> {
    let on = |k: &str| args.bool(k, false);
    let (vgpu, sharing, number) =
        (on("deviceshare.VGPUEnable"), on("deviceshare.GPUSharingEnable"), on("deviceshare.GPUNumberEnable"));
    let mut out = Vec::new();
    if vgpu && (sharing || number) {
        out.push((
            "deviceshare.VGPUEnable",
            "vGPU cannot be used together with GPUSharingEnable or GPUNumberEnable (Volcano's scheduler exits: \"gpu-share and vgpu can't be used together\")",
        ));
    }
    if on("deviceshare.NodeLockEnable") && (sharing || vgpu || on("deviceshare.AscendHAMiVNPUEnable")) {
        out.push((
            "deviceshare.NodeLockEnable",
            "the node lock fails a second GPU-memory, vGPU or vNPU allocation on a node until the first pod starts, which changes decisions, and lahar does not model it; leave it false",
        ));
    }
    out
}

/// What is wrong with a `deviceshare.GPUExclusiveRules` value, if anything:
/// each rule a map of labels to strings, not empty, at most 64 rules. Volcano
/// drops a label whose value is not a string (widening the rule) and an empty
/// rule; lahar refuses both.
pub fn check_exclusive_rules(v: &ArgValue) -> Result<(), String> {
    let ArgValue::List(l) = v else { return Err("expected a list of label maps".into()) };
    if l.len() > lahar_core::devices::vgpu::MAX_EXCLUSIVE_RULES {
        return Err(format!("at most {} rules, got {}", lahar_core::devices::vgpu::MAX_EXCLUSIVE_RULES, l.len()));
    }
    for (i, r) in l.iter().enumerate() {
        let ArgValue::Map(m) = r else { return Err(format!("rule {i}: expected a map of labels, got {}", r.kind())) };
        if m.is_empty() {
            return Err(format!("rule {i} is empty (it would match every pod; Volcano drops it)"));
        }
        if let Some((k, v)) = m.iter().find(|(_, v)| !matches!(v, ArgValue::Str(_))) {
            return Err(format!(
                "rule {i}: label `{k}` has {}; expected a string (quote it: Volcano drops the label, which widens the rule)",
                v.kind()
            ));
        }
    }
    Ok(())
}

impl Plugin for DeviceShare {
    fn name(&self) -> &'static str {
        "deviceshare"
    }
    fn hooks(&self) -> Hooks {
        Hooks::RESOLVABLE
            .and(Hooks::when(self.number || self.sharing || self.vgpu || self.vnpu.is_some(), Hooks::PREDICATE))
            .and(Hooks::when(
                self.weight > 0 && ((self.vgpu && self.policy == VgpuPolicy::Binpack) || self.vnpu.is_some()),
                Hooks::NODE_SCORE,
            ))
    }
    fn predicate(&self, ssn: &Session<'_>, pod: PodId, node: NodeId) -> Option<Result<(), String>> {
        if !self.hooks().has(Hooks::PREDICATE) {
            return None;
        }
        // Sharing first, then number, as Volcano's FilterNode checks them.
        if let Some(Err(e)) = self.sharing.then(|| self.sharing_fits(ssn, pod, node)).flatten() {
            return Some(Err(e));
        }
        if let Some(Err(e)) = self.number.then(|| self.number_fits(ssn, pod, node)).flatten() {
            return Some(Err(e));
        }
        if let Some(Err(_)) = self.vgpu.then(|| self.vgpu_fit(ssn, pod, node)).flatten() {
            return Some(Err("hami-vgpuDeviceSharing error".into()));
        }
        if let Some(v) = &self.vnpu
            && v.verdict(ssn, pod, node).is_some_and(|v| v.refusal.is_some())
        {
            return Some(Err("no ascend device available".into()));
        }
        Some(Ok(()))
    }
    fn predicate_unresolvable(&self, ssn: &Session<'_>, pod: PodId, node: NodeId) -> Option<Result<(), String>> {
        match self.vnpu.as_ref().and_then(|v| v.verdict(ssn, pod, node)).and_then(|v| v.refusal) {
            Some(r) if !r.resolvable() => Some(Err("no ascend device available".into())),
            _ => None,
        }
    }
    fn unresolvable_passes_everywhere(&self, ssn: &Session<'_>, pod: PodId) -> bool {
        !(self.vnpu.is_some() && Self::asks_vnpu(ssn, pod))
    }
    fn predicate_passes_everywhere(&self, ssn: &Session<'_>, pod: PodId) -> bool {
        let asks = |d: Option<usize>| d.is_some_and(|d| ssn.pod(pod).req.get(d) > 0);
        !((self.number && asks(self.dim(ssn)))
            || (self.sharing && asks(self.memory_dim(ssn)))
            || (self.vgpu && Self::asks_vgpu(ssn, pod))
            || (self.vnpu.is_some() && Self::asks_vnpu(ssn, pod)))
    }
    fn score_by_node(&self, ssn: &Session<'_>, pod: PodId) -> bool {
        // The score reads the node's cards (a change of them counts as a change
        // of the node for the score caches: `World::move_vgpu`) and the pod's
        // ask. A one-container ask
        // without card filters, spread or exclusive rules is a function of the
        // pod's request (Kubernetes requires an extended resource's request to
        // equal its limit), so such a pod's score may be reused; any other is
        // computed afresh.
        // A vNPU ask is not in the pod's request: its score is computed afresh.
        if Self::asks_vnpu(ssn, pod) {
            return false;
        }
        let p = ssn.pod(pod);
        let Some(ask) = ssn.job(p.job).spec.tasks[p.task as usize].hints.as_ref().and_then(|h| h.vgpu.as_deref())
        else {
            return true;
        };
        self.rules.is_empty()
            && ask.containers.len() == 1
            && ask.containers[0].nums >= 1
            && ask.mode.is_none()
            && !ask.spread
            && ask.use_types.is_none()
            && ask.nouse_types.is_none()
            && ask.use_uuids.is_empty()
            && ask.nouse_uuids.is_empty()
    }
    fn node_score(&self, ssn: &Session<'_>, pod: PodId, node: NodeId) -> Option<f64> {
        if !self.hooks().has(Hooks::NODE_SCORE) {
            return None;
        }
        // Volcano sums the scores of every device type the pod asks for.
        let vnpu = self.vnpu.as_ref().and_then(|v| v.verdict(ssn, pod, node)).map(|v| v.score);
        let vgpu = (self.vgpu && self.policy == VgpuPolicy::Binpack)
            .then(|| self.vgpu_fit(ssn, pod, node))
            .flatten()
            .map(|f| f.map_or(0.0, |f| f.score));
        if vnpu.is_none() && vgpu.is_none() {
            return None;
        }
        let s = vnpu.unwrap_or(0.0) + vgpu.unwrap_or(0.0);
        Some((s + 0.5).floor() * self.weight as f64)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `TestArguments` (`pkg/scheduler/plugins/deviceshare/deviceshare_test.go`):
    /// `VGPUEnable: true, SchedulePolicy: binpack, ScheduleWeight: 10` read as
    /// vGPU mode with weight 10 and the binpack card order.
    #[test]
    fn test_arguments() {
        let args = Args(
            [
                ("deviceshare.VGPUEnable", ArgValue::Bool(true)),
                ("deviceshare.SchedulePolicy", ArgValue::Str("binpack".into())),
                ("deviceshare.ScheduleWeight", ArgValue::Int(10)),
            ]
            .into_iter()
            .map(|(k, v)| (k.to_string(), v))
            .collect(),
        );
        let d = DeviceShare::new(&args);
        assert_eq!((d.vgpu, d.weight, d.policy), (true, 10, VgpuPolicy::Binpack));
        assert!(d.hooks().has(Hooks::NODE_SCORE));
        assert_eq!(DeviceShare::vgpu_policy(&args), Some((VgpuPolicy::Binpack, Vec::new())));
        assert_eq!(DeviceShare::vgpu_policy(&Args(Default::default())), None);
    }
}
