//! A scenario's jobs as a stream in submit order, not a list: each source keeps
//! how to make its jobs (a synthetic spec and the seed, a trace file and its
//! order, a list of jobs given whole), and every pass over the workload — the
//! validation at load, the run itself — makes them again one at a time and merges
//! the sources by (submit time, source, position). The run holds only the jobs
//! alive; `--explain`'s name lookup alone lists them all once, before the run.

use super::validate::Profile;
use lahar_core::arrivals::{Arrival, Source};
use lahar_core::comm::CommModel;
use lahar_core::comm::runtime::{JobProfile, ReferenceNode};
use lahar_core::model::job::{JobSpec, NetworkTopology};
use lahar_core::util::rng::RngStreams;
use lahar_core::util::time::SimDuration;
use lahar_workloads::synthetic::{Generator, SyntheticSpec};
use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::mpsc::{Receiver, sync_channel};
use std::sync::{Arc, Mutex};

/// The jobs of a validated scenario, made again for each pass.
#[derive(Clone, Debug)]
pub struct Workload {
    sources: Vec<Plan>,
    /// Prices the work of `iterations` jobs (set when some job has such a model).
    pricing: Option<Arc<Pricing>>,
    /// Jobs of all sources.
    pub count: usize,
    /// The target workload of the fragmentation measure: the typical shapes of
    /// every job's pods.
    pub target: lahar_core::frag::Target,
}

/// How one source makes its jobs, in its own submit order.
#[derive(Clone, Debug)]
pub(super) enum Plan {
    /// Generated from the spec under the scenario's seed; each job gets `profile`
    /// or the mix's pick, multi-pod gangs get `network_topology`.
    Synthetic {
        spec: Arc<SyntheticSpec>,
        seed: u64,
        profile: Profile,
        mix: Arc<[Arc<JobProfile>]>,
        network_topology: Option<NetworkTopology>,
    },
    /// Read from the file again: `origin` is the time origin found at load,
    /// `count` the jobs it yielded, `rank` each job's place (in file order) in
    /// submit order when the file is not in submit order already.
    Trace {
        format: lahar_traces::Format,
        file: PathBuf,
        opts: lahar_traces::ImportOptions,
        origin: i64,
        count: usize,
        rank: Option<Arc<[u32]>>,
    },
    /// Jobs given whole (a `jobs:` list, manifests, a snapshot), sorted by submit
    /// time (stable).
    Listed(Arc<[(JobSpec, Profile)]>),
    /// A source whose input failed validation: it yields nothing.
    Broken,
}

/// The cost model and the cluster's node kind that price `iterations` jobs
/// (`Err`: the cluster has none, which each such job reports).
#[derive(Debug)]
pub(super) struct Pricing {
    pub(super) model: CommModel,
    pub(super) reference: Result<ReferenceNode, String>,
}

/// One job of the merged stream, with where it came from.
pub(super) struct Tagged {
    pub(super) source: usize,
    pub(super) index: usize,
    pub(super) job: JobSpec,
    pub(super) profile: Profile,
}

/// What went wrong re-reading a trace during a run (the file changed or went
/// away after it was validated); shared between the run's source and its caller.
#[derive(Clone, Debug, Default)]
pub struct Health(Arc<Mutex<Option<String>>>);

impl Health {
    /// The failure, if a source failed.
    pub fn failure(&self) -> Option<String> {
        self.0.lock().expect("not poisoned").clone()
    }

    fn fail(&self, msg: String) {
        let mut slot = self.0.lock().expect("not poisoned");
        slot.get_or_insert(msg);
    }
}

impl Workload {
    pub(super) fn new(
        sources: Vec<Plan>,
        pricing: Option<Pricing>,
        count: usize,
        target: lahar_core::frag::Target,
    ) -> Self {
        Workload { sources, pricing: pricing.map(Arc::new), count, target }
    }

