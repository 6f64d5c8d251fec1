//! What breaks, and when: the fault plan of a run.
//!
//! A plan has random rules and listed outages. A rule draws, for each node
//! (or, for switches, each HyperNode of a tier) it covers, the time to its next
//! failure and the time to repair it from its own named RNG stream
//! (`faults/<rule>`, index = the unit's node or HyperNode number), so adding a
//! rule never moves another rule's draws, nor does a node added after the last
//! one; a scenario without faults draws nothing. A listed
//! outage (from a failure trace) happens at its time for its duration. The
//! engine applies both: `crate::engine` kills the pods on what failed and
//! gives the capacity back at repair.

use crate::model::ids::HyperNodeId;
use crate::model::ids::NodeId;
use crate::util::rng::StreamRng;
use crate::util::time::{SimDuration, SimTime};
use rand_distr::Distribution;

/// What an outage takes out.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum OutageKind {
    /// The whole node (host failure): its pods are killed, its capacity gone.
    Node,
    /// `n` of the node's GPU devices (chosen at random among the healthy ones
    /// from the outage's stream): the pods holding them are killed, the node
    /// stays up with fewer GPUs.
    Gpus(u32),
    /// A switch: every node below the HyperNode is unreachable (as `Node`).
    Switch,
    /// A drain: the nodes are cordoned (`node.kubernetes.io/unschedulable`),
    /// pods still running after `deadline` are evicted, and the nodes stay
    /// cordoned for the outage's duration after the deadline (maintenance).
    Drain {
        /// How long running pods may finish before they are evicted.
        deadline: SimDuration,
    },
}

impl OutageKind {
    /// Spelling in events.csv's `scope` column.
    pub fn as_str(&self) -> &'static str {
        match self {
            OutageKind::Node => "node",
            OutageKind::Gpus(_) => "gpu",
            OutageKind::Switch => "switch",
            OutageKind::Drain { .. } => "drain",
        }
    }
}

/// What an outage applies to.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Target {
    /// These nodes (ascending).
    Nodes(Vec<NodeId>),
    /// Every node below this HyperNode.
    HyperNode(HyperNodeId),
}

/// One outage: from `at`, `target` is out for `duration`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Outage {
    /// Start.
    pub at: SimTime,
    /// What is out.
    pub target: Target,
    /// How long (a drain: after its deadline).
    pub duration: SimDuration,
    /// What kind of outage.
    pub kind: OutageKind,
    /// Where it came from, for events.csv (`trace:LINE` or the rule's name).
    pub cause: std::sync::Arc<str>,
}

/// A distribution of durations (times between failures, repair times), in
/// microseconds, drawn as `f64` and rounded to the microsecond (at least 1).
#[derive(Clone, Debug, PartialEq)]
pub enum Dist {
    /// Always this long.
    Fixed(SimDuration),
    /// Exponential with this mean (memoryless failures: a constant rate).
    Exponential {
        /// Mean.
        mean: SimDuration,
    },
    /// Weibull with shape `k` and scale `λ`: `k < 1` infant mortality, `k > 1`
    /// wear-out.
    Weibull {
        /// Shape k.
        shape: f64,
        /// Scale λ.
        scale: SimDuration,
    },
    /// Lognormal with this median (`e^μ`) and σ of the log.
    LogNormal {
        /// Median.
        median: SimDuration,
        /// σ of ln(duration).
        sigma: f64,
    },
}

impl Dist {
    /// One draw.
    pub fn sample(&self, rng: &mut StreamRng) -> SimDuration {
        let us = match self {
            Dist::Fixed(d) => return *d,
            Dist::Exponential { mean } => {
                rand_distr::Exp::new(1.0 / mean.micros() as f64).expect("validated mean > 0").sample(rng)
            }
            Dist::Weibull { shape, scale } => {
                rand_distr::Weibull::new(scale.micros() as f64, *shape).expect("validated shape > 0").sample(rng)
            }
            Dist::LogNormal { median, sigma } => rand_distr::LogNormal::new((median.micros() as f64).ln(), *sigma)
                .expect("validated sigma ≥ 0")
                .sample(rng),
        };
        SimDuration(us.round().clamp(1.0, 1e18) as u64)
    }

