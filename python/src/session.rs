//! The Python `Session` and `Statement`: the Rust Session API on the session lent
//! for the call ([`crate::lend`]). Everything that only reads works in a policy's
//! `schedule(session)` and in a plugin's hooks; statements, phases, actions and
//! wake-ups only in a policy's.

use crate::lend::{SessionError, live, view};
use lahar_core::model::cluster::NodeId;
use lahar_core::model::job::{JobId, PodGroupPhase, PodId, PodStatus};
use lahar_core::model::resource::Resources;
use lahar_core::session::{Session, Statement};
use lahar_core::util::time::SimTime;
use pyo3::exceptions::{PyIndexError, PyValueError};
use pyo3::prelude::*;

/// GPUs, CPU cores and memory bytes of `r`.
pub(crate) fn triple(r: &Resources) -> (f64, f64, i64) {
    (r.gpu_milli() as f64 / 1000.0, r.cpu() as f64 / 1000.0, r.memory())
}

pub(crate) fn job_id(ssn: &Session<'_>, j: u32) -> PyResult<JobId> {
    let id = JobId(j);
    if ssn.has_job(id) { Ok(id) } else { Err(PyIndexError::new_err(format!("no job {j} (never made, or ended)"))) }
}

pub(crate) fn pod_id(ssn: &Session<'_>, p: u32) -> PyResult<PodId> {
    let id = PodId(p);
    if ssn.has_pod(id) { Ok(id) } else { Err(PyIndexError::new_err(format!("no pod {p} (never made, or ended)"))) }
}

pub(crate) fn node_id(ssn: &Session<'_>, n: u32) -> PyResult<NodeId> {
    if (n as usize) < ssn.node_count() { Ok(NodeId(n)) } else { Err(PyIndexError::new_err(format!("no node {n}"))) }
}

/// Attained service in GPU-seconds (as the built-in `tiresias` counts it).
fn attained(job: &lahar_core::world::Job, now: SimTime) -> f64 {
    let gpus = job.gpus().max(1) as u128;
    (gpus * u128::from(job.work_done_at(now)) + job.progress.lost_gpu_us) as f64 / 1e6
}

/// A job, as the session sees it when asked.
#[pyclass(name = "Job", module = "lahar", frozen, get_all)]
pub(crate) struct PyJob {
    /// Its number in the run (what the session's methods take).
    id: u32,
    /// Its name as jobs.csv writes it (`namespace/name` outside `default`).
    name: String,
    /// Its queue's name.
    queue: String,
    /// Its priority.
    priority: i32,
    /// Submission time, seconds.
    submit: f64,
    /// minAvailable (the gang's size).
    min_available: u32,
    /// Pods Allocated, Running or Succeeded.
    ready: u32,
    /// Pods Pending.
    pending: u32,
    /// PodGroup phase (`Pending`, `Inqueue`, `Running`...).
    phase: &'static str,
    /// GPUs its pods request in all.
    gpus: f64,
    /// Pods Running.
    running: u32,
    /// Attained service, GPU-seconds: its GPUs (at least 1) × the ideal run
    /// time it has executed, plus the GPU time it lost when stopped (what the
    /// built-in `tiresias` orders by).
    attained: f64,
}

/// A pod.
#[pyclass(name = "Pod", module = "lahar", frozen, get_all)]
pub(crate) struct PyPod {
    id: u32,
    job: u32,
    /// Task name.
    task: String,
    /// Replica index within the task.
    index: u32,
    gpus: f64,
    cpu: f64,
    memory: i64,
    /// The pod's priority (its PriorityClass's value).
    priority: i32,
    /// `Pending`, `Allocated`, `Pipelined`, `Running`, `Releasing`...
    status: String,
    /// Its node, when placed.
    node: Option<u32>,
}

