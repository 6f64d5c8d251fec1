//! Replays of Volcano's vGPU unit tests (`pkg/scheduler/api/devices/nvidia/vgpu`),
//! named after the Go tests and cases.

use super::*;

/// `makeGPUDevices`: n cards `GPU-0000A`, `GPU-0000B`, … of `mem` MiB shared
/// by up to `max`, type `NVIDIA`.
fn cards(n: usize, mem: i64, max: u32) -> Vec<VgpuCard> {
    (0..n).map(|i| VgpuCard::new(&format!("GPU-0000{}", (b'A' + i as u8) as char), max, mem, "NVIDIA")).collect()
}

/// `makeVGPUPod`: one container of 1 card, `mem` MiB, 25 cores.
fn pod(mem: i64, spread: bool) -> VgpuAsk {
    VgpuAsk {
        containers: vec![ContainerAsk::of(Some(1), Some(mem), Some(25)).expect("asks")],
        spread,
        ..Default::default()
    }
}

/// `simulateAllocate`: fit under binpack and charge the cards; the UUID taken.
fn simulate(cards: &[VgpuCard], uses: &mut [CardUse], ask: &VgpuAsk, pod: u32, group: u32) -> Option<String> {
    let f = fit(cards, uses, ask, JobId(group), VgpuPolicy::Binpack, "n").ok()?;
    take(cards, uses, &f, PodId(pod), JobId(group), 0);
    Some(cards[f.takes[0].0 as usize].uuid.clone())
}

fn used(num: u32, memory: i64, cores: i64) -> CardUse {
    CardUse { num, memory, cores, ..Default::default() }
}

#[test]
fn test_get_gpu_memory_of_pod_gpus_required_only_in_containers() {
    let a = ContainerAsk::of(Some(1), Some(3000), None).unwrap();
    let b = ContainerAsk::of(Some(3), Some(5000), None).unwrap();
    assert_eq!((a.nums, a.memory, a.percent, a.cores), (1, 3000, PERCENT_UNSET, 0));
    assert_eq!((b.nums, b.memory), (3, 5000));
    // Memory alone is one card; neither is no ask; no memory is the whole card.
    assert_eq!(ContainerAsk::of(None, Some(100), None).unwrap().nums, 1);
    assert_eq!(ContainerAsk::of(None, None, Some(50)), None);
    assert_eq!(ContainerAsk::of(Some(2), None, None).unwrap().memory_on(30000, false), 30000);
}

#[test]
fn test_spread_prevents_co_location() {
    let c = cards(2, 16384, 4);
    let mut u = vec![CardUse::default(); 2];
    assert_eq!(simulate(&c, &mut u, &pod(4096, true), 1, 1).as_deref(), Some("GPU-0000A"));
    assert_eq!(simulate(&c, &mut u, &pod(4096, true), 2, 1).as_deref(), Some("GPU-0000B"));
}

#[test]
fn test_binpack_allows_co_location() {
    let c = cards(2, 16384, 4);
    let mut u = vec![CardUse::default(); 2];
    assert_eq!(simulate(&c, &mut u, &pod(4096, false), 1, 1).as_deref(), Some("GPU-0000A"));
    assert_eq!(simulate(&c, &mut u, &pod(4096, false), 2, 1).as_deref(), Some("GPU-0000A"));
}

#[test]
fn test_spread_different_groups_can_share() {
    let c = cards(1, 16384, 4);
    let mut u = vec![CardUse::default(); 1];
    assert_eq!(simulate(&c, &mut u, &pod(4096, true), 1, 1).as_deref(), Some("GPU-0000A"));
    assert_eq!(simulate(&c, &mut u, &pod(4096, true), 2, 2).as_deref(), Some("GPU-0000A"));
}

#[test]
fn test_spread_with_no_room_fails() {
    let c = cards(1, 16384, 4);
    let mut u = vec![CardUse::default(); 1];
    assert!(simulate(&c, &mut u, &pod(4096, true), 1, 1).is_some());
    assert_eq!(simulate(&c, &mut u, &pod(4096, true), 2, 1), None);
}

