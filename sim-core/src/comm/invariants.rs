//! Property tests of the model's contracts (see the module docs).

use super::*;
use proptest::prelude::*;

fn any_gen() -> impl Strategy<Value = GpuGen> {
    prop_oneof![Just(GpuGen::Volta), Just(GpuGen::Ampere), Just(GpuGen::Hopper), Just(GpuGen::Blackwell)]
}

fn any_link() -> impl Strategy<Value = IntraLink> {
    proptest::sample::select(IntraLink::ALL.to_vec())
}

fn any_fabric() -> impl Strategy<Value = NetFabric> {
    proptest::sample::select(NetFabric::ALL.to_vec())
}

fn any_coll() -> impl Strategy<Value = Collective> {
    proptest::sample::select(Collective::ALL.to_vec())
}

/// NIC rate per GPU, Gbit/s, from 1 GbE shares to 800G.
fn any_nic() -> impl Strategy<Value = f64> {
    proptest::sample::select(vec![1.0, 12.5, 25.0, 50.0, 100.0, 200.0, 400.0, 800.0])
}

prop_compose! {
    /// Any valid placement: uniform, up to 8 GPUs per node and 64 nodes, any tier
    /// and oversubscription, sometimes uneven (one node short).
    fn any_placement()(
        generation in any_gen(), intra in any_link(), net in any_fabric(), g in 1u32..=8,
        k in 1u32..=64, nic in any_nic(), tier_extra in 0u32..3, over in 1.0f64..4.0,
        rail in any::<bool>(), short in 0u32..8,
    ) -> Placement {
        if k == 1 {
            Placement::single_node(generation, intra, g)
        } else {
            let mut p = Placement::uniform(generation, intra, g, k, nic, net).crossing(1 + tier_extra, over);
            p.rail_optimized = rail;
            // One node may hold fewer GPUs than the others.
            let s = short.min(g - 1);
            p.min_gpus_per_node = g - s;
            p.ranks -= s;
            p
        }
    }
}

fn model() -> CommModel {
    CommModel::default()
}

proptest! {
    // No failure-persistence file: a failure prints its minimal input instead.
    #![proptest_config(ProptestConfig { cases: 512, failure_persistence: None, ..ProptestConfig::default() })]

    /// More bytes never take less time, for the automatic choice and for every
    /// forced algorithm that applies.
    #[test]
    fn comm_time_is_monotone_in_bytes(p in any_placement(), coll in any_coll(), a in 0u64..(1 << 36), b in 0u64..(1 << 36)) {
        let m = model();
        let (lo, hi) = (a.min(b), a.max(b));
        let t_lo = m.estimate(coll, lo, &p, AlgoChoice::Auto).unwrap();
        let t_hi = m.estimate(coll, hi, &p, AlgoChoice::Auto).unwrap();
        prop_assert!(t_lo.time_us <= t_hi.time_us, "{t_lo:?} {t_hi:?}");
        for algo in [Algo::Ring, Algo::Tree, Algo::Nvls, Algo::NvlsTree, Algo::Pat, Algo::P2p] {
            let f = AlgoChoice::Force(algo);
            if let (Ok(x), Ok(y)) = (m.estimate(coll, lo, &p, f), m.estimate(coll, hi, &p, f)) {
                prop_assert!(x.time_us <= y.time_us, "{algo:?}: {x:?} {y:?}");
            }
        }
    }

    /// The traffic an estimate implies per GPU never exceeds the physical link
    /// (NVLink/PCIe) or NIC line rate, for every candidate. busbw itself may exceed
    /// the link rate (NVLS, 2-node trees); the link load may not.
    #[test]
    fn comm_link_loads_respect_physical_bandwidth(p in any_placement(), coll in any_coll(), bytes in 1u64..(1 << 36)) {
        let m = model();
        let cap = m.capacity(&p).unwrap();
        for e in m.candidates(coll, bytes, &p).unwrap() {
            prop_assert!(e.time_us.is_finite() && e.time_us >= 0.0, "{e:?}");
            prop_assert!(e.intra_load_gbps <= cap.intra_gbps * (1.0 + 1e-9), "{e:?} {cap:?}");
            prop_assert!(e.nic_load_gbps <= cap.nic_gbps * (1.0 + 1e-9), "{e:?} {cap:?}");
        }
    }

    /// The same ranks inside one node are never slower than spread over nodes of the
    /// same kind (up to 8 GPUs per node). Conditions, both physical: NVLink pairs
    /// are excluded (two bridged GPUs per node beat a 4-GPU PCIe ring), and a GPU's
    /// NIC is at most half as fast as its NVLink (true of shipping systems: at most
    /// 400G per GPU here); with faster NICs an all-to-all spread over nodes gains the
    /// NIC path in parallel with NVLink.
    #[test]
    fn comm_one_node_is_never_slower_than_spread(
        generation in any_gen(), intra in not_pair_only(), net in any_fabric(), coll in any_coll(),
        (g, k) in split_of_up_to_8(), nic in any_nic().prop_filter("<= 400G", |n| *n <= 400.0),
        tier in 1u32..4, over in 1.0f64..4.0,
        rail in any::<bool>(), bytes in 0u64..(1 << 36),
    ) {
        let m = model();
        let one = Placement::single_node(generation, intra, g * k);
        let mut spread = Placement::uniform(generation, intra, g, k, nic, net).crossing(tier, over);
        spread.rail_optimized = rail;
        let t1 = m.estimate(coll, bytes, &one, AlgoChoice::Auto).unwrap();
        let t2 = m.estimate(coll, bytes, &spread, AlgoChoice::Auto).unwrap();
        prop_assert!(t1.time_us <= t2.time_us * (1.0 + 1e-12), "{t1:?} {t2:?}");
    }

    /// Crossing a 2:1 oversubscribed spine costs more than staying under one leaf.
    #[test]
    fn comm_spine_crossing_costs_more(
        generation in any_gen(), intra in any_link(), net in any_fabric(), coll in any_coll(),
        g in 1u32..=8, k in 2u32..=64, nic in any_nic(), bytes in 1u64..(1 << 36),
    ) {
        let m = model();
        let leaf = Placement::uniform(generation, intra, g, k, nic, net);
        let spine = leaf.crossing(2, 2.0);
        let a = m.estimate(coll, bytes, &leaf, AlgoChoice::Auto).unwrap();
        let b = m.estimate(coll, bytes, &spine, AlgoChoice::Auto).unwrap();
        prop_assert!(a.time_us < b.time_us, "{a:?} {b:?}");
    }

    /// Estimates are deterministic and busbw follows the nccl-tests definition.
    #[test]
    fn comm_busbw_follows_nccl_tests(p in any_placement(), coll in any_coll(), bytes in 1u64..(1 << 36)) {
        let m = model();
        let e = m.estimate(coll, bytes, &p, AlgoChoice::Auto).unwrap();
        prop_assert_eq!(e, m.estimate(coll, bytes, &p, AlgoChoice::Auto).unwrap());
        if p.ranks > 1 {
            let algbw = bytes as f64 / (e.time_us * 1e3);
            prop_assert!((e.algbw_gbps - algbw).abs() <= 1e-9 * algbw);
            prop_assert!((e.busbw_gbps - algbw * coll.busbw_factor(p.ranks)).abs() <= 1e-9 * algbw.max(1.0));
        }
    }
}

