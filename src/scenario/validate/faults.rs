//! `spec.faults`: random failures, a failure trace (CSV), drains. Everything is
//! checked here, before any work: patterns must match nodes, distributions
//! their parameters, every trace row its columns. Switch targets name
//! HyperNodes, which exist once the topology is built: [`resolve`] finishes
//! them then.

use super::{At, V, at};
use crate::scenario::error::Diagnostic;
use crate::scenario::raw::*;
use lahar_core::faults::{Dist, FaultPlan, FaultRule, Outage, OutageKind, RuleScope, Target};
use lahar_core::model::cluster::{Node, NodeId};
use lahar_core::model::topology::{HyperNodeId, Topology};
use lahar_core::util::text::wildcard_match;
use lahar_core::util::time::{SimDuration, SimTime, parse_duration};
use serde_saphyr::Spanned;
use std::path::Path;
use std::sync::Arc;

/// A rule or outage whose HyperNodes are named, not yet found.
pub(crate) enum Pending {
    /// A switch rule: every HyperNode of this tier.
    Tier { rule: usize, tier: u32, at: At, path: String },
    /// A trace row's switch: the HyperNode of this name.
    Named { outage: usize, name: String, file: String, line: u64 },
}

/// `spec.faults`, checked; switch targets still by name.
pub(crate) struct Draft {
    pub plan: FaultPlan,
    pub pending: Vec<Pending>,
}

/// The nodes a `nodes:` pattern (`*` any run, `?` one character) names.
pub(super) fn matching(nodes: &[Node], pattern: &str) -> Vec<NodeId> {
    nodes.iter().enumerate().filter(|(_, n)| wildcard_match(pattern, &n.name)).map(|(i, _)| NodeId(i as u32)).collect()
}

fn dist(v: &mut V<'_>, d: &Spanned<RawDist>, path: &str) -> Option<Dist> {
    let r = &d.value;
    let name = r.distribution.value.as_str();
    let allowed: &[&str] = match name {
        "fixed" => &["value"],
        "exponential" => &["mean"],
        "weibull" => &["shape", "scale"],
        "lognormal" => &["median", "sigma"],
        _ => {
            v.err(
                at(&r.distribution),
                format!("{path}.distribution"),
                format!("`{name}`: expected fixed, exponential, weibull or lognormal"),
            );
            return None;
        }
    };
    let given: [(&str, Option<At>); 6] = [
        ("value", r.value.as_ref().map(at)),
        ("mean", r.mean.as_ref().map(at)),
        ("scale", r.scale.as_ref().map(at)),
        ("median", r.median.as_ref().map(at)),
        ("shape", r.shape.as_ref().map(at)),
        ("sigma", r.sigma.as_ref().map(at)),
    ];
    let mut ok = true;
    for (field, a) in given {
        match (a, allowed.contains(&field)) {
            (Some(a), false) => {
                v.err(
                    a,
                    format!("{path}.{field}"),
                    format!("has no meaning for a {name} distribution (it takes {})", allowed.join(", ")),
                );
                ok = false;
            }
            (None, true) => {
                v.err(at(d), format!("{path}.{field}"), format!("a {name} distribution needs `{field}`"));
                ok = false;
            }
            _ => {}
        }
    }
    if !ok {
        return None;
    }
    let positive = |v: &mut V<'_>, s: &Option<Spanned<String>>, field: &str| -> Option<SimDuration> {
        let s = s.as_ref()?;
        match v.duration(s, &format!("{path}.{field}"))? {
            SimDuration(0) => {
                v.err(at(s), format!("{path}.{field}"), "must be longer than 0");
                None
            }
            d => Some(d),
        }
    };
    let real = |v: &mut V<'_>, s: &Option<Spanned<f64>>, field: &str, zero_ok: bool| -> Option<f64> {
        let s = s.as_ref()?;
        let x = s.value;
        if !(x.is_finite() && (x > 0.0 || (zero_ok && x == 0.0)) && x <= 100.0) {
            let want = if zero_ok { "≥ 0" } else { "above 0" };
            v.err(at(s), format!("{path}.{field}"), format!("expected a number {want} and at most 100, got {x}"));
            return None;
        }
        Some(x)
    };
    Some(match name {
        "fixed" => Dist::Fixed(positive(v, &r.value, "value")?),
        "exponential" => Dist::Exponential { mean: positive(v, &r.mean, "mean")? },
        "weibull" => {
            let shape = real(v, &r.shape, "shape", false);
            Dist::Weibull { scale: positive(v, &r.scale, "scale")?, shape: shape? }
        }
        _ => {
            let sigma = real(v, &r.sigma, "sigma", true);
            Dist::LogNormal { median: positive(v, &r.median, "median")?, sigma: sigma? }
        }
    })
}

