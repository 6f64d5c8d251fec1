//! kthena's `disaggregatedTarget`: an `AutoscalingPolicy` that sizes the roles
//! inside one ModelServing (prefill and decode, say) rather than its serving
//! groups (volcano-sh/kthena at 3cc0572,
//! `pkg/autoscaler/autoscaler/disaggregated_scaler.go`,
//! `pkg/autoscaler/algorithm/disaggregated_ratio.go`,
//! `pkg/autoscaler/controller/autoscale_controller.go` `doDisaggregatedScale`).
//!
//! Each role (one or two, by name) is scaled as a homogeneous target of its own
//! ([`super::kthena`]): its own metrics (the policy's when it gives none), its
//! bounds, its own windows and panic mode, the shared tolerance and behaviour;
//! its reading is its own pods over every serving group, its current count the
//! template's `roles[].replicas`. A fixed role (`minReplicas == maxReplicas`,
//! above 0) is never read and stays at that count. If any other role has no
//! recommendation the whole sync does nothing (nothing is recorded). The
//! corrected counts are then brought within the policy's `ratioConstraint`
//! ([`enforce_role_ratio`]) and every changed role is patched in one request.

use super::kthena::{KthenaSpec, KthenaState, Reading};
use crate::util::time::SimTime;
use std::sync::Arc;

/// One role's scaling (`roles[<name>]`).
#[derive(Clone, Debug, PartialEq)]
pub struct RoleParam {
    /// The role's name in the ModelServing's `template.roles`.
    pub name: String,
    /// Its own homogeneous scaling: its effective metrics (its own, else the
    /// policy's), `minReplicas`, `maxReplicas`; tolerance and behaviour the
    /// policy's.
    pub spec: KthenaSpec,
}

impl RoleParam {
    /// A fixed role (`isFixedRole`): `maxReplicas` above 0 and equal to
    /// `minReplicas`; never read, always at that count.
    pub fn fixed(&self) -> bool {
        self.spec.max_replicas > 0 && self.spec.min_replicas == self.spec.max_replicas
    }
}

/// `ratioConstraint`: the numerator role's replicas over the denominator's within
/// `[minRatio, maxRatio]`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Ratio {
    /// The numerator role, an index in [`RolesSpec::roles`].
    pub numerator: usize,
    /// The denominator role, an index in [`RolesSpec::roles`].
    pub denominator: usize,
    /// `minRatio`, in thousandths.
    pub min_milli: i64,
    /// `maxRatio`, in thousandths.
    pub max_milli: i64,
}

/// A policy with a disaggregated target, as read.
#[derive(Clone, Debug, PartialEq)]
pub struct RolesSpec {
    /// `namespace/name`, as scaling.csv names the autoscaler.
    pub name: Arc<str>,
    /// The roles, by name (kthena's deterministic order: `sort.Strings`).
    pub roles: Vec<RoleParam>,
    /// `ratioConstraint`, if any.
    pub ratio: Option<Ratio>,
}

/// One role's outcome of a sync (`RoleScaleResult`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RoleOutcome {
    /// The template's count at the sync.
    pub current: i32,
    /// The metrics' recommendation (`DesiredReplicas`; a fixed role's count).
    pub desired: i32,
    /// After the role's own correction (windows, rate limits, bounds).
    pub corrected: i32,
    /// The count to patch, after the correction and the ratio.
    pub patched: i32,
    /// Whether the role's correction ran in panic mode.
    pub panic: bool,
}

/// A sync's outcome: each role's, and whether the ratio changed the counts.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RolesOutcome {
    /// In the order of [`RolesSpec::roles`].
    pub roles: Vec<RoleOutcome>,
    /// `RatioAdjusted`.
    pub ratio_adjusted: bool,
}

/// A policy's memory between syncs: one [`KthenaState`] per role.
#[derive(Clone, Debug)]
pub struct RolesState {
    states: Vec<KthenaState>,
}

impl RolesState {
    /// At the policy's creation (`NewDisaggregatedAutoscaler`).
    pub fn new(spec: &RolesSpec) -> RolesState {
        RolesState { states: spec.roles.iter().map(|r| KthenaState::new(&r.spec)).collect() }
    }

