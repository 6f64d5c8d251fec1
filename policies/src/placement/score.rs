//! The paper's node-and-device scoring rules, one function per policy, each as
//! the FGD paper's simulator computes it (`pkg/simulator/plugin/*_score.go` and
//! the GPU selection of `open_gpu_share.go`): integer scores 0–100, higher is
//! better, the node with the highest score wins (ties drawn uniformly).
//! docs/fragmentation.md gives each formula.

pub use lahar_core::frag::sigmoid_score;
use lahar_core::frag::{Demand, Free, Target};

/// CPU and GPU of the largest node spec the reference normalises by
/// (`MaxSpecCpu`, `MaxSpecGpu`: 128 cores, 8 GPUs).
const MAX_SPEC_CPU: f64 = 128_000.0;
const MAX_SPEC_GPU: f64 = 8_000.0;
const MAX_SCORE: i64 = 100;

/// A node as the scoring rules see it.
#[derive(Clone, Copy, Debug)]
pub struct NodeView<'a> {
    /// Free millicores.
    pub cpu: i64,
    /// GPU model index.
    pub model: Option<u8>,
    /// Free milli-GPUs of each device, in device order.
    pub gpus: &'a [u16],
    /// Kinds of GPU pods the node holds (bit 0: a share of one GPU; bit k: k
    /// whole GPUs), for `gpu-clustering`.
    pub kinds: u32,
}

impl NodeView<'_> {
    #[cfg(test)]
    fn free(&self) -> Free<'_> {
        Free { cpu: self.cpu, model: self.model, gpus: self.gpus }
    }
    fn gpu_left(&self) -> i64 {
        self.gpus.iter().map(|&g| i64::from(g)).sum()
    }
    fn fully_free(&self) -> usize {
        self.gpus.iter().filter(|&&g| g == 1000).count()
    }
}

/// The devices a pod takes on the node its policy chose.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Devices {
    /// None: a pod without GPUs.
    None,
    /// Its whole GPUs: the lowest-numbered free devices.
    FirstFree,
    /// Its share of one GPU on this device.
    Share(u8),
    /// Its share of one GPU on a device drawn uniformly among those with room
    /// (`random`; drawn when the node is chosen).
    RandomShare,
}

/// The kind bit of a demand (`gpu-clustering`'s GPU affinity): 0 for a pod
/// without GPUs.
pub fn kind(d: &Demand) -> u32 {
    match (d.gpus, d.gpu_milli) {
        (0, _) | (_, 0) => 0,
        (1, m) if m < 1000 => 1,
        (k, _) => 1 << k.min(31),
    }
}

/// True for a share of one GPU.
fn is_share(d: &Demand) -> bool {
    d.gpus == 1 && d.gpu_milli < 1000 && d.gpu_milli > 0
}

/// Best fit among devices (`gpusel: best`): the device with the least room that
/// holds the share, the lowest-numbered on ties.
fn best_fit_device(gpus: &[u16], milli: u16) -> Option<u8> {
    let mut best: Option<(u16, u8)> = None;
    for (i, &g) in gpus.iter().enumerate() {
        if g >= milli && best.is_none_or(|(b, _)| g < b) {
            best = Some((g, i as u8));
        }
    }
    best.map(|b| b.1)
}

/// Device choice of the rules that select by best fit.
fn best_fit(n: &NodeView<'_>, d: &Demand) -> Devices {
    if !d.wants_gpu() {
        Devices::None
    } else if is_share(d) {
        best_fit_device(n.gpus, d.gpu_milli).map_or(Devices::FirstFree, Devices::Share)
    } else {
        Devices::FirstFree
    }
}

/// `random`: every feasible node scores the same (the reference draws one node
/// among the feasible ones; drawing among equal scores is the same draw).
pub fn random(_: &NodeView<'_>, d: &Demand) -> (i64, Devices) {
    let dev = if !d.wants_gpu() {
        Devices::None
    } else if is_share(d) {
        Devices::RandomShare
    } else {
        Devices::FirstFree
    };
    (MAX_SCORE, dev)
}

