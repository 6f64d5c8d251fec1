//! What a node's Ascend chips hold, pod by pod, and the whole-pod choice that
//! charges them (`AscendDevices.Allocate` and its `addResource`).

use super::{Ask, Chip, ChipType, ChipUse, NpuPolicy, Refusal, Written, order, select_in};
use crate::model::ids::PodId;
use std::sync::Arc;

/// A node's chips of one type (one `hami.io/node-register-<commonWord>`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NodeChips {
    /// The type, as the device ConfigMap describes it.
    pub ty: Arc<ChipType>,
    /// The chips, in registration order.
    pub chips: Vec<Chip>,
}

/// What a pod asks of Ascend chips: for each chip type it names (its
/// `commonWord`), each requesting container's written ask in container order.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct NpuAsk {
    /// (commonWord, containers).
    pub types: Vec<(String, Vec<Written>)>,
    /// The pod is annotated `huawei.com/vnpu-mode: hami-core`.
    pub hami_core: bool,
}

impl NpuAsk {
    /// The containers asking for type `common_word`, if any.
    pub fn of(&self, common_word: &str) -> Option<&[Written]> {
        self.types.iter().find(|t| t.0 == common_word).map(|t| &t.1[..])
    }
}

/// What one pod holds of one node's chips of one type: (chip index, MiB,
/// cores) per chip charged.
pub type ChipTakes = Vec<(u32, i64, i64)>;

/// What one pod holds of a node's chips: (index of the type among the node's
/// [`NodeChips`], chips).
pub type NpuTakes = Vec<(u32, ChipTakes)>;

/// A pod's hold on a node's chips of one type.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ChipHolder {
    /// The pod.
    pub pod: PodId,
    /// What it holds.
    pub takes: ChipTakes,
    /// It is releasing: it holds nothing (Volcano's `RemoveTask` frees an
    /// evicted pod's chips at once) but gets the same chips back if the
    /// eviction is undone.
    pub releasing: bool,
}

/// What the sharers of a node's chips of one type hold.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct NpuUse {
    /// Per chip, in registration order.
    pub uses: Vec<ChipUse>,
    /// Who holds them, in the order they came.
    pub holders: Vec<ChipHolder>,
}

impl NpuUse {
    /// Nothing held on `chips` chips.
    pub fn new(chips: usize) -> NpuUse {
        NpuUse { uses: vec![ChipUse::default(); chips], holders: Vec::new() }
    }

    fn charge(&mut self, takes: &ChipTakes, sign: i64) {
        for &(c, m, k) in takes {
            let u = &mut self.uses[c as usize];
            u.used = (i64::from(u.used) + sign) as u32;
            u.memory += sign * m;
            u.cores += sign * k;
        }
    }

    /// Pod `pod` takes `takes`.
    pub fn take(&mut self, pod: PodId, takes: ChipTakes) {
        self.charge(&takes, 1);
        self.holders.push(ChipHolder { pod, takes, releasing: false });
    }

    /// Pod `pod` lets go of what it holds; whether it held anything here.
    pub fn give_back(&mut self, pod: PodId) -> bool {
        let Some(i) = self.holders.iter().position(|h| h.pod == pod) else { return false };
        let h = self.holders.remove(i);
        if !h.releasing {
            self.charge(&h.takes, -1);
        }
        true
    }

    /// Marks `pod` releasing (its chips free) or back (the same chips held
    /// again); whether it holds chips here.
    pub fn set_releasing(&mut self, pod: PodId, releasing: bool) -> bool {
        let Some(i) = self.holders.iter().position(|h| h.pod == pod) else { return false };
        if self.holders[i].releasing != releasing {
            self.holders[i].releasing = releasing;
            let takes = self.holders[i].takes.clone();
            self.charge(&takes, if releasing { -1 } else { 1 });
        }
        true
    }
}

/// A pod's written asks as Volcano reads them on these chips (`ResourceReqs`
/// on the first chip of `order`).
fn asks(order: &[usize], nc: &NodeChips, written: &[Written], hami_core_pod: bool) -> Vec<Ask> {
    let Some(&first) = order.first() else { return Vec::new() };
    let devmem = nc.chips[first].devmem;
    written.iter().filter_map(|w| super::ask(w, &nc.ty, devmem, hami_core_pod)).collect()
}

/// The chips each container of the pod takes (`selectDevices` on the pod).
pub fn choose(
    policy: NpuPolicy,
    nc: &NodeChips,
    u: &NpuUse,
    written: &[Written],
    hami_core_pod: bool,
) -> Result<(Vec<Ask>, Vec<Vec<usize>>), Refusal> {
    let order = order(policy, &nc.chips, &u.uses);
    let asks = asks(&order, nc, written, hami_core_pod);
    let chosen = select_in(&order, &nc.ty, &nc.chips, &u.uses, &asks, hami_core_pod)?;
    Ok((asks, chosen))
}

/// What the chips chosen charge, as Volcano counts them: it writes the pod's
/// chips as `<ctr1 chips>;<ctr2 chips>;`, each chip ending in `:`, and reads
/// that back splitting on `:` alone, so the first chip of every container
/// after the first gets a `;` before its id and is never counted
/// (`EncodePodSingleDevice`, `DecodeContainerDevices`).
pub fn charged(asks: &[Ask], chosen: &[Vec<usize>]) -> ChipTakes {
    let mut out = ChipTakes::new();
    for (i, (a, cs)) in asks.iter().zip(chosen).enumerate() {
        for (j, &c) in cs.iter().enumerate() {
            if i > 0 && j == 0 {
                continue;
            }
            out.push((c as u32, a.memory, a.cores));
        }
    }
    out
}

/// The pod annotation that records the chips of type `common_word` a pod holds.
pub fn allocated_annotation(common_word: &str) -> String {
    format!("hami.io/{common_word}-devices-allocated")
}

/// A placed pod's chips by its `hami.io/<commonWord>-devices-allocated`
/// annotation (`<id>,<type>,<MiB>,<cores>:` per chip, `;` after each
/// container), read as Volcano's `addResource` reads it: split on `:` alone,
/// so an entry whose id starts with `;` (the first chip of every container
/// after the first) matches no chip and is not counted. Any other id must be one
/// of `chips`; the numbers must be whole; text that is no entry at all is
/// refused (Volcano counts nothing for it).
pub fn decode_allocated(text: &str, chips: &[Chip]) -> Result<ChipTakes, String> {
    let mut out = ChipTakes::new();
    if let Some(junk) = text.split(':').find(|s| !s.contains(',') && !s.trim_matches(';').is_empty()) {
        return Err(format!("`{junk}`: expected `<chip id>,<type>,<MiB>,<cores>:` per chip"));
    }
    for seg in text.split(':').filter(|s| s.contains(',')) {
        let f: Vec<&str> = seg.split(',').collect();
        if f.len() < 4 {
            return Err(format!("`{seg}`: expected `<chip id>,<type>,<MiB>,<cores>`"));
        }
        if f[0].starts_with(';') {
            continue;
        }
        let Some(c) = chips.iter().position(|c| c.id == f[0]) else {
            return Err(format!("chip `{}` is not one the node registers", f[0]));
        };
        let num = |s: &str| s.parse::<i64>().map_err(|_| format!("`{seg}`: expected whole numbers of MiB and cores"));
        let (m, k) = (num(f[2])?, num(f[3])?);
        if !out.iter().any(|t| t.0 == c as u32) {
            out.push((c as u32, m, k));
        }
    }
    Ok(out)
}