    /// One sync at `now` (`DisaggregatedAutoscaler.Scale`) with each role's
    /// reading (`readings[i].replicas` its current count): `None` when a role
    /// that is not fixed has no recommendation — no role is then recorded.
    pub fn scale(&mut self, spec: &RolesSpec, now: SimTime, readings: &[Reading]) -> Option<RolesOutcome> {
        // Computed on a copy, kept only when every role had its recommendation
        // (kthena records the roles' results after the loop).
        let mut next = self.states.clone();
        let mut roles = Vec::with_capacity(spec.roles.len());
        for (i, role) in spec.roles.iter().enumerate() {
            let current = readings[i].replicas;
            if role.fixed() {
                let n = role.spec.min_replicas;
                roles.push(RoleOutcome { current, desired: n, corrected: n, patched: n, panic: false });
                continue;
            }
            let o = next[i].scale(&role.spec, now, &readings[i])?;
            roles.push(RoleOutcome {
                current,
                desired: o.recommended,
                corrected: o.replicas,
                patched: o.replicas,
                panic: o.panic,
            });
        }
        self.states = next;
        let mut counts: Vec<i32> = roles.iter().map(|r| r.patched).collect();
        let bounds: Vec<(i32, i32)> = spec.roles.iter().map(|r| (r.spec.min_replicas, r.spec.max_replicas)).collect();
        let ratio_adjusted = enforce_role_ratio(&mut counts, &bounds, spec.ratio.as_ref());
        for (r, c) in roles.iter_mut().zip(counts) {
            r.patched = c;
        }
        Some(RolesOutcome { roles, ratio_adjusted })
    }
}

/// One role of a ModelServing's template as lahar lays it out in each
/// serving group's job: a role replica (ordinal `r`) is its entry task and,
/// with workers, its worker task; the job holds tasks for every ordinal the
/// policy may ask for, those not made having no pods.
#[derive(Clone, Debug, PartialEq)]
pub struct TemplateRole {
    /// `roles[].name`.
    pub name: String,
    /// `roles[].replicas` as written (the count at the start).
    pub replicas: u32,
    /// `workerReplicas`.
    pub workers: u32,
    /// `gangPolicy.minRoleReplicas[name]`, if given.
    pub min_role: Option<u32>,
    /// One role replica's container requests as written (its entry and
    /// workers): the PodGroup's `minResources` counts them.
    pub written: crate::model::resource::Resources,
    /// Each ordinal's tasks in the group's job: (entry, workers).
    pub slots: Vec<(u16, Option<u16>)>,
}

/// A ModelServing's template roles as read (their `slots` empty until its
/// groups' jobs are laid out for a policy that scales them).
#[derive(Clone, Debug)]
pub struct ServingTemplate {
    /// The ModelServing's namespace.
    pub namespace: String,
    /// Its name.
    pub name: String,
    /// Its template's roles, in order.
    pub roles: Vec<TemplateRole>,
}

/// A ModelServing's roles in its serving groups' jobs, and which of them
/// the policy scales.
#[derive(Clone, Debug, PartialEq)]
pub struct Layout {
    /// The template's roles, in order (the job's sub-group policies' order).
    pub roles: Vec<TemplateRole>,
    /// For each role of the policy ([`RolesSpec::roles`]), its template role.
    pub of_policy: Vec<usize>,
}

impl Layout {
    /// The PodGroup kthena's controller writes for role counts `counts` (one
    /// per template role; `calculateRequirements`, `appendSubGroupPolicy`):
    /// `minMember` = Σ (1 + workers) × min(minRoleReplicas, replicas),
    /// `minResources` the same role replicas' requests as written, and each
    /// role's `minSubGroups` min(minRoleReplicas, replicas).
    pub fn gang(&self, counts: &[u32]) -> (u32, crate::model::resource::Resources, Vec<u32>) {
        let mut member = 0;
        let mut res = crate::model::resource::Resources::ZERO;
        let mut subs = Vec::with_capacity(self.roles.len());
        for (r, &n) in self.roles.iter().zip(counts) {
            let m = r.min_role.map_or(n, |m| m.min(n));
            member += (1 + r.workers) * m;
            res += r.written.times(i64::from(m));
            subs.push(m);
        }
        (member, res, subs)
    }
}

