//! Alibaba GPU cluster trace v2023 ("openb", FGD paper): pod lists and node lists.
//!
//! Columns are found by header name. The full pod-list schema is
//! `name,cpu_milli,memory_mib,num_gpu,gpu_milli,gpu_spec,qos,pod_phase,creation_time,deletion_time,scheduled_time`;
//! the reduced one (`multigpu*` files) has only the first five, and no times.
//! Each pod becomes a job of one pod:
//!
//! | lahar | openb |
//! |---|---|
//! | `name` | `name` |
//! | pod CPU | `cpu_milli` (millicores) |
//! | pod memory | `memory_mib` × 2^20 bytes |
//! | pod GPU | `num_gpu` × `gpu_milli` milli-GPUs (`gpu_milli` is per GPU: 460 = 0.46 of one GPU; 0 when `num_gpu` is 0) |
//! | node filter | `gpu_spec` naming one model (after removing repeats, e.g. `V100M32\|V100M32`) → node selector `nvidia.com/gpu.product=<model>`; several (`V100M16\|V100M32`) → the label must be one of them ([`TaskSpec::node_label_in`](lahar_core::model::job::TaskSpec::node_label_in)) |
//! | `submit` | `creation_time` (seconds) |
//! | `duration` | `deletion_time − scheduled_time`: the time the pod held its node. Pods still `Running` when the trace ends have `deletion_time` = trace end, so their run is truncated there |
//! | queue key | `qos` (`LS`, `BE`, `Burstable`, `Guaranteed`); no user |
//! | status (report) | `pod_phase` |
//!
//! Reduced schema: pod `i` (0-based row index) is submitted at
//! `i × untimed_interval` and runs for `untimed_duration`
//! ([`OpenbOptions`](crate::OpenbOptions)), mimicking the FGD simulator, which
//! submits pods in file order and never deletes them. Status is `unknown`.
//!
//! Skips: wrong field count, non-integer or negative numbers, `gpu_milli` outside
//! 1..=1000 for a GPU pod, or below 1000 for a pod of several GPUs (a share of
//! several devices, which neither the FGD simulator nor lahar's device model
//! expresses) → `malformed`; empty `name`/`creation_time` →
//! `missing_field`; empty `scheduled_time` (the `Pending` pods) → `not_started`;
//! empty `deletion_time` → `still_running`; deletion before scheduling →
//! `end_before_start`; deletion at scheduling → `zero_duration`.

use std::collections::BTreeSet;
use std::io::BufRead;
use std::path::Path;

use csv::StringRecord;
use lahar_core::model::resource::Resources;

use crate::ctx::{Ctx, GPU_MODEL_LABEL, JobParts, RawJob, Skip, build_job, run_time, secs_to_micros, tasks_from_pods};
use crate::error::SkipReason;
use crate::error::{ImportError, Location};
use crate::options::ImportOptions;
use crate::parse;
use crate::table::{Columns, Table, check_width};

/// Column positions of a pod list.
struct PodColumns {
    width: usize,
    name: usize,
    cpu: usize,
    mem: usize,
    num_gpu: usize,
    gpu_milli: usize,
    gpu_spec: Option<usize>,
    qos: Option<usize>,
    phase: Option<usize>,
    /// creation, deletion, scheduled; `None` for the reduced schema.
    times: Option<(usize, usize, usize)>,
}

impl PodColumns {
    fn new(c: &Columns, ctx: &Ctx<'_>) -> Result<PodColumns, ImportError> {
        let times = match c.find("creation_time") {
            Some(created) => Some((created, c.require("deletion_time", ctx)?, c.require("scheduled_time", ctx)?)),
            None => None,
        };
        Ok(PodColumns {
            width: c.len(),
            name: c.require("name", ctx)?,
            cpu: c.require("cpu_milli", ctx)?,
            mem: c.require("memory_mib", ctx)?,
            num_gpu: c.require("num_gpu", ctx)?,
            gpu_milli: c.require("gpu_milli", ctx)?,
            gpu_spec: c.find("gpu_spec"),
            qos: c.find("qos"),
            phase: c.find("pod_phase"),
            times,
        })
    }
}

