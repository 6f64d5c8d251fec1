//! `scheduling.volcano.sh` Queue and `topology.volcano.sh` HyperNode objects.

use super::Diagnostic;
use super::common::{self, Ck, join};
use super::yaml::{Doc, Node, Val};
use lahar_core::model::cluster::NodeId;
use lahar_core::model::queue::{Queue, QueueState};
use lahar_core::model::resource::{ResourceList, ResourceNames};
use lahar_core::model::topology::{HyperNodeDecl, Member};
use std::collections::BTreeMap;

fn list(ck: &mut Ck<'_>, parent: &Node, key: &str, path: &str, names: &mut ResourceNames) -> ResourceList {
    let mut l = ResourceList::default();
    for (d, x, _) in ck.resources(parent, key, path, names) {
        l.put(d, x);
    }
    l
}

/// Queues from `scheduling.volcano.sh` Queue objects (any other kind is an error).
pub fn queues(docs: &[Doc], names: &mut ResourceNames, errs: &mut Vec<Diagnostic>) -> Vec<Queue> {
    let mut out: Vec<Queue> = Vec::new();
    for d in docs {
        let mut ck = Ck::new(d, errs);
        super::schema::check(d, &mut ck);
        let (api, kind) = common::kind_of(&d.root);
        if kind != "Queue" || !api.starts_with("scheduling.volcano.sh/") {
            ck.err(
                d.root.get("kind").and_then(|k| k.at).or(d.root.at),
                "kind",
                format!("expected a scheduling.volcano.sh Queue, got kind `{kind}` of apiVersion `{api}`"),
            );
            continue;
        }
        let meta = common::meta(&mut ck, &d.root, "", true);
        if out.iter().any(|q| q.name == meta.name) {
            ck.err(d.root.at, "metadata.name", format!("queue `{}` is defined twice", meta.name));
        }
        let mut q = Queue::new(meta.name.clone());
        q.hierarchy = meta.annotations.get("volcano.sh/hierarchy").map(|x| x.0.clone());
        q.hierarchy_weights = meta.annotations.get("volcano.sh/hierarchy-weights").map(|x| x.0.clone());
        let empty = Node { at: d.root.at, val: Val::Null };
        let spec = d.root.get("spec").unwrap_or(&empty);
        if let Some(w) = ck.opt_int(spec, "weight", "spec", 1) {
            q.weight = w as u32;
        }
        q.capability = list(&mut ck, spec, "capability", "spec", names);
        q.deserved = list(&mut ck, spec, "deserved", "spec", names);
        if let Some(g) = spec.get("guarantee") {
            q.guarantee = list(&mut ck, g, "resource", "spec.guarantee", names);
        }
        if let Some(a) = spec.get("affinity").filter(|a| a.val != Val::Null) {
            q.node_groups = Some(node_group_affinity(&mut ck, a));
        }
        if let Some((text, at)) = meta.annotations.get(NODE_GROUP_LIMITS) {
            q.node_group_limits = node_group_limits(&mut ck, text, *at, names);
        }
        q.reclaimable = ck.opt_bool(spec, "reclaimable", "spec").unwrap_or(true);
        q.parent = ck.opt_str(spec, "parent", "spec").filter(|p| p != "root");
        if let Some(p) = ck.opt_int(spec, "priority", "spec", i64::from(i32::MIN)) {
            q.priority = p as i32;
        }
        if let Some(st) = d.root.get("status")
            && let Some(s) = ck.opt_str(st, "state", "status")
        {
            q.state = match s.as_str() {
                "Open" => QueueState::Open,
                "Closing" => QueueState::Closing,
                "Closed" => QueueState::Closed,
                other => {
                    ck.err(
                        st.get("state").and_then(|n| n.at),
                        "status.state",
                        format!("unknown queue state `{other}`; expected Open, Closing or Closed"),
                    );
                    QueueState::Open
                }
            };
        }
        if ck.ok() {
            out.push(q);
        }
    }
    out
}

/// The queue annotation of the `nodegroup` plugin's per-group limits.
const NODE_GROUP_LIMITS: &str = "volcano.sh/nodegroup-resource-limits";

