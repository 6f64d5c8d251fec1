//! A pod spec's inter-pod affinity and anti-affinity (`affinity.podAffinity`,
//! `affinity.podAntiAffinity`), checked as the API server validates them
//! (`ValidatePodAffinityTerm`, `validatePodAffinityTerms`): a non-empty
//! `topologyKey`, weights 1–100, `matchLabelKeys`/`mismatchLabelKeys` only with
//! a `labelSelector` and no key in both. A `namespaceSelector` that selects by
//! labels is refused (lahar has no Namespace objects to read labels from); an
//! empty one means every namespace.

use super::ck::{Ck, join};
use super::yaml::{Node, Val};
use lahar_core::model::affinity::{AffinityTerm, PodAffinity, WeightedTerm};

const REQUIRED: &str = "requiredDuringSchedulingIgnoredDuringExecution";
const PREFERRED: &str = "preferredDuringSchedulingIgnoredDuringExecution";

/// The pod's terms (spec at `sp`), or `None` when it has none.
pub(crate) fn pod_affinity(ck: &mut Ck<'_>, spec: &Node, sp: &str) -> Option<Box<PodAffinity>> {
    let aff = spec.get("affinity")?;
    let ap = join(sp, "affinity");
    let mut out = PodAffinity::default();
    for (key, anti) in [("podAffinity", false), ("podAntiAffinity", true)] {
        let Some(n) = aff.get(key) else { continue };
        let kp = join(&ap, key);
        let rp = join(&kp, REQUIRED);
        let required: Vec<AffinityTerm> = ck
            .seq(n, REQUIRED, &kp)
            .iter()
            .enumerate()
            .filter_map(|(i, t)| term(ck, t, &format!("{rp}[{i}]")))
            .collect();
        let pp = join(&kp, PREFERRED);
        let mut preferred = Vec::new();
        for (i, w) in ck.seq(n, PREFERRED, &kp).iter().enumerate() {
            let wp = format!("{pp}[{i}]");
            let weight = ck.opt_int(w, "weight", &wp, 1);
            if weight.is_some_and(|w| w > 100) {
                ck.err(w.get("weight").and_then(|x| x.at), &join(&wp, "weight"), "a weight must be from 1 to 100");
            }
            let Some(t) = w.get("podAffinityTerm") else {
                ck.err(w.at, &join(&wp, "podAffinityTerm"), "a preferred term needs a `podAffinityTerm`");
                continue;
            };
            let (Some(weight), Some(term)) = (weight, term(ck, t, &join(&wp, "podAffinityTerm"))) else {
                if weight.is_none() {
                    ck.err(w.at, &join(&wp, "weight"), "a preferred term needs a `weight` from 1 to 100");
                }
                continue;
            };
            preferred.push(WeightedTerm { weight: weight.min(100), term });
        }
        if anti {
            (out.required_anti, out.preferred_anti) = (required, preferred);
        } else {
            (out.required, out.preferred) = (required, preferred);
        }
    }
    (!out.is_empty()).then(|| Box::new(out))
}

/// One `PodAffinityTerm` at `tp`.
fn term(ck: &mut Ck<'_>, t: &Node, tp: &str) -> Option<AffinityTerm> {
    let topology_key = ck.opt_str(t, "topologyKey", tp).unwrap_or_default();
    let ok_before = ck.ok();
    if topology_key.is_empty() {
        ck.err(t.at, &join(tp, "topologyKey"), "a pod affinity term needs a non-empty `topologyKey`");
    }
    let selector = t.get("labelSelector").filter(|n| !matches!(n.val, Val::Null));
    let selector = selector.map(|n| super::pdb::selector(ck, n, &join(tp, "labelSelector")));
    let namespaces: Vec<String> = ck
        .seq(t, "namespaces", tp)
        .iter()
        .enumerate()
        .filter_map(|(i, n)| ck.str(n, &format!("{tp}.namespaces[{i}]")))
        .collect();
    let all = match t.get("namespaceSelector") {
        Some(n) if matches!(n.val, Val::Null) => false,
        Some(n) => {
            let sel = super::pdb::selector(ck, n, &join(tp, "namespaceSelector"));
            if !sel.is_empty() {
                let msg = "a namespaceSelector that selects by labels needs the namespaces' labels, which lahar does not model; list them in `namespaces`, or give `namespaceSelector: {}` for every namespace";
                ck.err(n.at, &join(tp, "namespaceSelector"), msg);
            }
            true
        }
        None => false,
    };
    let keys = |ck: &mut Ck<'_>, key: &str| -> Vec<String> {
        ck.seq(t, key, tp).iter().enumerate().filter_map(|(i, n)| ck.str(n, &format!("{tp}.{key}[{i}]"))).collect()
    };
    let match_label_keys = keys(ck, "matchLabelKeys");
    let mismatch_label_keys = keys(ck, "mismatchLabelKeys");
    if selector.is_none() && (!match_label_keys.is_empty() || !mismatch_label_keys.is_empty()) {
        ck.err(t.at, &join(tp, "labelSelector"), "matchLabelKeys and mismatchLabelKeys need a `labelSelector`");
    }
    if let Some(k) = match_label_keys.iter().find(|k| mismatch_label_keys.contains(k)) {
        ck.err(t.at, &join(tp, "mismatchLabelKeys"), format!("`{k}` is in both matchLabelKeys and mismatchLabelKeys"));
    }
    if !ok_before || !ck.ok() {
        return None;
    }
    Some(AffinityTerm {
        selector,
        namespaces: if all { None } else { Some(namespaces) },
        topology_key,
        match_label_keys,
        mismatch_label_keys,
    })
}