#[test]
fn test_mixed_annotations() {
    let c = cards(2, 16384, 4);
    let mut u = vec![CardUse::default(); 2];
    assert!(simulate(&c, &mut u, &pod(4096, true), 1, 1).is_some());
    assert!(simulate(&c, &mut u, &pod(4096, false), 2, 1).is_some());
}

#[test]
fn test_check_gpu_type() {
    let ask = |use_: Option<&str>, nouse: Option<&str>| VgpuAsk {
        use_types: use_.map(String::from),
        nouse_types: nouse.map(String::from),
        ..Default::default()
    };
    let cases = [
        (Some("NVIDIA"), None, true),
        (Some("nvidia"), None, true),
        (Some("AMD,NVIDIA,INTEL"), None, true),
        (Some("AMD,INTEL,MLU"), None, false),
        (None, Some("NVIDIA"), false),
        (None, Some("nvidia"), false),
        (None, Some("AMD,NVIDIA,INTEL"), false),
        (None, Some("AMD,INTEL,MLU"), true),
        // "empty annotations" and "nil annotations".
        (None, None, true),
        (None, None, true),
    ];
    for (u, n, want) in cases {
        assert_eq!(ask(u, n).type_matches("NVIDIA"), want, "use {u:?} nouse {n:?}");
    }
    // A model name matches case-blind, as `use-gputype: v100` on a V100S.
    assert!(ask(Some("v100"), None).type_matches("NVIDIA-Tesla V100S-PCIE-32GB"));
}

#[test]
fn test_check_gpu_uuid() {
    let f = |allow: &str, deny: &str| VgpuAsk {
        use_uuids: uuid_list(allow),
        nouse_uuids: uuid_list(deny),
        ..Default::default()
    };
    let cases = [
        ("", "", "GPU-1", true),
        ("  ", "", "GPU-1", true),
        (", ,", "", "GPU-1", true),
        ("GPU-0, GPU-1", "", "GPU-1", true),
        ("GPU-0,, GPU-1,", "", "GPU-1", true),
        ("GPU-10", "", "GPU-1", false),
        ("GPU-0,", "", "", false),
        ("", "GPU-0, GPU-1", "GPU-1", false),
        ("", "GPU-0,", "", false),
        ("GPU-1", "GPU-1", "GPU-1", false),
    ];
    for (allow, deny, id, want) in cases {
        assert_eq!(f(allow, deny).uuid_matches(id), want, "allow {allow:?} deny {deny:?} id {id:?}");
    }
}

#[test]
fn test_gpu_uuid_constraints() {
    let c = cards(2, 16384, 4);
    let u = vec![CardUse::default(); 2];
    let run = |allow: &str, deny: &str| {
        let ask = VgpuAsk {
            use_uuids: uuid_list(allow),
            nouse_uuids: uuid_list(deny),
            uuid_text: (allow.into(), deny.into()),
            ..pod(4096, false)
        };
        fit(&c, &u, &ask, JobId(0), VgpuPolicy::IndexDescending, "n").map(|f| c[f.takes[0].0 as usize].uuid.clone())
    };
    assert_eq!(run("GPU-0000A", "").unwrap(), "GPU-0000A");
    assert_eq!(run("", "GPU-0000B").unwrap(), "GPU-0000A");
    assert!(run("GPU-unknown", "").unwrap_err().contains("volcano.sh/vgpu-use-gpuuuid"));
    assert!(run("", "GPU-0000A,GPU-0000B").unwrap_err().contains("volcano.sh/vgpu-nouse-gpuuuid"));
}

