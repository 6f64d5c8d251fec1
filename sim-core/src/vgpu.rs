//! Volcano's vGPU device sharing (`deviceshare.VGPUEnable`, HAMi-core mode): a
//! node's physical cards as the `volcano-vgpu-device-plugin` registers them, what
//! a pod asks of them, and the fit Volcano runs card by card
//! (`checkNodeGPUSharingPredicateAndScore` in
//! `pkg/scheduler/api/devices/nvidia/vgpu/utils.go`).
//!
//! Each card may be shared by up to `number` pods, has `memory` MiB and 100
//! percent of compute ("cores"). A pod asks, per container, for `nums` cards with
//! `memory` MiB and `cores` percent on each. The fit walks the cards in the
//! schedule policy's order and takes the first `nums` that pass every check; the
//! world keeps what each pod took ([`CardUse`]) while the pod holds its node.

use crate::job::{JobId, PodId};

/// Cards per container (`volcano.sh/vgpu-number`).
pub const VGPU_NUMBER: &str = "volcano.sh/vgpu-number";
/// MiB per card (`volcano.sh/vgpu-memory`).
pub const VGPU_MEMORY: &str = "volcano.sh/vgpu-memory";
/// Percent of each card's compute (`volcano.sh/vgpu-cores`).
pub const VGPU_CORES: &str = "volcano.sh/vgpu-cores";
/// The node annotation listing its cards.
pub const VGPU_REGISTER: &str = "volcano.sh/node-vgpu-register";

/// One physical card, as the device plugin registers it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct VgpuCard {
    /// UUID (`GPU-…`).
    pub uuid: String,
    /// Most pods (containers) sharing it: the plugin's `deviceSplitCount`.
    pub number: u32,
    /// MiB.
    pub memory: i64,
    /// Type, `NVIDIA-<model>`.
    pub kind: String,
}

/// Reads the `volcano.sh/node-vgpu-register` annotation: one
/// `UUID,Number,MemoryMiB,Type,Health,Mode` record per card, each ended by `:`
/// (Volcano's `decodeNodeDevices`). Volcano takes a malformed annotation, or an
/// unparsable number in it, as a node without cards (or as 0); lahar refuses it
/// with the record at fault. `mig` records are refused: MIG geometries come from
/// a device ConfigMap lahar does not read.
pub fn decode_register(text: &str) -> Result<Vec<VgpuCard>, String> {
    if !text.contains(':') {
        return Err("expected records `UUID,Number,MemoryMiB,Type,Health,Mode:`, each ended by `:`".into());
    }
    let mut cards = Vec::new();
    for (i, rec) in text.split(':').enumerate() {
        if rec.is_empty() {
            continue;
        }
        let f: Vec<&str> = rec.split(',').collect();
        let at = || format!("record {} (`{rec}`)", i + 1);
        if f.len() < 6 {
            return Err(format!(
                "{}: expected 6 fields `UUID,Number,MemoryMiB,Type,Health,Mode`, got {}",
                at(),
                f.len()
            ));
        }
        let number: u32 = f[1].parse().map_err(|_| format!("{}: Number `{}` is not a count", at(), f[1]))?;
        let memory: i64 = f[2].parse().map_err(|_| format!("{}: MemoryMiB `{}` is not a count", at(), f[2]))?;
        if memory < 0 {
            return Err(format!("{}: MemoryMiB `{}` is negative", at(), f[2]));
        }
        // Go's `strconv.ParseBool`; Volcano never reads the value.
        if !matches!(f[4], "1" | "t" | "T" | "TRUE" | "true" | "True" | "0" | "f" | "F" | "FALSE" | "false" | "False") {
            return Err(format!("{}: Health `{}` is not a boolean", at(), f[4]));
        }
        if f[5] == "mig" {
            return Err(format!(
                "{}: MIG cards are not modelled (their geometries come from the device plugin's ConfigMap); \
                 lahar models HAMi-core sharing",
                at()
            ));
        }
        cards.push(VgpuCard { uuid: f[0].to_string(), number, memory, kind: f[3].to_string() });
    }
    if cards.is_empty() {
        return Err("no card records".into());
    }
    Ok(cards)
}

/// What one container asks of the cards (Volcano's `ContainerDeviceRequest`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ContainerAsk {
    /// Cards (`vgpu-number`; 1 when only memory is given).
    pub nums: u32,
    /// MiB on each card (`vgpu-memory`; 0 when not given).
    pub memory: i64,
    /// Percent of each card's memory; [`PERCENT_UNSET`] when the MiB count rules.
    /// A container asking neither takes all of each card's memory (100).
    pub percent: i64,
    /// Percent of each card's compute (`vgpu-cores`; 0 when not given).
    pub cores: i64,
}

/// [`ContainerAsk::percent`] when no percentage applies.
pub const PERCENT_UNSET: i64 = 101;