/// The format's entry in [`crate::FORMATS`].
pub(crate) const SPEC: crate::FormatSpec = crate::FormatSpec {
    format: crate::Format::Openb,
    name: "openb",
    aliases: &[],
    file: "Alibaba v2023 `openb_pod_list_*.csv`",
    one_job: "a pod",
    guess: |name| name.starts_with("openb_pod_list"),
    read,
};

pub(crate) fn read(input: &mut dyn BufRead, ctx: &mut Ctx<'_>) -> Result<(), ImportError> {
    let mut table = Table::new(input);
    let cols = PodColumns::new(&table.columns(ctx)?, ctx)?;
    while let Some((at, rec)) = table.next_row(ctx)? {
        let r = rec.and_then(|rec| convert(rec, &cols, at, ctx));
        ctx.outcome(at, r)?;
    }
    Ok(())
}

fn nonneg(rec: &StringRecord, i: usize, field: &str) -> Result<i64, Skip> {
    let v = parse::req_int(&rec[i], field)?;
    if v < 0 {
        return Err(Skip::malformed(format!("`{field}` must be ≥ 0, got {v}")));
    }
    Ok(v)
}

/// A pod of an openb pod list as the FGD paper's simulator reads it: its
/// resources and the GPU models it accepts, without times.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct OpenbPod {
    /// `name`, e.g. `openb-pod-0042`.
    pub name: String,
    /// CPU request in millicores (`cpu_milli`).
    pub cpu_milli: i64,
    /// Memory request in bytes (`memory_mib` × 2^20).
    pub memory_bytes: i64,
    /// GPU devices (`num_gpu`).
    pub num_gpu: u32,
    /// Milli-GPUs on each device (`gpu_milli`: 1000 for a whole GPU, below for a
    /// share of one); 0 for a pod without GPUs.
    pub gpu_milli: u32,
    /// The GPU models any of which will do (`gpu_spec`, `A|B`), sorted, repeats
    /// removed; empty when any model will do.
    pub gpu_spec: Vec<String>,
}

/// Reads a pod's name and resources (shared by the job importer and
/// [`read_pods`], so both skip the same rows for the same reasons).
fn pod(rec: &StringRecord, c: &PodColumns) -> Result<OpenbPod, Skip> {
    check_width(rec, c.width)?;
    let name = &rec[c.name];
    if name.is_empty() {
        return Err(Skip::missing("name"));
    }
    let cpu_milli = nonneg(rec, c.cpu, "cpu_milli")?;
    let memory_bytes = nonneg(rec, c.mem, "memory_mib")?
        .checked_mul(1 << 20)
        .ok_or_else(|| Skip::malformed("`memory_mib` is out of range"))?;
    let num_gpu = nonneg(rec, c.num_gpu, "num_gpu")?;
    let per_gpu = nonneg(rec, c.gpu_milli, "gpu_milli")?;
    if num_gpu > 0 && !(1..=1000).contains(&per_gpu) {
        return Err(Skip::malformed(format!("`gpu_milli` must be in 1..=1000 for a GPU pod, got {per_gpu}")));
    }
    if num_gpu > 1 && per_gpu < 1000 {
        return Err(Skip::malformed(format!(
            "a pod with {num_gpu} GPUs must take whole ones (`gpu_milli` 1000), got {per_gpu}"
        )));
    }
    let num_gpu =
        u32::try_from(num_gpu).map_err(|_| Skip::malformed(format!("`num_gpu` {num_gpu} is out of range")))?;
    let gpu_spec = match c.gpu_spec {
        Some(i) => {
            let models: BTreeSet<&str> = rec[i].split('|').map(str::trim).filter(|m| !m.is_empty()).collect();
            models.into_iter().map(str::to_string).collect()
        }
        None => Vec::new(),
    };
    Ok(OpenbPod {
        name: name.to_string(),
        cpu_milli,
        memory_bytes,
        num_gpu,
        gpu_milli: if num_gpu == 0 { 0 } else { per_gpu as u32 },
        gpu_spec,
    })
}