/// `TestDeviceHasPodFromSameGroup`, through the spread check of the fit: a
/// card blocks a spread pod only when a pod of the same group holds memory or
/// cores on it (the "empty key" case has no counterpart: every lahar pod has a
/// group).
#[test]
fn test_device_has_pod_from_same_group() {
    let c = cards(1, 16384, 4);
    let with = |group: u32, memory: i64, cores: i64| {
        let h = Holder {
            pod: PodId(9),
            group: JobId(group),
            count: 1,
            memory,
            cores,
            rules: 0,
            releasing: false,
            slots: Vec::new(),
        };
        vec![CardUse { num: 1, memory, cores, holders: vec![h], ..Default::default() }]
    };
    let blocked = |u: &[CardUse]| fit(&c, u, &pod(1000, true), JobId(1), VgpuPolicy::Binpack, "n").is_err();
    assert!(!blocked(&with(2, 1000, 50)), "other group");
    assert!(blocked(&with(1, 1000, 50)), "same group with usage");
    assert!(!blocked(&with(1, 0, 0)), "same group without usage");
    assert!(!blocked(&[CardUse::default()]), "empty pod map");
}

#[test]
fn test_sorted_device_indices_by_policy_picks_expected_device() {
    let c = cards(2, 16384, 4);
    let u = vec![used(1, 4096, 0), CardUse::default()];
    let first = |c: &[VgpuCard], u: &[CardUse], p| fit(c, u, &pod(4096, false), JobId(0), p, "n").unwrap().takes[0].0;
    assert_eq!(first(&c, &u, VgpuPolicy::Binpack), 0, "binpack picks busier device");
    assert_eq!(first(&c, &u, VgpuPolicy::Spread), 1, "spread picks idle device over shared one");
    let c3 = cards(3, 16384, 4);
    assert_eq!(first(&c3, &[CardUse::default(), CardUse::default(), CardUse::default()], VgpuPolicy::parse("")), 2);
}

#[test]
fn test_gpu_score() {
    let c = &cards(1, 16384, 4)[0];
    assert_eq!(card_score(VgpuPolicy::Spread, c, 0, 0), 100.0, "spread idle");
    assert_eq!(card_score(VgpuPolicy::Spread, c, 1, 4096), 0.0, "spread shared");
    assert_eq!(card_score(VgpuPolicy::Spread, c, 4, 16384), 0.0, "spread full");
    assert_eq!(card_score(VgpuPolicy::Binpack, c, 4, 16384), 100.0, "binpack full");
    assert_eq!(card_score(VgpuPolicy::Binpack, c, 0, 0), 0.0, "binpack idle");
    assert_eq!(card_score(VgpuPolicy::parse(""), c, 1, 4096), 0.0, "unset shared");
}

#[test]
fn test_binpack_stacks_sequential_pods() {
    let c = cards(3, 16384, 4);
    let mut u = vec![CardUse::default(); 3];
    for p in 0..3 {
        assert_eq!(simulate(&c, &mut u, &pod(4096, false), p, p).as_deref(), Some("GPU-0000A"));
    }
}

/// `TestVgpuScore` (`pkg/scheduler/plugins/deviceshare`): a 30000 MiB card
/// with one sharer of 3000 MiB; a pod of 1000 MiB scores 100 × 4000 / 30000
/// under binpack; spread scores 0 (the card is counted as taken first).
#[test]
fn test_vgpu_score() {
    let c = vec![VgpuCard::new("", 10, 30000, "NVIDIA")];
    let ask = VgpuAsk { containers: vec![ContainerAsk::of(Some(1), Some(1000), None).unwrap()], ..Default::default() };
    let s = fit(&c, &[used(1, 3000, 0)], &ask, JobId(0), VgpuPolicy::Binpack, "node1").unwrap().score;
    assert!((s - 13.333_333).abs() < 1e-5, "{s}");
    let s = fit(&c, &[CardUse::default()], &ask, JobId(0), VgpuPolicy::Spread, "node2").unwrap().score;
    assert_eq!(s, 0.0);
}