    /// Whether some job has a model profile (the run then prices placements with
    /// the collective cost model).
    pub fn has_models(&self) -> bool {
        self.sources.iter().any(|p| match p {
            Plan::Synthetic { profile, mix, .. } => profile.is_some() || !mix.is_empty(),
            Plan::Listed(jobs) => jobs.iter().any(|(_, p)| p.is_some()),
            Plan::Trace { .. } | Plan::Broken => false,
        })
    }

    /// Every job, in submit order (a list: for tests and tools on small scenarios).
    pub fn specs(&self) -> Vec<JobSpec> {
        self.arrivals().into_iter().map(|a| a.spec).collect()
    }

    /// Every job with its model profile, in submit order (a list, as [`Workload::specs`]).
    pub fn arrivals(&self) -> Vec<Arrival> {
        self.merged(&Health::default()).map(|t| arrival(self.pricing.as_deref(), t)).collect()
    }

    /// The jobs as the engine takes them, and the health of the sources' reads.
    pub fn source(&self) -> (Source, Health) {
        let health = Health::default();
        let pricing = self.pricing.clone();
        let source = self.merged(&health).map(move |t| arrival(pricing.as_deref(), t));
        (Box::new(source), health)
    }

    /// The merged stream of every source's jobs, unpriced.
    pub(super) fn merged(&self, health: &Health) -> Merged {
        merge(&self.sources, health)
    }
}

/// A job as the engine takes it, its work priced (every job was priced once at
/// load: pricing cannot fail here).
fn arrival(pricing: Option<&Pricing>, mut t: Tagged) -> Arrival {
    if let Some(p) = pricing {
        let _ = p.price(&mut t.job, &t.profile);
    }
    Arrival { spec: t.job, profile: t.profile }
}

/// The merged stream of the jobs of `plans`, unpriced.
pub(super) fn merge(plans: &[Plan], health: &Health) -> Merged {
    Merged::new(plans.iter().map(|p| p.jobs(health)).collect())
}

impl Pricing {
    /// An `iterations` job's work: its iteration count times the ideal iteration
    /// on the cluster's fastest node kind.
    pub(super) fn price(&self, job: &mut JobSpec, profile: &Profile) -> Result<(), String> {
        let Some(p) = profile else { return Ok(()) };
        let Some(n) = p.iterations else { return Ok(()) };
        let gpus = job.total_gpus().max(0) as u32;
        let us = self
            .reference
            .as_ref()
            .map_err(String::clone)
            .and_then(|r| r.iteration_us(&self.model, p, gpus).map_err(|e| e.to_string()));
        match us {
            Ok(us) => {
                job.duration = SimDuration((us * n as f64).ceil() as u64);
                Ok(())
            }
            Err(e) => Err(format!("job `{}`: cannot price model `{}`: {e}", job.name, p.name)),
        }
    }
}

type Jobs = Box<dyn Iterator<Item = (JobSpec, Profile)>>;

impl Plan {
    /// This source's jobs, in its submit order.
    fn jobs(&self, health: &Health) -> Jobs {
        match self {
            Plan::Synthetic { spec, seed, profile, mix, network_topology } => {
                let (profile, mix, nt) = (profile.clone(), Arc::clone(mix), network_topology.clone());
                let generator = Generator::new((**spec).clone(), &RngStreams::new(*seed));
                Box::new(generator.map(move |(mut j, pick)| {
                    // Gangs that span nodes carry the constraint, as users would set it.
                    if j.min_available > 1 {
                        j.network_topology = nt.clone();
                    }
                    let prof = match pick {
                        Some(k) => Some(Arc::clone(&mix[k])),
                        None => profile.clone(),
                    };
                    (j, prof)
                }))
            }
            Plan::Trace { format, file, opts, origin, count, rank } => {
                let read = TraceRead::start(*format, file.clone(), opts.clone(), *origin, health.clone());
                Box::new(Reordered::new(read, *count, rank.clone(), file.clone(), health.clone()).map(|j| (j, None)))
            }
            Plan::Listed(jobs) => {
                let jobs = Arc::clone(jobs);
                Box::new((0..jobs.len()).map(move |i| jobs[i].clone()))
            }
            Plan::Broken => Box::new(std::iter::empty()),
        }
    }
}

