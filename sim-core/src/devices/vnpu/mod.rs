//! Volcano's Ascend vNPU sharing in HAMi mode (`deviceshare.AscendHAMiVNPUEnable`):
//! the chips of one Ascend type as Project-HAMi's `ascend-device-plugin`
//! registers them, the device ConfigMap's templates that round a memory ask up,
//! and the chip-by-chip fit Volcano runs (`selectDevices` and `fit` in
//! `pkg/scheduler/api/devices/ascend/hami/device_info.go`).
//!
//! A chip may be shared by up to `count` pods, has `devmem` MiB and `devcore`
//! AI cores (100, a percentage, on a node in hami-core mode). A container asks
//! for `nums` chips with `memory` MiB and `cores` on each. Outside hami-core mode
//! the memory is rounded up to the smallest template that holds it, or to the
//! whole chip ([`ChipType::trim_memory`]).
//!
//! Where Volcano's order depends on Go's map iteration (the chips before their
//! sort by score, the ring groups of equal size), lahar takes the chips in their
//! registration order and equal rings by ascending id: see docs/volcano.md.

mod ledger;
#[cfg(test)]
mod tests;

pub use ledger::*;

/// A vNPU template of the device ConfigMap (`vnpus[].templates[]`): a slice of a
/// chip's memory.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Template {
    /// Its name (`vir01`...).
    pub name: String,
    /// MiB.
    pub memory: i64,
}

/// One Ascend chip type of the device ConfigMap (`vnpus[]`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ChipType {
    /// `commonWord` (`Ascend310P`, `Ascend910B3`...): the device's name in
    /// Volcano and in the node's `hami.io/node-register-<commonWord>` annotation.
    pub common_word: String,
    /// `resourceName` (`huawei.com/Ascend310P`): the count of chips a container
    /// asks for.
    pub resource_name: String,
    /// `resourceMemoryName` (`huawei.com/Ascend310P-memory`): MiB per chip.
    pub resource_memory_name: String,
    /// `memoryAllocatable`: MiB a whole chip gives.
    pub memory_allocatable: i64,
    /// `memoryCapacity`: the largest ask a whole chip takes.
    pub memory_capacity: i64,
    /// `templates`, by memory ascending (Volcano sorts them at start).
    pub templates: Vec<Template>,
}

impl ChipType {
    /// The core resource: always `<resourceName>-core` (Volcano does not read the
    /// ConfigMap's `resourceCoreName`).
    pub fn resource_core_name(&self) -> String {
        format!("{}-core", self.resource_name)
    }

    /// `trimMemory`: an ask of `m` MiB rounded up to the smallest template that
    /// holds it (with its name), else to the whole chip when it is at most
    /// `memoryCapacity`, else 0 — Volcano's quirk: such a pod then needs no
    /// memory at all.
    pub fn trim_memory(&self, m: i64) -> (i64, Option<&str>) {
        match self.templates.iter().find(|t| m <= t.memory) {
            Some(t) => (t.memory, Some(t.name.as_str())),
            None if m <= self.memory_capacity => (self.memory_allocatable, None),
            None => (0, None),
        }
    }
}

/// The device ConfigMap's `vnpus` section: the chip types and the cluster's
/// default hami-core mode (a node's `hami-vnpu-core` annotation overrides it).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct VnpuConfig {
    /// `hamiVnpuCore` (the legacy list form has none: false).
    pub hami_core: bool,
    /// `configs`, their templates sorted by memory.
    pub types: Vec<ChipType>,
}

impl Default for VnpuConfig {
    /// Volcano's defaults when the ConfigMap is missing (`config.go`): one Ascend
    /// 310P type, 21527 of 24576 MiB, templates vir01/vir02/vir04.
    fn default() -> Self {
        let t = |name: &str, memory| Template { name: name.into(), memory };
        VnpuConfig {
            hami_core: false,
            types: vec![ChipType {
                common_word: "Ascend310P".into(),
                resource_name: "huawei.com/Ascend310P".into(),
                resource_memory_name: "huawei.com/Ascend310P-memory".into(),
                memory_allocatable: 21527,
                memory_capacity: 24576,
                templates: vec![t("vir01", 3072), t("vir02", 6144), t("vir04", 12288)],
            }],
        }
    }
}

/// A chip of a node (one entry of `hami.io/node-register-<commonWord>`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Chip {
    /// `id`: the chip's UUID.
    pub id: String,
    /// `count`: how many pods may share it.
    pub count: u32,
    /// `devmem`: MiB.
    pub devmem: i64,
    /// `devcore`: AI cores (100 on a hami-core node).
    pub devcore: i64,
    /// `custominfo.NetworkID`: the HCCS ring of a 910 chip.
    pub network_id: Option<i64>,
    /// The node's `hami-vnpu-core` mode (its annotation, else the ConfigMap's
    /// `hamiVnpuCore`).
    pub hami_core: bool,
}

/// What a chip's sharers hold (`DeviceUsage`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ChipUse {
    /// Sharers (`Used`).
    pub used: u32,
    /// MiB held (`Usedmem`).
    pub memory: i64,
    /// Cores held (`Usedcores`).
    pub cores: i64,
}

