//! Scheduling policies written in Python: `lahar.run(..., scheduler=MyPolicy())`.
//!
//! [`PyPolicy`] is a [`Scheduler`] whose `schedule` calls the Python object's
//! `schedule(session)` on the engine's own thread, with the live session lent
//! for the call through a scoped thread-local ([`LIVE`]): every method of the
//! Python `Session` and `Statement` is the Rust Session API acting on the
//! session's real state (the same fit checks, the same journal, the same
//! decisions), with no copy of the cluster and no other thread. Outside the call
//! the lent session is gone, so a `Session` or `Statement` kept past its session
//! (or used from another thread, where the slot is empty) raises instead of
//! touching a later one.

use lahar_core::model::cluster::NodeId;
use lahar_core::model::job::{JobId, PodGroupPhase, PodId, PodStatus};
use lahar_core::model::resource::Resources;
use lahar_core::session::{Scheduler, Session, Statement};
use lahar_core::util::time::SimTime;
use pyo3::exceptions::{PyIndexError, PyRuntimeError, PyValueError};
use pyo3::prelude::*;
use scoped_tls_hkt::{ReborrowMut, scoped_thread_local};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

pyo3::create_exception!(
    _native,
    SessionError,
    PyRuntimeError,
    "A session operation refused: a pod not Pending (allocate, pipeline) or not Running (evict), a node without room, or a Session or Statement used after its session ended."
);