/// A node: its resources now.
#[pyclass(name = "Node", module = "lahar", frozen, get_all)]
pub(crate) struct PyNode {
    id: u32,
    name: String,
    /// (GPUs, CPU cores, memory bytes) it offers.
    allocatable: (f64, f64, i64),
    /// Held by the pods placed on it (Allocated, Pipelined aside, Running,
    /// Releasing): what binpack and nodeorder score by.
    used: (f64, f64, i64),
    /// Free now.
    idle: (f64, f64, i64),
    /// Free once Releasing pods are gone, less what is pipelined.
    future_idle: (f64, f64, i64),
}

/// One scheduling session, lent to `schedule(session)` for the call.
#[pyclass(name = "Session", module = "lahar")]
pub(crate) struct PySession {
    pub(crate) index: u64,
    pub(crate) statements: Vec<Py<PyStatement>>,
}

#[pymethods]
impl PySession {
    /// Session number (1-based).
    #[getter]
    fn index(&self) -> u64 {
        self.index
    }

    /// The session's time, seconds since the start.
    #[getter]
    fn now(&self) -> PyResult<f64> {
        view(|s| s.now().micros() as f64 / 1e6)
    }

    /// The session's time, integer microseconds.
    #[getter]
    fn now_us(&self) -> PyResult<u64> {
        view(|s| s.now().micros())
    }

    /// Number of nodes (ids 0..n, in node order).
    #[getter]
    fn node_count(&self) -> PyResult<usize> {
        view(|s| s.node_count())
    }

    /// Idle resources summed over the nodes: (GPUs, CPU cores, memory bytes). A
    /// gang that needs more than this cannot start now.
    #[getter]
    fn idle_total(&self) -> PyResult<(f64, f64, i64)> {
        view(|s| triple(&s.idle_total()))
    }

    /// The queues: (name, weight), in the scenario's order.
    fn queues(&self) -> PyResult<Vec<(String, u32)>> {
        view(|s| s.queues().iter().map(|q| (q.spec.name.clone(), q.spec.weight)).collect())
    }

    /// Jobs with Pending pods, in creation order (submit time, then id).
    fn pending_jobs(&self) -> PyResult<Vec<u32>> {
        view(|s| s.jobs_with_pending().map(|j| j.0).collect())
    }

    /// Job `j`.
    fn job(&self, j: u32) -> PyResult<PyJob> {
        view(|s| {
            let job = s.job(job_id(s, j)?);
            let spec = &job.spec;
            let gpus: i64 = spec.tasks.iter().map(|t| t.requests.gpu_milli() * i64::from(t.replicas)).sum();
            Ok(PyJob {
                id: j,
                name: lahar_reports::labels::job_label(spec),
                queue: s.queue(spec.queue).spec.name.clone(),
                priority: spec.priority,
                submit: spec.submit.micros() as f64 / 1e6,
                min_available: spec.min_available,
                ready: job.ready_count(),
                pending: job.count(PodStatus::Pending),
                phase: job.pg_phase.as_str(),
                gpus: gpus as f64 / 1000.0,
                running: job.count(PodStatus::Running),
                attained: attained(job, s.now()),
            })
        })?
    }

    /// Every job submitted and not ended, in creation order.
    fn jobs(&self) -> PyResult<Vec<u32>> {
        view(|s| s.jobs().map(|j| j.0).collect())
    }

    /// Jobs with Running pods, in creation order.
    fn running_jobs(&self) -> PyResult<Vec<u32>> {
        view(|s| s.jobs().filter(|&j| s.job(j).count(PodStatus::Running) > 0).map(|j| j.0).collect())
    }

    /// Every pod of job `j`, in task order.
    fn pods(&self, j: u32) -> PyResult<Vec<u32>> {
        view(|s| Ok(s.job(job_id(s, j)?).pods.iter().map(|p| p.0).collect()))?
    }

    /// Job `j`'s Pending pods, in task order.
    fn pending_pods(&self, j: u32) -> PyResult<Vec<u32>> {
        view(|s| Ok(s.pending_pods(job_id(s, j)?).into_iter().map(|p| p.0).collect()))?
    }

