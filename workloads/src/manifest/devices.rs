//! The device ConfigMap of Volcano's device sharing (`volcano-vgpu-device-config`
//! in `kube-system` by default, key `device-config.yaml`), as the vGPU device
//! plugin writes it: the scheduler reads its `nvidia` section's resource names,
//! memory factor and MIG geometries (`pkg/scheduler/api/devices/config`).

use super::common::Ck;
use super::yaml::{Doc, Node, Val};
use lahar_core::devices::vgpu::{
    DeviceConfig, MigGroup, MigInstance, MigModels, VGPU_CORES, VGPU_MEMORY, VGPU_MEMORY_PERCENTAGE, VGPU_NUMBER,
};
use lahar_core::devices::vnpu::{ChipType, Template, VnpuConfig};

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
pub fn device_config(d: &Doc, errs: &mut Vec<super::Diagnostic>) -> Option<DeviceConfig> {
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
        match k.as_str() {
            "nvidia" => {}
            "vnpus" => cfg.vnpus = vnpus(v, &mut bad),
            _ => bad(v, k, "unknown section; expected nvidia or vnpus".into()),
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

/// The `vnpus` section: `{hamiVnpuCore, configs: [...]}`, or the legacy bare list
/// of configs (`hamiVnpuCore` false), as Volcano's `VNPUsConfig` reads it.
fn vnpus(v: &Node, bad: &mut impl FnMut(&Node, &str, String)) -> Option<VnpuConfig> {
    let (hami_core, list, base) = match &v.val {
        Val::Seq(_) => (false, v, "vnpus".to_string()),
        Val::Map(fields) => {
            let mut hami_core = false;
            let mut list = None;
            for (k, x) in fields {
                match k.as_str() {
                    "hamiVnpuCore" => match x.val {
                        Val::Bool(b) => hami_core = b,
                        _ => bad(x, "vnpus.hamiVnpuCore", "expected true or false".into()),
                    },
                    "configs" => list = Some(x),
                    _ => bad(x, &format!("vnpus.{k}"), "unknown field; expected hamiVnpuCore or configs".into()),
                }
            }
            let Some(list) = list else {
                bad(v, "vnpus.configs", "the vnpus section needs its configs".into());
                return None;
            };
            (hami_core, list, "vnpus.configs".to_string())
        }
        _ => {
            bad(v, "vnpus", "expected a map {hamiVnpuCore, configs} or a list of configs".into());
            return None;
        }
    };
    let Val::Seq(entries) = &list.val else {
        bad(list, &base, "expected a list".into());
        return None;
    };
    let mut types = Vec::new();
    for (i, e) in entries.iter().enumerate() {
        let p = format!("{base}[{i}]");
        let Val::Map(fields) = &e.val else {
            bad(e, &p, "expected a map".into());
            continue;
        };
        let s = |f: &str| e.get(f).and_then(Node::scalar).unwrap_or_default();
        let int = |f: &str| s(f).parse::<i64>().ok().filter(|&x| x > 0);
        for (k, x) in fields {
            let known = [
                "chipName",
                "commonWord",
                "resourceName",
                "resourceMemoryName",
                "resourceCoreName",
                "memoryAllocatable",
                "memoryCapacity",
                "aiCore",
                "aiCPU",
                "templates",
            ];
            if !known.contains(&k.as_str()) {
                bad(x, &format!("{p}.{k}"), "unknown field of a vNPU config".into());
            }
        }
        let (Some(alloc), Some(cap)) = (int("memoryAllocatable"), int("memoryCapacity")) else {
            bad(e, &p, "needs memoryAllocatable and memoryCapacity (MiB > 0)".into());
            continue;
        };
        if s("commonWord").is_empty() || s("resourceName").is_empty() || s("resourceMemoryName").is_empty() {
            bad(e, &p, "needs commonWord, resourceName and resourceMemoryName".into());
            continue;
        }
        // Volcano reads AI cores under `<resourceName>-core` whatever this says.
        let core = format!("{}-core", s("resourceName"));
        if let Some(x) =
            e.get("resourceCoreName").filter(|_| !s("resourceCoreName").is_empty() && s("resourceCoreName") != core)
        {
            let why = format!("Volcano reads AI cores as `{core}` whatever this says; give that or leave it out");
            bad(x, &format!("{p}.resourceCoreName"), why);
        }
        let mut templates = Vec::new();
        if let Some(ts) = e.get("templates") {
            let Val::Seq(ts) = &ts.val else {
                bad(ts, &format!("{p}.templates"), "expected a list".into());
                continue;
            };
            for (k, t) in ts.iter().enumerate() {
                let memory = t.get("memory").and_then(Node::scalar).and_then(|m| m.parse::<i64>().ok());
                match (t.get("name").and_then(Node::scalar), memory) {
                    (Some(name), Some(memory)) if memory > 0 => templates.push(Template { name, memory }),
                    _ => {
                        bad(t, &format!("{p}.templates[{k}]"), "expected {name, memory: MiB > 0, aiCore, aiCPU}".into())
                    }
                }
            }
        }
        // Volcano sorts them at start (`InitDevices`).
        templates.sort_by_key(|t| t.memory);
        types.push(ChipType {
            common_word: s("commonWord"),
            resource_name: s("resourceName"),
            resource_memory_name: s("resourceMemoryName"),
            memory_allocatable: alloc,
            memory_capacity: cap,
            templates,
        });
    }
    Some(VnpuConfig { hami_core, types })
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

/// A node's chips of one Ascend type, from its `hami.io/node-register-<type>`
/// annotation (a JSON list as Project-HAMi's device plugin writes it; `text`),
/// in the node's hami-core mode `hami_core`. Volcano decodes it loosely — unknown
/// fields dropped, a repeated id overwriting the earlier — so lahar refuses
/// both, with the entry's place; an empty list is refused too (Volcano would
/// see no chips while the node advertises them).
pub fn vnpu_chips(text: &str, hami_core: bool) -> Result<Vec<lahar_core::devices::vnpu::Chip>, String> {
    const FIELDS: [&str; 12] = [
        "id",
        "index",
        "count",
        "devmem",
        "devcore",
        "type",
        "numa",
        "mode",
        "health",
        "devicevendor",
        "custominfo",
        "devicepairscore",
    ];
    let list: Vec<serde_json::Value> =
        serde_json::from_str(text).map_err(|e| format!("not a JSON list of chips: {e}"))?;
    if list.is_empty() {
        return Err("no chips in the list".into());
    }
    let mut out: Vec<lahar_core::devices::vnpu::Chip> = Vec::new();
    for (i, v) in list.iter().enumerate() {
        let Some(o) = v.as_object() else { return Err(format!("entry {i}: expected an object")) };
        if let Some(k) = o.keys().find(|k| !FIELDS.contains(&k.as_str())) {
            return Err(format!("entry {i}: unknown field `{k}`; expected one of {}", FIELDS.join(", ")));
        }
        let int = |k: &str| o.get(k).map_or(Some(0), serde_json::Value::as_i64);
        let (Some(count), Some(devmem), Some(devcore)) = (int("count"), int("devmem"), int("devcore")) else {
            return Err(format!("entry {i}: count, devmem and devcore must be whole numbers"));
        };
        let id = o.get("id").and_then(serde_json::Value::as_str).unwrap_or_default().to_string();
        if id.is_empty() || count <= 0 || devmem < 0 || devcore < 0 {
            return Err(format!("entry {i}: needs an id, a count above 0 and devmem, devcore of 0 or more"));
        }
        if out.iter().any(|c| c.id == id) {
            return Err(format!("entry {i}: chip `{id}` is listed twice (Volcano would keep the last silently)"));
        }
        let network_id = match o.get("custominfo").and_then(|c| c.get("NetworkID")) {
            None => None,
            Some(n) => Some(n.as_f64().ok_or(format!("entry {i}: custominfo.NetworkID must be a number"))? as i64),
        };
        out.push(lahar_core::devices::vnpu::Chip { id, count: count as u32, devmem, devcore, network_id, hami_core });
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// TestAscendDevice_GetNodeDevices_HAMiVnpuCore's record, and what lahar
    /// refuses that Volcano reads loosely.
    #[test]
    fn vnpu_node_registration() {
        let one = r#"[{"id":"dev-1","index":0,"count":1,"devmem":32768,"devcore":30}]"#;
        let chips = vnpu_chips(one, true).unwrap();
        assert_eq!(
            chips,
            [lahar_core::devices::vnpu::Chip {
                id: "dev-1".into(),
                count: 1,
                devmem: 32768,
                devcore: 30,
                network_id: None,
                hami_core: true
            }]
        );
        let ring = r#"[{"id":"a","count":4,"devmem":65536,"devcore":20,"type":"Ascend910B3","health":true,"custominfo":{"NetworkID":1}}]"#;
        assert_eq!(vnpu_chips(ring, false).unwrap()[0].network_id, Some(1));
        let bad = |t: &str| vnpu_chips(t, false).unwrap_err();
        assert_eq!(bad("[]"), "no chips in the list");
        assert!(bad("{}").starts_with("not a JSON list of chips"));
        assert_eq!(
            bad(r#"[{"id":"a","count":1,"devmem":1,"devcore":1,"uuid":"x"}]"#),
            "entry 0: unknown field `uuid`; expected one of id, index, count, devmem, devcore, type, numa, mode, health, devicevendor, custominfo, devicepairscore"
        );
        assert_eq!(
            bad(r#"[{"id":"a","count":1},{"id":"a","count":1}]"#),
            "entry 1: chip `a` is listed twice (Volcano would keep the last silently)"
        );
        assert_eq!(
            bad(r#"[{"id":"a","count":0}]"#),
            "entry 0: needs an id, a count above 0 and devmem, devcore of 0 or more"
        );
    }

    /// Project-HAMi's published device ConfigMap (examples/manifests/vnpu/): its 7
    /// Ascend types, templates sorted by memory, hami-core off; the legacy list
    /// form and bad entries as Volcano's `TestParseVNPUs*` read them.
    #[test]
    fn published_vnpu_config() {
        let text = include_str!("../../../examples/manifests/vnpu/cluster/ascend-device-configmap.yaml");
        let docs = super::super::yaml::parse_documents(text, "c.yaml").unwrap();
        let mut errs = Vec::new();
        let cfg = device_config(&docs[0], &mut errs).unwrap();
        assert!(errs.is_empty(), "{errs:?}");
        let v = cfg.vnpus.unwrap();
        let words: Vec<&str> = v.types.iter().map(|t| t.common_word.as_str()).collect();
        assert_eq!(
            words,
            ["Ascend910A", "Ascend910B2", "Ascend910B3", "Ascend910B4-1", "Ascend910B4", "Ascend310P", "Ascend910C"]
        );
        let p310 = &v.types[5];
        assert_eq!((p310.memory_allocatable, p310.memory_capacity, v.hami_core), (21527, 24576, false));
        let mem: Vec<i64> = p310.templates.iter().map(|t| t.memory).collect();
        assert_eq!(mem, [3072, 6144, 12288]);
        assert_eq!(p310.resource_core_name(), "huawei.com/Ascend310P-core");
        // TestParseVNPUsLegacyArrayFormat, TestParseVNPUsWrapperWithEmptyConfigs.
        let cm = |body: &str| {
            let t = format!(
                "apiVersion: v1\nkind: ConfigMap\nmetadata: {{name: c, namespace: kube-system}}\ndata:\n  device-config.yaml: |\n{}",
                body.lines().map(|l| format!("    {l}\n")).collect::<String>()
            );
            let d = super::super::yaml::parse_documents(&t, "c.yaml").unwrap();
            let mut errs = Vec::new();
            let c = device_config(&d[0], &mut errs);
            (c, errs.into_iter().map(|e| format!("{}: {}", e.path, e.message)).collect::<Vec<_>>())
        };
        let (c, e) = cm(
            "vnpus:\n- {commonWord: Ascend910A, resourceName: huawei.com/Ascend910A, resourceMemoryName: huawei.com/Ascend910A-memory, memoryAllocatable: 32768, memoryCapacity: 32768}\n- {commonWord: Ascend310P, resourceName: huawei.com/Ascend310P, resourceMemoryName: huawei.com/Ascend310P-memory, memoryAllocatable: 21527, memoryCapacity: 24576}\n",
        );
        let v = c.unwrap().vnpus.unwrap();
        assert!(e.is_empty(), "{e:?}");
        assert_eq!((v.hami_core, v.types.len(), v.types[1].memory_allocatable), (false, 2, 21527));
        let (c, e) = cm("vnpus: {hamiVnpuCore: true, configs: []}\n");
        assert!(e.is_empty(), "{e:?}");
        assert_eq!(c.unwrap().vnpus, Some(VnpuConfig { hami_core: true, types: vec![] }));
        let (_, e) = cm(
            "vnpus: [{commonWord: A, resourceName: r/A, resourceMemoryName: r/A-memory, resourceCoreName: r/A-cores, memoryAllocatable: 1, memoryCapacity: 1}]\n",
        );
        assert_eq!(
            e,
            [
                "document 1: data.device-config.yaml: vnpus[0].resourceCoreName: Volcano reads AI cores as `r/A-core` whatever this says; give that or leave it out (line 1 of the text)"
            ]
        );
        let (_, e) = cm(
            "vnpus: {hamiVnpuCore: true, configs: [{commonWord: X, memoryAllocatable: 1, memoryCapacity: 1, aiCores: 3}]}\n",
        );
        assert_eq!(
            e,
            [
                "document 1: data.device-config.yaml: vnpus.configs[0].aiCores: unknown field of a vNPU config (line 1 of the text)",
                "document 1: data.device-config.yaml: vnpus.configs[0]: needs commonWord, resourceName and resourceMemoryName (line 1 of the text)"
            ]
        );
    }
}
