//! What a pod asks of Ascend chips under Volcano's vNPU sharing, HAMi mode
//! (`ResourceReqs` in `pkg/scheduler/api/devices/ascend/hami/device_info.go`):
//! for each chip type of the device ConfigMap, each container whose limits
//! name the type's count resource (`huawei.com/Ascend310P`) or its memory
//! resource (`huawei.com/Ascend310P-memory`, MiB; alone it means one chip), with
//! the memory and `<count resource>-core` limits, else requests.

use super::ck::Ck;
use super::yaml::{At, Node};
use lahar_core::devices::vnpu::{NpuAsk, VnpuConfig, Written};
use std::collections::BTreeMap;

/// The pod annotation that puts a pod in hami-core mode.
pub const VNPU_MODE: &str = "huawei.com/vnpu-mode";

/// The resources Volcano leaves out of its generic resource check under vNPU
/// sharing (`GetIgnoredDevices`): each type's memory and core resources, which
/// the device plugin does not advertise.
pub(crate) fn ignored(config: &VnpuConfig) -> Vec<String> {
    config.types.iter().flat_map(|t| [t.resource_memory_name.clone(), t.resource_core_name()]).collect()
}

/// The pod's ask (`None` when no container asks for a chip type of `config`).
/// Values must be whole numbers, a count at least 1, a request equal to its
/// limit; `huawei.com/vnpu-mode` must be `hami-core`, the only value read, and
/// a core resource is refused without it (the device plugin rejects such a pod).
pub(crate) fn pod_ask(
    ck: &mut Ck<'_>,
    containers: &[Node],
    sp: &str,
    annotations: &BTreeMap<String, (String, At)>,
    path: &str,
    config: &VnpuConfig,
) -> Option<Box<NpuAsk>> {
    let mut ask = NpuAsk::default();
    for ty in &config.types {
        let (count, mem, core) = (&ty.resource_name, &ty.resource_memory_name, ty.resource_core_name());
        let mut written = Vec::new();
        for (i, c) in containers.iter().enumerate() {
            let res = c.get("resources");
            let cp = format!("{sp}.containers[{i}].resources");
            let mut whole = |part: &str, name: &str| -> Option<(i64, At)> {
                let n = res?.get(part)?.get(name)?;
                let q = n.scalar()?;
                match lahar_core::util::quantity::parse_quantity(&q, 1000) {
                    Ok(x) if x >= 0 && x % 1000 == 0 => Some((x / 1000, n.at)),
                    // Negative or unparsable quantities are the resource reader's errors.
                    Ok(x) if x >= 0 => {
                        ck.err(n.at, &format!("{cp}.{part}.{name}"), format!("expected a whole number, got `{q}`"));
                        None
                    }
                    _ => None,
                }
            };
            let limits: Vec<Option<(i64, At)>> = [count, mem, &core].iter().map(|r| whole("limits", r)).collect();
            let requests: Vec<Option<(i64, At)>> = [count, mem, &core].iter().map(|r| whole("requests", r)).collect();
            for (k, name) in [count, mem, &core].into_iter().enumerate() {
                if let (Some((l, _)), Some((r, at))) = (limits[k], requests[k])
                    && l != r
                {
                    ck.err(
                        at,
                        &format!("{cp}.requests.{name}"),
                        format!("must equal its limit ({l}), as Kubernetes requires of extended resources; got {r}"),
                    );
                }
            }
            if limits[0].is_none() && limits[1].is_none() {
                // Volcano reads no ask from this container, and the memory and
                // core resources are out of the resource check: they would ask
                // for nothing at all.
                if let Some((k, (_, at))) = [(0, requests[0]), (1, requests[1]), (2, limits[2].or(requests[2]))]
                    .into_iter()
                    .find_map(|(k, x)| x.map(|x| (k, x)))
                {
                    let name = [count, mem, &core][k];
                    ck.err(
                        at,
                        &format!("{cp}.{}.{name}", if limits[2].is_some() && k == 2 { "limits" } else { "requests" }),
                        format!("Volcano reads a chip ask from the limits of `{count}` or `{mem}`; without either this asks for nothing"),
                    );
                }
                continue;
            }
            if let Some((0, at)) = limits[0] {
                ck.err(at, &format!("{cp}.limits.{count}"), "expected at least 1 chip");
                continue;
            }
            let pick = |k: usize| limits[k].or(requests[k]);
            if let Some((_, at)) = pick(2).filter(|_| annotations.get(VNPU_MODE).is_none_or(|m| m.0 != "hami-core")) {
                ck.err(
                    at,
                    &format!("{cp}.limits.{core}"),
                    format!("AI cores are set only in hami-core mode: annotate the pod `{VNPU_MODE}: hami-core` (the device plugin rejects the pod otherwise)"),
                );
            }
            written.push(Written {
                count: limits[0].map(|x| x.0),
                memory: pick(1).map(|x| x.0),
                cores: pick(2).map(|x| x.0),
            });
        }
        if !written.is_empty() {
            ask.types.push((ty.common_word.clone(), written));
        }
    }
    if ask.types.is_empty() {
        return None;
    }
    if let Some((m, at)) = annotations.get(VNPU_MODE) {
        let apath = format!(
            "{}metadata.annotations.{VNPU_MODE}",
            if path.is_empty() { String::new() } else { format!("{path}.") }
        );
        if m != "hami-core" {
            ck.err(
                *at,
                &apath,
                format!("expected `hami-core` (leave the annotation out for template mode), got `{m}`"),
            );
        }
        ask.hami_core = m == "hami-core";
    }
    Some(Box::new(ask))
}