impl ContainerAsk {
    /// The ask of a container with these limits (`None`: not given), as Volcano's
    /// `ExtractResourceRequest` reads it with no memory-percentage resource
    /// configured (its default): `None` for a container that names neither the
    /// count nor the memory.
    pub fn of(nums: Option<i64>, memory: Option<i64>, cores: Option<i64>) -> Option<ContainerAsk> {
        if nums.is_none() && memory.is_none() {
            return None;
        }
        let memory = memory.unwrap_or(0);
        Some(ContainerAsk {
            nums: nums.map_or(1, |n| n.clamp(0, i64::from(u32::MAX)) as u32),
            memory,
            percent: if memory == 0 { 100 } else { PERCENT_UNSET },
            cores: cores.unwrap_or(0),
        })
    }

    /// MiB it takes on a card of `memory` MiB.
    pub fn memory_on(&self, memory: i64) -> i64 {
        if self.percent != PERCENT_UNSET { (memory as f64 * self.percent as f64 / 100.0) as i64 } else { self.memory }
    }
}

/// What a pod asks of vGPU cards: its containers' asks (in container order) and
/// the annotations that choose cards.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct VgpuAsk {
    /// One per container that asks.
    pub containers: Vec<ContainerAsk>,
    /// `volcano.sh/vgpu-mode`: the node's mode must be this.
    pub mode: Option<String>,
    /// `nvidia.com/use-gputype`, as written.
    pub use_types: Option<String>,
    /// `nvidia.com/nouse-gputype`, as written (read only without `use_types`).
    pub nouse_types: Option<String>,
    /// `volcano.sh/vgpu-use-gpuuuid`, parsed.
    pub use_uuids: Vec<String>,
    /// `volcano.sh/vgpu-nouse-gpuuuid`, parsed.
    pub nouse_uuids: Vec<String>,
    /// `volcano.sh/vgpu-podgroup-policy: spread`: no card holding a pod of its own
    /// PodGroup.
    pub spread: bool,
    /// The UUID annotations as written, for the refusal's message.
    pub uuid_text: (String, String),
}

/// A comma list of UUIDs, trimmed, empties dropped (`parseGPUUUIDList`).
pub fn uuid_list(text: &str) -> Vec<String> {
    text.split(',').map(str::trim).filter(|s| !s.is_empty()).map(String::from).collect()
}

impl VgpuAsk {
    fn uuid_filter_on(&self) -> bool {
        !self.use_uuids.is_empty() || !self.nouse_uuids.is_empty()
    }
    /// `gpuUUIDFilter.matches`.
    pub fn uuid_matches(&self, id: &str) -> bool {
        if id.is_empty() && self.uuid_filter_on() {
            return false;
        }
        (self.use_uuids.is_empty() || self.use_uuids.iter().any(|u| u == id))
            && !self.nouse_uuids.iter().any(|u| u == id)
    }
    /// `checkGPUtype`: the use list if given, else the no-use list (case-blind
    /// substrings of the card's type).
    pub fn type_matches(&self, kind: &str) -> bool {
        let up = kind.to_uppercase();
        let any = |list: &str| list.split(',').any(|v| up.contains(&v.to_uppercase()));
        match (&self.use_types, &self.nouse_types) {
            (Some(u), _) => any(u),
            (None, Some(n)) => !any(n),
            (None, None) => true,
        }
    }
}

/// The order cards are tried in (`deviceshare.SchedulePolicy`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum VgpuPolicy {
    /// Most memory in use first; scores the memory in use after placing.
    Binpack,
    /// Fewest sharers first; scores 0 (see [`card_score`]).
    Spread,
    /// Any other value, `""` included: highest card index first; scores 0.
    #[default]
    IndexDescending,
}

impl VgpuPolicy {
    /// The policy a `deviceshare.SchedulePolicy` value names (case-sensitive, as
    /// in Volcano: `Binpack` is the index order).
    pub fn parse(s: &str) -> VgpuPolicy {
        match s {
            "binpack" => VgpuPolicy::Binpack,
            "spread" => VgpuPolicy::Spread,
            _ => VgpuPolicy::IndexDescending,
        }
    }
}

/// A pod's share of one card.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Holder {
    /// The pod.
    pub pod: PodId,
    /// Its job (its PodGroup).
    pub group: JobId,
    /// Containers of the pod on the card.
    pub count: u32,
    /// MiB it holds.
    pub memory: i64,
    /// Percent of compute it holds.
    pub cores: i64,
}

/// What a card's sharers hold.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct CardUse {
    /// Sharers (`UsedNum`).
    pub num: u32,
    /// MiB in use (`UsedMem`).
    pub memory: i64,
    /// Percent of compute in use (`UsedCore`).
    pub cores: i64,
    /// Who holds it (`PodMap`), in the order they came.
    pub holders: Vec<Holder>,
}

/// Where a pod's containers go: (card, MiB, cores) for each card each container
/// takes, containers in order.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct VgpuFit {
    /// (card index, MiB, cores).
    pub takes: Vec<(u8, i64, i64)>,
    /// Σ of [`card_score`] over the cards taken.
    pub score: f64,
}

