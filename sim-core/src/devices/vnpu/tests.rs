//! Replays of Volcano's HAMi vNPU unit tests
//! (`pkg/scheduler/api/devices/ascend/hami/device_info_test.go`), under their Go
//! names, and hand-checked cases of the choice the Go tests do not cover.

use super::*;

/// The test file's `config_yaml` entry the tests use: Ascend 310P, 21527 MiB
/// allocatable of 24576, templates vir01/vir02/vir04.
fn ascend310p() -> ChipType {
    ChipType {
        common_word: "Ascend310P".into(),
        resource_name: "huawei.com/Ascend310P".into(),
        resource_memory_name: "huawei.com/Ascend310P-memory".into(),
        memory_allocatable: 21527,
        memory_capacity: 24576,
        templates: vec![
            Template { name: "vir01".into(), memory: 3072 },
            Template { name: "vir02".into(), memory: 6144 },
            Template { name: "vir04".into(), memory: 12288 },
        ],
    }
}

/// Test_fit's device: 7 sharers, 8 cores, 21527 MiB.
fn chip310p(hami_core: bool) -> Chip {
    Chip {
        id: "68496E64-20E05477-92C31323-6E78030A-BD003019".into(),
        count: 7,
        devmem: 21527,
        devcore: 8,
        network_id: None,
        hami_core,
    }
}

#[test]
fn test_trim_memory() {
    let t = ascend310p();
    let cases = [
        ("test1", 0, 3072),
        ("test2", 1, 3072),
        ("test3", 100, 3072),
        ("test4", 3071, 3072),
        ("test5", 3072, 3072),
        ("test6", 3073, 6144),
        ("test7", 6143, 6144),
        ("test8", 6144, 6144),
        ("test9", 6144, 6144),
        ("test10", 6145, 12288),
        ("test11", 12288, 12288),
        ("test12", 12289, 21527),
        ("test13", 21527, 21527),
        ("test14", 21528, 21527),
        ("test15", 24576, 21527),
        ("test16", 24577, 0),
    ];
    for (name, m, want) in cases {
        assert_eq!(t.trim_memory(m).0, want, "{name}");
    }
    assert_eq!(t.trim_memory(5000), (6144, Some("vir02")));
    assert_eq!(t.trim_memory(20000), (21527, None));
}

#[test]
fn test_fit() {
    let ask = |memory, cores| Ask { nums: 1, memory, cores };
    let used = |used, memory, cores| ChipUse { used, memory, cores };
    let cases = [
        ("test1", ask(1024, 0), used(1, 3072, 0), false, false, true),
        ("test2", ask(21527, 0), used(1, 3072, 0), false, false, false),
        ("test3", ask(6144, 0), used(1, 12288, 0), false, false, true),
        ("test4", ask(24576, 0), used(0, 0, 0), false, false, false),
        ("test5_core", ask(6144, 4), used(1, 12288, 6), false, false, false),
        (
            "hami_core_mode_should_fail_when_node_not_support_hami_vnpu_core",
            ask(1024, 20),
            used(0, 0, 0),
            false,
            true,
            false,
        ),
        ("hami_core_mode_should_fail_when_core_is_insufficient", ask(1024, 20), used(0, 0, 90), true, true, false),
        ("hami_core_mode_should_pass_when_node_support_hami_vnpu_core", ask(1024, 20), used(0, 0, 0), true, true, true),
    ];
    for (name, a, u, node_core, pod_core, want) in cases {
        assert_eq!(fits(&a, &chip310p(node_core), &u, pod_core), want, "{name}");
    }
}

#[test]
fn test_verify_req() {
    let t = ascend310p();
    let cases = [
        ("single_device_with_partial_memory_should_pass", 1, 1024, true),
        ("multiple_devices_with_partial_memory_should_fail", 2, 1024, false),
        ("multiple_devices_with_full_memory_should_pass", 2, 21527, true),
    ];
    for (name, nums, memory, pass) in cases {
        assert_eq!(verify(&Ask { nums, memory, cores: 0 }, &t).is_ok(), pass, "{name}");
    }
}

#[test]
fn test_cal_score() {
    let chip = |devmem| Chip { id: "d".into(), count: 1, devmem, devcore: 30, network_id: None, hami_core: false };
    let u = |used, memory| ChipUse { used, memory, cores: 0 };
    let cases = [
        ("spread rewards idle device", NpuPolicy::Spread, u(0, 0), 32768, 100.0),
        ("devmem is zero", NpuPolicy::Spread, u(0, 0), 0, 0.0),
        ("binpack devmem is zero", NpuPolicy::Binpack, u(0, 0), 0, 0.0),
        ("spread does not reward shared device", NpuPolicy::Spread, u(1, 0), 32768, 0.0),
        ("binpack rewards full device most", NpuPolicy::Binpack, u(0, 32768), 32768, 100.0),
        ("binpack does not reward idle device", NpuPolicy::Binpack, u(0, 0), 32768, 0.0),
        ("binpack scales with memory usage", NpuPolicy::Binpack, u(0, 16384), 32768, 50.0),
    ];
    for (name, p, usage, devmem, want) in cases {
        assert_eq!(chip_score(p, &usage, &chip(devmem)), want, "{name}");
    }
}

