//! MIG cards (Volcano's `vgpu/mig.go`): a card in MIG mode is cut into the
//! instances of one geometry group of its model (from the device ConfigMap's
//! `knownMigGeometries`), and each container taking the card takes one
//! instance, the smallest that holds its memory.

use crate::util::gosort::sort_slice;

/// One instance type of a geometry group (`MigTemplate`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MigInstance {
    /// Its name, such as `1g.10gb`.
    pub name: String,
    /// MiB.
    pub memory: i64,
    /// How many the group has.
    pub count: u32,
}

/// A geometry group: one way to cut the card (`Geometry`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MigGroup {
    /// Its name, such as `group1`.
    pub name: String,
    /// Its instances, in the ConfigMap's order.
    pub instances: Vec<MigInstance>,
}

/// The geometries of the card models a ConfigMap entry names
/// (`AllowedMigGeometries`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MigModels {
    /// Model names; a card whose type contains one of them uses these groups.
    pub models: Vec<String>,
    /// Its groups, in order.
    pub groups: Vec<MigGroup>,
}

/// The groups of the first entry of `known` with a model the card's type
/// contains (`extractGeometryFromType`); `None` when no entry names it.
pub fn geometry_of<'a>(known: &'a [MigModels], kind: &str) -> Option<&'a [MigGroup]> {
    known.iter().find(|m| m.models.iter().any(|x| kind.contains(x.as_str()))).map(|m| &m.groups[..])
}

/// Instances of one type in use on a card (`MigTemplateUsage`).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct SlotUse {
    /// The instance type's name.
    pub name: String,
    /// Its MiB.
    pub memory: i64,
    /// The instances in use, by index within the type, ascending.
    pub used: Vec<u32>,
}

/// What a MIG card has in use (`MigInUse`): the group it is cut by, once a pod
/// took an instance, and the instances taken.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct MigUse {
    /// The group (index into the card's groups).
    pub group: Option<usize>,
    /// Instances in use, by type, in the order first taken.
    pub slots: Vec<SlotUse>,
}

/// An instance: its group's index and its position in the group (the instances
/// of the types before it, then its index within its type), as Volcano writes
/// `UUID[group-position]`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct MigSlot {
    /// The group's index among the card's groups.
    pub group: u16,
    /// The position within the group.
    pub position: u32,
}

/// `findMatch`: on a card whose group is set, an instance of that group; else
/// the first group with an instance that holds `request` MiB. Returns the slot
/// and the instance's MiB.
pub fn find_match(groups: &[MigGroup], usage: &MigUse, request: i64) -> Option<(MigSlot, i64)> {
    if let Some(g) = usage.group {
        let (pos, mem) = pick_from_group(groups.get(g)?, &usage.slots, request)?;
        return Some((MigSlot { group: g as u16, position: pos }, mem));
    }
    groups.iter().enumerate().find_map(|(g, group)| {
        pick_from_group(group, &[], request).map(|(pos, mem)| (MigSlot { group: g as u16, position: pos }, mem))
    })
}

/// `pickFromGroup`: the instance types by memory ascending (Go's sort); on a
/// card with nothing in use, the first that holds the request; else only types
/// already in use with a free instance that holds it.
fn pick_from_group(group: &MigGroup, usage: &[SlotUse], request: i64) -> Option<(u32, i64)> {
    let mut order: Vec<usize> = (0..group.instances.len()).collect();
    sort_slice(&mut order, |&a, &b| group.instances[a].memory < group.instances[b].memory);
    for i in order {
        let inst = &group.instances[i];
        if usage.is_empty() && inst.memory >= request {
            return Some((position(group, i, &[]), inst.memory));
        }
        for u in usage {
            if u.name == inst.name && (inst.count as usize) > u.used.len() && inst.memory >= request {
                return Some((position(group, i, &u.used), inst.memory));
            }
        }
    }
    None
}

/// `getPosition`: the instances of the types before type `index`, plus the
/// first index within the type not in `used`.
fn position(group: &MigGroup, index: usize, used: &[u32]) -> u32 {
    let before: u32 = group.instances[..index].iter().map(|x| x.count).sum();
    before + (0..group.instances[index].count).find(|i| !used.contains(i)).unwrap_or(0)
}

/// `findPosition`: (type index, index within the type) of a position.
fn find_position(group: &MigGroup, position: u32) -> Option<(usize, u32)> {
    let mut sum = 0;
    for (i, inst) in group.instances.iter().enumerate() {
        if position < sum + inst.count {
            return Some((i, position - sum));
        }
        sum += inst.count;
    }
    None
}