/// `spec.affinity`: `nodeGroupAffinity` and `nodeGroupAntiAffinity`, each with
/// `requiredDuringSchedulingIgnoredDuringExecution` and
/// `preferredDuringSchedulingIgnoredDuringExecution` lists of node group names.
fn node_group_affinity(ck: &mut Ck<'_>, a: &Node) -> lahar_core::model::queue::NodeGroupAffinity {
    const REQUIRED: &str = "requiredDuringSchedulingIgnoredDuringExecution";
    const PREFERRED: &str = "preferredDuringSchedulingIgnoredDuringExecution";
    let mut out = lahar_core::model::queue::NodeGroupAffinity::default();
    let names = |ck: &mut Ck<'_>, part: &str, key: &str| -> Vec<String> {
        let Some(p) = a.get(part) else { return Vec::new() };
        let path = format!("spec.affinity.{part}");
        let list = ck.seq(p, key, &path);
        list.iter().enumerate().filter_map(|(i, n)| ck.str(n, &format!("{path}.{key}[{i}]"))).collect()
    };
    out.required = names(ck, "nodeGroupAffinity", REQUIRED);
    out.preferred = names(ck, "nodeGroupAffinity", PREFERRED);
    out.anti_required = names(ck, "nodeGroupAntiAffinity", REQUIRED);
    out.anti_preferred = names(ck, "nodeGroupAntiAffinity", PREFERRED);
    out
}

/// The `volcano.sh/nodegroup-resource-limits` annotation: JSON, node group →
/// resource list (`{"group1": {"cpu": "3", "memory": "8Gi"}}`). Volcano refuses
/// every pod of the queue when the JSON is bad; lahar refuses the file.
fn node_group_limits(
    ck: &mut Ck<'_>,
    text: &str,
    at: super::yaml::At,
    names: &mut ResourceNames,
) -> Vec<(String, ResourceList)> {
    let path = format!("metadata.annotations.{NODE_GROUP_LIMITS}");
    let parsed: Result<BTreeMap<String, BTreeMap<String, serde_json::Value>>, _> = serde_json::from_str(text);
    let groups = match parsed {
        Ok(g) => g,
        Err(e) => {
            ck.err(
                at,
                &path,
                format!(
                    "expected JSON of node group → resource list, such as {{\"group1\": {{\"cpu\": \"3\"}}}} ({e})"
                ),
            );
            return Vec::new();
        }
    };
    let mut out = Vec::new();
    for (group, list) in groups {
        let mut l = ResourceList::default();
        for (name, v) in list {
            let q = match v {
                serde_json::Value::String(s) => s,
                serde_json::Value::Number(n) => n.to_string(),
                other => {
                    ck.err(at, &format!("{path}.{group}.{name}"), format!("expected a quantity, got {other}"));
                    continue;
                }
            };
            let mut r = lahar_core::model::resource::Resources::ZERO;
            match names.parse_into(&name, &q, &mut r) {
                Ok(d) => l.put(d, r.get(d)),
                Err(e) => ck.err(at, &format!("{path}.{group}.{name}"), e.to_string()),
            }
        }
        out.push((group, l));
    }
    out
}

/// A node as HyperNode selectors see it.
pub struct NodeRef<'a> {
    /// Name.
    pub name: &'a str,
    /// Labels.
    pub labels: &'a BTreeMap<String, String>,
}