/// `Test_FilterNode` case0: three cards of 30000, 20000 and 30000 MiB; a pod
/// asking 3 cards at 100 cores, no memory (all of each card's), fits.
#[test]
fn test_filter_node_case0_should_allocated_3_card_with_diff_memory_for_pod() {
    let c: Vec<VgpuCard> = [30000, 20000, 30000].iter().map(|&m| VgpuCard::new("", 10, m, "NVIDIA")).collect();
    let ask = VgpuAsk { containers: vec![ContainerAsk::of(Some(3), None, Some(100)).unwrap()], ..Default::default() };
    let f = fit(&c, &vec![CardUse::default(); 3], &ask, JobId(0), VgpuPolicy::Binpack, "n").unwrap();
    assert_eq!(f.takes, [(0, 30000, 100, None), (1, 20000, 100, None), (2, 30000, 100, None)]);
}

/// `TestHAMICoreFactory_AddPod` ("fresh add"), `…AddPodDistinctUIDsAccumulate`
/// and `…SubPodRemovesEntry`: a card of 16384 MiB shared by 4. (The
/// "duplicate add is a no-op" cases test the re-read of a pod's annotation at
/// session open, a path lahar's ledger does not have: it is never rebuilt.)
#[test]
fn test_hami_core_factory_add_and_sub_pod() {
    let one = VgpuFit { takes: vec![(0, 1000, 25, None)], score: 0.0 };
    let c = cards(1, 16384, 4);
    let mut u = vec![CardUse::default()];
    take(&c, &mut u, &one, PodId(1), JobId(1), 0);
    assert_eq!((u[0].num, u[0].memory, u[0].cores), (1, 1000, 25));
    take(&c, &mut u, &one, PodId(2), JobId(1), 0);
    take(&c, &mut u, &one, PodId(3), JobId(1), 0);
    assert_eq!((u[0].num, u[0].memory, u[0].cores), (3, 3000, 75));
    let mut u = vec![CardUse::default()];
    take(&c, &mut u, &one, PodId(1), JobId(1), 0);
    give_back(&c, &mut u, PodId(1));
    assert_eq!(u[0], CardUse::default());
    take(&c, &mut u, &one, PodId(1), JobId(1), 0);
    assert_eq!((u[0].num, u[0].memory), (1, 1000));
}

/// The checks of a card in Volcano's order, each alone.
#[test]
fn fit_checks_each_rule() {
    let c = cards(1, 16000, 2);
    let ask = |mem: i64, cores: i64| VgpuAsk {
        containers: vec![ContainerAsk::of(Some(1), Some(mem), Some(cores)).unwrap()],
        ..Default::default()
    };
    let fits = |u: CardUse, a: &VgpuAsk| fit(&c, &[u], a, JobId(0), VgpuPolicy::Binpack, "n").is_ok();
    assert!(!fits(used(2, 0, 0), &ask(1, 0)), "number of sharers");
    assert!(!fits(used(1, 10000, 0), &ask(6001, 0)), "memory");
    assert!(fits(used(1, 10000, 0), &ask(6000, 0)), "memory exactly");
    assert!(!fits(used(1, 0, 80), &ask(1, 30)), "cores over 100");
    assert!(!fits(used(1, 0, 0), &ask(1, 100)), "100 cores is exclusive");
    assert!(!fits(used(1, 0, 100), &ask(1, 0)), "a card at 100 cores takes no core-less pod");
    let two = VgpuAsk { containers: vec![ContainerAsk::of(Some(2), Some(1), None).unwrap()], ..Default::default() };
    assert_eq!(
        fit(&c, &[CardUse::default()], &two, JobId(0), VgpuPolicy::Binpack, "n1").unwrap_err(),
        "no enough gpu cards on node n1"
    );
    let mode = VgpuAsk { mode: Some("mig".into()), ..ask(1, 0) };
    assert!(fit(&c, &[CardUse::default()], &mode, JobId(0), VgpuPolicy::Binpack, "n").unwrap_err().contains("mig"));
    let amd = vec![VgpuCard { kind: "AMD-MI300".into(), ..c[0].clone() }];
    assert!(fit(&amd, &[CardUse::default()], &ask(1, 0), JobId(0), VgpuPolicy::Binpack, "n").is_err(), "type");
}

