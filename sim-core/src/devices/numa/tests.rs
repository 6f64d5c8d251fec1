//! Replays of Volcano's numa-aware unit tests
//! (`pkg/scheduler/plugins/numaaware/policy/*_test.go`,
//! `provider/cpumanager/cpu_mng_test.go`), case by case under their names.

use super::*;

fn h(nodes: &[u32], preferred: bool) -> Hint {
    Hint::on(nodes, preferred)
}

/// The two providers of the policy tests (cpu, then gpu), as
/// `filterProvidersHints` hands them to the merge.
fn providers(cpu: &[Hint], gpu: &[Hint]) -> Vec<Vec<Hint>> {
    vec![provider_hints(Some(cpu.to_vec())), provider_hints(Some(gpu.to_vec()))]
}

/// (name, cpu hints, gpu hints, expected best) of `Test_best_effort_predicate`,
/// which `Test_restricted_predicate` repeats.
fn merge_cases() -> Vec<(&'static str, Vec<Hint>, Vec<Hint>, Hint)> {
    let (a, z, o) = (&[0, 1][..], &[0][..], &[1][..]);
    vec![
        ("test-1", vec![h(a, false), h(z, true)], vec![h(a, false), h(z, true)], h(z, true)),
        ("test-2", vec![h(a, false), h(o, true)], vec![h(a, false), h(o, true)], h(o, true)),
        ("test-3", vec![h(a, false), h(z, true), h(o, true)], vec![h(a, false), h(z, true), h(o, true)], h(z, true)),
        ("test-4", vec![h(a, false), h(z, true)], vec![h(a, false), h(o, true)], h(z, false)),
        ("test-5", vec![h(a, false), h(z, true)], vec![h(a, true)], h(z, true)),
        ("test-6", vec![h(a, true)], vec![h(a, true)], h(a, true)),
    ]
}

/// `Test_none_predicate`: no hints, the empty hint.
#[test]
fn test_none_predicate() {
    let (best, admit) = TopologyPolicy::None.predicate(&[0, 1], &[]);
    assert_eq!(best, Hint::default(), "test-1");
    assert!(admit);
}

/// `Test_best_effort_predicate`.
#[test]
fn test_best_effort_predicate() {
    for (name, cpu, gpu, want) in merge_cases() {
        let (best, admit) = TopologyPolicy::BestEffort.predicate(&[0, 1], &providers(&cpu, &gpu));
        assert_eq!(best, want, "{name}");
        assert!(admit, "{name}: best-effort admits every pod");
    }
}

/// `Test_restricted_predicate`: the same cases and answers; the pod is
/// admitted when the best hint is preferred.
#[test]
fn test_restricted_predicate() {
    for (name, cpu, gpu, want) in merge_cases() {
        let (best, admit) = TopologyPolicy::Restricted.predicate(&[0, 1], &providers(&cpu, &gpu));
        assert_eq!(best, want, "{name}");
        assert_eq!(admit, want.preferred, "{name}");
    }
}

/// `Test_single_numa_node_predicate`: only single-node preferred hints count;
/// test-4 and test-5 fall back to the default (both nodes, not preferred).
#[test]
fn test_single_numa_node_predicate() {
    let (a, z, o) = (&[0, 1][..], &[0][..], &[1][..]);
    let cases = [
        ("test-1", vec![h(a, false), h(z, true)], vec![h(a, false), h(z, true)], h(z, true)),
        ("test-2", vec![h(a, false), h(o, true)], vec![h(a, false), h(o, true)], h(o, true)),
        ("test-3", vec![h(a, false), h(z, true), h(o, true)], vec![h(a, false), h(z, true), h(o, true)], h(z, true)),
        ("test-4", vec![h(a, false), h(z, true)], vec![h(a, false), h(o, true)], h(a, false)),
        ("test-5", vec![h(a, false), h(z, true)], vec![h(a, true)], h(a, false)),
    ];
    for (name, cpu, gpu, want) in cases {
        let (best, admit) = TopologyPolicy::SingleNumaNode.predicate(&[0, 1], &providers(&cpu, &gpu));
        assert_eq!(best, want, "{name}");
        assert_eq!(admit, want.preferred, "{name}");
    }
}

/// The topology of `cpu_mng_test.go`: CPUs 0–3 on NUMA node 0 and socket 0
/// (cores 0, 1), 4–7 on NUMA node 1 and socket 1 (cores 2, 3).
fn test_topology() -> CpuTopology {
    let cpus: Vec<(u32, CpuInfo)> = (0..8).map(|c| (c, CpuInfo { numa: c / 4, socket: c / 4, core: c / 2 })).collect();
    CpuTopology::new(&cpus).unwrap()
}