/// `addMigUsed`: marks the slot in use (and the card cut by its group).
/// Returns the instance's MiB (0 for a slot the group does not have).
pub fn add_used(groups: &[MigGroup], usage: &mut MigUse, slot: MigSlot) -> i64 {
    let Some(group) = groups.get(slot.group as usize) else { return 0 };
    usage.group = Some(slot.group as usize);
    let Some((t, idx)) = find_position(group, slot.position) else { return 0 };
    let inst = &group.instances[t];
    match usage.slots.iter_mut().find(|u| u.name == inst.name) {
        Some(u) => {
            if let Err(at) = u.used.binary_search(&idx) {
                u.used.insert(at, idx);
            }
            u.memory
        }
        None => {
            usage.slots.push(SlotUse { name: inst.name.clone(), memory: inst.memory, used: vec![idx] });
            inst.memory
        }
    }
}

/// `subMigUsed`: frees the slot; a type with nothing in use leaves the list.
/// Returns the instance's MiB (0 when the slot was not in use). The card stays
/// cut by its group while any instance is in use (see `CardUse::mig`).
pub fn sub_used(groups: &[MigGroup], usage: &mut MigUse, slot: MigSlot) -> i64 {
    let Some(group) = groups.get(slot.group as usize) else { return 0 };
    let Some((t, idx)) = find_position(group, slot.position) else { return 0 };
    let name = &group.instances[t].name;
    let Some(k) = usage.slots.iter().position(|u| &u.name == name) else { return 0 };
    let u = &mut usage.slots[k];
    u.used.retain(|&x| x != idx);
    let mem = u.memory;
    if u.used.is_empty() {
        usage.slots.remove(k);
    }
    if usage.slots.is_empty() {
        usage.group = None;
    }
    mem
}

/// Volcano's MIG device id: `UUID[group-position]`.
pub fn encode_id(uuid: &str, groups: &[MigGroup], slot: MigSlot) -> String {
    let name = groups.get(slot.group as usize).map_or("", |g| g.name.as_str());
    format!("{uuid}[{name}-{}]", slot.position)
}