/// Two containers of one pod: each on distinct cards of its own, the second
/// seeing what the first took; both charged to the pod.
#[test]
fn containers_take_cards_in_order() {
    let c = cards(2, 16000, 4);
    let ask = VgpuAsk {
        containers: vec![
            ContainerAsk::of(Some(2), Some(10000), None).unwrap(),
            ContainerAsk::of(Some(1), Some(6000), None).unwrap(),
        ],
        ..Default::default()
    };
    let f = fit(&c, &vec![CardUse::default(); 2], &ask, JobId(0), VgpuPolicy::Binpack, "n").unwrap();
    assert_eq!(f.takes, [(0, 10000, 0, None), (1, 10000, 0, None), (0, 6000, 0, None)]);
    // Binpack's score: 100·10000/16000 twice, then 100·16000/16000.
    assert!((f.score - 225.0).abs() < 1e-9, "{}", f.score);
    let mut u = vec![CardUse::default(); 2];
    take(&c, &mut u, &f, PodId(1), JobId(0), 0);
    assert_eq!((u[0].num, u[0].memory, u[0].holders.len(), u[0].holders[0].count), (2, 16000, 1, 2));
    give_back(&c, &mut u, PodId(1));
    assert_eq!(u, vec![CardUse::default(); 2]);
}

/// `TestAddResource` ("Pod assigned to known GPU UUID"; an unknown UUID is an
/// error in lahar, where Volcano skips it) and
/// `TestDecodeContainerDevicesRejectsInvalidUsage` (a valid entry is read;
/// negative, non-numeric or missing fields are errors in lahar, where Volcano
/// skips the entry).
#[test]
fn test_add_resource_and_decode_assigned() {
    let c = vec![VgpuCard::new("GPU-1234", 10, 16384, "NVIDIA")];
    // The test's annotation has no trailing `:`; the entry is read all the same.
    assert_eq!(decode_assigned("GPU-1234,NVIDIA,16384,0", &c).unwrap(), [(0, 16384, 0, None)]);
    assert!(decode_assigned("GPU-5678,NVIDIA,16384,0:", &c).unwrap_err().contains("no card GPU-5678"));
    let c2 = cards(2, 16000, 4);
    assert_eq!(decode_assigned("GPU-0000A,NVIDIA,4096,30:", &c2).unwrap(), [(0, 4096, 30, None)]);
    for bad in ["GPU-0000A,NVIDIA,-5,30:", "GPU-0000A,NVIDIA,4096,-1:", "GPU-0000A,NVIDIA,abc,30:", "GPU-0000A,NVIDIA:"]
    {
        assert!(decode_assigned(bad, &c2).is_err(), "{bad}");
    }
    // Two containers; a second entry of the pod on one card adds nothing.
    assert_eq!(
        decode_assigned("GPU-0000A,NVIDIA,1000,10:GPU-0000B,NVIDIA,2000,20:;GPU-0000A,NVIDIA,500,5:", &c2).unwrap(),
        [(0, 1000, 10, None), (1, 2000, 20, None)]
    );
}

fn labels(l: &[(&str, &str)]) -> Vec<(String, String)> {
    l.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect()
}

/// gpuexclusive_test.go's rules: r0 = {app: training, team: ml}, r1 =
/// {workload: inference}.
fn rules() -> Vec<Vec<(String, String)>> {
    vec![labels(&[("app", "training"), ("team", "ml")]), labels(&[("workload", "inference")])]
}