    /// The mean of the distribution (µs), for documentation and checks.
    pub fn mean_micros(&self) -> f64 {
        match self {
            Dist::Fixed(d) => d.micros() as f64,
            Dist::Exponential { mean } => mean.micros() as f64,
            Dist::Weibull { shape, scale } => scale.micros() as f64 * gamma(1.0 + 1.0 / shape),
            Dist::LogNormal { median, sigma } => median.micros() as f64 * (sigma * sigma / 2.0).exp(),
        }
    }
}

/// Γ(x) for x > 0 (Lanczos, g = 7), enough for documenting a Weibull mean.
fn gamma(x: f64) -> f64 {
    const C: [f64; 9] = [
        0.999_999_999_999_809_9,
        676.520_368_121_885_1,
        -1_259.139_216_722_402_8,
        771.323_428_777_653_1,
        -176.615_029_162_140_6,
        12.507_343_278_686_905,
        -0.138_571_095_265_720_12,
        9.984_369_578_019_572e-6,
        1.505_632_735_149_311_6e-7,
    ];
    if x < 0.5 {
        return std::f64::consts::PI / ((std::f64::consts::PI * x).sin() * gamma(1.0 - x));
    }
    let x = x - 1.0;
    let t = x + 7.5;
    let a = C[1..].iter().enumerate().fold(C[0], |a, (i, c)| a + c / (x + i as f64 + 1.0));
    (2.0 * std::f64::consts::PI).sqrt() * t.powf(x + 0.5) * (-t).exp() * a
}

/// What a rule's failures take out.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum RuleScope {
    /// Whole nodes.
    Node,
    /// This many GPUs of a node at a time.
    Gpus(u32),
    /// Whole HyperNodes (switches).
    Switch,
}

/// Random failures: each unit fails after a time drawn from `between` (counted
/// from the start, then from each repair) and is repaired after a time drawn
/// from `repair`.
#[derive(Clone, Debug, PartialEq)]
pub struct FaultRule {
    /// Name (events.csv's cause; the RNG stream is `faults/<name>`).
    pub name: std::sync::Arc<str>,
    /// What fails.
    pub scope: RuleScope,
    /// The nodes (scope Node or Gpus) or HyperNodes (scope Switch) that fail,
    /// each on its own clock.
    pub units: Vec<u32>,
    /// Time between failures of one unit.
    pub between: Dist,
    /// Time to repair.
    pub repair: Dist,
}

/// The faults of a run.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct FaultPlan {
    /// Random rules.
    pub rules: Vec<FaultRule>,
    /// Listed outages, by start time (ties in listing order).
    pub outages: Vec<Outage>,
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::util::rng::RngStreams;

    #[test]
    fn gamma_matches_known_values() {
        assert!((gamma(1.0) - 1.0).abs() < 1e-12);
        assert!((gamma(5.0) - 24.0).abs() < 1e-9);
        assert!((gamma(0.5) - std::f64::consts::PI.sqrt()).abs() < 1e-12);
    }

    /// The sample means of 20,000 draws are within 3 % of the distributions'
    /// means, and the draws are the same for the same stream.
    #[test]
    fn draws_follow_their_distribution() {
        let h = SimDuration::from_secs(3600);
        for d in [
            Dist::Exponential { mean: h },
            Dist::Weibull { shape: 0.7, scale: h },
            Dist::Weibull { shape: 2.0, scale: h },
            Dist::LogNormal { median: h, sigma: 0.5 },
        ] {
            let mut rng = RngStreams::new(7).stream("faults/test", 0);
            let n = 20_000;
            let sum: f64 = (0..n).map(|_| d.sample(&mut rng).micros() as f64).sum();
            let mean = sum / n as f64;
            assert!((mean / d.mean_micros() - 1.0).abs() < 0.03, "{d:?}: {mean} vs {}", d.mean_micros());
            let mut a = RngStreams::new(7).stream("faults/test", 0);
            let mut b = RngStreams::new(7).stream("faults/test", 0);
            assert_eq!(d.sample(&mut a), d.sample(&mut b));
        }
        let mut rng = RngStreams::new(7).stream("faults/test", 0);
        assert_eq!(Dist::Fixed(h).sample(&mut rng), h);
    }
}