/// `Test_GetTopologyHints`.
#[test]
fn test_get_topology_hints() {
    let t = test_topology();
    let (z, o, a) = (&[0][..], &[1][..], &[0, 1][..]);
    let cases: [(&str, usize, &str, Vec<Hint>); 6] = [
        ("test-1", 4, "0-7", vec![h(z, true), h(o, true), h(a, false)]),
        ("test-2", 4, "1-7", vec![h(o, true), h(a, false)]),
        ("test-3", 5, "0-7", vec![h(a, true)]),
        ("test-4", 8, "0-7", vec![h(a, true)]),
        ("test-5", 9, "0-7", vec![]),
        ("test-6", 4, "2-5", vec![h(a, false)]),
    ];
    for (name, request, avail, want) in cases {
        assert_eq!(cpu_hints(&t, &CpuSet::parse(avail).unwrap(), request), want, "{name}");
    }
}

/// `Test_Allocate`; test-4 takes the quirky path worked in the spec (socket 1
/// whole, then CPU 1 on the core with fewer free CPUs).
#[test]
fn test_allocate() {
    let t = test_topology();
    let cases = [
        ("test-1", 4, "0-7", h(&[0], true), "0-3"),
        ("test-2", 4, "1-7", h(&[1], true), "4-7"),
        ("test-3", 5, "0-7", h(&[0, 1], true), "0-4"),
        ("test-4", 5, "1-7", h(&[0, 1], true), "1,4-7"),
        ("test-5", 8, "1-7", h(&[0, 1], true), ""),
    ];
    for (name, request, avail, best, want) in cases {
        let got = allocate(&t, &CpuSet::parse(avail).unwrap(), request, &best);
        assert_eq!(got, CpuSet::parse(want).unwrap(), "{name}");
    }
}

/// The design document's example (`docs/design/numa-aware.md`): weight 10,
/// assignments over 1, 2 and 4 NUMA nodes score 750, 500 and 0; all on one
/// node each score 0; none at all scores 100 × weight.
#[test]
fn batch_score_normalizes_over_the_nodes() {
    assert_eq!(batch_scores(&[1, 2, 4], 10), [750, 500, 0]);
    assert_eq!(batch_scores(&[1, 1], 10), [0, 0]);
    assert_eq!(batch_scores(&[0, 0], 3), [300, 300]);
    assert_eq!(batch_scores(&[2, 1], 10), [0, 500]);
}

fn node(policy: TopologyPolicy, allocatable: &str) -> NodeNuma {
    NodeNuma {
        cpu_static: true,
        topology: Some(policy),
        topo: test_topology(),
        has_cpu: true,
        allocatable: CpuSet::parse(allocatable).unwrap(),
        reserved: CpuSet::EMPTY,
        pod_allocations: Vec::new(),
    }
}

fn ask(policy: Option<TopologyPolicy>, cpus: &[u32]) -> NumaAsk {
    NumaAsk {
        guaranteed: true,
        policy,
        containers: cpus
            .iter()
            .enumerate()
            .map(|(i, &c)| NumaContainer { name: format!("c{i}"), cpus: Some(c) })
            .collect(),
    }
}