#[test]
fn test_pod_matches_rule() {
    let r0 = &rules()[..1];
    let r1 = &rules()[1..];
    assert_eq!(rule_mask(r0, &labels(&[("app", "training"), ("team", "ml")])), 1, "exact match");
    assert_eq!(rule_mask(r0, &labels(&[("app", "training"), ("team", "ml"), ("x", "y")])), 1, "extra labels");
    assert_eq!(rule_mask(r0, &labels(&[("app", "training")])), 0, "missing label");
    assert_eq!(rule_mask(r0, &labels(&[("app", "serving"), ("team", "ml")])), 0, "wrong value");
    assert_eq!(rule_mask(r0, &[]), 0, "nil labels");
    assert_eq!(rule_mask(r1, &labels(&[("workload", "inference")])), 1, "r1 match");
}

#[test]
fn test_matching_rules() {
    let count = |l: &[(&str, &str)]| rule_mask(&rules(), &labels(l)).count_ones();
    assert_eq!(count(&[("app", "training"), ("team", "ml")]), 1);
    assert_eq!(count(&[("workload", "inference")]), 1);
    assert_eq!(count(&[("app", "training"), ("team", "ml"), ("workload", "inference")]), 2);
    assert_eq!(count(&[("app", "other")]), 0);
    assert_eq!(count(&[]), 0);
}

/// TestCapGPUsOnlyAffectsSpecifiedIndices, TestReservedGPUsForPod,
/// TestPodMatchingMultipleRulesSeesUnionOfReservedGPUs,
/// TestNonMatchingPodDoesNotReserve and TestEndToEndExclusive: four cards
/// shared by up to 10, card 0 holding an r0 pod and card 1 an r1 pod. An r0
/// pod sees cards 1–3 (3 cards), an r0 + r1 pod cards 2–3, a pod matching no
/// rule all four.
#[test]
fn test_exclusive_reserved_cards() {
    let c = cards(4, 16384, 10);
    let holder = |pod: u32, rules: u64| CardUse {
        num: 1,
        memory: 1000,
        cores: 0,
        holders: vec![Holder {
            pod: PodId(pod),
            group: JobId(pod),
            count: 1,
            memory: 1000,
            cores: 0,
            rules,
            releasing: false,
            slots: Vec::new(),
        }],
        ..Default::default()
    };
    let u = vec![holder(1, 0b01), holder(2, 0b10), CardUse::default(), CardUse::default()];
    let n = |k: u32| VgpuAsk {
        containers: vec![ContainerAsk::of(Some(i64::from(k)), Some(100), None).unwrap()],
        ..Default::default()
    };
    let fits = |k: u32, mask: u64| fit_exclusive(&c, &u, &n(k), JobId(9), mask, VgpuPolicy::Binpack);
    let taken = |k: u32, mask: u64| fits(k, mask).map(|f| f.takes.iter().map(|t| t.0).collect::<Vec<_>>());
    assert_eq!(taken(3, 0b01).unwrap(), [1, 2, 3], "r0 pod: card 0 reserved");
    assert!(fits(4, 0b01).is_err());
    assert_eq!(taken(2, 0b11).unwrap(), [2, 3], "r0 + r1 pod: the union");
    assert!(fits(3, 0b11).is_err());
    assert_eq!(taken(4, 0).unwrap(), [0, 1, 2, 3], "no rule: no cap");
}

/// A releasing pod's card is free at once but stays exclusive to its rules
/// until the pod is gone; an undone eviction takes the same card back.
#[test]
fn releasing_pods_keep_their_cards_exclusive() {
    let c = cards(1, 16000, 4);
    let mut u = vec![CardUse::default()];
    take(&c, &mut u, &VgpuFit { takes: vec![(0, 6000, 20, None)], score: 0.0 }, PodId(1), JobId(1), 0b1);
    let ask = pod(1000, false);
    let fits = |u: &[CardUse], mask| fit_exclusive(&c, u, &ask, JobId(2), mask, VgpuPolicy::Binpack).is_ok();
    assert!(set_releasing(&c, &mut u, PodId(1), true));
    assert_eq!((u[0].num, u[0].memory, u[0].cores), (0, 0, 0));
    assert!(!fits(&u, 0b1), "same rule: still reserved");
    assert!(fits(&u, 0), "other pods share it");
    assert!(set_releasing(&c, &mut u, PodId(1), false));
    assert_eq!((u[0].num, u[0].memory, u[0].cores), (1, 6000, 20));
    set_releasing(&c, &mut u, PodId(1), true);
    give_back(&c, &mut u, PodId(1));
    assert_eq!(u[0], CardUse::default());
    assert!(fits(&u, 0b1));
}