    /// Pod `p`.
    fn pod(&self, p: u32) -> PyResult<PyPod> {
        view(|s| {
            let pod = s.pod(pod_id(s, p)?);
            let spec = &s.job(pod.job).spec;
            let (gpus, cpu, memory) = triple(&pod.req);
            Ok(PyPod {
                id: p,
                job: pod.job.0,
                task: spec.tasks[pod.task as usize].name.to_string(),
                index: pod.index,
                gpus,
                cpu,
                memory,
                priority: pod.priority,
                status: format!("{:?}", pod.status),
                node: pod.node.map(|n| n.0),
            })
        })?
    }

    /// Node `n`.
    fn node(&self, n: u32) -> PyResult<PyNode> {
        view(|s| {
            let id = node_id(s, n)?;
            Ok(PyNode {
                id: n,
                name: s.node(id).name.clone(),
                allocatable: triple(&s.node(id).allocatable),
                used: triple(&s.node_state(id).used),
                idle: triple(&s.idle(id)),
                future_idle: triple(&s.future_idle(id)),
            })
        })?
    }

    /// Whether pod `p` fits node `n` now: its idle resources (its future idle ones
    /// with `pipeline=True`), its GPU devices, and its labels, taints and ports —
    /// the check `allocate` makes, and the node filters of the baselines.
    #[pyo3(signature = (p, n, pipeline=false))]
    fn fits(&self, p: u32, n: u32, pipeline: bool) -> PyResult<bool> {
        view(|s| Ok(fits(s, pod_id(s, p)?, node_id(s, n)?, pipeline)))?
    }

    /// The first node, in node order, that pod `p` fits ([`Session.fits`]), or None.
    #[pyo3(signature = (p, pipeline=false))]
    fn first_fit(&self, p: u32, pipeline: bool) -> PyResult<Option<u32>> {
        view(|s| {
            let p = pod_id(s, p)?;
            let req = s.pod(p).req;
            Ok(s.fitting_nodes(&req).find(|&n| fits(s, p, n, pipeline)).map(|n| n.0))
        })?
    }

    /// Every node pod `p` fits, in node order (one call for a policy that scores nodes).
    #[pyo3(signature = (p, pipeline=false))]
    fn fitting_nodes(&self, p: u32, pipeline: bool) -> PyResult<Vec<u32>> {
        view(|s| {
            let p = pod_id(s, p)?;
            let req = s.pod(p).req;
            Ok(s.fitting_nodes(&req).filter(|&n| fits(s, p, n, pipeline)).map(|n| n.0).collect())
        })?
    }

    /// A new statement: operations committed or discarded whole.
    fn statement(&mut self, py: Python<'_>) -> PyResult<Py<PyStatement>> {
        let stmt = Py::new(py, PyStatement { index: self.index, stmt: Some(Statement::default()) })?;
        self.statements.push(stmt.clone_ref(py));
        Ok(stmt)
    }

    /// Sets job `j`'s PodGroup phase (`Inqueue` admits it), with a reason for
    /// decisions.csv.
    #[pyo3(signature = (j, phase, reason=String::new()))]
    fn set_phase(&self, j: u32, phase: &str, reason: String) -> PyResult<()> {
        let phase = match phase {
            "Pending" => PodGroupPhase::Pending,
            "Inqueue" => PodGroupPhase::Inqueue,
            "Running" => PodGroupPhase::Running,
            "Unknown" => PodGroupPhase::Unknown,
            p => {
                return Err(PyValueError::new_err(format!(
                    "phase `{p}`: expected Pending, Inqueue, Running or Unknown"
                )));
            }
        };
        live(|s| {
            let j = job_id(s, j)?;
            s.set_pod_group_phase(j, phase, reason);
            Ok(())
        })?
    }