/// The session as the scoped slot holds it: any `Session<'w>` behind one trait.
trait Access {
    fn access(&mut self, f: &mut dyn FnMut(&mut Session<'_>));
}

impl Access for Session<'_> {
    fn access(&mut self, f: &mut dyn FnMut(&mut Session<'_>)) {
        f(self)
    }
}

/// The lent session, for the length of one `schedule` call.
struct Live<'a>(&'a mut (dyn Access + 'a));

impl<'a, 'b> ReborrowMut<'a> for Live<'b> {
    type Result = Live<'a>;
    fn reborrow_mut(&'a mut self) -> Live<'a> {
        Live(&mut *self.0)
    }
}

scoped_thread_local!(static mut LIVE: for<'a> Live<'a>);

/// Runs `f` on the lent session; `SessionError` outside a `schedule` call.
fn live<R>(f: impl FnOnce(&mut Session<'_>) -> R) -> PyResult<R> {
    if !LIVE.is_set() {
        return Err(SessionError::new_err(
            "the session has ended: a Session or Statement lives only during its schedule() call",
        ));
    }
    let mut f = Some(f);
    let mut out = None;
    LIVE.with(|l| {
        l.0.access(&mut |s| {
            if let Some(f) = f.take() {
                out = Some(f(s));
            }
        })
    });
    out.ok_or_else(|| SessionError::new_err("the session was not reachable"))
}

/// A Python object's `schedule(session)`, called once per session.
pub(crate) struct PyPolicy {
    obj: Py<PyAny>,
    name: String,
    /// The first exception the policy raised (the run then stops).
    pub(crate) failed: Arc<Mutex<Option<PyErr>>>,
    /// The run's stop flag, raised with `failed`: ends the run at the next event.
    stop: Arc<AtomicBool>,
}

impl PyPolicy {
    /// The policy `obj`, named by its `name` attribute or else its class's name.
    pub(crate) fn new(py: Python<'_>, obj: Py<PyAny>, stop: Arc<AtomicBool>) -> PyResult<PyPolicy> {
        let b = obj.bind(py);
        if !b.hasattr("schedule")? {
            return Err(pyo3::exceptions::PyTypeError::new_err(
                "scheduler: expected an object with a schedule(self, session) method",
            ));
        }
        let name = match b.getattr("name") {
            Ok(n) if n.is_instance_of::<pyo3::types::PyString>() => n.extract::<String>()?,
            _ => b.get_type().name()?.extract::<String>()?,
        };
        Ok(PyPolicy { obj, name, failed: Arc::default(), stop })
    }
}

impl Scheduler for PyPolicy {
    fn name(&self) -> &str {
        &self.name
    }

    fn schedule(&mut self, ssn: &mut Session<'_>) {
        if self.stop.load(Ordering::Relaxed) {
            return;
        }
        ssn.set_action("allocate");
        let index = ssn.index();
        let result = LIVE.set(Live(ssn), || {
            Python::attach(|py| -> PyResult<()> {
                let session = Bound::new(py, PySession { index, statements: Vec::new() })?;
                let called = self.obj.call_method1(py, "schedule", (&session,));
                // What the policy left open is discarded, as Volcano discards an
                // uncommitted statement.
                for s in std::mem::take(&mut session.borrow_mut().statements) {
                    if let Some(stmt) = s.borrow_mut(py).stmt.take() {
                        live(|ssn| ssn.discard(stmt))?;
                    }
                }
                called.map(drop)
            })
        });
        if let Err(e) = result {
            let mut failed = self.failed.lock().unwrap_or_else(|p| p.into_inner());
            failed.get_or_insert(e);
            self.stop.store(true, Ordering::Relaxed);
        }
    }
}

/// GPUs, CPU cores and memory bytes of `r`.
fn triple(r: &Resources) -> (f64, f64, i64) {
    (r.gpu_milli() as f64 / 1000.0, r.cpu() as f64 / 1000.0, r.memory())
}

fn job_id(ssn: &Session<'_>, j: u32) -> PyResult<JobId> {
    let id = JobId(j);
    if ssn.has_job(id) { Ok(id) } else { Err(PyIndexError::new_err(format!("no job {j} (never made, or ended)"))) }
}

fn pod_id(ssn: &Session<'_>, p: u32) -> PyResult<PodId> {
    let id = PodId(p);
    if ssn.has_pod(id) { Ok(id) } else { Err(PyIndexError::new_err(format!("no pod {p} (never made, or ended)"))) }
}

fn node_id(ssn: &Session<'_>, n: u32) -> PyResult<NodeId> {
    if (n as usize) < ssn.node_count() { Ok(NodeId(n)) } else { Err(PyIndexError::new_err(format!("no node {n}"))) }
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
    /// Free now.
    idle: (f64, f64, i64),
    /// Free once Releasing pods are gone, less what is pipelined.
    future_idle: (f64, f64, i64),
}

/// One scheduling session, lent to `schedule(session)` for the call.
#[pyclass(name = "Session", module = "lahar")]
pub(crate) struct PySession {
    index: u64,
    statements: Vec<Py<PyStatement>>,
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
        live(|s| s.now().micros() as f64 / 1e6)
    }

    /// The session's time, integer microseconds.
    #[getter]
    fn now_us(&self) -> PyResult<u64> {
        live(|s| s.now().micros())
    }

    /// Number of nodes (ids 0..n, in node order).
    #[getter]
    fn node_count(&self) -> PyResult<usize> {
        live(|s| s.node_count())
    }

    /// Idle resources summed over the nodes: (GPUs, CPU cores, memory bytes). A
    /// gang that needs more than this cannot start now.
    #[getter]
    fn idle_total(&self) -> PyResult<(f64, f64, i64)> {
        live(|s| triple(&s.idle_total()))
    }

    /// The queues: (name, weight), in the scenario's order.
    fn queues(&self) -> PyResult<Vec<(String, u32)>> {
        live(|s| s.queues().iter().map(|q| (q.spec.name.clone(), q.spec.weight)).collect())
    }

    /// Jobs with Pending pods, in creation order (submit time, then id).
    fn pending_jobs(&self) -> PyResult<Vec<u32>> {
        live(|s| s.jobs_with_pending().map(|j| j.0).collect())
    }

    /// Job `j`.
    fn job(&self, j: u32) -> PyResult<PyJob> {
        live(|s| {
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
            })
        })?
    }

    /// Job `j`'s Pending pods, in task order.
    fn pending_pods(&self, j: u32) -> PyResult<Vec<u32>> {
        live(|s| Ok(s.pending_pods(job_id(s, j)?).into_iter().map(|p| p.0).collect()))?
    }

    /// Pod `p`.
    fn pod(&self, p: u32) -> PyResult<PyPod> {
        live(|s| {
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
                status: format!("{:?}", pod.status),
                node: pod.node.map(|n| n.0),
            })
        })?
    }

    /// Node `n`.
    fn node(&self, n: u32) -> PyResult<PyNode> {
        live(|s| {
            let id = node_id(s, n)?;
            Ok(PyNode {
                id: n,
                name: s.node(id).name.clone(),
                allocatable: triple(&s.node(id).allocatable),
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
        live(|s| Ok(fits(s, pod_id(s, p)?, node_id(s, n)?, pipeline)))?
    }

    /// The first node, in node order, that pod `p` fits ([`Session.fits`]), or None.
    #[pyo3(signature = (p, pipeline=false))]
    fn first_fit(&self, p: u32, pipeline: bool) -> PyResult<Option<u32>> {
        live(|s| {
            let p = pod_id(s, p)?;
            let req = s.pod(p).req;
            Ok(s.fitting_nodes(&req).find(|&n| fits(s, p, n, pipeline)).map(|n| n.0))
        })?
    }

    /// Every node pod `p` fits, in node order (one call for a policy that scores nodes).
    #[pyo3(signature = (p, pipeline=false))]
    fn fitting_nodes(&self, p: u32, pipeline: bool) -> PyResult<Vec<u32>> {
        live(|s| {
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
    stmt: Option<Statement>,
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