/// `EnforceRoleRatio`: each count clamped to its role's `(min, max)`; then,
/// with a ratio, both roles at zero stay there; one at zero is raised to 1
/// (within its bounds); a ratio below `minRatio` raises the numerator to
/// ⌈minRatio × denominator⌉ if its maximum allows, else saturates it and lowers
/// the denominator to ⌊numerator / minRatio⌋; above `maxRatio` the same on the
/// other side (a `maxRatio` of 0 zeroes the numerator); both clamped again.
/// Returns whether the ratio changed anything (`adjusted`). Floats as kthena
/// computes them.
pub fn enforce_role_ratio(counts: &mut [i32], bounds: &[(i32, i32)], ratio: Option<&Ratio>) -> bool {
    for (c, &(lo, hi)) in counts.iter_mut().zip(bounds) {
        *c = (*c).max(lo).min(hi);
    }
    let Some(r) = ratio else { return false };
    let (ni, di) = (r.numerator, r.denominator);
    let (mut n, mut d) = (counts[ni], counts[di]);
    let ((nlo, nhi), (dlo, dhi)) = (bounds[ni], bounds[di]);
    if n == 0 && d == 0 {
        return false;
    }
    let (min_ratio, max_ratio) = (r.min_milli as f64 / 1000.0, r.max_milli as f64 / 1000.0);
    let mut adjusted = false;
    if n == 0 {
        n = 1.max(nlo).min(nhi);
        adjusted = true;
    }
    if d == 0 {
        d = 1.max(dlo).min(dhi);
        adjusted = true;
    }
    let ratio = f64::from(n) / f64::from(d);
    if ratio < min_ratio {
        let raised = ceil_i32(min_ratio * f64::from(d));
        if raised <= nhi {
            n = raised.max(nlo);
        } else if min_ratio > 0.0 {
            n = nhi;
            d = floor_i32(f64::from(n) / min_ratio).max(dlo).min(dhi);
        }
        adjusted = true;
    } else if ratio > max_ratio {
        if max_ratio <= 0.0 {
            n = 0;
        } else {
            let raised = ceil_i32(f64::from(n) / max_ratio);
            if raised <= dhi {
                d = raised.max(dlo);
            } else {
                d = dhi;
                n = floor_i32(max_ratio * f64::from(d)).max(nlo).min(nhi);
            }
        }
        adjusted = true;
    }
    counts[ni] = n.max(nlo).min(nhi);
    counts[di] = d.max(dlo).min(dhi);
    adjusted
}

/// `ceilInt32`: saturating.
fn ceil_i32(v: f64) -> i32 {
    if v.is_nan() { 0 } else { v.ceil().clamp(f64::from(i32::MIN), f64::from(i32::MAX)) as i32 }
}

/// `floorInt32`: saturating.
fn floor_i32(v: f64) -> i32 {
    if v.is_nan() { 0 } else { v.floor().clamp(f64::from(i32::MIN), f64::from(i32::MAX)) as i32 }
}

#[cfg(test)]
mod tests {
    use super::super::kthena::{Metric, Panic, Select, Source, Stable};
    use super::*;