/// `dot-product` (Tetris, as the reference configures it: GPUs merged into one
/// dimension, normalised by the largest node spec): `⌊100 × (1 − (ĉ·ĉ' + ĝ·ĝ')/2)⌋`
/// with ĉ, ĝ the node's free CPU and GPU and ĉ', ĝ' the pod's, each over
/// 128 cores and 8 GPUs.
pub fn dot_product(n: &NodeView<'_>, d: &Demand) -> (i64, Devices) {
    let dot = (n.cpu as f64 / MAX_SPEC_CPU) * (d.cpu as f64 / MAX_SPEC_CPU)
        + (n.gpu_left() as f64 / MAX_SPEC_GPU) * (d.total_milli() as f64 / MAX_SPEC_GPU);
    let score = 1.0 - dot / 2.0;
    ((MAX_SCORE as f64 * score) as i64, best_fit(n, d))
}

/// `gpu-clustering`: pods of one kind (share, 1, 2, … whole GPUs) together.
/// `⌊25 × (8000 − free milli-GPUs) / 8000⌋` plus 75 on a node that holds only
/// pods of this kind, 50 on one holding this kind among others, 25 on one
/// holding no GPU pod, 0 otherwise; 0 everywhere for a pod without GPUs.
pub fn gpu_clustering(n: &NodeView<'_>, d: &Demand) -> (i64, Devices) {
    let k = kind(d);
    if k == 0 {
        return (0, Devices::None);
    }
    let used = MAX_SCORE / 4 * (MAX_SPEC_GPU as i64 - n.gpu_left()) / MAX_SPEC_GPU as i64;
    let bonus = if n.kinds & k != 0 {
        if n.kinds == k { 75 } else { 50 }
    } else if n.kinds == 0 {
        25
    } else {
        0
    };
    (used + bonus, best_fit(n, d))
}

/// `gpu-packing`: first shared devices, then free devices of used nodes, then
/// free nodes. A node all of whose devices are free scores `max(33 − free, free)`;
/// otherwise the pod's devices are taken tightest first: if that uses free
/// devices, `max(50 − free devices used, 33)`; else `max(100 − Σ ⌊100 g/1000⌋/10, 50)`
/// over the free milli-GPUs `g` of the devices it shares. 0 everywhere for a pod
/// without GPUs.
pub fn gpu_packing(n: &NodeView<'_>, d: &Demand) -> (i64, Devices) {
    if !d.wants_gpu() {
        return (0, Devices::None);
    }
    let dev = best_fit(n, d);
    let free = n.fully_free() as i64;
    if free == n.gpus.len() as i64 {
        return ((MAX_SCORE / 3 - free).max(free), dev);
    }
    // Devices tightest first (stable: lower index first among equals).
    let mut order = [0u8; lahar_core::world::MAX_NODE_GPUS as usize];
    let order = &mut order[..n.gpus.len()];
    for (k, o) in order.iter_mut().enumerate() {
        *o = k as u8;
    }
    order.sort_by_key(|&i| n.gpus[usize::from(i)]);
    let mut need = d.gpus;
    let (mut free_used, mut shared_pct) = (0i64, 0i64);
    for &i in order.iter() {
        let i = usize::from(i);
        if need == 0 {
            break;
        }
        let g = n.gpus[i];
        if d.gpu_milli <= g {
            need -= 1;
            if g == 1000 {
                free_used += 1;
            }
            shared_pct += i64::from(g) * 100 / 1000;
        }
    }
    if need > 0 {
        return (0, dev);
    }
    if free_used > 0 {
        return ((MAX_SCORE / 2 - free_used).max(MAX_SCORE / 3), dev);
    }
    ((MAX_SCORE - shared_pct / 10).max(MAX_SCORE / 2), dev)
}

