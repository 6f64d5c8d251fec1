//! Scale scenarios generated in code (never committed as huge files): `N` nodes of
//! 8 H100 under leaves of 8 nodes and a 2:1 spine (a third `core` tier above
//! spines of 16 leaves with `tiers: 3`), queues `research` (weight 2) and `prod`
//! (weight 1), synthetic jobs with the default scenario's GPU-count mix (1–64 GPUs,
//! mean 6.8) and run times (lognormal, median 45 min, up to 7 days), Poisson
//! arrivals. On 312 nodes 214 jobs/h offer about 90% of the GPUs.

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
}

impl Scale {
    /// The scenario of the `scale` bench: 312 nodes, 214 jobs/h, two tiers.
    pub fn bench(jobs: u32, conf: Conf) -> Scale {
        Scale { jobs, nodes: 312, rate_per_hour: 214.0, tiers: 2, conf }
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
    - {{name: prod, weight: 1}}
  scheduler: {scheduler}
  workload:
    - synthetic:
        jobs: {jobs}
        namePrefix: job
        arrival: {{poisson: {{ratePerHour: {rate}}}}}
        gpus: {{1: 45, 2: 10, 4: 10, 8: 20, 16: 8, 32: 5, 64: 2}}
        cpuPerGpu: 10
        memoryPerGpu: 100Gi
        duration: {{lognormal: {{median: 45m, sigma: 1.2, min: 1m, max: 7d}}}}
        queues: {{research: 2, prod: 1}}
  output: {{sampleInterval: 5m}}
",
            jobs = self.jobs,
            nodes = self.nodes,
            scheduler = self.conf.scheduler(),
            rate = self.rate_per_hour,
        )
    }
}