/// HyperNodes from `topology.volcano.sh` HyperNode objects. Members select nodes
/// (`type: Node`) or HyperNodes (`type: HyperNode`) by `exactMatch.name`,
/// `regexMatch.pattern` (unanchored, like Go's `regexp.MatchString`) or `labelMatch.matchLabels` (nodes only).
pub fn hypernodes(docs: &[Doc], nodes: &[NodeRef<'_>], errs: &mut Vec<Diagnostic>) -> Vec<HyperNodeDecl> {
    // Names first: members may name HyperNodes declared later.
    let hn_names: Vec<String> = docs
        .iter()
        .filter(|d| common::kind_of(&d.root).1 == "HyperNode")
        .filter_map(|d| d.root.get("metadata").and_then(|m| m.get("name")).and_then(Node::scalar))
        .collect();
    let mut out = Vec::new();
    for d in docs {
        let mut ck = Ck::new(d, errs);
        super::schema::check(d, &mut ck);
        let (api, kind) = common::kind_of(&d.root);
        if kind != "HyperNode" || !api.starts_with("topology.volcano.sh/") {
            ck.err(
                d.root.get("kind").and_then(|k| k.at).or(d.root.at),
                "kind",
                format!("expected a topology.volcano.sh HyperNode, got kind `{kind}` of apiVersion `{api}`"),
            );
            continue;
        }
        let meta = common::meta(&mut ck, &d.root, "", true);
        let empty = Node { at: d.root.at, val: Val::Null };
        let spec = d.root.get("spec").unwrap_or(&empty);
        let tier = match spec.get("tier") {
            Some(t) => ck.int(t, "spec.tier", 0).unwrap_or(1) as u32,
            None => {
                ck.err(
                    spec.at,
                    "spec.tier",
                    "a HyperNode needs `tier` (an integer ≥ 0; the lowest tier is the smallest switch group)",
                );
                1
            }
        };
        let tier_name = ck.opt_str(spec, "tierName", "spec").unwrap_or_default();
        let mut members = Vec::new();
        let mut label_keys = std::collections::BTreeSet::new();
        for (i, m) in ck.seq(spec, "members", "spec").iter().enumerate() {
            let mp = format!("spec.members[{i}]");
            let ty = ck.opt_str(m, "type", &mp).unwrap_or_default();
            let is_node = match ty.as_str() {
                "Node" => true,
                "HyperNode" => false,
                other => {
                    ck.err(
                        m.get("type").and_then(|n| n.at).or(m.at),
                        &join(&mp, "type"),
                        format!("expected `Node` or `HyperNode`, got `{other}`"),
                    );
                    continue;
                }
            };
            let Some(sel) = m.get("selector") else {
                ck.err(
                    m.at,
                    &join(&mp, "selector"),
                    "a member needs a `selector` (exactMatch, regexMatch or labelMatch)",
                );
                continue;
            };
            let sp = join(&mp, "selector");
            let candidates: Vec<String> =
                if is_node { nodes.iter().map(|n| n.name.to_string()).collect() } else { hn_names.clone() };
            let before = members.len();
            if let Some(e) = sel.get("exactMatch") {
                let name = ck.opt_str(e, "name", &join(&sp, "exactMatch")).unwrap_or_default();
                if candidates.contains(&name) {
                    members.push(member(is_node, &name, nodes));
                } else {
                    ck.err(
                        e.at,
                        &join(&sp, "exactMatch.name"),
                        format!("{} `{name}` does not exist", if is_node { "node" } else { "HyperNode" }),
                    );
                    continue;
                }
            } else if let Some(r) = sel.get("regexMatch") {
                let pat = ck.opt_str(r, "pattern", &join(&sp, "regexMatch")).unwrap_or_default();
                match regex::Regex::new(&pat) {
                    Ok(re) => {
                        for c in candidates.iter().filter(|c| re.is_match(c)) {
                            members.push(member(is_node, c, nodes));
                        }
                    }
                    Err(e) => {
                        ck.err(r.at, &join(&sp, "regexMatch.pattern"), format!("invalid regular expression: {e}"));
                        continue;
                    }
                }
            } else if let Some(l) = sel.get("labelMatch") {
                if !is_node {
                    ck.err(l.at, &join(&sp, "labelMatch"), "labelMatch selects nodes only");
                    continue;
                }
                let want = ck.string_map(l, "matchLabels", &join(&sp, "labelMatch"));
                label_keys.extend(want.keys().cloned());
                for n in nodes.iter().filter(|n| want.iter().all(|(k, (v, _))| n.labels.get(k) == Some(v))) {
                    members.push(member(true, n.name, nodes));
                }
            } else {
                ck.err(sel.at, &sp, "expected `exactMatch`, `regexMatch` or `labelMatch`");
                continue;
            }
            if members.len() == before {
                ck.err(sel.at, &sp, "the selector matches nothing");
            }
        }
        if ck.ok() {
            let label_keys = label_keys.into_iter().collect();
            out.push(HyperNodeDecl { name: meta.name, tier, tier_name, members, label_keys });
        }
    }
    out
}

fn member(is_node: bool, name: &str, nodes: &[NodeRef<'_>]) -> Member {
    if is_node {
        let i = nodes.iter().position(|n| n.name == name).unwrap_or(0);
        Member::Node(NodeId(i as u32))
    } else {
        Member::HyperNode(name.to_string())
    }
}
