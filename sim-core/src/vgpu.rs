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

/// The cards a pod holds: (card index, MiB, cores) per card.
pub type CardTakes = Vec<(u8, i64, i64)>;

/// The annotation where Volcano records the cards a placed pod holds.
pub const VGPU_ASSIGNED: &str = "volcano.sh/vgpu-ids-new";

/// What a placed pod holds by its `volcano.sh/vgpu-ids-new` annotation, on a node
/// with `cards`: (card index, MiB, cores) per entry, as Volcano's cache reads it
/// at session open (`addResource`). Containers are separated by `;`, entries
/// `UUID,Type,MiB,cores` are ended by `:`; an entry's card is the first whose
/// UUID its UUID contains, and a second entry of the pod on one card adds
/// nothing (HAMi-core's `AddPod` keeps one entry per pod and card). Volcano skips
/// a malformed entry or an unknown card; lahar refuses them.
pub fn decode_assigned(text: &str, cards: &[VgpuCard]) -> Result<CardTakes, String> {
    let mut out = CardTakes::new();
    for container in text.split(';') {
        for entry in container.split(':').filter(|e| e.contains(',')) {
            let f: Vec<&str> = entry.split(',').collect();
            if f.len() < 4 {
                return Err(format!("entry `{entry}`: expected `UUID,Type,MiB,cores`"));
            }
            let num = |s: &str, what: &str| {
                s.parse::<u32>().map(i64::from).map_err(|_| format!("entry `{entry}`: {what} `{s}` is not a count"))
            };
            let (mem, cores) = (num(f[2], "MiB")?, num(f[3], "cores")?);
            let Some(c) = cards.iter().position(|c| f[0].contains(c.uuid.as_str())) else {
                return Err(format!("entry `{entry}`: the node has no card {}", f[0]));
            };
            if !out.iter().any(|t| t.0 as usize == c) {
                out.push((c as u8, mem, cores));
            }
        }
    }
    Ok(out)
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
    pub takes: CardTakes,
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

/// Replays of Volcano's vGPU unit tests (`pkg/scheduler/api/devices/nvidia/vgpu`),
/// named after the Go tests and cases.
#[cfg(test)]
mod tests {
    use super::*;

    /// `makeGPUDevices`: n cards `GPU-0000A`, `GPU-0000B`, … of `mem` MiB shared
    /// by up to `max`, type `NVIDIA`.
    fn cards(n: usize, mem: i64, max: u32) -> Vec<VgpuCard> {
        (0..n)
            .map(|i| VgpuCard {
                uuid: format!("GPU-0000{}", (b'A' + i as u8) as char),
                number: max,
                memory: mem,
                kind: "NVIDIA".into(),
            })
            .collect()
    }

    /// `makeVGPUPod`: one container of 1 card, `mem` MiB, 25 cores.
    fn pod(mem: i64, spread: bool) -> VgpuAsk {
        VgpuAsk {
            containers: vec![ContainerAsk::of(Some(1), Some(mem), Some(25)).expect("asks")],
            spread,
            ..Default::default()
        }
    }

    /// `simulateAllocate`: fit under binpack and charge the cards; the UUID taken.
    fn simulate(cards: &[VgpuCard], uses: &mut [CardUse], ask: &VgpuAsk, pod: u32, group: u32) -> Option<String> {
        let f = fit(cards, uses, ask, JobId(group), VgpuPolicy::Binpack, "n").ok()?;
        take(uses, &f, PodId(pod), JobId(group));
        Some(cards[f.takes[0].0 as usize].uuid.clone())
    }

    fn used(num: u32, memory: i64, cores: i64) -> CardUse {
        CardUse { num, memory, cores, holders: Vec::new() }
    }

    #[test]
    fn test_get_gpu_memory_of_pod_gpus_required_only_in_containers() {
        let a = ContainerAsk::of(Some(1), Some(3000), None).unwrap();
        let b = ContainerAsk::of(Some(3), Some(5000), None).unwrap();
        assert_eq!((a.nums, a.memory, a.percent, a.cores), (1, 3000, PERCENT_UNSET, 0));
        assert_eq!((b.nums, b.memory), (3, 5000));
        // Memory alone is one card; neither is no ask; no memory is the whole card.
        assert_eq!(ContainerAsk::of(None, Some(100), None).unwrap().nums, 1);
        assert_eq!(ContainerAsk::of(None, None, Some(50)), None);
        assert_eq!(ContainerAsk::of(Some(2), None, None).unwrap().memory_on(30000), 30000);
    }

    #[test]
    fn test_spread_prevents_co_location() {
        let c = cards(2, 16384, 4);
        let mut u = vec![CardUse::default(); 2];
        assert_eq!(simulate(&c, &mut u, &pod(4096, true), 1, 1).as_deref(), Some("GPU-0000A"));
        assert_eq!(simulate(&c, &mut u, &pod(4096, true), 2, 1).as_deref(), Some("GPU-0000B"));
    }

    #[test]
    fn test_binpack_allows_co_location() {
        let c = cards(2, 16384, 4);
        let mut u = vec![CardUse::default(); 2];
        assert_eq!(simulate(&c, &mut u, &pod(4096, false), 1, 1).as_deref(), Some("GPU-0000A"));
        assert_eq!(simulate(&c, &mut u, &pod(4096, false), 2, 1).as_deref(), Some("GPU-0000A"));
    }

    #[test]
    fn test_spread_different_groups_can_share() {
        let c = cards(1, 16384, 4);
        let mut u = vec![CardUse::default(); 1];
        assert_eq!(simulate(&c, &mut u, &pod(4096, true), 1, 1).as_deref(), Some("GPU-0000A"));
        assert_eq!(simulate(&c, &mut u, &pod(4096, true), 2, 2).as_deref(), Some("GPU-0000A"));
    }

    #[test]
    fn test_spread_with_no_room_fails() {
        let c = cards(1, 16384, 4);
        let mut u = vec![CardUse::default(); 1];
        assert!(simulate(&c, &mut u, &pod(4096, true), 1, 1).is_some());
        assert_eq!(simulate(&c, &mut u, &pod(4096, true), 2, 1), None);
    }

    #[test]
    fn test_mixed_annotations() {
        let c = cards(2, 16384, 4);
        let mut u = vec![CardUse::default(); 2];
        assert!(simulate(&c, &mut u, &pod(4096, true), 1, 1).is_some());
        assert!(simulate(&c, &mut u, &pod(4096, false), 2, 1).is_some());
    }

    #[test]
    fn test_check_gpu_type() {
        let ask = |use_: Option<&str>, nouse: Option<&str>| VgpuAsk {
            use_types: use_.map(String::from),
            nouse_types: nouse.map(String::from),
            ..Default::default()
        };
        let cases = [
            (Some("NVIDIA"), None, true),
            (Some("nvidia"), None, true),
            (Some("AMD,NVIDIA,INTEL"), None, true),
            (Some("AMD,INTEL,MLU"), None, false),
            (None, Some("NVIDIA"), false),
            (None, Some("nvidia"), false),
            (None, Some("AMD,NVIDIA,INTEL"), false),
            (None, Some("AMD,INTEL,MLU"), true),
            // "empty annotations" and "nil annotations".
            (None, None, true),
            (None, None, true),
        ];
        for (u, n, want) in cases {
            assert_eq!(ask(u, n).type_matches("NVIDIA"), want, "use {u:?} nouse {n:?}");
        }
        // A model name matches case-blind, as `use-gputype: v100` on a V100S.
        assert!(ask(Some("v100"), None).type_matches("NVIDIA-Tesla V100S-PCIE-32GB"));
    }

    #[test]
    fn test_check_gpu_uuid() {
        let f = |allow: &str, deny: &str| VgpuAsk {
            use_uuids: uuid_list(allow),
            nouse_uuids: uuid_list(deny),
            ..Default::default()
        };
        let cases = [
            ("", "", "GPU-1", true),
            ("  ", "", "GPU-1", true),
            (", ,", "", "GPU-1", true),
            ("GPU-0, GPU-1", "", "GPU-1", true),
            ("GPU-0,, GPU-1,", "", "GPU-1", true),
            ("GPU-10", "", "GPU-1", false),
            ("GPU-0,", "", "", false),
            ("", "GPU-0, GPU-1", "GPU-1", false),
            ("", "GPU-0,", "", false),
            ("GPU-1", "GPU-1", "GPU-1", false),
        ];
        for (allow, deny, id, want) in cases {
            assert_eq!(f(allow, deny).uuid_matches(id), want, "allow {allow:?} deny {deny:?} id {id:?}");
        }
    }

    #[test]
    fn test_gpu_uuid_constraints() {
        let c = cards(2, 16384, 4);
        let u = vec![CardUse::default(); 2];
        let run = |allow: &str, deny: &str| {
            let ask = VgpuAsk {
                use_uuids: uuid_list(allow),
                nouse_uuids: uuid_list(deny),
                uuid_text: (allow.into(), deny.into()),
                ..pod(4096, false)
            };
            fit(&c, &u, &ask, JobId(0), VgpuPolicy::IndexDescending, "n").map(|f| c[f.takes[0].0 as usize].uuid.clone())
        };
        assert_eq!(run("GPU-0000A", "").unwrap(), "GPU-0000A");
        assert_eq!(run("", "GPU-0000B").unwrap(), "GPU-0000A");
        assert!(run("GPU-unknown", "").unwrap_err().contains("volcano.sh/vgpu-use-gpuuuid"));
        assert!(run("", "GPU-0000A,GPU-0000B").unwrap_err().contains("volcano.sh/vgpu-nouse-gpuuuid"));
    }

    /// `TestDeviceHasPodFromSameGroup`, through the spread check of the fit: a
    /// card blocks a spread pod only when a pod of the same group holds memory or
    /// cores on it (the "empty key" case has no counterpart: every lahar pod has a
    /// group).
    #[test]
    fn test_device_has_pod_from_same_group() {
        let c = cards(1, 16384, 4);
        let with = |group: u32, memory: i64, cores: i64| {
            let h = Holder { pod: PodId(9), group: JobId(group), count: 1, memory, cores };
            vec![CardUse { num: 1, memory, cores, holders: vec![h] }]
        };
        let blocked = |u: &[CardUse]| fit(&c, u, &pod(1000, true), JobId(1), VgpuPolicy::Binpack, "n").is_err();
        assert!(!blocked(&with(2, 1000, 50)), "other group");
        assert!(blocked(&with(1, 1000, 50)), "same group with usage");
        assert!(!blocked(&with(1, 0, 0)), "same group without usage");
        assert!(!blocked(&[CardUse::default()]), "empty pod map");
    }

    #[test]
    fn test_sorted_device_indices_by_policy_picks_expected_device() {
        let c = cards(2, 16384, 4);
        let u = vec![used(1, 4096, 0), CardUse::default()];
        let first =
            |c: &[VgpuCard], u: &[CardUse], p| fit(c, u, &pod(4096, false), JobId(0), p, "n").unwrap().takes[0].0;
        assert_eq!(first(&c, &u, VgpuPolicy::Binpack), 0, "binpack picks busier device");
        assert_eq!(first(&c, &u, VgpuPolicy::Spread), 1, "spread picks idle device over shared one");
        let c3 = cards(3, 16384, 4);
        assert_eq!(first(&c3, &[CardUse::default(), CardUse::default(), CardUse::default()], VgpuPolicy::parse("")), 2);
    }

    #[test]
    fn test_gpu_score() {
        let c = &cards(1, 16384, 4)[0];
        assert_eq!(card_score(VgpuPolicy::Spread, c, 0, 0), 100.0, "spread idle");
        assert_eq!(card_score(VgpuPolicy::Spread, c, 1, 4096), 0.0, "spread shared");
        assert_eq!(card_score(VgpuPolicy::Spread, c, 4, 16384), 0.0, "spread full");
        assert_eq!(card_score(VgpuPolicy::Binpack, c, 4, 16384), 100.0, "binpack full");
        assert_eq!(card_score(VgpuPolicy::Binpack, c, 0, 0), 0.0, "binpack idle");
        assert_eq!(card_score(VgpuPolicy::parse(""), c, 1, 4096), 0.0, "unset shared");
    }

    #[test]
    fn test_binpack_stacks_sequential_pods() {
        let c = cards(3, 16384, 4);
        let mut u = vec![CardUse::default(); 3];
        for p in 0..3 {
            assert_eq!(simulate(&c, &mut u, &pod(4096, false), p, p).as_deref(), Some("GPU-0000A"));
        }
    }

    /// `TestVgpuScore` (`pkg/scheduler/plugins/deviceshare`): a 30000 MiB card
    /// with one sharer of 3000 MiB; a pod of 1000 MiB scores 100 × 4000 / 30000
    /// under binpack; spread scores 0 (the card is counted as taken first).
    #[test]
    fn test_vgpu_score() {
        let c = vec![VgpuCard { uuid: String::new(), number: 10, memory: 30000, kind: "NVIDIA".into() }];
        let ask =
            VgpuAsk { containers: vec![ContainerAsk::of(Some(1), Some(1000), None).unwrap()], ..Default::default() };
        let s = fit(&c, &[used(1, 3000, 0)], &ask, JobId(0), VgpuPolicy::Binpack, "node1").unwrap().score;
        assert!((s - 13.333_333).abs() < 1e-5, "{s}");
        let s = fit(&c, &[CardUse::default()], &ask, JobId(0), VgpuPolicy::Spread, "node2").unwrap().score;
        assert_eq!(s, 0.0);
    }

    /// `Test_FilterNode` case0: three cards of 30000, 20000 and 30000 MiB; a pod
    /// asking 3 cards at 100 cores, no memory (all of each card's), fits.
    #[test]
    fn test_filter_node_case0_should_allocated_3_card_with_diff_memory_for_pod() {
        let c: Vec<VgpuCard> = [30000, 20000, 30000]
            .iter()
            .map(|&m| VgpuCard { uuid: String::new(), number: 10, memory: m, kind: "NVIDIA".into() })
            .collect();
        let ask =
            VgpuAsk { containers: vec![ContainerAsk::of(Some(3), None, Some(100)).unwrap()], ..Default::default() };
        let f = fit(&c, &vec![CardUse::default(); 3], &ask, JobId(0), VgpuPolicy::Binpack, "n").unwrap();
        assert_eq!(f.takes, [(0, 30000, 100), (1, 20000, 100), (2, 30000, 100)]);
    }

    /// `TestHAMICoreFactory_AddPod` ("fresh add"), `…AddPodDistinctUIDsAccumulate`
    /// and `…SubPodRemovesEntry`: a card of 16384 MiB shared by 4. (The
    /// "duplicate add is a no-op" cases test the re-read of a pod's annotation at
    /// session open, a path lahar's ledger does not have: it is never rebuilt.)
    #[test]
    fn test_hami_core_factory_add_and_sub_pod() {
        let one = VgpuFit { takes: vec![(0, 1000, 25)], score: 0.0 };
        let mut u = vec![CardUse::default()];
        take(&mut u, &one, PodId(1), JobId(1));
        assert_eq!((u[0].num, u[0].memory, u[0].cores), (1, 1000, 25));
        take(&mut u, &one, PodId(2), JobId(1));
        take(&mut u, &one, PodId(3), JobId(1));
        assert_eq!((u[0].num, u[0].memory, u[0].cores), (3, 3000, 75));
        let mut u = vec![CardUse::default()];
        take(&mut u, &one, PodId(1), JobId(1));
        give_back(&mut u, PodId(1));
        assert_eq!(u[0], CardUse::default());
        take(&mut u, &one, PodId(1), JobId(1));
        assert_eq!((u[0].num, u[0].memory), (1, 1000));
    }

    /// The checks of a card in Volcano's order, each alone.
    #[test]
    fn fit_checks_each_rule() {
        let c = cards(1, 16000, 2);
        let ask = |mem: i64, cores: i64| VgpuAsk {
            containers: vec![ContainerAsk::of(Some(1), Some(mem), Some(cores)).unwrap()],
            ..Default::default()
        };
        let fits = |u: CardUse, a: &VgpuAsk| fit(&c, &[u], a, JobId(0), VgpuPolicy::Binpack, "n").is_ok();
        assert!(!fits(used(2, 0, 0), &ask(1, 0)), "number of sharers");
        assert!(!fits(used(1, 10000, 0), &ask(6001, 0)), "memory");
        assert!(fits(used(1, 10000, 0), &ask(6000, 0)), "memory exactly");
        assert!(!fits(used(1, 0, 80), &ask(1, 30)), "cores over 100");
        assert!(!fits(used(1, 0, 0), &ask(1, 100)), "100 cores is exclusive");
        assert!(!fits(used(1, 0, 100), &ask(1, 0)), "a card at 100 cores takes no core-less pod");
        let two = VgpuAsk { containers: vec![ContainerAsk::of(Some(2), Some(1), None).unwrap()], ..Default::default() };
        assert_eq!(
            fit(&c, &[CardUse::default()], &two, JobId(0), VgpuPolicy::Binpack, "n1").unwrap_err(),
            "no enough gpu cards on node n1"
        );
        let mode = VgpuAsk { mode: Some("mig".into()), ..ask(1, 0) };
        assert!(fit(&c, &[CardUse::default()], &mode, JobId(0), VgpuPolicy::Binpack, "n").unwrap_err().contains("mig"));
        let amd = vec![VgpuCard { kind: "AMD-MI300".into(), ..c[0].clone() }];
        assert!(fit(&amd, &[CardUse::default()], &ask(1, 0), JobId(0), VgpuPolicy::Binpack, "n").is_err(), "type");
    }

    /// Two containers of one pod: each on distinct cards of its own, the second
    /// seeing what the first took; both charged to the pod.
    #[test]
    fn containers_take_cards_in_order() {
        let c = cards(2, 16000, 4);
        let ask = VgpuAsk {
            containers: vec![
                ContainerAsk::of(Some(2), Some(10000), None).unwrap(),
                ContainerAsk::of(Some(1), Some(6000), None).unwrap(),
            ],
            ..Default::default()
        };
        let f = fit(&c, &vec![CardUse::default(); 2], &ask, JobId(0), VgpuPolicy::Binpack, "n").unwrap();
        assert_eq!(f.takes, [(0, 10000, 0), (1, 10000, 0), (0, 6000, 0)]);
        // Binpack's score: 100·10000/16000 twice, then 100·16000/16000.
        assert!((f.score - 225.0).abs() < 1e-9, "{}", f.score);
        let mut u = vec![CardUse::default(); 2];
        take(&mut u, &f, PodId(1), JobId(0));
        assert_eq!((u[0].num, u[0].memory, u[0].holders.len(), u[0].holders[0].count), (2, 16000, 1, 2));
        give_back(&mut u, PodId(1));
        assert_eq!(u, vec![CardUse::default(); 2]);
    }

    /// `TestAddResource` ("Pod assigned to known GPU UUID"; an unknown UUID is an
    /// error in lahar, where Volcano skips it) and
    /// `TestDecodeContainerDevicesRejectsInvalidUsage` (a valid entry is read;
    /// negative, non-numeric or missing fields are errors in lahar, where Volcano
    /// skips the entry).
    #[test]
    fn test_add_resource_and_decode_assigned() {
        let c = vec![VgpuCard { uuid: "GPU-1234".into(), number: 10, memory: 16384, kind: "NVIDIA".into() }];
        // The test's annotation has no trailing `:`; the entry is read all the same.
        assert_eq!(decode_assigned("GPU-1234,NVIDIA,16384,0", &c).unwrap(), [(0, 16384, 0)]);
        assert!(decode_assigned("GPU-5678,NVIDIA,16384,0:", &c).unwrap_err().contains("no card GPU-5678"));
        let c2 = cards(2, 16000, 4);
        assert_eq!(decode_assigned("GPU-0000A,NVIDIA,4096,30:", &c2).unwrap(), [(0, 4096, 30)]);
        for bad in
            ["GPU-0000A,NVIDIA,-5,30:", "GPU-0000A,NVIDIA,4096,-1:", "GPU-0000A,NVIDIA,abc,30:", "GPU-0000A,NVIDIA:"]
        {
            assert!(decode_assigned(bad, &c2).is_err(), "{bad}");
        }
        // Two containers; a second entry of the pod on one card adds nothing.
        assert_eq!(
            decode_assigned("GPU-0000A,NVIDIA,1000,10:GPU-0000B,NVIDIA,2000,20:;GPU-0000A,NVIDIA,500,5:", &c2).unwrap(),
            [(0, 1000, 10), (1, 2000, 20)]
        );
    }

    /// The device plugin's annotation, as Volcano's user guide shows it.
    #[test]
    fn decodes_the_register_annotation() {
        let text = "GPU-f571c8f8-948a-71b4-3be1-2bf02c7a1b20,10,32768,NVIDIA-Tesla V100S-PCIE-32GB,true,hami-core:GPU-0fc3eda5-e98b-a25b-5b0d-cf5c855d1448,10,32768,NVIDIA-Tesla V100S-PCIE-32GB,true,hami-core:";
        let c = decode_register(text).unwrap();
        assert_eq!(c.len(), 2);
        assert_eq!(
            c[1],
            VgpuCard {
                uuid: "GPU-0fc3eda5-e98b-a25b-5b0d-cf5c855d1448".into(),
                number: 10,
                memory: 32768,
                kind: "NVIDIA-Tesla V100S-PCIE-32GB".into()
            }
        );
        assert!(decode_register("GPU-0,10,32768,NVIDIA,true").unwrap_err().contains("ended by `:`"));
        assert!(decode_register("GPU-0,10,32768,NVIDIA,true:").unwrap_err().contains("expected 6 fields"));
        assert!(decode_register("GPU-0,10,32768,NVIDIA,true,mig:").unwrap_err().contains("MIG"));
        assert!(decode_register("GPU-0,ten,32768,NVIDIA,true,hami-core:").unwrap_err().contains("Number `ten`"));
        assert!(decode_register("GPU-0,10,32768,NVIDIA,maybe,hami-core:").unwrap_err().contains("Health"));
        assert!(decode_register(":").unwrap_err().contains("no card"));
    }
}
