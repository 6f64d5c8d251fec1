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
//! world keeps what each pod took ([`CardUse`]) while the pod holds its node. On
//! a MIG node a card is cut into instances of one geometry group (`mig.rs`).

mod input;
mod mig;
#[cfg(test)]
mod tests;

pub use input::*;
pub use mig::*;

use crate::model::ids::{JobId, PodId};

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
#[derive(Clone, Debug, PartialEq, Eq)]
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
    /// The `deviceshare.GPUExclusiveRules` its pod matches (bit r: rule r).
    pub rules: u64,
    /// Its pod is releasing: it holds nothing (Volcano frees an evicted pod's
    /// card at once) but keeps the card exclusive to its rules until it is gone,
    /// and gets the same card back if the eviction is undone.
    pub releasing: bool,
    /// The MIG instances it holds on the card.
    pub slots: Vec<MigSlot>,
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
    /// Its MIG instances in use (MIG nodes only).
    pub mig: MigUse,
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

/// The card order of `policy` over usage `u` (`sortedDeviceIndicesByPolicy`),
/// into `idx` (as long as `u`).
fn order_into(policy: VgpuPolicy, u: &[(u32, i64, i64)], idx: &mut [u8]) {
    for (i, x) in idx.iter_mut().enumerate() {
        *x = i as u8;
    }
    match policy {
        VgpuPolicy::Binpack => idx.sort_by(|&a, &b| u[b as usize].1.cmp(&u[a as usize].1).then(a.cmp(&b))),
        VgpuPolicy::Spread => idx.sort_by(|&a, &b| u[a as usize].0.cmp(&u[b as usize].0).then(a.cmp(&b))),
        VgpuPolicy::IndexDescending => idx.reverse(),
    }
}

/// The most cards a node may register.
pub const MAX_NODE_CARDS: usize = 64;

/// Volcano's HAMi-core node mode.
pub const HAMI_CORE: &str = "hami-core";
/// Volcano's MIG node mode.
pub const MIG: &str = "mig";

/// [`fit_exclusive`] for a pod that matches no exclusive rule, with Volcano's
/// message for a refusal.
pub fn fit(
    cards: &[VgpuCard],
    uses: &[CardUse],
    ask: &VgpuAsk,
    group: JobId,
    policy: VgpuPolicy,
    node: &str,
) -> Result<VgpuFit, String> {
    fit_exclusive(cards, uses, ask, group, 0, policy).map_err(|r| r.message(ask, node))
}

/// Why a pod's cards do not fit a node.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Refusal {
    /// The pod asks for another sharing mode than the node's (`true`: the
    /// node is a MIG node).
    Mode(bool),
    /// A container asks for more cards than the node has.
    Cards,
    /// No card passes the pod's UUID filters.
    Uuid,
    /// Not enough cards pass.
    Fit,
}

impl Refusal {
    /// The message Volcano logs for it.
    pub fn message(self, ask: &VgpuAsk, node: &str) -> String {
        match self {
            Refusal::Mode(mig) => format!(
                "pod required sharing mode {} is not the same as the node mode {}",
                ask.mode.as_deref().unwrap_or_default(),
                if mig { MIG } else { HAMI_CORE }
            ),
            Refusal::Cards => format!("no enough gpu cards on node {node}"),
            Refusal::Uuid => format!(
                "no GPU matches UUID constraints volcano.sh/vgpu-use-gpuuuid={:?}, \
                 volcano.sh/vgpu-nouse-gpuuuid={:?} on node {node}",
                ask.uuid_text.0, ask.uuid_text.1
            ),
            Refusal::Fit => "not enough gpu fitted on this node".into(),
        }
    }
}