/// `best-fit`: the node left with the least, CPU and GPU weighted equally:
/// `⌊100 × (1 − ((c − c')/128000 + (g − g')/8000) / 2)⌋`, free CPU `c` and
/// GPU `g` against the pod's `c'`, `g'`.
pub fn best_fit_node(n: &NodeView<'_>, d: &Demand) -> (i64, Devices) {
    let left =
        (n.cpu - d.cpu) as f64 / MAX_SPEC_CPU * 0.5 + (n.gpu_left() - d.total_milli()) as f64 / MAX_SPEC_GPU * 0.5;
    (((1.0 - left) * MAX_SCORE as f64) as i64, best_fit(n, d))
}

/// `fgd`: the node (and device) whose fragmentation grows least. The score is
/// `⌊100 × σ(Δ/1000)⌋`, σ the logistic function and Δ the node's fragmented
/// milli-GPUs before minus after the placement, over the target workload; a
/// share goes on the device with the highest score (the lowest-numbered on
/// ties). `before` is the node's weighted fragmentation ([`Target::node`]).
pub fn fgd(n: &NodeView<'_>, d: &Demand, target: &Target, before: i64) -> (i64, Devices) {
    let mut after_gpus = [0u16; lahar_core::world::MAX_NODE_GPUS as usize];
    let gpus = &mut after_gpus[..n.gpus.len()];
    gpus.copy_from_slice(n.gpus);
    let cpu = n.cpu - d.cpu;
    let weight = target.weight();
    if is_share(d) {
        let free = Free { cpu: n.cpu, model: n.model, gpus: n.gpus };
        return lahar_core::frag::fgd_share(target, free, before, d.cpu, d.gpu_milli)
            .map_or((0, Devices::FirstFree), |(s, i)| (s, Devices::Share(i)));
    }
    let mut need = if d.wants_gpu() { d.gpus } else { 0 };
    for g in gpus.iter_mut() {
        if need == 0 {
            break;
        }
        if *g == 1000 {
            *g = 0;
            need -= 1;
        }
    }
    let after = target.node(Free { cpu, model: n.model, gpus });
    let dev = if d.wants_gpu() { Devices::FirstFree } else { Devices::None };
    (sigmoid_score(before - after, weight), dev)
}

#[cfg(test)]
mod tests {
    use super::*;
    use lahar_core::frag::Models;