/// One container's ask of one chip type (`ContainerDeviceRequest`), memory
/// already trimmed ([`ask`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Ask {
    /// Chips (`Nums`).
    pub nums: i64,
    /// MiB on each (`Memreq`).
    pub memory: i64,
    /// Cores on each (`Coresreq`).
    pub cores: i64,
}

/// A container's ask as the pod writes it (its limits, else requests, for the
/// memory and cores): `count` chips when the count resource is given, else one
/// chip when only the memory resource is.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Written {
    /// The count resource's value, if given.
    pub count: Option<i64>,
    /// The memory resource's value (MiB), if given.
    pub memory: Option<i64>,
    /// The core resource's value, if given.
    pub cores: Option<i64>,
}

/// The chip order (`deviceshare.SchedulePolicy`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum NpuPolicy {
    /// Most memory in use first.
    Binpack,
    /// Unshared chips first.
    Spread,
    /// Anything else: every chip scores 0, registration order.
    #[default]
    Other,
}

impl NpuPolicy {
    /// The policy a `deviceshare.SchedulePolicy` value names (case-sensitive).
    pub fn parse(s: &str) -> NpuPolicy {
        match s {
            "binpack" => NpuPolicy::Binpack,
            "spread" => NpuPolicy::Spread,
            _ => NpuPolicy::Other,
        }
    }
}

/// `CalScore`: binpack 100 × the memory in use over the chip's; spread 100 for a
/// chip nobody shares; 0 otherwise, and for a chip without memory.
pub fn chip_score(policy: NpuPolicy, u: &ChipUse, chip: &Chip) -> f64 {
    if chip.devmem == 0 {
        return 0.0;
    }
    match policy {
        NpuPolicy::Binpack => 100.0 * (u.memory as f64 / chip.devmem as f64),
        NpuPolicy::Spread if u.used == 0 => 100.0,
        _ => 0.0,
    }
}

/// `ResourceReqs`: a written ask as Volcano reads it against `ty`, whose first
/// chip (in the score order) has `devmem` MiB. No memory means the whole chip's
/// memory; outside hami-core mode the memory is then trimmed.
pub fn ask(w: &Written, ty: &ChipType, devmem: i64, hami_core_pod: bool) -> Option<Ask> {
    let nums = match (w.count, w.memory) {
        (Some(n), _) => n,
        (None, Some(_)) => 1,
        (None, None) => return None,
    };
    let mut memory = w.memory.unwrap_or(0);
    if memory == 0 {
        memory = devmem;
    }
    if memory > 0 && !hami_core_pod {
        memory = ty.trim_memory(memory).0;
    }
    Some(Ask { nums, memory, cores: w.cores.unwrap_or(0) })
}

/// `verifyReq`: outside hami-core mode, a container asking for several chips
/// takes whole chips.
pub fn verify(a: &Ask, ty: &ChipType) -> Result<(), Refusal> {
    if a.nums > 1 && ty.trim_memory(a.memory).0 != ty.memory_allocatable {
        return Err(Refusal::PartialMemory);
    }
    Ok(())
}

/// `fit`: whether `chip`, with `u` in use, can take one more container's ask.
pub fn fits(a: &Ask, chip: &Chip, u: &ChipUse, hami_core_pod: bool) -> bool {
    if hami_core_pod && !chip.hami_core {
        return false;
    }
    if i64::from(chip.count) <= i64::from(u.used) || chip.devmem - u.memory < a.memory {
        return false;
    }
    let total = if hami_core_pod { 100 } else { chip.devcore };
    if total - u.cores < a.cores {
        return false;
    }
    if total == 100 && a.cores == 100 && u.used > 0 {
        return false;
    }
    !(total != 0 && u.cores == total && a.cores == 0)
}

/// Why a pod's chips could not be chosen (`FilterNode`'s codes).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Refusal {
    /// Not enough chips fit: `Unschedulable` (2), which preemption may resolve.
    Capacity,
    /// Several chips with part of their memory: `Error` (1), never resolvable.
    PartialMemory,
}

impl Refusal {
    /// Volcano's error text.
    pub fn message(self) -> &'static str {
        match self {
            Refusal::Capacity => "no enough ascend device available",
            Refusal::PartialMemory => {
                "vNPU does not support partial memory allocation when requesting multiple devices"
            }
        }
    }

    /// Whether preempt and reclaim keep the node as a candidate.
    pub fn resolvable(self) -> bool {
        self == Refusal::Capacity
    }
}

/// The order Volcano tries a node's chips in under `policy` (`selectDevices`'
/// sort by [`chip_score`], highest first; ties in registration order, where
/// Volcano's are in Go's map order).
pub(crate) fn order(policy: NpuPolicy, chips: &[Chip], uses: &[ChipUse]) -> Vec<usize> {
    let mut order: Vec<usize> = (0..chips.len()).collect();
    let scores: Vec<f64> = chips.iter().zip(uses).map(|(c, u)| chip_score(policy, u, c)).collect();
    order.sort_by(|&a, &b| scores[b].total_cmp(&scores[a]));
    order
}