/// Intra links whose bandwidth does not depend on how many GPUs share them.
fn not_pair_only() -> impl Strategy<Value = IntraLink> {
    let c = CommConstants::default();
    proptest::sample::select(IntraLink::ALL.into_iter().filter(|l| !c.intra.get(*l).pair_only).collect::<Vec<_>>())
}

/// (GPUs per node, nodes) with at least 2 nodes and at most 8 GPUs in all.
fn split_of_up_to_8() -> impl Strategy<Value = (u32, u32)> {
    let pairs: Vec<(u32, u32)> =
        (1..=4).flat_map(|g| (2..=8).map(move |k| (g, k))).filter(|(g, k)| g * k <= 8).collect();
    proptest::sample::select(pairs)
}

#[test]
fn nvls_busbw_exceeds_the_link_but_its_load_does_not() {
    let m = model();
    let p = Placement::single_node(GpuGen::Hopper, IntraLink::NvswitchNvlink4, 8);
    let e = m.estimate(Collective::AllReduce, 16 << 30, &p, AlgoChoice::Auto).unwrap();
    let cap = m.capacity(&p).unwrap();
    assert_eq!(e.algo, Algo::Nvls);
    assert!(e.busbw_gbps > cap.intra_gbps, "{e:?}");
    assert!(e.intra_load_gbps <= cap.intra_gbps, "{e:?}");
    // Two nodes: the tree's busbw exceeds the NIC budget, its NIC load does not.
    let p = Placement::uniform(GpuGen::Ampere, IntraLink::NvswitchNvlink3, 8, 2, 100.0, NetFabric::Ib);
    let e = m.estimate(Collective::AllReduce, 8 << 30, &p, AlgoChoice::Auto).unwrap();
    let cap = m.capacity(&p).unwrap();
    assert_eq!(e.algo, Algo::Tree);
    assert!(e.busbw_gbps > 8.0 * cap.nic_gbps, "{e:?}");
    assert!(e.nic_load_gbps <= cap.nic_gbps, "{e:?}");
}

#[test]
fn exposure_zero_makes_oversubscription_free_for_bandwidth() {
    let c = CommConstants { oversubscription_exposure: 0.0, ..CommConstants::default() };
    let m = CommModel::new(c).unwrap();
    let leaf = Placement::uniform(GpuGen::Hopper, IntraLink::NvswitchNvlink4, 8, 4, 400.0, NetFabric::Ib);
    let spine = leaf.crossing(2, 4.0);
    let a = m.estimate(Collective::AllReduce, 8 << 30, &leaf, AlgoChoice::Auto).unwrap();
    let b = m.estimate(Collective::AllReduce, 8 << 30, &spine, AlgoChoice::Auto).unwrap();
    // Only the two extra switch hops remain.
    assert!(b.time_us > a.time_us && b.time_us - a.time_us < 100.0, "{a:?} {b:?}");
}