/// The device plugin's annotation, as Volcano's user guide shows it.
#[test]
fn decodes_the_register_annotation() {
    let text = "GPU-f571c8f8-948a-71b4-3be1-2bf02c7a1b20,10,32768,NVIDIA-Tesla V100S-PCIE-32GB,true,hami-core:GPU-0fc3eda5-e98b-a25b-5b0d-cf5c855d1448,10,32768,NVIDIA-Tesla V100S-PCIE-32GB,true,hami-core:";
    let c = decode_register(text).unwrap();
    assert_eq!(c.len(), 2);
    assert_eq!(
        c[1],
        VgpuCard::new("GPU-0fc3eda5-e98b-a25b-5b0d-cf5c855d1448", 10, 32768, "NVIDIA-Tesla V100S-PCIE-32GB")
    );
    assert!(decode_register("GPU-0,10,32768,NVIDIA,true").unwrap_err().contains("ended by `:`"));
    assert!(decode_register("GPU-0,10,32768,NVIDIA,true:").unwrap_err().contains("expected 6 fields"));
    assert!(decode_register("GPU-0,10,32768,NVIDIA,true,mig:").unwrap()[0].mig);
    assert!(decode_register("GPU-0,ten,32768,NVIDIA,true,hami-core:").unwrap_err().contains("Number `ten`"));
    assert!(decode_register("GPU-0,10,32768,NVIDIA,maybe,hami-core:").unwrap_err().contains("Health"));
    assert!(decode_register(":").unwrap_err().contains("no card"));
}

/// A MIG card of `memory` MiB with geometry group1 = `1g.10gb` × 2 (10240) and
/// `2g.20gb` × 1 (20480), as `vgpu/mig_test.go` builds it, and memory factor
/// `factor`.
fn mig_card(uuid: &str, memory: i64, factor: i64) -> VgpuCard {
    let mut c = VgpuCard::new(uuid, 10, memory, "NVIDIA-A100");
    c.mig = true;
    c.factor = factor;
    c.groups = std::sync::Arc::from(vec![MigGroup {
        name: "group1".into(),
        instances: vec![
            MigInstance { name: "1g.10gb".into(), memory: 10240, count: 2 },
            MigInstance { name: "2g.20gb".into(), memory: 20480, count: 1 },
        ],
    }]);
    c
}

/// `TestMIGFactory_TryAddPod_WithMemoryFactor`: factor 1, 10 MiB and 50 cores
/// take `1g.10gb` (group1-0), charging 10240 MiB; factor 2, 6144 MiB asks for
/// 12288, which takes `2g.20gb` (group1-2), charging 20480 ÷ 2.
#[test]
fn test_mig_factory_try_add_pod_with_memory_factor() {
    for (factor, mib, want_mem, want_pos) in [(1, 10, 10240, 0), (2, 6144, 10240, 2)] {
        let c = vec![mig_card("gpu-1234", 40960, factor)];
        let ask =
            VgpuAsk { containers: vec![ContainerAsk::of(Some(1), Some(mib), Some(50)).unwrap()], ..Default::default() };
        let f = fit(&c, &[CardUse::default()], &ask, JobId(0), VgpuPolicy::Binpack, "n").unwrap();
        let slot = MigSlot { group: 0, position: want_pos };
        assert_eq!(f.takes, [(0, want_mem, 50, Some(slot))], "factor {factor}");
        assert_eq!(encode_id("gpu-1234", &c[0].groups, slot), format!("gpu-1234[group1-{want_pos}]"));
        let mut u = vec![CardUse::default()];
        take(&c, &mut u, &f, PodId(1), JobId(0), 0);
        assert_eq!((u[0].num, u[0].memory, u[0].cores), (1, want_mem, 50), "factor {factor}");
    }
}