/// `spec.faults`.
pub(super) fn faults(v: &mut V<'_>, f: &Spanned<RawFaults>, nodes: &[Node], base: &Path) -> Draft {
    let mut draft = Draft { plan: FaultPlan::default(), pending: Vec::new() };
    for (i, r) in f.value.random.iter().flatten().enumerate() {
        let path = format!("spec.faults.random[{i}]");
        rule(v, &mut draft, r, &path, i, nodes);
    }
    if let Some(t) = &f.value.trace {
        trace(v, &mut draft, t, nodes, base);
    }
    for (i, d) in f.value.drains.iter().flatten().enumerate() {
        let path = format!("spec.faults.drains[{i}]");
        let r = &d.value;
        let start = v.duration(&r.at, &format!("{path}.at"));
        let duration = v.duration(&r.duration, &format!("{path}.duration"));
        let deadline = match &r.deadline {
            Some(x) => v.duration(x, &format!("{path}.deadline")),
            None => Some(SimDuration::ZERO),
        };
        let targets = matching(nodes, &r.nodes.value);
        if targets.is_empty() {
            v.err(at(&r.nodes), format!("{path}.nodes"), format!("`{}` matches no node", r.nodes.value));
        }
        if let (Some(s), Some(d), Some(deadline)) = (start, duration, deadline) {
            draft.plan.outages.push(Outage {
                at: SimTime::ZERO.plus(s),
                target: Target::Nodes(targets),
                duration: d,
                kind: OutageKind::Drain { deadline },
                cause: format!("drains[{i}]").into(),
            });
        }
    }
    // Listed outages by start time, ties in the order given (trace rows, then drains).
    let mut order: Vec<usize> = (0..draft.plan.outages.len()).collect();
    order.sort_by_key(|&k| (draft.plan.outages[k].at, k));
    let mut outages: Vec<Option<Outage>> = std::mem::take(&mut draft.plan.outages).into_iter().map(Some).collect();
    let new_index: Vec<usize> = {
        let mut at = vec![0; order.len()];
        for (new, &old) in order.iter().enumerate() {
            at[old] = new;
        }
        at
    };
    draft.plan.outages = order.iter().map(|&k| outages[k].take().expect("each once")).collect();
    for p in &mut draft.pending {
        if let Pending::Named { outage, .. } = p {
            *outage = new_index[*outage];
        }
    }
    draft
}