fn convert(rec: &StringRecord, c: &PodColumns, at: Location, ctx: &mut Ctx<'_>) -> Result<RawJob, Skip> {
    let p = pod(rec, c)?;
    let (name, cpu, mem) = (p.name.as_str(), p.cpu_milli, p.memory_bytes);
    let gpu = i64::from(p.num_gpu) * i64::from(p.gpu_milli);
    let (submit, duration) = match c.times {
        Some((created, deleted, scheduled)) => {
            let submit = parse::req_int(&rec[created], "creation_time")?;
            if rec[scheduled].is_empty() {
                return Err(Skip::new(SkipReason::NotStarted, "`scheduled_time` is empty (the pod never ran)"));
            }
            let start = parse::int(&rec[scheduled], "scheduled_time")?;
            if rec[deleted].is_empty() {
                return Err(Skip::new(SkipReason::StillRunning, "`deletion_time` is empty"));
            }
            let end = parse::int(&rec[deleted], "deletion_time")?;
            (secs_to_micros(submit, "creation_time")?, run_time(start, end)?)
        }
        None => {
            let i = at.row.saturating_sub(1);
            let step = ctx.opts.openb.untimed_interval.micros();
            let submit = i64::try_from(i.saturating_mul(step)).unwrap_or(i64::MAX);
            (submit, ctx.opts.openb.untimed_duration)
        }
    };
    let mut selector = Vec::new();
    let mut label_in = Vec::new();
    match p.gpu_spec.as_slice() {
        [] => {}
        [one] => selector.push((GPU_MODEL_LABEL.to_string(), one.clone())),
        several => label_in.push((GPU_MODEL_LABEL.to_string(), several.to_vec())),
    }
    let qos = c.qos.map(|i| &rec[i]).filter(|q| !q.is_empty());
    let status = c.phase.map(|i| &rec[i]).filter(|p| !p.is_empty()).unwrap_or("unknown");
    let mut tasks = tasks_from_pods(1, |_| Resources::new(cpu, mem, gpu, 1), &selector)?;
    for t in &mut tasks {
        t.node_label_in.clone_from(&label_in);
    }
    let job = build_job(
        JobParts {
            name: name.to_string(),
            kind: "openb",
            queue: ctx.queue(qos, None),
            user: String::new(),
            duration,
            tasks,
        },
        ctx.opts,
    )?;
    Ok(RawJob { submit_micros: submit, job, status: status.to_string() })
}

/// The pods of an openb pod list (either schema), in file order.
#[derive(Clone, Debug)]
pub struct PodList {
    /// Pods in file order.
    pub pods: Vec<OpenbPod>,
    /// Data rows read.
    pub rows_read: u64,
    /// Skipped rows by reason (only `malformed` and `missing_field` occur: times
    /// are not read).
    pub skipped: std::collections::BTreeMap<SkipReason, u64>,
}

/// Reads an openb pod list's pods without their times (the FGD paper's
/// placement-only evaluation ignores them). Bad rows are skipped and counted, or
/// abort when `strict`.
pub fn read_pods(path: &Path, strict: bool) -> Result<PodList, ImportError> {
    let file =
        lahar_core::util::files::open(path).map_err(|source| ImportError::Io { path: path.to_path_buf(), source })?;
    read_pods_from(&mut std::io::BufReader::new(file), path, strict)
}

