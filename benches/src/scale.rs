//! Scale scenarios generated in code (never committed as huge files): `N` nodes of
//! 8 H100 under leaves of 8 nodes and a 2:1 spine (a third `core` tier above
//! spines of 16 leaves with `tiers: 3`), queues `research` (weight 2) and `prod`
//! (weight 1), synthetic jobs with the default scenario's GPU-count mix (1–64 GPUs,
//! mean 6.8) and run times (lognormal, median 45 min, up to 7 days), Poisson
//! arrivals. On 312 nodes 214 jobs/h offer about 90% of the GPUs.
//!
//! The contention scenarios ([`Scale::contention`], issue 39) are the hard case of
//! preemption: three priority classes (`batch` 0, `standard` 100, `urgent` 1000:
//! 70%, 20% and 10% of the jobs, one synthetic source each), 1–32 GPU jobs
//! (mean 4.98 GPUs), lognormal run times (median 1 h, σ 1.2, mean about 2.05 h),
//! queues `research` (weight 2) and `prod` (weight 1, not reclaimable), and an
//! arrival rate that offers about 90% of the GPUs (0.088 jobs/h per GPU);
//! optionally with checkpoints every 30 minutes.

/// The production-style conf of issue 11 ("P"): enqueue, allocate, backfill,
/// preempt, reclaim; priority, gang, conformance | drf, predicates, proportion,
/// nodeorder, binpack, network-topology-aware.
pub const FULL_CONF: &str = r#"actions: "enqueue, allocate, backfill, preempt, reclaim"
tiers:
- plugins: [{name: priority}, {name: gang}, {name: conformance}]
- plugins: [{name: drf}, {name: predicates}, {name: proportion}, {name: nodeorder}, {name: binpack}, {name: network-topology-aware}]"#;

/// The scheduler of a scale scenario.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Conf {
    /// [`FULL_CONF`] as listed.
    P,
    /// [`FULL_CONF`] with `drf: {enablePreemptable: false}` (preemption by priority
    /// only, as most production confs have it).
    PPrime,
    /// The `gang-fifo` baseline.
    GangFifo,
}

impl Conf {
    /// Parses `p`, `p-prime` or `gang-fifo`.
    pub fn parse(s: &str) -> Option<Conf> {
        match s {
            "p" => Some(Conf::P),
            "p-prime" => Some(Conf::PPrime),
            "gang-fifo" => Some(Conf::GangFifo),
            _ => None,
        }
    }

    /// The `spec.scheduler` value.
    pub fn scheduler(self) -> String {
        let conf = match self {
            Conf::GangFifo => return "{baseline: gang-fifo}".to_string(),
            Conf::P => FULL_CONF.to_string(),
            Conf::PPrime => FULL_CONF.replace("{name: drf}", "{name: drf, enablePreemptable: false}"),
        };
        "\n    inline: |\n".to_string() + &conf.lines().map(|l| format!("      {l}\n")).collect::<String>()
    }
}

/// One generated scale scenario.
#[derive(Clone, Copy, Debug)]
pub struct Scale {
    /// Jobs.
    pub jobs: u32,
    /// Nodes of 8 GPUs.
    pub nodes: u32,
    /// Poisson arrival rate.
    pub rate_per_hour: f64,
    /// Fabric tiers above the nodes: 2 (leaf, spine) or 3 (leaf, spine, core).
    pub tiers: u32,
    /// Scheduler.
    pub conf: Conf,
    /// The contention mix (priority classes, 1–32 GPUs, a queue not
    /// reclaimable) instead of the default scenario's.
    pub classes: bool,
    /// Jobs checkpoint every 30 minutes (work since the last is lost when
    /// evicted).
    pub checkpoint: bool,
}

/// The contention mix's classes: (source name prefix, priority, share of jobs in %).
pub const CLASSES: [(&str, i32, u32); 3] = [("batch", 0, 70), ("standard", 100, 20), ("urgent", 1000, 10)];

