//! The nodes' `gpuModel` names against the GPUs the collective cost model knows
//! (its alias table, `spec.comm.constants`): a name it does not know, or knows
//! only by a prefix with an unexpected rest (`H100X`), is a warning — never
//! silence — since a job with a communication profile placed on such a node
//! runs at its ideal speed, with no collective cost.

use super::V;
use crate::scenario::Warning;
use lahar_core::comm::{CommConstants, normalize_gpu_name};
use lahar_core::model::cluster::Node;
use std::collections::BTreeMap;

/// Warning kind: nodes whose GPU model the collective model does not know.
pub const GPU_MODEL_UNKNOWN: &str = "gpu-model-unknown";

/// What may follow a known model's prefix in a real product name: memory sizes
/// and revisions (digits, `M16` as the OpenB trace writes `V100M16`), form
/// factors, and the one-letter variants (`L40S`, `A10G`).
fn plausible_rest(rest: &str) -> bool {
    rest.is_empty()
        || rest.starts_with(|c: char| c.is_ascii_digit())
        || ["SXM", "PCIE", "NVL", "HBM", "MIG", "SUPERCHIP"].iter().any(|t| rest.starts_with(t))
        || rest.strip_prefix('M').is_some_and(|m| m.starts_with(|c: char| c.is_ascii_digit()))
        || matches!(rest, "S" | "G")
}

/// One warning per GPU model the nodes name that the collective model does not
/// know, or knows by a prefix followed by an unexpected rest. `priced`: some job
/// has a communication profile (otherwise an unknown name is only a label, and
/// only a near miss of a known one is reported).
pub(crate) fn warnings(v: &mut V<'_>, nodes: &[Node], constants: &CommConstants, priced: bool) {
    let mut models: BTreeMap<&str, (u64, &str)> = BTreeMap::new();
    for n in nodes.iter().filter(|n| n.gpus() > 0 && !n.gpu_model.is_empty()) {
        models.entry(n.gpu_model.as_str()).or_insert((0, n.name.as_str())).0 += 1;
    }
    let effect = if priced {
        "jobs with a communication profile placed there run at their ideal speed, with no collective cost"
    } else {
        "no job here has a communication profile, so it is only a label"
    };
    for (model, (count, first)) in models {
        let nodes = if count == 1 { format!("node `{first}`") } else { format!("{count} nodes, the first `{first}`") };
        let message = match constants.gpu_alias(model) {
            Some((_, _, rest)) if plausible_rest(&rest) => continue,
            Some((alias, generation, rest)) => {
                let generation = generation.as_str();
                format!(
                    "gpuModel `{model}` ({nodes}) is no GPU model lahar knows: it is read as `{alias}` ({generation}) by its prefix, and `{rest}` after it is no size, form factor or variant; name the product as its vendor does (e.g. `NVIDIA-H100-80GB-HBM3`) or add an alias in spec.comm.constants.gpu_aliases"
                )
            }
            None => {
                let norm = normalize_gpu_name(model);
                let distance = |a: &str| lahar_core::util::text::edit_distance(&normalize_gpu_name(a), &norm);
                let best = constants.gpu_aliases.keys().map(|a| distance(a)).min().unwrap_or(usize::MAX);
                let near: Vec<String> =
                    constants.gpu_aliases.keys().filter(|a| distance(a) == best).map(|a| format!("`{a}`")).collect();
                let hint = match near.as_slice() {
                    [_, ..] if best <= 2 && best * 2 < norm.len() => format!(" (did you mean {}?)", near.join(" or ")),
                    _ if !priced => continue,
                    _ => String::new(),
                };
                let known: Vec<&str> = constants.gpu_aliases.keys().map(String::as_str).collect();
                format!(
                    "gpuModel `{model}` ({nodes}) matches no GPU the collective model knows{hint}: {effect}; known model prefixes: {}",
                    known.join(", ")
                )
            }
        };
        let file = v.file.to_string();
        v.warn_in(Warning {
            kind: GPU_MODEL_UNKNOWN,
            count,
            file,
            at: None,
            path: "spec.cluster".to_string(),
            message,
            first_of_many: false,
        });
    }
}