/// The sources' streams merged by (submit time, source, position): each source
/// is in submit order, so the next job is the earliest head, the lowest source
/// on ties.
pub(super) struct Merged {
    sources: Vec<Jobs>,
    heads: Vec<Option<(JobSpec, Profile)>>,
    taken: Vec<usize>,
}

impl Merged {
    fn new(mut sources: Vec<Jobs>) -> Merged {
        let heads = sources.iter_mut().map(|s| s.next()).collect();
        let taken = vec![0; sources.len()];
        Merged { sources, heads, taken }
    }
}

impl Iterator for Merged {
    type Item = Tagged;

    fn next(&mut self) -> Option<Tagged> {
        let mut best: Option<usize> = None;
        for (s, h) in self.heads.iter().enumerate() {
            if let Some((j, _)) = h
                && best.is_none_or(|b| j.submit < self.heads[b].as_ref().expect("a head").0.submit)
            {
                best = Some(s);
            }
        }
        let s = best?;
        let (job, profile) = std::mem::replace(&mut self.heads[s], self.sources[s].next()).expect("a head");
        let index = self.taken[s];
        self.taken[s] += 1;
        Some(Tagged { source: s, index, job, profile })
    }
}

/// A trace read on a thread of its own, its jobs handed over in file order.
struct TraceRead {
    jobs: Receiver<JobSpec>,
}

impl TraceRead {
    fn start(
        format: lahar_traces::Format,
        file: PathBuf,
        opts: lahar_traces::ImportOptions,
        origin: i64,
        health: Health,
    ) -> TraceRead {
        let (tx, rx) = sync_channel::<JobSpec>(1024);
        std::thread::spawn(move || {
            let mut hung_up = false;
            let r = lahar_traces::stream_from(format, &file, &opts, origin, &mut |job| {
                tx.send(job).map_err(|e| {
                    hung_up = true;
                    e.to_string().into()
                })
            });
            // A reader that stops early (a run cut short) is no failure.
            if let Err(e) = r
                && !hung_up
            {
                health.fail(e.to_string());
            }
        });
        TraceRead { jobs: rx }
    }
}

/// A trace's jobs in submit order: the ones read ahead of their turn wait in a
/// buffer (empty when the file is in submit order; at worst the whole trace).
struct Reordered {
    read: TraceRead,
    count: usize,
    rank: Option<Arc<[u32]>>,
    seen: usize,
    next: u32,
    early: BTreeMap<u32, JobSpec>,
    file: PathBuf,
    health: Health,
}

impl Reordered {
    fn new(read: TraceRead, count: usize, rank: Option<Arc<[u32]>>, file: PathBuf, health: Health) -> Reordered {
        Reordered { read, count, rank, seen: 0, next: 0, early: BTreeMap::new(), file, health }
    }

    fn changed(&self) {
        self.health.fail(format!(
            "{}: the trace changed after it was validated (it yielded {} jobs then, not the same now)",
            self.file.display(),
            self.count
        ));
    }
}

impl Iterator for Reordered {
    type Item = JobSpec;

    fn next(&mut self) -> Option<JobSpec> {
        loop {
            if let Some(j) = self.early.remove(&self.next) {
                self.next += 1;
                return Some(j);
            }
            let job = match self.read.jobs.recv() {
                Ok(j) => j,
                Err(_) => {
                    if self.seen != self.count {
                        self.changed();
                    }
                    return None;
                }
            };
            if self.seen >= self.count {
                self.changed();
                return None;
            }
            let rank = self.rank.as_ref().map_or(self.seen as u32, |r| r[self.seen]);
            self.seen += 1;
            if rank == self.next {
                self.next += 1;
                return Some(job);
            }
            self.early.insert(rank, job);
        }
    }
}