/// `filterNodeByPolicy`, then container by container: each container sees the
/// CPUs the earlier ones took, and a refusal names the container.
#[test]
fn fit_checks_the_policy_then_each_container() {
    use TopologyPolicy::{BestEffort, Restricted, SingleNumaNode};
    let n = node(SingleNumaNode, "0-7");
    let free = n.allocatable;
    assert_eq!(fit(Some(&n), &free, &ask(Some(SingleNumaNode), &[4])), NumaFit::Assign(CpuSet::parse("0-3").unwrap()));
    // Two containers of 3: the second goes to NUMA node 1 (node 0 has 1 CPU left).
    assert_eq!(
        fit(Some(&n), &free, &ask(Some(SingleNumaNode), &[3, 3])),
        NumaFit::Assign(CpuSet::parse("0-2,4-6").unwrap())
    );
    // Five CPUs span both nodes: single-numa-node refuses the container.
    let big = ask(Some(SingleNumaNode), &[2, 5]);
    assert_eq!(fit(Some(&n), &free, &big), NumaFit::Refuse(NumaRefusal::Container(1)));
    assert_eq!(NumaRefusal::Container(1).reason(&big), "container c1 cannot be assigned by numa");
    // The pod's policy must be the node's; no topology refuses a pod with a policy.
    let r = fit(Some(&n), &free, &ask(Some(BestEffort), &[1]));
    assert_eq!(r, NumaFit::Refuse(NumaRefusal::Differs(BestEffort, Some(SingleNumaNode))));
    if let NumaFit::Refuse(x) = r {
        assert_eq!(
            x.reason(&ask(None, &[])),
            "task topology policy[best-effort] is different with node[single-numa-node]"
        );
    }
    assert_eq!(fit(None, &free, &ask(Some(Restricted), &[1])), NumaFit::Refuse(NumaRefusal::NoInfo));
    // Without a policy the node's own applies, and nodes without one are skipped.
    assert_eq!(fit(Some(&n), &free, &ask(None, &[5])), NumaFit::Refuse(NumaRefusal::Container(0)));
    assert_eq!(fit(None, &free, &ask(None, &[5])), NumaFit::Skip);
    let mut off = node(SingleNumaNode, "0-7");
    off.topology = Some(TopologyPolicy::None);
    assert_eq!(fit(Some(&off), &free, &ask(None, &[5])), NumaFit::Skip);
    off.cpu_static = false;
    assert_eq!(fit(Some(&off), &free, &ask(Some(TopologyPolicy::None), &[5])), NumaFit::Skip);
    let mut not_static = node(Restricted, "0-7");
    not_static.cpu_static = false;
    assert_eq!(fit(Some(&not_static), &free, &ask(Some(Restricted), &[1])), NumaFit::Refuse(NumaRefusal::NotStatic));
    // Burstable pods are not looked at.
    let mut burst = ask(Some(Restricted), &[1]);
    burst.guaranteed = false;
    assert_eq!(fit(None, &free, &burst), NumaFit::Skip);
    // An empty pool refuses a pod with a policy.
    assert_eq!(fit(Some(&n), &CpuSet::EMPTY, &ask(Some(SingleNumaNode), &[1])), NumaFit::Refuse(NumaRefusal::CpuEmpty));
}

/// A node reporting no CPU pool: the first container has no hints (admitted,
/// no CPUs); the pool then exists empty, and restricted refuses the second.
#[test]
fn fit_without_a_cpu_pool_follows_volcano() {
    let mut n = node(TopologyPolicy::Restricted, "0-7");
    n.has_cpu = false;
    let pod = ask(None, &[2, 2]);
    assert_eq!(fit(Some(&n), &n.allocatable.clone(), &pod), NumaFit::Refuse(NumaRefusal::Container(1)));
    assert_eq!(fit(Some(&n), &n.allocatable.clone(), &ask(None, &[2])), NumaFit::Assign(CpuSet::EMPTY));
}

/// Reserved CPUs are kept from every pod: 1 reserved CPU leaves 3 on NUMA
/// node 0, so 4 CPUs go to node 1.
#[test]
fn reserved_cpus_are_not_given() {
    let mut n = node(TopologyPolicy::SingleNumaNode, "0-7");
    n.reserved = take_by_topology(&n.topo, &n.topo.all, 1).unwrap();
    assert_eq!(n.reserved, CpuSet::of([0]));
    let free = n.allocatable;
    assert_eq!(fit(Some(&n), &free, &ask(None, &[4])), NumaFit::Assign(CpuSet::parse("4-7").unwrap()));
}

/// The ledger: released CPUs are free until the session settles; a preset
/// pod's CPUs stop being foreign.
#[test]
fn ledger_frees_released_cpus_for_the_session() {
    let n = node(TopologyPolicy::SingleNumaNode, "2-7");
    let all = n.topo.all;
    let mut u = NumaUse::new(&n);
    assert_eq!(u.free, CpuSet::parse("2-7").unwrap());
    u.take(&all, PodId(0), CpuSet::of([0, 1]), true);
    assert_eq!((u.foreign, u.free), (CpuSet::EMPTY, CpuSet::parse("2-7").unwrap()));
    u.take(&all, PodId(1), CpuSet::of([4, 5]), false);
    assert_eq!(u.free, CpuSet::of([2, 3, 6, 7]));
    assert!(u.set_released(&all, PodId(1), true));
    assert_eq!(u.free, CpuSet::parse("2-7").unwrap());
    assert!(u.settle(&all));
    assert_eq!(u.free, CpuSet::of([2, 3, 6, 7]));
    assert!(u.give_back(&all, PodId(0)) && u.give_back(&all, PodId(1)));
    assert_eq!(u.free, all);
    assert!(!u.give_back(&all, PodId(1)));
}
