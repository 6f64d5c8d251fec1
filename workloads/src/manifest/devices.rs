//! The device ConfigMap of Volcano's device sharing (`volcano-vgpu-device-config`
//! in `kube-system` by default, key `device-config.yaml`), as the vGPU device
//! plugin writes it: the scheduler reads its `nvidia` section's resource names,
//! memory factor and MIG geometries (`pkg/scheduler/api/devices/config`).

use super::common::Ck;
use super::yaml::{Doc, Node, Val};
use lahar_core::vgpu::{
    DeviceConfig, MigGroup, MigInstance, MigModels, VGPU_CORES, VGPU_MEMORY, VGPU_MEMORY_PERCENTAGE, VGPU_NUMBER,
};

/// The key of the ConfigMap's data that holds the configuration.
pub const DEVICE_CONFIG_KEY: &str = "device-config.yaml";

/// The ConfigMap's (namespace, name).
pub fn config_map_id(d: &Doc) -> (String, String) {
    let m = d.root.get("metadata");
    let s = |k: &str| m.and_then(|m| m.get(k)).and_then(Node::scalar).unwrap_or_default();
    let ns = s("namespace");
    (if ns.is_empty() { "default".into() } else { ns }, s("name"))
}

/// Fields of the `nvidia` section the scheduler does not read (the device
/// plugin's own: how it splits and limits cards).
const PLUGIN_ONLY: [&str; 9] = [
    "overwriteEnv",
    "deviceSplitCount",
    "deviceMemoryScaling",
    "deviceCoreScaling",
    "disableCoreLimit",
    "resourcePriorityName",
    "defaultGPUNum",
    "defaultMemory",
    "defaultCores",
];

/// Reads the device configuration of ConfigMap `d`. Errors name the ConfigMap's
/// `data.device-config.yaml` and the field inside it, with its line there.
pub fn device_config(d: &Doc, errs: &mut Vec<super::ManifestError>) -> Option<DeviceConfig> {
    let ck = &mut Ck::new(d, errs);
    let path = format!("data.{DEVICE_CONFIG_KEY}");
    let Some(text_node) = d.root.get("data").and_then(|x| x.get(DEVICE_CONFIG_KEY)) else {
        ck.err(d.root.at, &path, format!("the device ConfigMap needs `{DEVICE_CONFIG_KEY}` in its data"));
        return None;
    };
    let at = text_node.at;
    let text = text_node.scalar().unwrap_or_default();
    let inner = match super::yaml::parse_documents(&text, DEVICE_CONFIG_KEY) {
        Ok(docs) => docs,
        Err((pos, m)) => {
            let line = pos.map_or(String::new(), |(l, _)| format!(" (line {l} of the text)"));
            ck.err(at, &path, format!("not YAML{line}: {m}"));
            return None;
        }
    };
    let Some(root) = inner.first().map(|x| &x.root) else {
        ck.err(at, &path, "empty");
        return None;
    };
    let mut bad = |n: &Node, field: &str, m: String| {
        let line = n.at.map_or(String::new(), |(l, _)| format!(" (line {l} of the text)"));
        ck.err(at, &format!("{path}: {field}"), format!("{m}{line}"));
    };
    let mut cfg = DeviceConfig::default();
    let Val::Map(top) = &root.val else {
        bad(root, "", "expected a map with `nvidia`".into());
        return None;
    };
    for (k, v) in top {
        if k != "nvidia" && k != "vnpus" {
            bad(v, k, "unknown section; expected nvidia or vnpus (vnpus: Ascend, which lahar does not model)".into());
        }
    }
    let Some(nv) = root.get("nvidia") else { return Some(cfg) };
    let Val::Map(fields) = &nv.val else {
        bad(nv, "nvidia", "expected a map".into());
        return None;
    };
    for (k, v) in fields {
        let f = format!("nvidia.{k}");
        let text = v.scalar().unwrap_or_default();
        match k.as_str() {
            "resourceCountName" | "resourceMemoryName" | "resourceCoreName" => {
                let want = match k.as_str() {
                    "resourceCountName" => VGPU_NUMBER,
                    "resourceMemoryName" => VGPU_MEMORY,
                    _ => VGPU_CORES,
                };
                if text != want {
                    bad(
                        v,
                        &f,
                        format!(
                            "lahar reads the vGPU resources under Volcano's default names; expected `{want}`, got `{text}`"
                        ),
                    );
                }
            }
            "resourceMemoryPercentageName" => match text.as_str() {
                "" => {}
                VGPU_MEMORY_PERCENTAGE => cfg.percent = true,
                o => bad(v, &f, format!("expected `{VGPU_MEMORY_PERCENTAGE}` or empty, got `{o}`")),
            },
            "gpuMemoryFactor" => match text.parse::<i64>() {
                Ok(x) if x >= 0 => cfg.factor = x,
                _ => bad(v, &f, format!("expected a whole number ≥ 0, got `{text}`")),
            },
            "knownMigGeometries" => cfg.known = geometries(v, &mut bad),
            k if PLUGIN_ONLY.contains(&k) => {}
            _ => bad(v, &f, "unknown field of the nvidia section".into()),
        }
    }
    Some(cfg)
}