/// TestAscendDevicesFilterNodeErrorClassification: the test's device
/// (`createTestAscendAllocateDevice`: 1 sharer, 30 cores, 32768 MiB, no
/// templates, capacity = allocatable = 32768) on an Ascend910A node. Its
/// "missing device inventory" case cannot arise in lahar: a node without chips
/// of the type has no device object, and the count resource refuses it.
#[test]
fn test_ascend_devices_filter_node_error_classification() {
    let ty = |templates| ChipType {
        common_word: "Ascend910A".into(),
        resource_name: "huawei.com/Ascend910A".into(),
        resource_memory_name: "huawei.com/Ascend910A-memory".into(),
        memory_allocatable: 32768,
        memory_capacity: 32768,
        templates,
    };
    let chip = Chip { id: "device-1".into(), count: 1, devmem: 32768, devcore: 30, network_id: None, hami_core: false };
    let w = |count, memory| Written { count: Some(count), memory: Some(memory), cores: None };
    // insufficient device capacity is retryable
    let t = ty(vec![]);
    let a = ask(&w(1, 32768), &t, chip.devmem, false).unwrap();
    let full = ChipUse { used: 1, memory: 32768, cores: 0 };
    let e = select(NpuPolicy::Binpack, &t, std::slice::from_ref(&chip), &[full], &[a], false).unwrap_err();
    assert_eq!((e, e.resolvable()), (Refusal::Capacity, true));
    // invalid multi-device partial memory request is an error
    let t = ty(vec![Template { name: "vir01".into(), memory: 4096 }]);
    let a = ask(&w(2, 4096), &t, chip.devmem, false).unwrap();
    let e =
        select(NpuPolicy::Binpack, &t, std::slice::from_ref(&chip), &[ChipUse::default()], &[a], false).unwrap_err();
    assert_eq!((e, e.resolvable()), (Refusal::PartialMemory, false));
}

/// `ResourceReqs` by hand: no memory means the whole chip (21527 MiB, trimmed to
/// itself); memory alone means one chip; hami-core pods keep their memory as
/// written; a container naming neither resource asks nothing.
#[test]
fn asks_as_volcano_reads_them() {
    let t = ascend310p();
    let w = |count, memory| Written { count, memory, cores: None };
    assert_eq!(ask(&w(Some(1), None), &t, 21527, false), Some(Ask { nums: 1, memory: 21527, cores: 0 }));
    assert_eq!(ask(&w(None, Some(4096)), &t, 21527, false), Some(Ask { nums: 1, memory: 6144, cores: 0 }));
    assert_eq!(ask(&w(None, Some(4096)), &t, 21527, true), Some(Ask { nums: 1, memory: 4096, cores: 0 }));
    assert_eq!(ask(&w(Some(2), None), &t, 21527, false), Some(Ask { nums: 2, memory: 21527, cores: 0 }));
    assert_eq!(ask(&w(None, None), &t, 21527, false), None);
}

/// The choice by hand on a 310P node of three chips. Binpack tries the chip with
/// the most memory in use first: chip 2 (12288 of 21527) cannot take a vir04
/// (12288 + 12288 > 21527) but takes a vir02; spread takes the unshared chip 0.
/// Two containers never share a chip.
#[test]
fn chips_in_the_policy_order() {
    let t = ascend310p();
    let chips: Vec<Chip> = (0..3).map(|i| Chip { id: format!("c{i}"), ..chip310p(false) }).collect();
    let uses =
        [ChipUse::default(), ChipUse { used: 1, memory: 3072, cores: 0 }, ChipUse { used: 1, memory: 12288, cores: 0 }];
    let one = |memory| Ask { nums: 1, memory, cores: 0 };
    assert_eq!(select(NpuPolicy::Binpack, &t, &chips, &uses, &[one(6144)], false), Ok(vec![vec![2]]));
    assert_eq!(select(NpuPolicy::Binpack, &t, &chips, &uses, &[one(12288)], false), Ok(vec![vec![1]]));
    assert_eq!(select(NpuPolicy::Spread, &t, &chips, &uses, &[one(12288)], false), Ok(vec![vec![0]]));
    assert_eq!(select(NpuPolicy::Other, &t, &chips, &uses, &[one(3072), one(3072)], false), Ok(vec![vec![0], vec![1]]));
    // Binpack scores the first chip of each container with the use before the
    // pod: 100 × 12288 / 21527.
    let s = node_score(NpuPolicy::Binpack, &t, &chips, &uses, &[vec![2]]);
    assert!((s - 100.0 * 12288.0 / 21527.0).abs() < 1e-9, "{s}");
}