/// Like [`read_pods`], from any reader; `name` is used in messages.
pub fn read_pods_from(input: &mut dyn BufRead, name: &Path, strict: bool) -> Result<PodList, ImportError> {
    let opts = ImportOptions { strict, ..ImportOptions::default() };
    let mut sink = |_, _| Ok(());
    let mut ctx = Ctx::new(name, &opts, &mut sink);
    let mut table = Table::new(input);
    let cols = PodColumns::new(&table.columns(&ctx)?, &ctx)?;
    let mut pods = Vec::new();
    while let Some((at, rec)) = table.next_row(&mut ctx)? {
        match rec.and_then(|rec| pod(rec, &cols)) {
            Ok(p) => pods.push(p),
            Err(skip) => ctx.reject(at, skip)?,
        }
    }
    Ok(PodList { pods, rows_read: ctx.rows_read, skipped: std::mem::take(&mut ctx.skipped) })
}

/// A node of an openb node list, in lahar units.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct OpenbNode {
    /// `sn`, e.g. `openb-node-0042`.
    pub name: String,
    /// CPU capacity in millicores (`cpu_milli`).
    pub cpu_milli: i64,
    /// Memory in bytes (`memory_mib` × 2^20).
    pub memory_bytes: i64,
    /// Whole GPUs (`gpu`).
    pub gpus: u32,
    /// GPU model (`model`), `None` when empty (CPU-only nodes).
    pub model: Option<String>,
}

/// The nodes of a node list and what was skipped.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NodeList {
    /// Nodes in file order.
    pub nodes: Vec<OpenbNode>,
    /// Data rows read.
    pub rows_read: u64,
    /// Skipped rows by reason (only `malformed` and `missing_field` occur).
    pub skipped: std::collections::BTreeMap<SkipReason, u64>,
}

/// Reads an openb node list (`sn,cpu_milli,memory_mib,gpu,model`, columns by name;
/// `model` may be absent). Bad rows are skipped and counted, or abort when `strict`.
pub fn read_nodes(path: &Path, strict: bool) -> Result<NodeList, ImportError> {
    let file =
        lahar_core::util::files::open(path).map_err(|source| ImportError::Io { path: path.to_path_buf(), source })?;
    read_nodes_from(&mut std::io::BufReader::new(file), path, strict)
}

/// Like [`read_nodes`], from any reader; `name` is used in messages.
pub fn read_nodes_from(input: &mut dyn BufRead, name: &Path, strict: bool) -> Result<NodeList, ImportError> {
    let opts = ImportOptions { strict, ..ImportOptions::default() };
    let mut sink = |_, _| Ok(());
    let mut ctx = Ctx::new(name, &opts, &mut sink);
    let mut table = Table::new(input);
    let cols = table.columns(&ctx)?;
    let idx = [
        cols.require("sn", &ctx)?,
        cols.require("cpu_milli", &ctx)?,
        cols.require("memory_mib", &ctx)?,
        cols.require("gpu", &ctx)?,
    ];
    let model = cols.find("model");
    let mut nodes = Vec::new();
    while let Some((at, rec)) = table.next_row(&mut ctx)? {
        let node = rec.and_then(|rec| {
            check_width(rec, cols.len())?;
            if rec[idx[0]].is_empty() {
                return Err(Skip::missing("sn"));
            }
            let memory = nonneg(rec, idx[2], "memory_mib")?;
            Ok(OpenbNode {
                name: rec[idx[0]].to_string(),
                cpu_milli: nonneg(rec, idx[1], "cpu_milli")?,
                memory_bytes: memory
                    .checked_mul(1 << 20)
                    .ok_or_else(|| Skip::malformed("`memory_mib` is out of range"))?,
                gpus: parse::count(&rec[idx[3]], "gpu")?,
                model: model.map(|i| rec[i].to_string()).filter(|m| !m.is_empty()),
            })
        });
        match node {
            Ok(n) => nodes.push(n),
            Err(skip) => ctx.reject(at, skip)?,
        }
    }
    Ok(NodeList { nodes, rows_read: ctx.rows_read, skipped: std::mem::take(&mut ctx.skipped) })
}