/// Fits `ask` on a node's `cards` in use as `uses`, for a pod of `group`
/// matching the exclusive rules `rules` (a mask, see [`rule_mask`]): the cards
/// each container takes, or why none fit. Containers are placed in order, each
/// on distinct cards, each seeing what the containers before it took. A card
/// holding a pod (releasing included) that matches one of the pod's rules counts
/// as full for it, as Volcano's exclusive wrapper caps such a card's `Number` at
/// its sharers. (Called per pod and node by the predicate and the score, so it
/// works on the stack: a node has at most [`MAX_NODE_CARDS`] cards.)
pub fn fit_exclusive(
    cards: &[VgpuCard],
    uses: &[CardUse],
    ask: &VgpuAsk,
    group: JobId,
    rules: u64,
    policy: VgpuPolicy,
) -> Result<VgpuFit, Refusal> {
    let mig = node_mig(cards);
    if ask.mode.as_deref().is_some_and(|m| m != if mig { MIG } else { HAMI_CORE }) {
        return Err(Refusal::Mode(mig));
    }
    // Volcano's exclusive wrapper wraps HAMi-core nodes only: MIG instances are
    // isolated already.
    let rules = if mig { 0 } else { rules };
    let n = cards.len().min(MAX_NODE_CARDS);
    // Most nodes have at most 16 cards: a small frame for them.
    let (mut u_small, mut u_big) = ([(0u32, 0i64, 0i64); 16], Vec::new());
    let u: &mut [(u32, i64, i64)] = if n <= 16 {
        &mut u_small[..n]
    } else {
        u_big.resize(n, (0, 0, 0));
        &mut u_big
    };
    for (x, c) in u.iter_mut().zip(uses) {
        *x = (c.num, c.memory, c.cores);
    }
    let mut order = [0u8; MAX_NODE_CARDS];
    let mut out = VgpuFit::default();
    for c in &ask.containers {
        if c.nums as usize > n {
            return Err(Refusal::Cards);
        }
        let mut nums = c.nums;
        let mut uuid_matched = false;
        order_into(policy, u, &mut order[..n]);
        for &i in &order[..n] {
            let i = i as usize;
            let card = &cards[i];
            if !ask.uuid_matches(&card.uuid) {
                continue;
            }
            uuid_matched = true;
            let (num, mem, cores) = u[i];
            if card.number <= num || (rules != 0 && uses[i].holders.iter().any(|h| h.rules & rules != 0)) {
                continue;
            }
            let mate = |h: &Holder| !h.releasing && h.group == group && (h.memory > 0 || h.cores > 0);
            if ask.spread && uses[i].holders.iter().any(mate) {
                continue;
            }
            let want = c.memory_on(card.memory, card.percent);
            if card.memory - mem < want
                || cores + c.cores > 100
                || (c.cores == 100 && num > 0)
                || (cores == 100 && c.cores == 0)
                || !(card.kind.starts_with("NVIDIA") || card.kind.contains("NVIDIA"))
                || !ask.type_matches(&card.kind)
            {
                continue;
            }
            // MIG (`TryAddPod`): the smallest instance of the card's group that
            // holds the request (scaled by the memory factor) on the card's
            // instances in use (which Volcano does not update within a fit).
            let (charge, slot) = if mig {
                let req = if card.factor > 1 { want * card.factor } else { want };
                match find_match(&card.groups, &uses[i].mig, req) {
                    Some((slot, slice)) => (if card.factor > 1 { slice / card.factor } else { slice }, Some(slot)),
                    None => continue,
                }
            } else {
                (want, None)
            };
            // A container asking for no card stops at the first that passes
            // (Volcano charges it there without recording it; lahar charges nothing).
            if nums == 0 {
                break;
            }
            u[i] = (num + 1, mem + charge, cores + c.cores);
            out.takes.push((i as u8, charge, c.cores, slot));
            out.score += card_score(policy, card, u[i].0, u[i].1);
            nums -= 1;
            if nums == 0 {
                break;
            }
        }
        if nums > 0 {
            return Err(if ask.uuid_filter_on() && !uuid_matched { Refusal::Uuid } else { Refusal::Fit });
        }
    }
    Ok(out)
}

/// Charges a fit to the cards (`TryAddPod` and `addToPodMap`, and on a MIG
/// card the instance, as `AddPod` marks it) for a pod matching the exclusive
/// rules `rules`.
pub(crate) fn take(cards: &[VgpuCard], uses: &mut [CardUse], fit: &VgpuFit, pod: PodId, group: JobId, rules: u64) {
    for &(c, mem, cores, slot) in &fit.takes {
        let u = &mut uses[c as usize];
        u.num += 1;
        u.memory += mem;
        u.cores += cores;
        if let Some(s) = slot {
            add_used(&cards[c as usize].groups, &mut u.mig, s);
        }
        match u.holders.iter_mut().find(|h| h.pod == pod) {
            Some(h) => {
                h.count += 1;
                h.memory += mem;
                h.cores += cores;
                h.slots.extend(slot);
            }
            None => u.holders.push(Holder {
                pod,
                group,
                count: 1,
                memory: mem,
                cores,
                rules,
                releasing: false,
                slots: slot.into_iter().collect(),
            }),
        }
    }
}

/// Returns what `pod` holds on the cards (`SubPod`) and forgets it.
pub(crate) fn give_back(cards: &[VgpuCard], uses: &mut [CardUse], pod: PodId) {
    for (card, u) in cards.iter().zip(uses) {
        if let Some(at) = u.holders.iter().position(|h| h.pod == pod) {
            let h = u.holders.remove(at);
            if !h.releasing {
                u.num -= h.count;
                u.memory -= h.memory;
                u.cores -= h.cores;
                for &s in &h.slots {
                    sub_used(&card.groups, &mut u.mig, s);
                }
            }
        }
    }
}

/// `pod` starts releasing (`true`: its cards are free, its entries stay) or
/// stops (`false`: an undone eviction takes the same cards back). Returns
/// whether the pod had cards here.
pub(crate) fn set_releasing(cards: &[VgpuCard], uses: &mut [CardUse], pod: PodId, releasing: bool) -> bool {
    let mut found = false;
    for (card, u) in cards.iter().zip(uses) {
        if let Some(h) = u.holders.iter_mut().find(|h| h.pod == pod && h.releasing != releasing) {
            h.releasing = releasing;
            let sign = if releasing { -1 } else { 1 };
            u.num = (i64::from(u.num) + sign * i64::from(h.count)) as u32;
            u.memory += sign * h.memory;
            u.cores += sign * h.cores;
            for &s in &h.slots {
                if releasing {
                    sub_used(&card.groups, &mut u.mig, s);
                } else {
                    add_used(&card.groups, &mut u.mig, s);
                }
            }
            found = true;
        }
    }
    found
}

/// `deviceshare.GPUExclusiveRules`: label sets, each (label, value) pairs.
pub type ExclusiveRules = Vec<Vec<(String, String)>>;

/// The most exclusive rules a conf may have (a pod's matches are a 64-bit mask).
pub const MAX_EXCLUSIVE_RULES: usize = 64;

/// The rules of `deviceshare.GPUExclusiveRules` a pod with `labels` matches (bit
/// r: rule r): it has every label of the rule with the same value
/// (`podMatchesRule`).
pub fn rule_mask(rules: &[Vec<(String, String)>], labels: &[(String, String)]) -> u64 {
    let has = |(k, v): &(String, String)| labels.iter().any(|(lk, lv)| lk == k && lv == v);
    rules
        .iter()
        .take(MAX_EXCLUSIVE_RULES)
        .enumerate()
        .filter(|(_, r)| r.iter().all(has))
        .fold(0, |m, (i, _)| m | 1 << i)
}
