//! Volcano's HyperJob (`training.volcano.sh/v1alpha1`), as the HyperJob
//! controller splits it (volcano-sh/volcano-global
//! `pkg/reconciler/hyperjob/hyperjob_controller.go`, `syncVCJobAndPP`): each of
//! a replicated job's `replicas` (default 1) becomes one VolcanoJob
//! `<hyperjob>-<replicatedJob>-<i>` whose spec is the `templateSpec` as written,
//! labelled `volcano.sh/hyperjob-name`, `volcano.sh/replicatedjob-name` and
//! `volcano.sh/vcjob-template-spec-hash`, and one Karmada PropagationPolicy that
//! sends it whole to one cluster (of `clusterNames`, when given). lahar simulates
//! one cluster: every VolcanoJob runs on it, read as any VolcanoJob is
//! ([`super::vcjob`]). `minAvailable`, `maxDomains`, `plugins` and `splitPolicy`
//! are reserved fields the controller does not read; they are read and change
//! nothing. The HyperJob's own `lahar.io/*` annotations reach its VolcanoJobs
//! (the controller gives them none of the HyperJob's).

use super::common::{Ck, join};
use super::recurring::{node, string_map};
use super::yaml::{Doc, Node, Val};
use super::{Context, ImportedJob};

/// The VolcanoJobs one HyperJob may make, at most (as many runs as a recurring
/// object may make).
pub const MAX_CHILDREN: u64 = super::recurring::MAX_RUNS as u64;

pub(crate) fn jobs(d: &Doc, cx: &mut Context<'_>, ck: &mut Ck<'_>) -> Vec<ImportedJob> {
    let root = &d.root;
    let meta = super::common::meta(ck, root, "", true);
    let empty = node(root.at, Val::Null);
    let spec = root.get("spec").unwrap_or(&empty);
    ck.opt_int(spec, "minAvailable", "spec", 0);
    ck.opt_int(spec, "maxDomains", "spec", 0);
    let list = ck.seq(spec, "replicatedJobs", "spec");
    let mut parts = Vec::new();
    let mut total = 0u64;
    for (k, rj) in list.iter().enumerate() {
        let rp = format!("spec.replicatedJobs[{k}]");
        let name = ck.opt_str(rj, "name", &rp).unwrap_or_default();
        if name.is_empty() {
            ck.err(rj.at, &join(&rp, "name"), "required: the replicated job's name");
        } else if list[..k].iter().any(|o| o.get("name").and_then(Node::scalar).as_deref() == Some(name.as_str())) {
            ck.err(rj.get("name").and_then(|n| n.at), &join(&rp, "name"), format!("`{name}` is named twice"));
        }
        let replicas = ck.opt_count(rj, "replicas", &rp, 0).unwrap_or(1) as u32;
        total += u64::from(replicas);
        let Some(tpl) = rj.get("templateSpec").filter(|t| t.val != Val::Null) else {
            ck.err(rj.at, &join(&rp, "templateSpec"), "required: the VolcanoJob spec to replicate");
            continue;
        };
        parts.push((k, name, replicas, tpl));
    }
    if list.is_empty() {
        ck.err(spec.at, "spec.replicatedJobs", "a HyperJob needs at least one replicated job");
    }
    if total > MAX_CHILDREN {
        let msg = format!("{total} VolcanoJobs; a HyperJob makes at most {MAX_CHILDREN}");
        ck.err(spec.get("replicatedJobs").and_then(|n| n.at), "spec.replicatedJobs", msg);
    }
    if !ck.ok() {
        return Vec::new();
    }
    let ours: Vec<(String, (String, super::yaml::At))> = meta
        .annotations
        .iter()
        .filter(|(k, _)| k.starts_with("lahar.io/"))
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect();
    let mut out = Vec::new();
    for (k, rj_name, replicas, tpl) in parts {
        let hash = super::common::derived_chars(ck, &format!("template-spec-{rj_name}"), 10);
        let labels = string_map(
            meta.at,
            &[
                ("volcano.sh/hyperjob-name".to_string(), (meta.name.clone(), meta.at)),
                ("volcano.sh/replicatedjob-name".to_string(), (rj_name.clone(), meta.at)),
                ("volcano.sh/vcjob-template-spec-hash".to_string(), (hash, meta.at)),
            ],
        );
        let rewrite: Vec<(&'static str, String)> = vec![
            ("metadata.annotations.lahar.io", "metadata.annotations.lahar.io".into()),
            ("spec", format!("spec.replicatedJobs[{k}].templateSpec")),
        ];
        for i in 0..replicas {
            let md = vec![
                ("name".to_string(), node(meta.at, Val::Str(format!("{}-{rj_name}-{i}", meta.name)))),
                ("namespace".to_string(), node(meta.at, Val::Str(meta.namespace.clone()))),
                ("labels".to_string(), labels.clone()),
                ("annotations".to_string(), string_map(meta.at, &ours)),
            ];
            let inner = d.made("batch.volcano.sh/v1alpha1", "Job", node(meta.at, Val::Map(md)), tpl.clone());
            // The first VolcanoJob of a template reports its problems; the
            // others are the same.
            let mut scratch = Vec::new();
            let errs: &mut Vec<super::Diagnostic> = if i == 0 { ck.errs } else { &mut scratch };
            let mut ick = Ck::new(&inner, errs);
            ick.rewrite = rewrite.clone();
            let Some(mut job) = super::vcjob::job(&inner, cx, &mut ick) else { break };
            job.doc = d.label();
            job.at = root.at;
            out.push(job);
        }
    }
    out
}