/// `selectDevices`: for each container's ask in order, the chips it takes
/// (indices into `chips`), a chip at most once per pod. The chips are tried by
/// their [`chip_score`] under `policy`, highest first (ties in registration
/// order); on a 910 type whose every chip has a ring, a container takes its chips
/// from the largest ring groups first ([`by_ring`]).
pub fn select(
    policy: NpuPolicy,
    ty: &ChipType,
    chips: &[Chip],
    uses: &[ChipUse],
    asks: &[Ask],
    hami_core_pod: bool,
) -> Result<Vec<Vec<usize>>, Refusal> {
    select_in(&order(policy, chips, uses), ty, chips, uses, asks, hami_core_pod)
}

/// [`select`] with the chips' order given.
fn select_in(
    order: &[usize],
    ty: &ChipType,
    chips: &[Chip],
    uses: &[ChipUse],
    asks: &[Ask],
    hami_core_pod: bool,
) -> Result<Vec<Vec<usize>>, Refusal> {
    let rings = ty.common_word.starts_with("Ascend910") && chips.iter().all(|c| c.network_id.is_some());
    let mut taken: Vec<bool> = vec![false; chips.len()];
    let mut out = Vec::with_capacity(asks.len());
    for a in asks {
        if !hami_core_pod {
            verify(a, ty)?;
        }
        let mut chosen = Vec::new();
        let mut left = a.nums;
        for &c in order.iter().filter(|&&c| !taken[c]) {
            if !fits(a, &chips[c], &uses[c], hami_core_pod) {
                continue;
            }
            chosen.push(c);
            left -= 1;
            if left <= 0 && !rings {
                break;
            }
        }
        if left > 0 {
            return Err(Refusal::Capacity);
        }
        if rings {
            chosen = by_ring(a.nums, &chosen, chips);
        }
        for &c in &chosen {
            taken[c] = true;
        }
        out.push(chosen);
    }
    Ok(out)
}

/// `selectDevicesWithTopology`: the fitting chips grouped by ring, the larger
/// groups first (equal sizes by ascending ring id), each group in the order the
/// chips were found; the first `nums` of that sequence (every chip when `nums`
/// is not positive, as in Volcano).
pub fn by_ring(nums: i64, fitting: &[usize], chips: &[Chip]) -> Vec<usize> {
    let mut groups: Vec<(i64, Vec<usize>)> = Vec::new();
    for &c in fitting {
        let id = chips[c].network_id.unwrap_or_default();
        match groups.iter_mut().find(|g| g.0 == id) {
            Some(g) => g.1.push(c),
            None => groups.push((id, vec![c])),
        }
    }
    groups.sort_by(|a, b| b.1.len().cmp(&a.1.len()).then(a.0.cmp(&b.0)));
    let all = groups.into_iter().flat_map(|g| g.1);
    match usize::try_from(nums) {
        Ok(n) if n > 0 => all.take(n).collect(),
        _ => all.collect(),
    }
}

/// The node score (`ScoreNode`, summed by deviceshare): Σ over the containers
/// of [`chip_score`] of the first chip each takes, with the use before the pod;
/// on a 910 type with rings, plus 10 × the share of those chips in the most
/// common ring.
pub fn node_score(policy: NpuPolicy, ty: &ChipType, chips: &[Chip], uses: &[ChipUse], taken: &[Vec<usize>]) -> f64 {
    let firsts: Vec<usize> = taken.iter().filter_map(|c| c.first().copied()).collect();
    let mut score: f64 = firsts.iter().map(|&c| chip_score(policy, &uses[c], &chips[c])).sum();
    if ty.common_word.starts_with("Ascend910")
        && firsts.iter().all(|&c| chips[c].network_id.is_some())
        && !firsts.is_empty()
    {
        let mut counts: Vec<(i64, usize)> = Vec::new();
        for &c in &firsts {
            let id = chips[c].network_id.unwrap_or_default();
            match counts.iter_mut().find(|x| x.0 == id) {
                Some(x) => x.1 += 1,
                None => counts.push((id, 1)),
            }
        }
        let max = counts.iter().map(|x| x.1).max().unwrap_or(0);
        score += max as f64 / firsts.len() as f64 * 10.0;
    }
    score
}

/// The HCCS ring the device plugin gives chip `index` of type `common_word`
/// (`custominfo.NetworkID`): for 910 types, 0 for chips 0-3 and 1 from chip 4,
/// always 0 for the 910C; none for other types.
pub fn ring_of(common_word: &str, index: u32) -> Option<i64> {
    match common_word {
        "Ascend910C" => Some(0),
        w if w.starts_with("Ascend910") => Some(if index >= 4 { 1 } else { 0 }),
        _ => None,
    }
}

/// The annotation a node registers its chips of type `common_word` in.
pub fn register_annotation(common_word: &str) -> String {
    format!("hami.io/node-register-{common_word}")
}

/// The node annotation that sets its hami-core mode (`"true"`; anything else: off).
pub const NODE_HAMI_CORE: &str = "hami-vnpu-core";
