//! Import options: strictness, queue mapping, time origin, per-format knobs.

use std::collections::BTreeMap;
use std::fmt;
use std::sync::{Arc, Mutex};

use lahar_core::model::queue::QueueId;
use lahar_core::util::time::SimDuration;

/// What a trace says about a job's queue, handed to the [`QueueMapping`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct QueueKey<'a> {
    /// The trace's queue or virtual cluster (SWF queue number in decimal, Philly and
    /// Helios `vc`, openb `qos`, canonical `queue`); `None` when the trace has none.
    pub queue: Option<&'a str>,
    /// The trace's user (SWF user number in decimal); `None` when the trace has none.
    pub user: Option<&'a str>,
}

/// How jobs are assigned to lahar queues.
#[derive(Clone, Default)]
pub enum QueueMapping {
    /// Every job goes to queue 0.
    #[default]
    Default,
    /// Every job goes to one queue.
    Single(QueueId),
    /// By the trace's queue / virtual cluster; unknown or absent names go to `default`.
    ByQueue {
        /// Trace queue name to lahar queue.
        map: BTreeMap<String, QueueId>,
        /// Queue of everything else.
        default: QueueId,
    },
    /// By the trace's user; unknown or absent users go to `default`.
    ByUser {
        /// Trace user to lahar queue.
        map: BTreeMap<String, QueueId>,
        /// Queue of everything else.
        default: QueueId,
    },
    /// One queue per distinct trace queue name, numbered in order of first
    /// appearance; see [`QueueInterner`].
    Intern(QueueInterner),
    /// Any rule.
    Custom(Arc<dyn Fn(&QueueKey<'_>) -> QueueId + Send + Sync>),
}

impl QueueMapping {
    /// The queue of a job.
    pub fn queue_of(&self, key: &QueueKey<'_>) -> QueueId {
        match self {
            QueueMapping::Default => QueueId(0),
            QueueMapping::Single(q) => *q,
            QueueMapping::ByQueue { map, default } => key.queue.and_then(|k| map.get(k)).copied().unwrap_or(*default),
            QueueMapping::ByUser { map, default } => key.user.and_then(|k| map.get(k)).copied().unwrap_or(*default),
            QueueMapping::Intern(i) => i.intern(key.queue.unwrap_or(QueueInterner::NONE)),
            QueueMapping::Custom(f) => f(key),
        }
    }
}

impl fmt::Debug for QueueMapping {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            QueueMapping::Default => f.write_str("Default"),
            QueueMapping::Single(q) => f.debug_tuple("Single").field(q).finish(),
            QueueMapping::ByQueue { map, default } => {
                f.debug_struct("ByQueue").field("map", map).field("default", default).finish()
            }
            QueueMapping::ByUser { map, default } => {
                f.debug_struct("ByUser").field("map", map).field("default", default).finish()
            }
            QueueMapping::Intern(i) => f.debug_tuple("Intern").field(&i.names()).finish(),
            QueueMapping::Custom(_) => f.write_str("Custom(..)"),
        }
    }
}

/// Numbers trace queue names densely in order of first appearance, so a trace's
/// virtual clusters become lahar queues `0, 1, 2...` and their names can be written
/// back (e.g. by [`CanonicalWriter`](crate::canonical::CanonicalWriter)).
///
/// Clones share the table. Jobs without a queue go to the queue named
/// [`QueueInterner::NONE`].
#[derive(Clone, Debug, Default)]
pub struct QueueInterner {
    names: Arc<Mutex<Vec<String>>>,
}

impl QueueInterner {
    /// Name given to jobs whose trace has no queue.
    pub const NONE: &'static str = "default";

    /// An empty table.
    pub fn new() -> QueueInterner {
        QueueInterner::default()
    }

    /// The id of `name`, adding it if new.
    pub fn intern(&self, name: &str) -> QueueId {
        // A poisoned lock only means another thread panicked mid-push; the Vec is
        // still consistent.
        let mut names = self.names.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(i) = names.iter().position(|n| n == name) {
            return QueueId(i as u32);
        }
        names.push(name.to_string());
        QueueId(names.len() as u32 - 1)
    }

    /// Names by queue id.
    pub fn names(&self) -> Vec<String> {
        self.names.lock().unwrap_or_else(|e| e.into_inner()).clone()
    }
}

/// Zero point of the imported submit times.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum TimeOrigin {
    /// The earliest submit time among the jobs produced (skipped rows do not count),
    /// so the first job arrives at time 0.
    #[default]
    EarliestSubmit,
    /// A fixed point of the trace's own clock, in whole seconds: seconds since the
    /// trace origin for openb, PAI, SWF (relative to the header's `UnixStartTime`)
    /// and canonical files; for the date-time traces (Philly, Helios), seconds since
    /// `1970-01-01 00:00:00` of the trace's local time. Jobs submitted earlier are
    /// skipped as [`before_origin`](crate::SkipReason::BeforeOrigin).
    At(i64),
}

/// Options of the SWF importer.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct SwfOptions {
    /// Processors per pod (one pod per node). `None`: `MaxProcs / MaxNodes` from the
    /// header when both are given and divide evenly, else 1.
    pub procs_per_pod: Option<u32>,
}

/// Options of the openb pod-list importer.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct OpenbOptions {
    /// For the reduced schema (no time columns): pod `i` (0-based, file order) is
    /// submitted at `i * untimed_interval`.
    pub untimed_interval: SimDuration,
    /// For the reduced schema: the run time of every pod. The FGD simulator never
    /// deletes these pods, so the default outlives any simulation.
    pub untimed_duration: SimDuration,
}

impl Default for OpenbOptions {
    fn default() -> Self {
        OpenbOptions {
            untimed_interval: SimDuration::from_secs(1),
            untimed_duration: SimDuration::from_secs(1_000_000_000),
        }
    }
}

/// Options common to all importers.
#[derive(Clone, Debug)]
pub struct ImportOptions {
    /// Fail on the first invalid row (see [`SkipReason::is_invalid`](crate::SkipReason::is_invalid))
    /// instead of skipping and counting it.
    pub strict: bool,
    /// Queue assignment.
    pub queues: QueueMapping,
    /// Zero point of submit times.
    pub origin: TimeOrigin,
    /// Namespace of every job (canonical files carry their own).
    pub namespace: String,
    /// CPU millicores per GPU for traces that record no CPU (Philly); a pod without
    /// GPUs gets this much too.
    pub cpu_milli_per_gpu: i64,
    /// Bytes of memory per GPU for traces that record no memory (Philly, Helios); a
    /// pod without GPUs gets this much too.
    pub memory_per_gpu: i64,
    /// SWF knobs.
    pub swf: SwfOptions,
    /// openb knobs.
    pub openb: OpenbOptions,
    /// Factor on submit times (after the origin): below 1 compresses arrivals and
    /// raises the load, run times unchanged. 1 by default.
    pub time_scale: f64,
}

impl Default for ImportOptions {
    fn default() -> Self {
        ImportOptions {
            strict: false,
            queues: QueueMapping::Default,
            origin: TimeOrigin::EarliestSubmit,
            namespace: "default".into(),
            cpu_milli_per_gpu: 0,
            memory_per_gpu: 0,
            swf: SwfOptions::default(),
            openb: OpenbOptions::default(),
            time_scale: 1.0,
        }
    }
}