fn rule(v: &mut V<'_>, draft: &mut Draft, r: &Spanned<RawFaultRule>, path: &str, i: usize, nodes: &[Node]) {
    let raw = &r.value;
    let name: Arc<str> = match &raw.name {
        Some(n) if n.value.is_empty() || n.value.contains(['/', ',', '\n']) => {
            v.err(at(n), format!("{path}.name"), "expected a name without `/`, `,` or line breaks");
            return;
        }
        Some(n) => n.value.as_str().into(),
        None => format!("random[{i}]").into(),
    };
    if draft.plan.rules.iter().any(|r| r.name == name) {
        let a = raw.name.as_ref().map_or(at(r), at);
        v.err(a, format!("{path}.name"), format!("`{name}` names two rules (each rule's name is its random stream)"));
    }
    let scope = raw.scope.as_ref().map_or("node", |s| s.value.as_str());
    let between = dist(v, &raw.between, &format!("{path}.between"));
    let repair = dist(v, &raw.repair, &format!("{path}.repair"));
    let misplaced = |v: &mut V<'_>, a: Option<At>, field: &str, why: &str| {
        if let Some(a) = a {
            v.err(a, format!("{path}.{field}"), why.to_string());
        }
    };
    let (scope, units) = match scope {
        "node" | "gpu" => {
            misplaced(v, raw.tier.as_ref().map(at), "tier", "only a `scope: switch` rule takes a tier");
            let pattern = raw.nodes.as_ref().map_or("*", |n| n.value.as_str());
            let units = matching(nodes, pattern);
            if units.is_empty() {
                v.err(
                    raw.nodes.as_ref().map_or(at(r), at),
                    format!("{path}.nodes"),
                    format!("`{pattern}` matches no node"),
                );
            }
            let scope = if scope == "gpu" {
                let k = match &raw.gpus {
                    Some(g) => v.count(g, &format!("{path}.gpus"), 1).unwrap_or(1),
                    None => 1,
                };
                for &n in &units {
                    let node = &nodes[n.0 as usize];
                    if node.allocatable.gpu_milli() < 1000 {
                        v.err(
                            at(r),
                            format!("{path}.nodes"),
                            format!("node `{}` has no whole GPU to fail (use `scope: node`)", node.name),
                        );
                        break;
                    }
                    if !node.vgpu.is_empty() {
                        v.err(at(r), format!("{path}.scope"), format!("node `{}` shares its GPUs as vGPU cards: GPU faults are not modelled on them (use `scope: node`)", node.name));
                        break;
                    }
                }
                RuleScope::Gpus(k)
            } else {
                misplaced(v, raw.gpus.as_ref().map(at), "gpus", "only a `scope: gpu` rule takes a GPU count");
                RuleScope::Node
            };
            (scope, units.into_iter().map(|n| n.0).collect())
        }
        "switch" => {
            misplaced(
                v,
                raw.nodes.as_ref().map(at),
                "nodes",
                "a switch rule fails the HyperNodes of its `tier`, not nodes",
            );
            misplaced(v, raw.gpus.as_ref().map(at), "gpus", "only a `scope: gpu` rule takes a GPU count");
            match &raw.tier {
                Some(t) => {
                    if let Some(tier) = v.count(t, &format!("{path}.tier"), 1) {
                        draft.pending.push(Pending::Tier {
                            rule: draft.plan.rules.len(),
                            tier,
                            at: at(t),
                            path: format!("{path}.tier"),
                        });
                    }
                }
                None => v.err(
                    at(r),
                    format!("{path}.tier"),
                    "a switch rule needs the `tier` of the HyperNodes that fail (1 = leaf)",
                ),
            }
            (RuleScope::Switch, Vec::new())
        }
        other => {
            let a = raw.scope.as_ref().map_or(at(r), at);
            v.err(a, format!("{path}.scope"), format!("`{other}`: expected node, gpu or switch"));
            return;
        }
    };
    if let (Some(between), Some(repair)) = (between, repair) {
        draft.plan.rules.push(FaultRule { name, scope, units, between, repair });
    }
}

/// The columns of a failure trace, in order; `gpus` and `deadline` may be left empty.
pub const TRACE_COLUMNS: [&str; 6] = ["time", "target", "duration", "kind", "gpus", "deadline"];