impl Scale {
    /// The scenario of the `scale` bench: 312 nodes, 214 jobs/h, two tiers.
    pub fn bench(jobs: u32, conf: Conf) -> Scale {
        Scale { jobs, nodes: 312, rate_per_hour: 214.0, tiers: 2, conf, classes: false, checkpoint: false }
    }

    /// A contention scenario: `jobs` jobs of the three priority classes on `nodes`
    /// nodes of 8 GPUs at about 90% offered load (three fabric tiers from 2,048
    /// nodes on).
    pub fn contention(jobs: u32, nodes: u32, conf: Conf) -> Scale {
        let rate_per_hour = (0.088 * 8.0 * nodes as f64).round();
        let tiers = if nodes >= 2048 { 3 } else { 2 };
        Scale { jobs, nodes, rate_per_hour, tiers, conf, classes: true, checkpoint: false }
    }

    /// The workload sources (YAML list items).
    fn sources(&self) -> String {
        if !self.classes {
            return format!(
                "    - synthetic:
        jobs: {jobs}
        namePrefix: job
        arrival: {{poisson: {{ratePerHour: {rate}}}}}
        gpus: {{1: 45, 2: 10, 4: 10, 8: 20, 16: 8, 32: 5, 64: 2}}
        cpuPerGpu: 10
        memoryPerGpu: 100Gi
        duration: {{lognormal: {{median: 45m, sigma: 1.2, min: 1m, max: 7d}}}}
        queues: {{research: 2, prod: 1}}
",
                jobs = self.jobs,
                rate = self.rate_per_hour,
            );
        }
        let mut out = String::new();
        let mut left = self.jobs;
        for (i, (name, priority, share)) in CLASSES.iter().enumerate() {
            let n = if i + 1 == CLASSES.len() { left } else { (u64::from(self.jobs) * u64::from(*share) / 100) as u32 };
            left -= n;
            let checkpoint = if self.checkpoint { "        checkpointInterval: 30m\n" } else { "" };
            out += &format!(
                "    - synthetic:
        jobs: {n}
        namePrefix: {name}
        arrival: {{poisson: {{ratePerHour: {rate}}}}}
        gpus: {{1: 40, 2: 15, 4: 15, 8: 20, 16: 7, 32: 3}}
        cpuPerGpu: 10
        memoryPerGpu: 100Gi
        duration: {{lognormal: {{median: 1h, sigma: 1.2, min: 1m, max: 7d}}}}
        queues: {{research: 2, prod: 1}}
        priority: {priority}
{checkpoint}",
                rate = self.rate_per_hour * *share as f64 / 100.0,
            );
        }
        out
    }

    /// The scenario YAML.
    pub fn text(&self) -> String {
        let leaves = self.nodes.div_ceil(8);
        let fabric = if self.tiers >= 3 {
            format!(
                "      - {{tier: 1, name: leaf, fanout: 8, oversubscription: 1.0}}
      - {{tier: 2, name: spine, fanout: 16, oversubscription: 2.0}}
      - {{tier: 3, name: core, fanout: {}, oversubscription: 2.0}}
",
                leaves.div_ceil(16)
            )
        } else {
            format!(
                "      - {{tier: 1, name: leaf, fanout: 8, oversubscription: 1.0}}
      - {{tier: 2, name: spine, fanout: {leaves}, oversubscription: 2.0}}
"
            )
        };
        format!(
            "apiVersion: lahar.io/v1alpha1
kind: Scenario
metadata: {{name: scale-{jobs}}}
spec:
  seed: 42
  cluster:
    nodeGroups:
      - {{name: h100, count: {nodes}, gpuModel: H100-SXM-80G, gpus: 8, cpu: 96, memory: 1Ti,
         intraNode: nvswitch, nics: {{count: 8, gbps: 400}}}}
    fabric:
{fabric}  queues:
    - {{name: research, weight: 2}}
    - {{name: prod, weight: 1{prod}}}
  scheduler: {scheduler}
  workload:
{sources}  output: {{sampleInterval: 5m}}
",
            jobs = self.jobs,
            nodes = self.nodes,
            scheduler = self.conf.scheduler(),
            sources = self.sources(),
            prod = if self.classes { ", reclaimable: false" } else { "" },
        )
    }
}