/// A card's score once a pod is on it (`GPUScore`): binpack 100 × its memory in
/// use over its memory; spread 100 only for a card without sharers, which a card
/// just taken never is, so always 0; any other policy 0.
pub fn card_score(policy: VgpuPolicy, card: &VgpuCard, num: u32, memory: i64) -> f64 {
    match policy {
        VgpuPolicy::Binpack => 100.0 * (memory as f64 / card.memory as f64),
        VgpuPolicy::Spread if num == 0 => 100.0,
        _ => 0.0,
    }
}

/// The card order of `policy` over usage `u` (`sortedDeviceIndicesByPolicy`).
pub fn card_order(policy: VgpuPolicy, u: &[(u32, i64, i64)]) -> Vec<usize> {
    let mut idx: Vec<usize> = (0..u.len()).collect();
    match policy {
        VgpuPolicy::Binpack => idx.sort_by(|&a, &b| u[b].1.cmp(&u[a].1).then(a.cmp(&b))),
        VgpuPolicy::Spread => idx.sort_by(|&a, &b| u[a].0.cmp(&u[b].0).then(a.cmp(&b))),
        VgpuPolicy::IndexDescending => idx.reverse(),
    }
    idx
}

/// Volcano's node mode (lahar models HAMi-core nodes only).
pub const HAMI_CORE: &str = "hami-core";

/// Fits `ask` on a node's `cards` in use as `uses`, for a pod of `group`: the
/// cards each container takes, or why none fit (the messages Volcano logs).
/// Containers are placed in order, each on distinct cards, each seeing what the
/// containers before it took.
pub fn fit(
    cards: &[VgpuCard],
    uses: &[CardUse],
    ask: &VgpuAsk,
    group: JobId,
    policy: VgpuPolicy,
    node: &str,
) -> Result<VgpuFit, String> {
    if let Some(m) = ask.mode.as_deref().filter(|&m| m != HAMI_CORE) {
        return Err(format!("pod required sharing mode {m} is not the same as the node mode {HAMI_CORE}"));
    }
    let mut u: Vec<(u32, i64, i64)> = uses.iter().map(|c| (c.num, c.memory, c.cores)).collect();
    let mut out = VgpuFit::default();
    for c in &ask.containers {
        if c.nums as usize > cards.len() {
            return Err(format!("no enough gpu cards on node {node}"));
        }
        let mut nums = c.nums;
        let mut uuid_matched = false;
        for i in card_order(policy, &u) {
            let card = &cards[i];
            if !ask.uuid_matches(&card.uuid) {
                continue;
            }
            uuid_matched = true;
            let (num, mem, cores) = u[i];
            if card.number <= num {
                continue;
            }
            if ask.spread && uses[i].holders.iter().any(|h| h.group == group && (h.memory > 0 || h.cores > 0)) {
                continue;
            }
            let want = c.memory_on(card.memory);
            if card.memory - mem < want
                || cores + c.cores > 100
                || (c.cores == 100 && num > 0)
                || (cores == 100 && c.cores == 0)
                || !card.kind.contains("NVIDIA")
                || !ask.type_matches(&card.kind)
            {
                continue;
            }
            // A container asking for no card stops at the first that passes
            // (Volcano charges it there without recording it; lahar charges nothing).
            if nums == 0 {
                break;
            }
            u[i] = (num + 1, mem + want, cores + c.cores);
            out.takes.push((i as u8, want, c.cores));
            out.score += card_score(policy, card, u[i].0, u[i].1);
            nums -= 1;
            if nums == 0 {
                break;
            }
        }
        if nums > 0 {
            if ask.uuid_filter_on() && !uuid_matched {
                return Err(format!(
                    "no GPU matches UUID constraints volcano.sh/vgpu-use-gpuuuid={:?}, \
                     volcano.sh/vgpu-nouse-gpuuuid={:?} on node {node}",
                    ask.uuid_text.0, ask.uuid_text.1
                ));
            }
            return Err("not enough gpu fitted on this node".into());
        }
    }
    Ok(out)
}

/// Charges a fit to the cards (`TryAddPod` and `addToPodMap`).
pub(crate) fn take(uses: &mut [CardUse], fit: &VgpuFit, pod: PodId, group: JobId) {
    for &(c, mem, cores) in &fit.takes {
        let u = &mut uses[c as usize];
        u.num += 1;
        u.memory += mem;
        u.cores += cores;
        match u.holders.iter_mut().find(|h| h.pod == pod) {
            Some(h) => {
                h.count += 1;
                h.memory += mem;
                h.cores += cores;
            }
            None => u.holders.push(Holder { pod, group, count: 1, memory: mem, cores }),
        }
    }
}

/// Returns what `pod` holds on the cards (`SubPod`).
pub(crate) fn give_back(uses: &mut [CardUse], pod: PodId) {
    for u in uses {
        if let Some(at) = u.holders.iter().position(|h| h.pod == pod) {
            let h = u.holders.remove(at);
            u.num -= h.count;
            u.memory -= h.memory;
            u.cores -= h.cores;
        }
    }
}
