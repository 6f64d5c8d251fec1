//! A node's GPU devices and how a pod's GPUs are laid on them.
//!
//! The node's aggregate `nvidia.com/gpu` is the sum over its devices; a pod asking
//! for less than one GPU takes a share of one device, k whole GPUs take k free
//! devices. Whole GPUs always go on the lowest-numbered free devices; where a share
//! goes is the [`ShareRule`] the scheduler chose (best fit unless a placement policy
//! of the FGD paper says otherwise).

pub mod numa;
pub mod vgpu;
pub mod vnpu;

use crate::frag::{Free, Target, fgd_share};
use crate::util::rng::StreamRng;
use rand::RngExt;

/// Milli-GPU bound of one device.
pub const DEVICE_MILLI: i64 = 1000;
/// Most GPU devices one node may have (a pod's devices are a 64-bit mask).
pub const MAX_NODE_GPUS: u32 = 64;

/// A node's GPU devices, the way GPU-sharing schedulers see them: a pod asking for
/// less than one GPU takes a share of one device; a pod asking for k whole GPUs
/// takes k devices no one else uses (and a non-whole count above one, k whole
/// devices plus a share of another). The node's aggregate `nvidia.com/gpu` is the
/// sum over devices, so a node can have room in total yet no device for a pod
/// (fragmentation).
#[derive(Clone, Debug, Default)]
pub struct GpuDevices {
    /// Free milli-GPUs of each device.
    pub free: Vec<i64>,
    /// Devices neither free nor full: shared by fractional pods.
    pub partial: u32,
}

/// Volcano's shared-GPU resources (its device plugin's `--gpu-strategy=share`):
/// a node's GPU memory in MiB and its number of cards.
pub const GPU_MEMORY: &str = "volcano.sh/gpu-memory";
/// See [`GPU_MEMORY`].
pub const GPU_NUMBER: &str = "volcano.sh/gpu-number";

/// A node's cards as Volcano's GPU sharing by memory sees them (`gpushare`):
/// each card has the node's `volcano.sh/gpu-memory` over its
/// `volcano.sh/gpu-number` (MiB, rounded down), and a pod asking
/// `volcano.sh/gpu-memory: m` takes m MiB of one card, the lowest-numbered one
/// with that much idle.
#[derive(Clone, Debug, Default)]
pub struct MemoryCards {
    /// MiB of each card.
    pub per_card: i64,
    /// MiB held on each card.
    pub used: Vec<i64>,
}

impl MemoryCards {
    /// `cards` cards sharing `total` MiB.
    pub fn new(total: i64, cards: i64) -> MemoryCards {
        if cards <= 0 {
            return MemoryCards::default();
        }
        MemoryCards { per_card: total / cards, used: vec![0; cards as usize] }
    }
    /// Idle MiB of each card (0 on a card held beyond its memory), Volcano's
    /// `getDevicesIdleGPUMemory`.
    pub fn idle(&self) -> impl Iterator<Item = i64> + '_ {
        self.used.iter().map(|&u| (self.per_card - u).max(0))
    }
    /// The cards with at least `mib` idle, ascending (`predicateGPUbyMemory`).
    pub fn fitting(&self, mib: i64) -> impl Iterator<Item = usize> + '_ {
        self.idle().enumerate().filter(move |&(_, f)| f >= mib).map(|(i, _)| i)
    }
    /// Takes `mib` on the first fitting card, which it returns (none fits: none).
    pub(crate) fn take(&mut self, mib: i64) -> Option<u8> {
        let c = self.fitting(mib).next()?;
        self.used[c] += mib;
        Some(c as u8)
    }
    pub(crate) fn give_back(&mut self, mib: i64, card: Option<u8>) {
        if let Some(c) = card {
            self.used[c as usize] -= mib;
        }
    }
}

/// The devices a pod holds on its node.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct DeviceHold {
    /// Whole devices (bit d: device d).
    pub whole: u64,
    /// The device holding the pod's share below one GPU, if it has one.
    pub share: Option<u8>,
}