    fn d(cpu: i64, gpu_milli: u16, gpus: u8) -> Demand {
        Demand { cpu, gpu_milli, gpus, models: Models::ANY }
    }
    fn node(cpu: i64, gpus: &[u16], kinds: u32) -> NodeView<'_> {
        NodeView { cpu, model: Some(0), gpus, kinds }
    }

    #[test]
    fn sigmoid_scores_match_the_logistic_function() {
        for delta in [-9000i64, -2500, -1000, -1, 0, 1, 700, 1000, 4321, 8000] {
            let x = delta as f64 / 1000.0;
            let want = (100.0 / (1.0 + (-x).exp())) as i64;
            assert_eq!(sigmoid_score(delta, 1), want, "Δ = {delta}");
        }
        assert_eq!(sigmoid_score(0, 7), 50);
        assert_eq!(sigmoid_score(2000 * 7, 7), 88, "σ(2) = 0.8808");
    }

    /// 64 free cores and GPUs [1000, 1000, 300, 0]: ĉ·ĉ' = 0.5 × 0.125 and
    /// ĝ·ĝ' = 0.2875 × 0.0625 → dot 0.0804688; ⌊100 × (1 − 0.0402344)⌋ = 95.
    #[test]
    fn dot_product_by_hand() {
        let n = node(64_000, &[1000, 1000, 300, 0], 0);
        assert_eq!(dot_product(&n, &d(16_000, 500, 1)), (95, Devices::Share(0)));
        assert_eq!(dot_product(&n, &d(16_000, 200, 1)), (96, Devices::Share(2)), "dot 0.0696875; best fit on the 300");
    }

    /// (64000 − 16000)/128000/2 + (2300 − 1000)/8000/2 = 0.1875 + 0.08125 → 73.
    #[test]
    fn best_fit_by_hand() {
        let n = node(64_000, &[1000, 1000, 300, 0], 0);
        assert_eq!(best_fit_node(&n, &d(16_000, 1000, 1)), (73, Devices::FirstFree));
    }

    #[test]
    fn gpu_packing_cases() {
        // A free node of 8: max(33 − 8, 8) = 25; of 2: 31.
        assert_eq!(gpu_packing(&node(1, &[1000; 8], 0), &d(0, 500, 1)).0, 25);
        assert_eq!(gpu_packing(&node(1, &[1000; 2], 0), &d(0, 500, 1)).0, 31);
        // Used node, the share fits a shared device with 600 free: 100 − 60/10 = 94.
        assert_eq!(gpu_packing(&node(1, &[1000, 600, 0], 0), &d(0, 500, 1)), (94, Devices::Share(1)));
        // It needs a free device: 50 − 1 = 49.
        assert_eq!(gpu_packing(&node(1, &[1000, 300, 0], 0), &d(0, 500, 1)), (49, Devices::Share(0)));
        // Two whole GPUs on a used node: max(50 − 2, 33) = 48.
        assert_eq!(gpu_packing(&node(1, &[1000, 1000, 300], 0), &d(0, 1000, 2)).0, 48);
        assert_eq!(gpu_packing(&node(1, &[1000, 1000, 300], 0), &d(0, 0, 0)).0, 0);
    }

    #[test]
    fn gpu_clustering_cases() {
        let share = d(0, 500, 1);
        // 4000 free of 8000: ⌊25 × 4000 / 8000⌋ = 12, plus the kind bonus.
        let g = [1000, 1000, 1000, 1000];
        assert_eq!(gpu_clustering(&node(1, &g, 0b1), &share).0, 12 + 75);
        assert_eq!(gpu_clustering(&node(1, &g, 0b101), &share).0, 12 + 50);
        assert_eq!(gpu_clustering(&node(1, &g, 0), &share).0, 12 + 25);
        assert_eq!(gpu_clustering(&node(1, &g, 0b100), &share).0, 12);
        assert_eq!(kind(&d(0, 1000, 2)), 0b100);
        assert_eq!(kind(&d(0, 1000, 1)), 0b10);
        assert_eq!(kind(&d(5, 0, 0)), 0);
    }

    /// One shape (0.5 GPU, count 1). Node [1000, 700]: before, the 700 device
    /// has room, so nothing is fragmented. On device 1 it leaves 200 (a
    /// fragment: Δ = −200, ⌊100 σ(−0.2)⌋ = 45); on device 0 it leaves 500, room
    /// for another (Δ = 0 → 50). FGD takes device 0.
    #[test]
    fn fgd_by_hand() {
        let share = d(0, 500, 1);
        let t = Target::typical([(share, 1)], 100);
        let n = node(1000, &[1000, 700], 0);
        let before = t.node(n.free());
        assert_eq!(before, 0);
        assert_eq!(fgd(&n, &share, &t, before), (50, Devices::Share(0)));
        let m = node(1000, &[1000, 600], 0);
        // Device 1 leaves 100 (Δ = −100 → 47); device 0 leaves 500 (Δ = 0 → 50).
        assert_eq!(fgd(&m, &share, &t, 0), (50, Devices::Share(0)));
        // Against a whole-GPU shape the 600 device is a fragment (before = 600).
        // The share on it leaves 100 (Δ = 500 → 62); on device 0 it leaves no
        // whole device (all 1100 fragmented: Δ = −500 → 37). FGD takes device 1.
        let whole = d(0, 1000, 1);
        let t2 = Target::typical([(whole, 1)], 100);
        let before = t2.node(m.free());
        assert_eq!(before, 600);
        assert_eq!(fgd(&m, &share, &t2, before), (62, Devices::Share(1)));
    }
}