    /// Names the action the next decisions are made by (decisions.csv's
    /// `action`): allocate (the default), backfill, preempt or reclaim.
    fn set_action(&self, action: &str) -> PyResult<()> {
        let a: &'static str = match action {
            "allocate" => "allocate",
            "backfill" => "backfill",
            "preempt" => "preempt",
            "reclaim" => "reclaim",
            a => {
                return Err(PyValueError::new_err(format!(
                    "action `{a}`: expected allocate, backfill, preempt or reclaim"
                )));
            }
        };
        live(|s| s.set_action(a))
    }

    /// Asks for another session at `at` seconds (a policy of time slices).
    fn wakeup(&self, at: f64) -> PyResult<()> {
        if !at.is_finite() || at < 0.0 {
            return Err(PyValueError::new_err(format!("wakeup at {at}: expected seconds ≥ 0")));
        }
        live(|s| s.request_wakeup(SimTime((at * 1e6).round() as u64)))
    }
}

/// The fit `allocate` (or `pipeline`) checks, and the node filters.
fn fits(s: &Session<'_>, p: PodId, n: NodeId, pipeline: bool) -> bool {
    let req = s.pod(p).req;
    let free = if pipeline { s.future_idle(n) } else { s.idle(n) };
    req.fits_in(&free) && (pipeline || s.gpu_fits(p, n)) && s.fits_filters(p, n)
}

/// A statement of the session: allocate, pipeline and evict, then commit or discard.
#[pyclass(name = "Statement", module = "lahar")]
pub(crate) struct PyStatement {
    index: u64,
    pub(crate) stmt: Option<Statement>,
}

impl PyStatement {
    /// Runs `f` on this statement and the lent session, if both are still open.
    fn open<R>(&mut self, f: impl FnOnce(&mut Session<'_>, &mut Statement) -> R) -> PyResult<R> {
        let index = self.index;
        let stmt =
            self.stmt.as_mut().ok_or_else(|| SessionError::new_err("the statement was committed or discarded"))?;
        live(|s| {
            if s.index() != index {
                return Err(SessionError::new_err("the statement belongs to an earlier session"));
            }
            Ok(f(s, stmt))
        })?
    }

    fn close(&mut self, commit: bool) -> PyResult<()> {
        let index = self.index;
        let Some(stmt) = self.stmt.take() else {
            return Err(SessionError::new_err("the statement was already committed or discarded"));
        };
        live(|s| {
            if s.index() != index {
                return Err(SessionError::new_err("the statement belongs to an earlier session"));
            }
            if commit {
                s.commit(stmt)
            } else {
                s.discard(stmt)
            }
            Ok(())
        })?
    }
}

fn refused(e: lahar_core::session::SessionError) -> PyErr {
    SessionError::new_err(e.to_string())
}

#[pymethods]
impl PyStatement {
    /// Places Pending pod `p` on node `n`'s idle resources.
    fn allocate(&mut self, p: u32, n: u32) -> PyResult<()> {
        self.open(|s, stmt| {
            let (p, n) = (pod_id(s, p)?, node_id(s, n)?);
            s.allocate(stmt, p, n).map_err(refused)
        })?
    }

    /// Places Pending pod `p` on node `n`'s future idle resources.
    fn pipeline(&mut self, p: u32, n: u32) -> PyResult<()> {
        self.open(|s, stmt| {
            let (p, n) = (pod_id(s, p)?, node_id(s, n)?);
            s.pipeline(stmt, p, n).map_err(refused)
        })?
    }

    /// Evicts Running pod `p` (it releases its node after its grace period).
    #[pyo3(signature = (p, reason=String::new()))]
    fn evict(&mut self, p: u32, reason: String) -> PyResult<()> {
        self.open(|s, stmt| {
            let p = pod_id(s, p)?;
            s.evict(stmt, p, reason).map_err(refused)
        })?
    }

    /// Makes the statement's operations decisions.
    fn commit(&mut self) -> PyResult<()> {
        self.close(true)
    }

    /// Undoes the statement's operations.
    fn discard(&mut self) -> PyResult<()> {
        self.close(false)
    }

    /// Operations recorded.
    fn __len__(&self) -> usize {
        self.stmt.as_ref().map_or(0, Statement::len)
    }
}