/// Reads `UUID[group-position]` (`decodeMIGID`): the group's name and the
/// position.
pub fn decode_id(id: &str) -> Result<(&str, u32), String> {
    let (Some(start), Some(end)) = (id.find('['), id.find(']')) else {
        return Err(format!("`{id}` is not a MIG id `UUID[group-position]`"));
    };
    if start > end {
        return Err(format!("`{id}` is not a MIG id `UUID[group-position]`"));
    }
    let inner = &id[start + 1..end];
    let parts: Vec<&str> = inner.split('-').collect();
    if parts.len() != 2 {
        return Err(format!("`{id}`: expected `[group-position]` inside the brackets"));
    }
    let pos = parts[1].parse::<u32>().map_err(|_| format!("`{id}`: position `{}` is not a count", parts[1]))?;
    Ok((parts[0], pos))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn group(name: &str, instances: &[(&str, i64, u32)]) -> MigGroup {
        MigGroup {
            name: name.into(),
            instances: instances
                .iter()
                .map(|&(n, memory, count)| MigInstance { name: n.into(), memory, count })
                .collect(),
        }
    }
    fn usage(group: Option<usize>, slots: &[(&str, i64, &[u32])]) -> MigUse {
        MigUse {
            group,
            slots: slots
                .iter()
                .map(|&(n, memory, used)| SlotUse { name: n.into(), memory, used: used.to_vec() })
                .collect(),
        }
    }
    fn found(uuid: &str, groups: &[MigGroup], r: Option<(MigSlot, i64)>) -> (bool, String, i64) {
        match r {
            Some((s, m)) => (true, encode_id(uuid, groups, s), m),
            None => (false, String::new(), 0),
        }
    }

    /// `TestFindMatch` (`vgpu/mig_test.go`), its seven cases by name.
    #[test]
    fn test_find_match() {
        let one = vec![group("default", &[("1g.10gb", 10240, 2)])];
        /// (name, uuid, request, usage, groups, (fit, id, MiB)).
        type Case = (&'static str, &'static str, i64, MigUse, Vec<MigGroup>, (bool, &'static str, i64));
        let cases: Vec<Case> = vec![
            (
                "Match 1g.10gb and available",
                "gpu-1234",
                10,
                usage(Some(0), &[("1g.10gb", 10240, &[])]),
                one.clone(),
                (true, "gpu-1234[default-0]", 10240),
            ),
            (
                "No match due to memory too high",
                "gpu-1234",
                20000,
                usage(Some(0), &[("1g.10gb", 10, &[])]),
                vec![group("default", &[("1g.10gb", 10, 1)])],
                (false, "", 0),
            ),
            ("Empty geometry list", "gpu-1234", 10, usage(Some(0), &[]), vec![group("", &[])], (false, "", 0)),
            (
                "No matching MIG template in geometry",
                "gpu-0002",
                20,
                usage(Some(0), &[("1g.10gb", 10, &[])]),
                vec![group("default", &[("2g.20gb", 20, 1)])],
                (false, "", 0),
            ),
            (
                "MIG instance already in use",
                "gpu-1234",
                10,
                usage(Some(0), &[("1g.10gb", 10, &[0])]),
                vec![group("default", &[("1g.10gb", 10, 1)])],
                (false, "", 0),
            ),
            (
                "Multiple templates, pick first matching and available",
                "gpu-1234",
                20,
                usage(None, &[]),
                vec![group("group1", &[("1g.10gb", 10, 1)]), group("group2", &[("2g.20gb", 24, 1)])],
                (true, "gpu-1234[group2-0]", 24),
            ),
            (
                "Request memory smaller than template, still match",
                "gpu-0005",
                5,
                usage(Some(0), &[("1g.10gb", 10, &[])]),
                vec![group("default", &[("1g.10gb", 10, 1)])],
                (true, "gpu-0005[default-0]", 10),
            ),
        ];
        for (name, uuid, req, u, groups, want) in cases {
            let got = found(uuid, &groups, find_match(&groups, &u, req));
            assert_eq!(got, (want.0, want.1.to_string(), want.2), "{name}");
        }
    }

    /// `TestAddAndSubMigUsed`: add a slot, then sub it.
    #[test]
    fn test_add_and_sub_mig_used() {
        let cases = [
            ("Add then Sub with valid position", group("group-a", &[("1g.10gb", 10240, 2)]), 1, 10240),
            ("Add twice same instance, then sub once", group("group-b", &[("2g.20gb", 20480, 3)]), 1, 20480),
            ("Sub from unused slot returns 0", group("group-c", &[("3g.30gb", 30720, 1)]), 0, 30720),
        ];
        for (name, g, pos, mem) in cases {
            let groups = vec![g];
            let mut u = MigUse::default();
            let slot = MigSlot { group: 0, position: pos };
            assert_eq!(add_used(&groups, &mut u, slot), mem, "{name}: add");
            assert_eq!(u.slots[0].used, [pos], "{name}: in use");
            assert_eq!(sub_used(&groups, &mut u, slot), mem, "{name}: sub");
            assert!(u.slots.is_empty(), "{name}: empty after");
        }
        // "Invalid group name should return 0": no such group.
        let groups = vec![group("group-d", &[("1g.10gb", 10240, 1)])];
        let mut u = MigUse::default();
        assert_eq!(add_used(&groups, &mut u, MigSlot { group: 3, position: 0 }), 0);
        assert_eq!(sub_used(&groups, &mut u, MigSlot { group: 3, position: 0 }), 0);
        assert!(u.slots.is_empty());
    }

    /// The position of Volcano's comment in `mig.go`: in group2 of the A100
    /// 80GB (`2g.20gb` × 3, then `1g.10gb` × 1), the `1g.10gb` instance is at
    /// 3; a card cut by group2 offers only the types in use once one is.
    #[test]
    fn positions_count_the_types_before() {
        let g = vec![group("group2", &[("2g.20gb", 20480, 3), ("1g.10gb", 10240, 1)])];
        let (slot, mem) = find_match(&g, &MigUse::default(), 8000).unwrap();
        assert_eq!((encode_id("GPU-a", &g, slot), mem), ("GPU-a[group2-3]".to_string(), 10240));
        let mut u = MigUse::default();
        add_used(&g, &mut u, slot);
        // The only 1g.10gb is taken; 2g.20gb is not in use, so it is not offered.
        assert_eq!(find_match(&g, &u, 8000), None);
        assert_eq!(decode_id("GPU-a[group2-3]"), Ok(("group2", 3)));
        assert!(decode_id("GPU-a").is_err() && decode_id("GPU-a[group2]").is_err());
    }
}