    /// kthena's `TestEnforceRoleRatio` (`algorithm/disaggregated_ratio_test.go`),
    /// every case by its name: prefill / decode within [0.25, 1], bounds
    /// prefill 0–8 and decode 0–16 unless a case gives its own.
    #[test]
    fn test_enforce_role_ratio() {
        let ratio = Ratio { numerator: 0, denominator: 1, min_milli: 250, max_milli: 1000 };
        let bounds = [(0, 8), (0, 16)];
        // (name, replicas, bounds, constraint, want, adjusted)
        type Case = (&'static str, [i32; 2], [(i32, i32); 2], Option<Ratio>, [i32; 2], bool);
        let cases: [Case; 8] = [
            ("already within ratio", [2, 4], bounds, Some(ratio), [2, 4], false),
            ("below min raises numerator first", [1, 8], bounds, Some(ratio), [2, 8], true),
            ("above max raises denominator first", [6, 2], bounds, Some(ratio), [6, 6], true),
            (
                "fallback saturates numerator before lowering denominator",
                [2, 20],
                [(0, 3), (0, 20)],
                Some(ratio),
                [3, 12],
                true,
            ),
            ("zero numerator is raised to keep both roles available", [0, 4], bounds, Some(ratio), [1, 4], true),
            ("zero denominator is raised before ratio repair", [4, 0], bounds, Some(ratio), [4, 4], true),
            ("both zero preserves coupled scale to zero", [0, 0], bounds, Some(ratio), [0, 0], false),
            ("nil constraint only clamps", [10, 4], bounds, None, [8, 4], false),
        ];
        for (name, mut counts, b, r, want, adjusted) in cases {
            let got = enforce_role_ratio(&mut counts, &b, r.as_ref());
            assert_eq!((counts, got), (want, adjusted), "{name}");
        }
    }

    fn role(name: &str, min: i32, max: i32, target: i64) -> RoleParam {
        RoleParam {
            name: name.into(),
            spec: KthenaSpec {
                name: "default/p".into(),
                tolerance_percent: 10,
                metrics: vec![Metric { name: "rps".into(), target_milli: target, source: Some(Source::Prometheus) }],
                up: Stable { instances: 4, percent: 100, period_ms: 15_000, select: Select::Or, window_ms: 30_000 },
                panic: Panic { percent: 0, period_ms: 0, threshold_percent: 200, hold_ms: 0 },
                down: Stable { instances: 1, percent: 100, period_ms: 15_000, select: Select::Or, window_ms: 0 },
                min_replicas: min,
                max_replicas: max,
            },
        }
    }

    fn reading(replicas: i32, rps: Option<i64>) -> Reading {
        Reading { replicas, demand: rps.map(|r| r * 1000), ready_pods: replicas as u32, unready_pods: 0 }
    }

    /// By hand (decode 0–16 at 5 req/s a replica, prefill 0–8 at 20, ratio
    /// prefill/decode within [0.25, 1]):
    /// - 60 req/s, prefill 1 and decode 2: decode wants 12 (limited to 2 + 4 =
    ///   6 by the stable rate), prefill 3 (1 + 4 allows it); 3 / 6 = 0.5: kept.
    /// - a role with no reading stops the whole sync, and nothing is recorded;
    /// - a fixed role keeps its count whatever it reads, and the ratio lowers
    ///   the other.
    #[test]
    fn roles_scale_each_then_meet_the_ratio() {
        let spec = RolesSpec {
            name: "default/p".into(),
            roles: vec![role("decode", 0, 16, 5_000), role("prefill", 0, 8, 20_000)],
            ratio: Some(Ratio { numerator: 1, denominator: 0, min_milli: 250, max_milli: 1000 }),
        };
        let mut st = RolesState::new(&spec);
        let o = st.scale(&spec, SimTime(0), &[reading(2, Some(60)), reading(1, Some(60))]).unwrap();
        let got: Vec<(i32, i32, i32)> = o.roles.iter().map(|r| (r.current, r.desired, r.patched)).collect();
        assert_eq!(got, vec![(2, 12, 6), (1, 3, 3)]);
        assert!(!o.ratio_adjusted);
        // A sync where prefill has no reading does nothing, and records
        // nothing: decode's low recommendation (10 req/s: 2) is not kept in
        // its 30 s scale-up window.
        let none = st.scale(&spec, SimTime(15_000_000), &[reading(6, Some(10)), reading(3, None)]);
        assert_eq!(none, None);
        // 100 req/s: decode 6 → 16 (20 at most 16), the window's smallest
        // recommendation 12, the rate 6 + 6: 12; prefill 3 → 5, the window's
        // smallest 3: 3; 3 / 12 = 0.25, within the ratio.
        let o = st.scale(&spec, SimTime(15_000_000), &[reading(6, Some(100)), reading(3, Some(100))]).unwrap();
        let got: Vec<i32> = o.roles.iter().map(|r| r.patched).collect();
        assert_eq!(got, vec![12, 3]);
        // A fixed prefill of 2 while decode wants 16 (at most 12 + 12):
        // 2 / 16 = 0.125 < 0.25 and prefill cannot rise: decode lowered to 8.
        let mut fixed = spec.clone();
        fixed.roles[1] = role("prefill", 2, 2, 20_000);
        let mut st = RolesState::new(&fixed);
        let o = st.scale(&fixed, SimTime(0), &[reading(12, Some(200)), reading(2, None)]).unwrap();
        let got: Vec<(i32, i32)> = o.roles.iter().map(|r| (r.desired, r.patched)).collect();
        assert_eq!(got, vec![(16, 8), (2, 2)]);
        assert!(o.ratio_adjusted);
    }
}
