//! What vGPU sharing reads: a node's cards (its `volcano.sh/node-vgpu-register`
//! annotation), a placed pod's cards (its `volcano.sh/vgpu-ids-new` annotation)
//! and what a pod asks of them (its containers' limits and its annotations).

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
    /// The record's mode is `mig`.
    pub mig: bool,
    /// The MIG geometry groups of its model (the device ConfigMap's
    /// `knownMigGeometries`; see [`resolve_mig`]); empty when none applies.
    pub groups: std::sync::Arc<[super::MigGroup]>,
    /// `gpuMemoryFactor` of the device ConfigMap (MIG requests are scaled by it).
    pub factor: i64,
    /// The device ConfigMap names `volcano.sh/vgpu-memory-percentage` as its
    /// `resourceMemoryPercentageName`.
    pub percent: bool,
}

impl VgpuCard {
    /// A HAMi-core card.
    pub fn new(uuid: &str, number: u32, memory: i64, kind: &str) -> VgpuCard {
        VgpuCard {
            uuid: uuid.into(),
            number,
            memory,
            kind: kind.into(),
            mig: false,
            groups: std::sync::Arc::from(Vec::new()),
            factor: 1,
            percent: false,
        }
    }
}

/// What the scheduler reads of the device ConfigMap (`device-config.yaml`'s
/// `nvidia` section).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct DeviceConfig {
    /// `knownMigGeometries`.
    pub known: Vec<super::MigModels>,
    /// `gpuMemoryFactor` (0 and 1: none).
    pub factor: i64,
    /// `resourceMemoryPercentageName` is `volcano.sh/vgpu-memory-percentage`.
    pub percent: bool,
    /// The `vnpus` section (Ascend), when the ConfigMap has one.
    pub vnpus: Option<crate::devices::vnpu::VnpuConfig>,
}

/// The memory-percentage resource the device ConfigMap may name.
pub const VGPU_MEMORY_PERCENTAGE: &str = "volcano.sh/vgpu-memory-percentage";

/// Gives a node's cards what the device ConfigMap says: the `mig` cards the
/// geometry groups of their model (as Volcano's `decodeNodeDevices` does; a
/// card of a model no entry names keeps none, so the node falls back to
/// HAMi-core when it is the last card), every card the memory factor and the
/// percentage switch.
pub fn resolve_mig(cards: &mut [VgpuCard], config: &DeviceConfig) {
    for c in cards.iter_mut() {
        if c.mig
            && let Some(g) = super::geometry_of(&config.known, &c.kind)
        {
            c.groups = std::sync::Arc::from(g.to_vec());
        }
        c.factor = config.factor.max(1);
        c.percent = config.percent;
    }
}

/// The node's sharing mode: that of its last card (`decodeNodeDevices`
/// overwrites it record by record), `mig` only for a card with geometries.
pub fn node_mig(cards: &[VgpuCard]) -> bool {
    cards.last().is_some_and(|c| c.mig && !c.groups.is_empty())
}

/// Reads the `volcano.sh/node-vgpu-register` annotation: one
/// `UUID,Number,MemoryMiB,Type,Health,Mode` record per card, each ended by `:`
/// (Volcano's `decodeNodeDevices`). Volcano takes a malformed annotation, or an
/// unparsable number in it, as a node without cards (or as 0); lahar refuses it
/// with the record at fault. A `mig` record's geometries come from the device
/// ConfigMap ([`resolve_mig`]).
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
        let mut card = VgpuCard::new(f[0], number, memory, f[3]);
        card.mig = f[5] == "mig";
        cards.push(card);
    }
    if cards.is_empty() {
        return Err("no card records".into());
    }
    if cards.len() > super::MAX_NODE_CARDS {
        return Err(format!("at most {} cards per node, got {}", super::MAX_NODE_CARDS, cards.len()));
    }
    Ok(cards)
}

/// The cards a pod holds: (card index, MiB, cores, MIG instance) per card.
pub type CardTakes = Vec<(u8, i64, i64, Option<super::MigSlot>)>;

/// The annotation where Volcano records the cards a placed pod holds.
pub const VGPU_ASSIGNED: &str = "volcano.sh/vgpu-ids-new";

/// What a placed pod holds by its `volcano.sh/vgpu-ids-new` annotation, on a node
/// with `cards`: (card index, MiB, cores) per entry, as Volcano's cache reads it
/// at session open (`addResource`). Containers are separated by `;`, entries
/// `UUID,Type,MiB,cores` are ended by `:`; an entry's card is the first whose
/// UUID its UUID contains, and a second entry of the pod on one card adds
/// nothing (HAMi-core's `AddPod` keeps one entry per pod and card). On a MIG
/// node an entry's UUID is `UUID[group-position]`, the instance it holds (its
/// MiB is the instance's). Volcano skips a malformed entry or an unknown card;
/// lahar refuses them.
pub fn decode_assigned(text: &str, cards: &[VgpuCard]) -> Result<CardTakes, String> {
    let mig = node_mig(cards);
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
            if out.iter().any(|t| t.0 as usize == c) {
                continue;
            }
            if !mig {
                out.push((c as u8, mem, cores, None));
                continue;
            }
            let (group, position) = super::decode_id(f[0]).map_err(|e| format!("entry `{entry}`: {e}"))?;
            let card = &cards[c];
            let Some(g) = card.groups.iter().position(|x| x.name == group) else {
                return Err(format!("entry `{entry}`: card {} has no MIG group `{group}`", card.uuid));
            };
            let slot = super::MigSlot { group: g as u16, position };
            let mut probe = super::MigUse::default();
            let slice = super::add_used(&card.groups, &mut probe, slot);
            if slice == 0 {
                return Err(format!("entry `{entry}`: group `{group}` has no position {position}"));
            }
            let real = if card.factor > 1 { slice / card.factor } else { slice };
            out.push((c as u8, real, cores, Some(slot)));
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
    /// `volcano.sh/vgpu-memory-percentage` (limit, else request), which counts
    /// only where the device ConfigMap names it (see [`VgpuCard::percent`]).
    pub asked_percent: Option<i64>,
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
            asked_percent: None,
        })
    }

    /// The same ask with `volcano.sh/vgpu-memory-percentage` given.
    pub fn with_percent(mut self, p: Option<i64>) -> ContainerAsk {
        self.asked_percent = p;
        self
    }

    /// MiB it takes on a card of `memory` MiB; `percent_on`: the device
    /// ConfigMap names the percentage resource, so an asked percentage rules
    /// (`ExtractResourceRequest`).
    pub fn memory_on(&self, memory: i64, percent_on: bool) -> i64 {
        let p = match self.asked_percent.filter(|_| percent_on) {
            Some(p) => p,
            None => self.percent,
        };
        if p != PERCENT_UNSET { (memory as f64 * p as f64 / 100.0) as i64 } else { self.memory }
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
    pub(crate) fn uuid_filter_on(&self) -> bool {
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
        if self.use_types.is_none() && self.nouse_types.is_none() {
            return true;
        }
        let up = kind.to_uppercase();
        let any = |list: &str| list.split(',').any(|v| up.contains(&v.to_uppercase()));
        match (&self.use_types, &self.nouse_types) {
            (Some(u), _) => any(u),
            (None, Some(n)) => !any(n),
            (None, None) => true,
        }
    }
}
