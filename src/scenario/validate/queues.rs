//! `spec.queues`: weights, quotas, states and the queue tree.

use super::{At, V, at};
use crate::scenario::raw::*;
use lahar_core::model::queue::{Queue, QueueId, QueueState};
use serde_saphyr::Spanned;
use std::collections::{BTreeMap, BTreeSet};

pub(super) fn queues(v: &mut V<'_>, raw: Option<&[Spanned<RawQueue>]>) -> Vec<Queue> {
    let Some(raw) = raw else { return vec![Queue::new("default")] };
    if raw.is_empty() {
        v.err(None, "spec.queues", "list at least one queue, or leave `queues` out for a single `default` queue");
    }
    let mut out = Vec::new();
    let mut seen = BTreeSet::new();
    for (i, rq) in raw.iter().enumerate() {
        let path = format!("spec.queues[{i}]");
        let r = &rq.value;
        let mut q = Queue::new(r.name.value.clone());
        if let Some(why) = lahar_core::util::text::name_problem(&r.name.value) {
            v.err(at(&r.name), format!("{path}.name"), why);
        }
        if r.name.value.is_empty() {
            v.err(at(&r.name), format!("{path}.name"), "expected a non-empty name");
        }
        if !seen.insert(r.name.value.clone()) {
            v.err(at(&r.name), format!("{path}.name"), format!("queue `{}` is defined twice", r.name.value));
        }
        if let Some(w) = &r.weight {
            q.weight = v.count(w, &format!("{path}.weight"), 1).unwrap_or(1);
        }
        if let Some(c) = &r.capability {
            q.capability = v.resource_list(c, &format!("{path}.capability"));
        }
        if let Some(c) = &r.guarantee {
            q.guarantee = v.resource_list(c, &format!("{path}.guarantee"));
        }
        if let Some(c) = &r.deserved {
            q.deserved = v.resource_list(c, &format!("{path}.deserved"));
        }
        q.reclaimable = r.reclaimable.unwrap_or(true);
        q.parent = r.parent.as_ref().map(|p| p.value.clone());
        q.priority = r.priority.unwrap_or(0);
        if let Some(a) = &r.affinity {
            let lists = |g: &Option<RawNodeGroups>| {
                let g = g.as_ref();
                let l = |x: Option<&Vec<String>>| x.cloned().unwrap_or_default();
                (l(g.and_then(|g| g.required.as_ref())), l(g.and_then(|g| g.preferred.as_ref())))
            };
            let (required, preferred) = lists(&a.node_group_affinity);
            let (anti_required, anti_preferred) = lists(&a.node_group_anti_affinity);
            q.node_groups = Some(lahar_core::model::queue::NodeGroupAffinity {
                required,
                preferred,
                anti_required,
                anti_preferred,
            });
        }
        if let Some(s) = &r.state {
            q.state = state(v, s, &format!("{path}.state")).unwrap_or(QueueState::Open);
        }
        out.push(q);
    }
    queue_tree(v, raw, &out);
    out
}

/// The queue tree (`parent`): every parent exists (`root` may be implicit), the root
/// queue has no parent, and there is no cycle.
fn queue_tree(v: &mut V<'_>, raw: &[Spanned<RawQueue>], queues: &[Queue]) {
    let index: BTreeMap<&str, usize> = queues.iter().enumerate().map(|(i, q)| (q.name.as_str(), i)).collect();
    for (i, rq) in raw.iter().enumerate() {
        let Some(p) = &rq.value.parent else { continue };
        let path = format!("spec.queues[{i}].parent");
        if queues[i].name == "root" {
            v.err(at(p), path, "the `root` queue is the top of the queue tree and cannot have a parent");
            continue;
        }
        if p.value == queues[i].name {
            v.err(at(p), path, format!("queue `{}` cannot be its own parent", p.value));
            continue;
        }
        if p.value != "root" && !index.contains_key(p.value.as_str()) {
            let known: Vec<&str> = index.keys().copied().collect();
            v.err(
                at(p),
                path,
                format!("parent queue `{}` does not exist; defined queues: {} (or `root`)", p.value, known.join(", ")),
            );
            continue;
        }
        v.parent_queues.insert(p.value.clone());
        // Walk up; coming back to this queue is a cycle (reported once per member).
        let mut cur = index.get(p.value.as_str()).copied();
        let mut steps = 0;
        while let Some(c) = cur {
            if c == i {
                v.err(
                    at(p),
                    path.clone(),
                    format!("queue `{}` is its own ancestor (cycle in `parent`)", queues[i].name),
                );
                break;
            }
            steps += 1;
            if steps > queues.len() {
                break;
            }
            cur = queues[c].parent.as_deref().and_then(|n| index.get(n).copied());
        }
    }
}

/// A job's queue by name: it exists and is a leaf.
pub(super) fn queue_ref(
    v: &mut V<'_>,
    queues: &BTreeMap<String, QueueId>,
    name: &str,
    at: At,
    path: &str,
) -> Option<QueueId> {
    let q = queues.get(name).copied();
    if q.is_none() {
        let known: Vec<&str> = queues.keys().map(String::as_str).collect();
        v.err(at, path, format!("queue `{name}` does not exist; defined queues: {}", known.join(", ")));
    } else if v.parent_queues.contains(name) {
        v.err(at, path, format!("queue `{name}` has child queues; jobs go to leaf queues (Volcano rejects them)"));
        return None;
    }
    q
}

/// A queue's `state`: `Open`, `Closing` or `Closed`.
pub(super) fn state(v: &mut V<'_>, s: &Spanned<String>, path: &str) -> Option<QueueState> {
    Some(match s.value.as_str() {
        "Open" => QueueState::Open,
        "Closing" => QueueState::Closing,
        "Closed" => QueueState::Closed,
        other => {
            v.err(at(s), path, format!("unknown queue state `{other}`; expected Open, Closing or Closed"));
            return None;
        }
    })
}
