//! The arrivals of a placement replay: a pod list pruned or re-sampled until
//! its GPU request is the demanded share of the cluster's GPUs, as the FGD
//! paper's simulator tunes its workloads (`TunePodsByNodeTotalResource`).

use super::Pod;
use rand::{Rng, RngExt};

/// One arrival: a pod of the list, or a copy of one drawn to add demand.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Arrival {
    /// Index of the pod in the list.
    pub pod: u32,
    /// `Some(i)` for the i-th copy drawn (0-based), `None` for the pod itself.
    pub copy: Option<u32>,
}

/// The arrivals whose GPU request is as close to `target_milli` as whole pods
/// allow without exceeding it, starting from `arrivals` (the list in its
/// arrival order, see [`list`]):
/// - above it, pods drawn uniformly are removed (every pod can be drawn; one
///   without GPUs removes no demand) until the request is at most the target;
/// - below it, pods drawn uniformly from the list (with replacement) are
///   appended as copies until the next one drawn would exceed the target.
///
/// The list's order is kept; copies come after it. A list without any GPU
/// request is returned whole (no copy can add demand).
pub fn tune(pods: &[Pod], mut arrivals: Vec<Arrival>, target_milli: i64, rng: &mut impl Rng) -> Vec<Arrival> {
    let milli = |a: &Arrival| pods[a.pod as usize].demand.total_milli();
    let mut total: i64 = arrivals.iter().map(milli).sum();
    if pods.is_empty() || !pods.iter().any(|p| p.demand.total_milli() > 0) {
        return arrivals;
    }
    while total > target_milli && !arrivals.is_empty() {
        let i = rng.random_range(0..arrivals.len());
        total -= milli(&arrivals[i]);
        arrivals.remove(i);
    }
    let mut copy = 0u32;
    while total < target_milli {
        let pod = rng.random_range(0..pods.len()) as u32;
        let a = Arrival { pod, copy: Some(copy) };
        if total + milli(&a) > target_milli {
            break;
        }
        total += milli(&a);
        arrivals.push(a);
        copy += 1;
    }
    arrivals
}

/// The pods of the list once each, in list order.
pub fn list(pods: &[Pod]) -> Vec<Arrival> {
    (0..pods.len() as u32).map(|pod| Arrival { pod, copy: None }).collect()
}

/// Puts `arrivals` in a uniformly random order (Fisher–Yates, drawing with
/// `random_range` so the order depends only on the stream).
pub fn shuffle(arrivals: &mut [Arrival], rng: &mut impl Rng) {
    for i in (1..arrivals.len()).rev() {
        let j = rng.random_range(0..=i);
        arrivals.swap(i, j);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use lahar_core::frag::{Demand, Models};
    use lahar_core::util::rng::RngStreams;

    fn pod(milli: u16, gpus: u8) -> Pod {
        Pod { demand: Demand { cpu: 1000, gpu_milli: milli, gpus, models: Models::ANY }, memory: 0 }
    }

    #[test]
    fn tuning_up_stops_before_the_target() {
        let pods = [pod(500, 1), pod(1000, 2), pod(0, 0)];
        let mut rng = RngStreams::new(7).stream("t", 0);
        let a = tune(&pods, list(&pods), 20_000, &mut rng);
        let total: i64 = a.iter().map(|a| pods[a.pod as usize].demand.total_milli()).sum();
        assert!(total <= 20_000 && total > 20_000 - 2000, "{total}");
        assert_eq!(&a[..3], &[0, 1, 2].map(|pod| Arrival { pod, copy: None }));
        assert!(a[3..].iter().enumerate().all(|(i, x)| x.copy == Some(i as u32)));
    }

    #[test]
    fn tuning_down_keeps_the_order() {
        let pods: Vec<Pod> = (0..100).map(|_| pod(1000, 1)).collect();
        let mut rng = RngStreams::new(7).stream("t", 0);
        let a = tune(&pods, list(&pods), 60_000, &mut rng);
        assert_eq!(a.len(), 60);
        assert!(a.windows(2).all(|w| w[0].pod < w[1].pod) && a.iter().all(|x| x.copy.is_none()));
    }

    #[test]
    fn a_list_without_gpus_is_kept_whole() {
        let pods = [pod(0, 0), pod(0, 0)];
        let mut rng = RngStreams::new(7).stream("t", 0);
        assert_eq!(tune(&pods, list(&pods), 5_000, &mut rng).len(), 2);
    }
}