/// `TestMIGFactory_AddPod_WithMemoryFactor` and `…SubPod_WithMemoryFactor`: a
/// placed pod's `gpu-1234[group1-0]` holds the 1g.10gb instance, 10240 MiB
/// (5120 with factor 2) and its 50 cores; giving it back frees all.
#[test]
fn test_mig_factory_add_and_sub_pod_with_memory_factor() {
    for (factor, want) in [(1, 10240), (2, 5120)] {
        let c = vec![mig_card("gpu-1234", 40960, factor)];
        let takes = decode_assigned("gpu-1234[group1-0],NVIDIA,0,50:", &c).unwrap();
        assert_eq!(takes, [(0, want, 50, Some(MigSlot { group: 0, position: 0 }))]);
        let mut u = vec![CardUse::default()];
        take(&c, &mut u, &VgpuFit { takes, score: 0.0 }, PodId(1), JobId(0), 0);
        assert_eq!((u[0].num, u[0].memory, u[0].cores, u[0].mig.group), (1, want, 50, Some(0)));
        give_back(&c, &mut u, PodId(1));
        assert_eq!(u[0], CardUse::default(), "factor {factor}");
    }
    let c = vec![mig_card("gpu-1234", 40960, 1)];
    assert!(decode_assigned("gpu-1234[group9-0],NVIDIA,0,50:", &c).unwrap_err().contains("no MIG group `group9`"));
    assert!(decode_assigned("gpu-1234[group1-7],NVIDIA,0,50:", &c).unwrap_err().contains("no position 7"));
}

/// A MIG node refuses a pod asking for HAMi-core (and the reverse), in
/// Volcano's words; a `mig` card of a model without geometries leaves the node
/// in HAMi-core mode.
#[test]
fn mig_and_hami_core_pods_keep_to_their_nodes() {
    let mig = vec![mig_card("gpu-1", 40960, 1)];
    let hami = cards(1, 40960, 10);
    let pod = |mode: &str| VgpuAsk {
        containers: vec![ContainerAsk::of(Some(1), Some(1000), None).unwrap()],
        mode: Some(mode.into()),
        ..Default::default()
    };
    let e = fit(&mig, &[CardUse::default()], &pod("hami-core"), JobId(0), VgpuPolicy::Binpack, "n").unwrap_err();
    assert_eq!(e, "pod required sharing mode hami-core is not the same as the node mode mig");
    assert!(fit(&hami, &[CardUse::default()], &pod("mig"), JobId(0), VgpuPolicy::Binpack, "n").is_err());
    assert!(fit(&mig, &[CardUse::default()], &pod("mig"), JobId(0), VgpuPolicy::Binpack, "n").is_ok());
    let mut unknown = decode_register("GPU-0,10,40960,NVIDIA-H100,true,mig:").unwrap();
    let known = vec![MigModels { models: vec!["A100".into()], groups: mig[0].groups.to_vec() }];
    resolve_mig(&mut unknown, &DeviceConfig { known: known.clone(), factor: 1, percent: false, vnpus: None });
    assert!(!node_mig(&unknown), "no geometry for H100: HAMi-core");
    let mut a100 = decode_register("GPU-0,10,40960,NVIDIA-A100-SXM4-40GB,true,mig:").unwrap();
    resolve_mig(&mut a100, &DeviceConfig { known, factor: 1, percent: false, vnpus: None });
    assert!(node_mig(&a100));
}
