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
    if cards.len() > super::MAX_NODE_CARDS {
        return Err(format!("at most {} cards per node, got {}", super::MAX_NODE_CARDS, cards.len()));
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