fn trace(v: &mut V<'_>, draft: &mut Draft, t: &Spanned<String>, nodes: &[Node], base: &Path) {
    let path = lahar_core::util::files::join(base, &t.value);
    let file = path.display().to_string();
    let mut errs: Vec<Diagnostic> = Vec::new();
    let mut err = |line: u64, column: &str, message: String| {
        errs.push(Diagnostic { file: file.clone(), at: Some((line, 1)), path: column.to_string(), message });
    };
    let text = match lahar_core::util::files::read_to_string(&path) {
        Ok(s) => s,
        Err(e) => {
            v.err(at(t), "spec.faults.trace", format!("cannot read `{file}`: {e}"));
            return;
        }
    };
    let mut rows = csv::ReaderBuilder::new()
        .has_headers(true)
        .trim(csv::Trim::All)
        .comment(Some(b'#'))
        .from_reader(lahar_core::util::files::LfLines::new(text.as_bytes()));
    let header: Vec<String> = match rows.headers() {
        Ok(h) => h.iter().map(str::to_string).collect(),
        Err(e) => {
            err(1, "header", format!("not CSV: {e}"));
            v.errors.append(&mut errs);
            return;
        }
    };
    let want: Vec<&str> = TRACE_COLUMNS.to_vec();
    if header.len() < 4 || header.len() > 6 || header.iter().zip(&want).any(|(h, w)| h != w) {
        err(
            1,
            "header",
            format!(
                "expected the columns `{}` (the last two may be left out), got `{}`",
                want.join(","),
                header.join(",")
            ),
        );
        v.errors.append(&mut errs);
        return;
    }
    for rec in rows.records() {
        let rec = match rec {
            Ok(r) => r,
            Err(e) => {
                let line = e.position().map_or(0, |p| p.line());
                err(line, "row", e.to_string());
                continue;
            }
        };
        let line = rec.position().map_or(0, |p| p.line());
        let field = |k: usize| rec.get(k).unwrap_or("");
        let dur = |err: &mut dyn FnMut(u64, &str, String), k: usize| match parse_duration(field(k)) {
            Ok(d) => Some(d),
            Err(e) => {
                err(line, TRACE_COLUMNS[k], format!("`{}`: {e}", field(k)));
                None
            }
        };
        let time = dur(&mut err, 0);
        let duration = dur(&mut err, 2);
        let target = field(1).to_string();
        let kind = match field(3) {
            "node" => Some(OutageKind::Node),
            "switch" => Some(OutageKind::Switch),
            "gpu" => match field(4) {
                "" => Some(OutageKind::Gpus(1)),
                g => match g.parse::<u32>() {
                    Ok(k) if k >= 1 => Some(OutageKind::Gpus(k)),
                    _ => {
                        err(line, "gpus", format!("`{g}`: expected a whole number of GPUs ≥ 1"));
                        None
                    }
                },
            },
            "drain" => match field(5) {
                "" => Some(OutageKind::Drain { deadline: SimDuration::ZERO }),
                _ => dur(&mut err, 5).map(|deadline| OutageKind::Drain { deadline }),
            },
            k => {
                err(line, "kind", format!("`{k}`: expected node, gpu, switch or drain"));
                None
            }
        };
        if !matches!(kind, Some(OutageKind::Gpus(_))) && !field(4).is_empty() && kind.is_some() {
            err(line, "gpus", "only a `gpu` row takes a GPU count".into());
        }
        if !matches!(kind, Some(OutageKind::Drain { .. })) && !field(5).is_empty() && kind.is_some() {
            err(line, "deadline", "only a `drain` row takes a deadline".into());
        }
        let Some(kind) = kind else { continue };
        let (Some(time), Some(duration)) = (time, duration) else { continue };
        let cause: Arc<str> = format!("trace:{line}").into();
        let target = match kind {
            OutageKind::Switch => {
                draft.pending.push(Pending::Named {
                    outage: draft.plan.outages.len(),
                    name: target,
                    file: file.clone(),
                    line,
                });
                Target::HyperNode(HyperNodeId(u32::MAX))
            }
            _ => {
                let found = matching(nodes, &target);
                if found.is_empty() {
                    err(line, "target", format!("`{target}` matches no node"));
                    continue;
                }
                if let OutageKind::Gpus(_) = kind
                    && let Some(n) = found
                        .iter()
                        .map(|n| &nodes[n.0 as usize])
                        .find(|n| n.allocatable.gpu_milli() < 1000 || !n.vgpu.is_empty())
                {
                    err(
                        line,
                        "target",
                        format!("node `{}` has no whole GPUs a GPU fault could take (none, or vGPU cards)", n.name),
                    );
                    continue;
                }
                Target::Nodes(found)
            }
        };
        draft.plan.outages.push(Outage { at: SimTime::ZERO.plus(time), target, duration, kind, cause });
    }
    v.errors.append(&mut errs);
}

/// Finds the HyperNodes switch faults name, once the topology is built.
pub(crate) fn resolve(v: &mut V<'_>, mut draft: Draft, topology: &Topology) -> FaultPlan {
    for p in draft.pending {
        match p {
            Pending::Tier { rule, tier, at, path } => {
                let units: Vec<u32> = topology
                    .hypernodes
                    .iter()
                    .enumerate()
                    .filter(|(_, h)| h.tier == tier && !h.virtual_top)
                    .map(|(i, _)| i as u32)
                    .collect();
                if units.is_empty() {
                    v.err(
                        at,
                        path,
                        format!("the cluster has no HyperNode of tier {tier} (give it `fabric` tiers or HyperNodes)"),
                    );
                }
                if let Some(r) = draft.plan.rules.get_mut(rule) {
                    r.units = units;
                }
            }
            Pending::Named { outage, name, file, line } => {
                match topology.hypernodes.iter().position(|h| h.name == name && !h.virtual_top) {
                    Some(h) => draft.plan.outages[outage].target = Target::HyperNode(HyperNodeId(h as u32)),
                    None => v.errors.push(Diagnostic {
                        file,
                        at: Some((line, 1)),
                        path: "target".into(),
                        message: format!("`{name}` is no HyperNode of the cluster"),
                    }),
                }
            }
        }
    }
    draft.plan
}
