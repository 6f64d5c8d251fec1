//! Inter-pod affinity and anti-affinity terms (a pod's `spec.affinity.podAffinity`
//! and `podAntiAffinity`), matched as Kubernetes' InterPodAffinity plugin matches
//! them (`AffinityTerm.Matches`): the target pod's namespace is one of the term's
//! namespaces and its labels satisfy the term's selector, into which the API
//! server has merged `matchLabelKeys` (`key In (owner's value)`) and
//! `mismatchLabelKeys` (`key NotIn (owner's value)`) for the keys the owner pod
//! carries. A term without a `labelSelector` matches no pod; an empty one matches
//! every pod of its namespaces.
//!
//! Where the terms act (the World's ledger of the pods on each node, the
//! predicates' filter and nodeorder's score) is `world/affinity.rs`.

use crate::model::budget::LabelSelector;
use crate::model::cluster::Node;

/// The label Kubernetes gives every node: its name.
pub const HOSTNAME: &str = "kubernetes.io/hostname";

/// One pod affinity term.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AffinityTerm {
    /// `labelSelector`; `None` matches no pod.
    pub selector: Option<LabelSelector>,
    /// The namespaces whose pods the term looks at (`namespaces`); `None` for
    /// every namespace (an empty `namespaceSelector`); the owner's namespace
    /// when the list is empty.
    pub namespaces: Option<Vec<String>>,
    /// `topologyKey`: nodes with the same value of this label are one domain.
    pub topology_key: String,
    /// `matchLabelKeys`.
    pub match_label_keys: Vec<String>,
    /// `mismatchLabelKeys`.
    pub mismatch_label_keys: Vec<String>,
}

impl AffinityTerm {
    /// True if the pod with `labels` in namespace `ns` matches the term of a pod
    /// with labels `owner` in namespace `owner_ns`.
    pub fn matches(
        &self,
        (owner, owner_ns): (&[(String, String)], &str),
        labels: &[(String, String)],
        ns: &str,
    ) -> bool {
        let Some(sel) = &self.selector else { return false };
        let in_ns = match &self.namespaces {
            None => true,
            Some(l) if l.is_empty() => owner_ns == ns,
            Some(l) => l.iter().any(|n| n == ns),
        };
        if !in_ns {
            return false;
        }
        let get = |l: &[(String, String)], k: &str| l.iter().find(|(x, _)| x == k).map(|(_, v)| v.clone());
        sel.matches(labels)
            && self.match_label_keys.iter().all(|k| get(owner, k).is_none_or(|v| get(labels, k) == Some(v)))
            && self.mismatch_label_keys.iter().all(|k| get(owner, k).is_none_or(|v| get(labels, k) != Some(v)))
    }
}

/// A preferred term and its weight (1–100).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct WeightedTerm {
    /// `weight`.
    pub weight: i64,
    /// `podAffinityTerm`.
    pub term: AffinityTerm,
}

/// A pod's inter-pod affinity and anti-affinity.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct PodAffinity {
    /// `podAffinity.requiredDuringSchedulingIgnoredDuringExecution`.
    pub required: Vec<AffinityTerm>,
    /// `podAntiAffinity.requiredDuringSchedulingIgnoredDuringExecution`.
    pub required_anti: Vec<AffinityTerm>,
    /// `podAffinity.preferredDuringSchedulingIgnoredDuringExecution`.
    pub preferred: Vec<WeightedTerm>,
    /// `podAntiAffinity.preferredDuringSchedulingIgnoredDuringExecution`.
    pub preferred_anti: Vec<WeightedTerm>,
}

impl PodAffinity {
    /// True if the pod has no term at all.
    pub fn is_empty(&self) -> bool {
        self.required.is_empty()
            && self.required_anti.is_empty()
            && self.preferred.is_empty()
            && self.preferred_anti.is_empty()
    }
    /// True if the pod has preferred terms (scoring then looks at every pod).
    pub fn has_preferred(&self) -> bool {
        !self.preferred.is_empty() || !self.preferred_anti.is_empty()
    }
}

/// The value of node label `key`, `kubernetes.io/hostname` being the node's name
/// unless its labels say otherwise (the kubelet sets it on every node).
pub fn node_label<'a>(node: &'a Node, key: &str) -> Option<&'a str> {
    node.labels.get(key).map(String::as_str).or_else(|| (key == HOSTNAME).then_some(node.name.as_str()))
}

/// Every label of a node, the implicit `kubernetes.io/hostname` included.
pub fn node_labels(node: &Node) -> impl Iterator<Item = (&str, &str)> {
    let implicit = (!node.labels.contains_key(HOSTNAME)).then_some((HOSTNAME, node.name.as_str()));
    node.labels.iter().map(|(k, v)| (k.as_str(), v.as_str())).chain(implicit)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::budget::SelectorOp;

    fn l(pairs: &[(&str, &str)]) -> Vec<(String, String)> {
        pairs.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect()
    }

    fn term(sel: Option<LabelSelector>) -> AffinityTerm {
        AffinityTerm {
            selector: sel,
            namespaces: Some(vec![]),
            topology_key: HOSTNAME.into(),
            match_label_keys: vec![],
            mismatch_label_keys: vec![],
        }
    }

    #[test]
    fn no_selector_matches_nothing_and_an_empty_one_everything_in_its_namespaces() {
        let none = term(None);
        assert!(!none.matches((&[], "default"), &l(&[("app", "a")]), "default"));
        let all = term(Some(LabelSelector::default()));
        assert!(all.matches((&[], "default"), &[], "default"));
        assert!(!all.matches((&[], "default"), &[], "other"));
        let everywhere = AffinityTerm { namespaces: None, ..all };
        assert!(everywhere.matches((&[], "default"), &[], "other"));
    }

    #[test]
    fn label_keys_merge_the_owners_values() {
        let mut t =
            term(Some(LabelSelector { labels: vec![], expressions: vec![("app".into(), SelectorOp::Exists, vec![])] }));
        t.match_label_keys = vec!["rev".into()];
        let owner = l(&[("app", "x"), ("rev", "1")]);
        assert!(t.matches((&owner, "default"), &l(&[("app", "y"), ("rev", "1")]), "default"));
        assert!(!t.matches((&owner, "default"), &l(&[("app", "y"), ("rev", "2")]), "default"));
        assert!(!t.matches((&owner, "default"), &l(&[("app", "y")]), "default"));
        // A key the owner lacks adds nothing.
        assert!(t.matches((&l(&[("app", "x")]), "default"), &l(&[("app", "y"), ("rev", "2")]), "default"));
        t.match_label_keys.clear();
        t.mismatch_label_keys = vec!["rev".into()];
        assert!(!t.matches((&owner, "default"), &l(&[("app", "y"), ("rev", "1")]), "default"));
        assert!(t.matches((&owner, "default"), &l(&[("app", "y"), ("rev", "2")]), "default"));
        assert!(t.matches((&owner, "default"), &l(&[("app", "y")]), "default"));
    }
}