impl GpuDevices {
    pub(crate) fn new(devices: usize) -> GpuDevices {
        GpuDevices { free: vec![DEVICE_MILLI; devices], partial: 0 }
    }
    /// Devices with nothing on them.
    pub fn whole_free(&self) -> usize {
        self.free.iter().filter(|&&f| f == DEVICE_MILLI).count()
    }
    /// True if a pod asking `milli` milli-GPUs finds devices now: k whole GPUs need
    /// k free devices, a share below one GPU one further device with that much free.
    pub fn fits(&self, milli: i64) -> bool {
        if milli <= 0 {
            return true;
        }
        let (k, rem) = ((milli / DEVICE_MILLI) as usize, milli % DEVICE_MILLI);
        let whole = self.whole_free();
        if rem == 0 {
            return whole >= k;
        }
        // The share goes on a partly used device with room, else on one more free device.
        whole > k || (whole == k && self.free.iter().any(|&f| f >= rem && f < DEVICE_MILLI))
    }
    /// Takes devices for `milli` milli-GPUs: whole GPUs on the lowest-numbered free
    /// devices, the share on device `share` when it is not taken whole and has
    /// room (a [`ShareRule`]'s pick), else on the device with the least free room
    /// that holds it (best fit, lowest index on ties; partly used devices before
    /// free ones by that rule). A request the devices cannot hold (only reachable through a
    /// policy bug) is still charged, to the emptiest devices, so the invariant
    /// check reports it.
    pub(crate) fn take(&mut self, milli: i64, share: Option<u8>) -> DeviceHold {
        let mut hold = DeviceHold::default();
        if milli <= 0 || self.free.is_empty() {
            return hold;
        }
        let (mut want, rem) = (milli / DEVICE_MILLI, milli % DEVICE_MILLI);
        // Whole devices: prefer free ones, then (policy bug) the emptiest others.
        let mut order: Vec<usize> = (0..self.free.len()).collect();
        order.sort_by_key(|&d| (std::cmp::Reverse(self.free[d]), d));
        for d in order {
            if want == 0 {
                break;
            }
            self.charge(d, DEVICE_MILLI);
            hold.whole |= 1 << d;
            want -= 1;
        }
        if rem > 0 {
            let others = || (0..self.free.len()).filter(|&d| hold.whole & (1 << d) == 0);
            let chosen = share
                .map(usize::from)
                .filter(|&d| d < self.free.len() && hold.whole & (1 << d) == 0 && self.free[d] >= rem);
            let pick = chosen
                .or_else(|| others().filter(|&d| self.free[d] >= rem).min_by_key(|&d| (self.free[d], d)))
                .or_else(|| others().max_by_key(|&d| (self.free[d], std::cmp::Reverse(d))))
                .unwrap_or(0);
            self.charge(pick, rem);
            hold.share = Some(pick as u8);
        }
        hold
    }
    /// Returns what [`GpuDevices::take`] took.
    pub(crate) fn give_back(&mut self, milli: i64, hold: DeviceHold) {
        for d in 0..self.free.len() {
            if hold.whole & (1 << d) != 0 {
                self.charge(d, -DEVICE_MILLI);
            }
        }
        if let Some(d) = hold.share {
            self.charge(d as usize, -(milli % DEVICE_MILLI));
        }
    }
    pub(crate) fn charge(&mut self, d: usize, milli: i64) {
        let was = self.free[d];
        let now = was - milli;
        self.free[d] = now;
        let partial = |f: i64| f > 0 && f < DEVICE_MILLI;
        self.partial = self.partial + partial(now) as u32 - partial(was) as u32;
    }
}

/// Where a pod's share of one GPU goes on the node it was placed on.
#[derive(Clone, Debug, Default)]
pub enum ShareRule {
    /// The device with the least room that holds it, the lowest-numbered on ties.
    #[default]
    BestFit,
    /// A device drawn uniformly among those with room (the FGD paper's `random`
    /// policy), from the given stream.
    Random(Box<StreamRng>),
    /// The device whose use grows the node's fragmentation least over the target
    /// workload ([`fgd_share`]).
    Fgd,
}

impl ShareRule {
    /// The device for a share of `milli` milli-GPUs (below 1000) of a pod with
    /// `cpu` millicores on a node with `free_cpu` millicores, GPU model `model` and
    /// devices `devices`; `None` leaves it to best fit.
    pub fn pick(
        &mut self,
        target: &Target,
        free_cpu: i64,
        model: Option<u8>,
        devices: &GpuDevices,
        cpu: i64,
        milli: i64,
    ) -> Option<u8> {
        if !(1..DEVICE_MILLI).contains(&milli) {
            return None;
        }
        match self {
            ShareRule::BestFit => None,
            ShareRule::Random(rng) => {
                let room = devices.free.iter().filter(|&&f| f >= milli).count();
                if room == 0 {
                    return None;
                }
                let k = rng.random_range(0..room);
                devices.free.iter().enumerate().filter(|&(_, &f)| f >= milli).nth(k).map(|(d, _)| d as u8)
            }
            ShareRule::Fgd => {
                let mut gpus = [0u16; MAX_NODE_GPUS as usize];
                let n = devices.free.len().min(gpus.len());
                for (g, &f) in gpus.iter_mut().zip(&devices.free) {
                    *g = f.clamp(0, DEVICE_MILLI) as u16;
                }
                let free = Free { cpu: free_cpu, model, gpus: &gpus[..n] };
                fgd_share(target, free, target.node(free), cpu, milli as u16).map(|(_, d)| d)
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Volcano's gpushare tests on a card held beyond its memory (3000 MiB on a
    /// 1000 MiB card): TestGetDevicesIdleGPUMemory_OverSubscribedCardReportsZero
    /// and TestPredicateGPUbyMemory_OverSubscribedCardNotOffered.
    #[test]
    fn over_subscribed_card() {
        let cards = MemoryCards { per_card: 1000, used: vec![3000] };
        assert_eq!(cards.idle().collect::<Vec<_>>(), [0]);
        assert_eq!(cards.fitting(500).count(), 0);
    }

    /// The lowest card with room is taken; memory comes back to the card it was on.
    #[test]
    fn cards_are_taken_lowest_first() {
        let mut c = MemoryCards::new(16000, 2);
        assert_eq!(c.per_card, 8000);
        assert_eq!((c.take(5000), c.take(5000), c.take(5000)), (Some(0), Some(1), None));
        assert_eq!(c.take(3000), Some(0));
        c.give_back(5000, Some(1));
        assert_eq!(c.idle().collect::<Vec<_>>(), [0, 8000]);
        assert_eq!(MemoryCards::new(89424, 8).per_card, 11178);
    }
}