/// 910 rings by hand: 8 chips, ring 0 = chips 0–3, ring 1 = chips 4–7. With
/// chips 1 and 2 full, ring 1 has 4 free and ring 0 has 2: a 2-chip container
/// takes the larger ring's first two (4, 5), not a ring that fits exactly. With
/// rings of equal size, the lower ring id first.
#[test]
fn ascend910_takes_the_largest_ring_first() {
    let t = ChipType { common_word: "Ascend910B3".into(), templates: vec![], ..ascend310p() };
    let chips: Vec<Chip> = (0..8)
        .map(|i| Chip {
            id: format!("c{i}"),
            count: 4,
            devmem: 65536,
            devcore: 20,
            network_id: Some(i / 4),
            hami_core: false,
        })
        .collect();
    let mut uses = [ChipUse::default(); 8];
    for c in [1, 2] {
        uses[c] = ChipUse { used: 4, memory: 65536, cores: 20 };
    }
    let whole = Ask { nums: 2, memory: 0, cores: 0 };
    assert_eq!(select(NpuPolicy::Other, &t, &chips, &uses, &[whole], false), Ok(vec![vec![4, 5]]));
    assert_eq!(by_ring(2, &[6, 1, 7, 0], &chips), [1, 0]);
    assert_eq!(by_ring(0, &[6, 1], &chips), [1, 6]);
    // One container on ring 1: its ring share is 1, +10.
    assert_eq!(node_score(NpuPolicy::Other, &t, &chips, &uses, &[vec![4, 5]]), 10.0);
}

/// TestAscendDevices_AddResource: what a pod's `devices-allocated` annotation
/// charges (the test's devices: 100 cores, 32000 MiB). "Successfully add single
/// device resource", "…multiple device resources", "Add resource to existing
/// device usage - accumulate" and "Pod missing required annotation" as in
/// Volcano; "Add same pod multiple times" cannot arise (a pod takes its chips
/// once); "Pod has invalid annotation format" and "Device not found in devices
/// map", which Volcano counts as nothing, lahar refuses.
#[test]
fn test_ascend_devices_add_resource() {
    let dev =
        |id: &str| Chip { id: id.into(), count: 100, devmem: 32000, devcore: 0, network_id: None, hami_core: false };
    let chips = [dev("device-1"), dev("device-2")];
    let charge = |u: &mut NpuUse, pod: u32, text: &str| {
        let t = decode_allocated(text, &chips).unwrap();
        u.take(crate::model::ids::PodId(pod), t);
    };
    let view = |u: &NpuUse| u.uses.iter().map(|c| (c.used, c.memory, c.cores)).collect::<Vec<_>>();
    let mut u = NpuUse::new(2);
    charge(&mut u, 0, "device-1,Ascend910,16000,50");
    assert_eq!(view(&u), [(1, 16000, 50), (0, 0, 0)]);
    let mut u = NpuUse::new(2);
    charge(&mut u, 0, "device-1,Ascend910,8000,25:device-2,Ascend910,8000,25");
    assert_eq!(view(&u), [(1, 8000, 25), (1, 8000, 25)]);
    let mut u = NpuUse::new(2);
    charge(&mut u, 0, "device-1,Ascend910,8000,25");
    charge(&mut u, 1, "device-1,Ascend910,8000,25");
    assert_eq!(view(&u), [(2, 16000, 50), (0, 0, 0)]);
    assert_eq!(decode_allocated("", &chips), Ok(vec![]));
    assert!(decode_allocated("invalid format", &chips).is_err());
    assert_eq!(
        decode_allocated("non-existent-device,Ascend910,16000,50", &chips),
        Err("chip `non-existent-device` is not one the node registers".into())
    );
    // Two containers, as Volcano writes them: the second's first chip is lost.
    assert_eq!(
        decode_allocated("device-1,Ascend910,3072,0:;device-2,Ascend910,3072,0:;", &chips),
        Ok(vec![(0, 3072, 0)])
    );
    // Giving back frees exactly what was taken.
    let mut u = NpuUse::new(2);
    charge(&mut u, 7, "device-1,Ascend910,8000,25:device-2,Ascend910,8000,25");
    assert!(u.set_releasing(crate::model::ids::PodId(7), true));
    assert_eq!(view(&u), [(0, 0, 0), (0, 0, 0)]);
    assert!(u.set_releasing(crate::model::ids::PodId(7), false));
    assert_eq!(view(&u), [(1, 8000, 25), (1, 8000, 25)]);
    assert!(u.give_back(crate::model::ids::PodId(7)));
    assert_eq!(view(&u), [(0, 0, 0), (0, 0, 0)]);
}