/// `knownMigGeometries`: `[{models: [..], allowedGeometries: [{group, geometries:
/// [{name, memory, count}]}]}]`.
fn geometries(v: &Node, bad: &mut impl FnMut(&Node, &str, String)) -> Vec<MigModels> {
    let base = "nvidia.knownMigGeometries";
    let seq = |n: &Node| match &n.val {
        Val::Seq(s) => Some(s.clone()),
        _ => None,
    };
    let Some(entries) = seq(v) else {
        bad(v, base, "expected a list".into());
        return Vec::new();
    };
    let mut out = Vec::new();
    for (i, e) in entries.iter().enumerate() {
        let p = format!("{base}[{i}]");
        let models: Vec<String> =
            e.get("models").and_then(seq).unwrap_or_default().iter().filter_map(Node::scalar).collect();
        if models.is_empty() {
            bad(e, &format!("{p}.models"), "expected a list of card models".into());
        }
        let mut groups = Vec::new();
        for (j, g) in e.get("allowedGeometries").and_then(seq).unwrap_or_default().iter().enumerate() {
            let gp = format!("{p}.allowedGeometries[{j}]");
            let name = g.get("group").and_then(Node::scalar).unwrap_or_default();
            if name.is_empty() || name.contains('-') {
                bad(
                    g,
                    &format!("{gp}.group"),
                    format!(
                        "expected a group name without `-` (Volcano's MIG ids are `UUID[group-position]`), got `{name}`"
                    ),
                );
            }
            let mut instances = Vec::new();
            for (k, x) in g.get("geometries").and_then(seq).unwrap_or_default().iter().enumerate() {
                let xp = format!("{gp}.geometries[{k}]");
                let s = |f: &str| x.get(f).and_then(Node::scalar).unwrap_or_default();
                let (memory, count) = (s("memory").parse::<i64>(), s("count").parse::<u32>());
                match (memory, count) {
                    (Ok(m), Ok(c)) if m > 0 && c > 0 => {
                        instances.push(MigInstance { name: s("name"), memory: m, count: c })
                    }
                    _ => bad(
                        x,
                        &xp,
                        format!(
                            "expected {{name, memory: MiB > 0, count > 0}}, got memory `{}`, count `{}`",
                            s("memory"),
                            s("count")
                        ),
                    ),
                }
            }
            if instances.is_empty() {
                bad(g, &format!("{gp}.geometries"), "expected at least one instance type".into());
            }
            groups.push(MigGroup { name, instances });
        }
        out.push(MigModels { models, groups });
    }
    out
}
