//! Volcano plugins written in Python: `lahar.register_plugin(name, factory)`
//! registers a class by name ([`lahar_policies::volcano::external`]), and a
//! volcano-scheduler.conf names it in a tier like a built-in plugin, with enable
//! flags and `arguments`. For each run the framework builds it by calling
//! `factory(arguments)`; its methods are the extension points it answers:
//!
//! | method | extension point | answer |
//! |---|---|---|
//! | `job_key(session, job)` | job order (as a sort key, ascending) | a number |
//! | `job_order(session, l, r)` | job order | < 0 `l` first, > 0 `r` first, 0 or None abstains |
//! | `task_order(session, l, r)` | task order | the same, for pods |
//! | `predicate(session, pod, node)` | predicate | True/None passes; False or a reason (str) refuses |
//! | `node_score(session, pod, node)` | node order | a number, summed with the other plugins' |
//! | `node_scores(session, pod, nodes)` | node order, one call per pod | a number per node |
//! | `preemptable(session, preemptor, candidates)` | preempt's victims | the victims among the candidates, or None |
//! | `reclaimable(session, reclaimer, candidates)` | reclaim's victims | the same |
//! | `job_ready(session, job)` | job ready | bool, or None to abstain |
//! | `job_starving(session, job)` | job starving (preemptors) | bool, or None |
//! | `open(session)`, `close(session)` | session open and close | — |
//!
//! The session is lent read-only for each call ([`crate::lend::VIEW`]). An
//! exception (or an answer of the wrong type) stops the run and is raised by
//! `lahar.run`; in a sweep's cell, the cell fails with its text.

use crate::lend::{Look, VIEW};
use crate::session::PySession;
use lahar_core::model::cluster::NodeId;
use lahar_core::model::job::{JobId, PodId};
use lahar_core::session::Session;
use lahar_policies::volcano::args::ArgValue;
use lahar_policies::volcano::external::{self, PluginFailure};
use lahar_policies::volcano::plugin::{Hooks, Plugin, PluginConf};
use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList};
use std::cell::{Cell, RefCell};
use std::cmp::Ordering;
use std::sync::atomic::{AtomicBool, Ordering as AtomicOrdering};
use std::sync::{Arc, Mutex};

/// Where a plugin's exception goes: the error slot and stop flag of the run on
/// this thread (`lahar.run` sets them for its run).
#[derive(Clone)]
pub(crate) struct Failure {
    pub(crate) failed: Arc<Mutex<Option<PyErr>>>,
    pub(crate) stop: Arc<AtomicBool>,
}

impl Failure {
    /// Keeps the first error and stops the run.
    pub(crate) fn record(&self, e: PyErr) {
        self.failed.lock().unwrap_or_else(|p| p.into_inner()).get_or_insert(e);
        self.stop.store(true, AtomicOrdering::Relaxed);
    }

    /// The error recorded, if any.
    pub(crate) fn take(&self) -> Option<PyErr> {
        self.failed.lock().unwrap_or_else(|p| p.into_inner()).take()
    }
}

thread_local! {
    static RUN: RefCell<Option<Failure>> = const { RefCell::new(None) };
}

/// Runs `f` with `failure` as where this thread's Python plugins report.
pub(crate) fn reporting_to<R>(failure: &Failure, f: impl FnOnce() -> R) -> R {
    struct Reset(Option<Failure>);
    impl Drop for Reset {
        fn drop(&mut self) {
            RUN.with(|r| *r.borrow_mut() = self.0.take());
        }
    }
    let _reset = Reset(RUN.with(|r| r.borrow_mut().replace(failure.clone())));
    f()
}

/// Registers `factory` as Volcano plugin `name` (replacing an earlier one of
/// that name); a conf then names it in a tier.
#[pyfunction]
pub(crate) fn register_plugin(py: Python<'_>, name: &str, factory: Py<PyAny>) -> PyResult<()> {
    if !factory.bind(py).is_callable() {
        return Err(PyTypeError::new_err(format!(
            "register_plugin({name:?}, ...): expected a class or a callable taking the conf's arguments"
        )));
    }
    let factory = Arc::new(factory);
    let build = move |pc: &PluginConf| -> Box<dyn Plugin> { Box::new(PyPlugin::build(&factory, pc)) };
    external::register(name, Box::new(build)).map(drop).map_err(PyValueError::new_err)
}

/// Removes plugin `name`; False if it was not registered.
#[pyfunction]
pub(crate) fn unregister_plugin(name: &str) -> bool {
    external::unregister(name)
}

/// The names registered, sorted.
#[pyfunction]
pub(crate) fn registered_plugins() -> Vec<&'static str> {
    external::names()
}

/// Which methods the Python object has.
#[derive(Default)]
struct Methods {
    job_key: bool,
    job_order: bool,
    task_order: bool,
    predicate: bool,
    node_score: bool,
    node_scores: bool,
    preemptable: bool,
    reclaimable: bool,
    job_ready: bool,
    job_starving: bool,
    open: bool,
    close: bool,
}

/// A Python plugin in one run's framework.
pub(crate) struct PyPlugin {
    name: &'static str,
    obj: Option<Py<PyAny>>,
    has: Methods,
    score_by_node: bool,
    /// The session object handed to the hooks, made once per session.
    session: RefCell<Option<(u64, Py<PySession>)>>,
    failure: Option<Failure>,
    /// It raised: it answers nothing more (the run is stopping).
    dead: Cell<bool>,
}

/// An argument as Python sees it.
fn arg_to_py<'py>(py: Python<'py>, v: &ArgValue) -> PyResult<Bound<'py, PyAny>> {
    Ok(match v {
        ArgValue::Bool(b) => b.into_pyobject(py)?.to_owned().into_any(),
        ArgValue::Int(i) => i.into_pyobject(py)?.into_any(),
        ArgValue::Float(f) => f.into_pyobject(py)?.into_any(),
        ArgValue::Str(s) => s.into_pyobject(py)?.into_any(),
        ArgValue::Null => py.None().into_bound(py),
        ArgValue::List(l) => {
            let out = PyList::empty(py);
            for x in l {
                out.append(arg_to_py(py, x)?)?;
            }
            out.into_any()
        }
        ArgValue::Map(m) => {
            let out = PyDict::new(py);
            for (k, x) in m {
                out.set_item(k, arg_to_py(py, x)?)?;
            }
            out.into_any()
        }
    })
}

/// `x` as a finite number.
fn number(x: &Bound<'_, PyAny>, what: &str) -> PyResult<f64> {
    let v: f64 = x.extract().map_err(|_| PyTypeError::new_err(format!("{what}: expected a number")))?;
    if v.is_nan() {
        return Err(PyValueError::new_err(format!("{what}: NaN is not an answer")));
    }
    Ok(v)
}

/// An order answer: a number's sign; None or 0 abstains.
fn order(x: &Bound<'_, PyAny>, what: &str) -> PyResult<Option<Ordering>> {
    if x.is_none() {
        return Ok(None);
    }
    let v = number(x, what)?;
    Ok(if v < 0.0 {
        Some(Ordering::Less)
    } else if v > 0.0 {
        Some(Ordering::Greater)
    } else {
        None
    })
}

/// A yes/no answer, or None to abstain.
fn yes_no(x: &Bound<'_, PyAny>, what: &str) -> PyResult<Option<bool>> {
    if x.is_none() {
        return Ok(None);
    }
    x.extract::<bool>().map(Some).map_err(|_| PyTypeError::new_err(format!("{what}: expected True, False or None")))
}

impl PyPlugin {
    /// Calls `factory(arguments)`; a failure is reported as a hook's is.
    fn build(factory: &Py<PyAny>, pc: &PluginConf) -> PyPlugin {
        let name = pc.external.as_ref().map_or("python", |e| e.name);
        let failure = RUN.with(|r| r.borrow().clone());
        let mut p = PyPlugin {
            name,
            obj: None,
            has: Methods::default(),
            score_by_node: false,
            session: RefCell::default(),
            failure,
            dead: Cell::new(false),
        };
        let made = Python::attach(|py| -> PyResult<(Py<PyAny>, Methods, bool)> {
            let args = PyDict::new(py);
            for (k, v) in &pc.args.0 {
                args.set_item(k, arg_to_py(py, v)?)?;
            }
            let obj = factory.call1(py, (args,))?;
            let b = obj.bind(py);
            let has = |m: &str| -> PyResult<bool> { Ok(b.hasattr(m)? && b.getattr(m)?.is_callable()) };
            let m = Methods {
                job_key: has("job_key")?,
                job_order: has("job_order")?,
                task_order: has("task_order")?,
                predicate: has("predicate")?,
                node_score: has("node_score")?,
                node_scores: has("node_scores")?,
                preemptable: has("preemptable")?,
                reclaimable: has("reclaimable")?,
                job_ready: has("job_ready")?,
                job_starving: has("job_starving")?,
                open: has("open")?,
                close: has("close")?,
            };
            let by_node = match b.getattr("score_by_node") {
                Ok(v) => v.is_truthy()?,
                Err(_) => false,
            };
            Ok((obj, m, by_node))
        });
        match made {
            Ok((obj, has, by_node)) => {
                p.obj = Some(obj);
                p.has = has;
                p.score_by_node = by_node;
            }
            Err(e) => p.fail("its factory", e),
        }
        p
    }

    /// Reports `e` (raised at `hook`) and goes quiet.
    fn fail(&self, hook: &str, e: PyErr) {
        self.dead.set(true);
        match &self.failure {
            Some(f) => f.record(e),
            None => {
                // No run waits for the error on this thread (a sweep's cell):
                // end the cell with it.
                let text = Python::attach(|py| {
                    let tb = e.traceback(py).and_then(|t| t.format().ok()).unwrap_or_default();
                    format!("{tb}{e}")
                });
                std::panic::panic_any(PluginFailure(format!("Python plugin `{}` raised in {hook}: {text}", self.name)));
            }
        }
    }

    /// Calls `f` with the plugin object and the session, lent read-only.
    fn call<R>(
        &self,
        ssn: &Session<'_>,
        hook: &str,
        f: impl FnOnce(Python<'_>, &Bound<'_, PyAny>, &Py<PySession>) -> PyResult<R>,
    ) -> Option<R> {
        if self.dead.get() {
            return None;
        }
        let obj = self.obj.as_ref()?;
        let look: &dyn Look = ssn;
        let index = ssn.index();
        let r = VIEW.set(look, || {
            Python::attach(|py| {
                let session = {
                    let mut slot = self.session.borrow_mut();
                    match slot.as_ref() {
                        Some((i, s)) if *i == index => s.clone_ref(py),
                        _ => {
                            let s = Py::new(py, PySession { index, statements: Vec::new() })?;
                            *slot = Some((index, s.clone_ref(py)));
                            s
                        }
                    }
                };
                f(py, obj.bind(py), &session)
            })
        });
        match r {
            Ok(v) => Some(v),
            Err(e) => {
                self.fail(hook, e);
                None
            }
        }
    }

    /// The victims `method` chose among `cands`, in the candidates' order.
    fn victims(&self, ssn: &Session<'_>, method: &'static str, who: PodId, cands: &[PodId]) -> Option<Vec<PodId>> {
        self.call(ssn, method, |_, obj, s| {
            let list: Vec<u32> = cands.iter().map(|p| p.0).collect();
            let got = obj.call_method1(method, (s, who.0, list))?;
            if got.is_none() {
                return Ok(None);
            }
            let chosen: Vec<u32> = got.extract().map_err(|_| {
                PyTypeError::new_err(format!("{method}: expected a list of pod ids (among the candidates) or None"))
            })?;
            let mut set: Vec<u32> = chosen.clone();
            set.sort_unstable();
            if let Some(&bad) = chosen.iter().find(|p| !cands.iter().any(|c| c.0 == **p)) {
                return Err(PyValueError::new_err(format!("{method}: pod {bad} is not one of the candidates")));
            }
            Ok(Some(cands.iter().copied().filter(|c| set.binary_search(&c.0).is_ok()).collect()))
        })?
    }

    fn key(&self, ssn: &Session<'_>, j: JobId) -> Option<f64> {
        self.call(ssn, "job_key", |py, obj, s| {
            number(&obj.call_method1(pyo3::intern!(py, "job_key"), (s, j.0))?, "job_key")
        })
    }
}

impl Plugin for PyPlugin {
    fn name(&self) -> &'static str {
        self.name
    }

    fn hooks(&self) -> Hooks {
        let h = &self.has;
        Hooks::NONE
            .and(Hooks::when(h.job_key || h.job_order, Hooks::JOB_ORDER))
            .and(Hooks::when(h.predicate, Hooks::PREDICATE))
            .and(Hooks::when(h.node_score || h.node_scores, Hooks::NODE_SCORE))
            .and(Hooks::when(h.preemptable, Hooks::PREEMPTABLE))
            .and(Hooks::when(h.reclaimable, Hooks::RECLAIMABLE))
    }

    fn open(&mut self, ssn: &mut Session<'_>) {
        if self.has.open {
            self.call(ssn, "open", |py, obj, s| obj.call_method1(pyo3::intern!(py, "open"), (s,)).map(drop));
        }
    }

    fn close(&mut self, ssn: &Session<'_>) {
        if self.has.close {
            self.call(ssn, "close", |py, obj, s| obj.call_method1(pyo3::intern!(py, "close"), (s,)).map(drop));
        }
        *self.session.borrow_mut() = None;
    }

    fn job_order_key(&self, ssn: &Session<'_>, j: JobId) -> Option<f64> {
        if self.has.job_key { self.key(ssn, j) } else { None }
    }

    fn job_order(&self, ssn: &Session<'_>, l: JobId, r: JobId) -> Option<Ordering> {
        if self.has.job_key {
            let (a, b) = (self.key(ssn, l)?, self.key(ssn, r)?);
            return a.partial_cmp(&b);
        }
        if !self.has.job_order {
            return None;
        }
        self.call(ssn, "job_order", |py, obj, s| {
            order(&obj.call_method1(pyo3::intern!(py, "job_order"), (s, l.0, r.0))?, "job_order")
        })?
    }

    fn task_order(&self, ssn: &Session<'_>, l: PodId, r: PodId) -> Option<Ordering> {
        if !self.has.task_order {
            return None;
        }
        self.call(ssn, "task_order", |py, obj, s| {
            order(&obj.call_method1(pyo3::intern!(py, "task_order"), (s, l.0, r.0))?, "task_order")
        })?
    }

    fn predicate(&self, ssn: &Session<'_>, pod: PodId, node: NodeId) -> Option<Result<(), String>> {
        if !self.has.predicate {
            return None;
        }
        let name = self.name;
        self.call(ssn, "predicate", |py, obj, s| {
            let got = obj.call_method1(pyo3::intern!(py, "predicate"), (s, pod.0, node.0))?;
            if got.is_none() {
                return Ok(Ok(()));
            }
            if let Ok(reason) = got.extract::<String>() {
                return Ok(Err(reason));
            }
            match got.extract::<bool>() {
                Ok(true) => Ok(Ok(())),
                Ok(false) => Ok(Err(format!("refused by {name}"))),
                Err(_) => Err(PyTypeError::new_err("predicate: expected True, False, a reason (str) or None")),
            }
        })
    }

    fn node_score(&self, ssn: &Session<'_>, pod: PodId, node: NodeId) -> Option<f64> {
        if self.has.node_score {
            return self.call(ssn, "node_score", |py, obj, s| {
                number(&obj.call_method1(pyo3::intern!(py, "node_score"), (s, pod.0, node.0))?, "node_score")
            });
        }
        if self.has.node_scores {
            let mut sum = [0.0];
            self.add_node_scores(ssn, pod, &[node], &mut sum);
            return (!self.dead.get()).then_some(sum[0]);
        }
        None
    }

    fn add_node_scores(&self, ssn: &Session<'_>, pod: PodId, nodes: &[NodeId], sums: &mut [f64]) {
        if !self.has.node_scores {
            for (sum, &n) in sums.iter_mut().zip(nodes) {
                if let Some(s) = self.node_score(ssn, pod, n) {
                    *sum += s;
                }
            }
            return;
        }
        let got = self.call(ssn, "node_scores", |py, obj, s| {
            let list: Vec<u32> = nodes.iter().map(|n| n.0).collect();
            let got = obj.call_method1(pyo3::intern!(py, "node_scores"), (s, pod.0, list))?;
            let mut out = Vec::with_capacity(nodes.len());
            for x in got.try_iter().map_err(|_| PyTypeError::new_err("node_scores: expected a number per node"))? {
                out.push(number(&x?, "node_scores")?);
            }
            if out.len() != nodes.len() {
                return Err(PyValueError::new_err(format!(
                    "node_scores: {} numbers for {} nodes",
                    out.len(),
                    nodes.len()
                )));
            }
            Ok(out)
        });
        if let Some(scores) = got {
            for (sum, s) in sums.iter_mut().zip(scores) {
                *sum += s;
            }
        }
    }

    fn score_by_node(&self, _: &Session<'_>, _: PodId) -> bool {
        self.score_by_node
    }

    fn preemptable(&self, ssn: &Session<'_>, preemptor: PodId, candidates: &[PodId]) -> Option<Vec<PodId>> {
        if !self.has.preemptable {
            return None;
        }
        self.victims(ssn, "preemptable", preemptor, candidates)
    }

    fn reclaimable(&self, ssn: &Session<'_>, reclaimer: PodId, candidates: &[PodId]) -> Option<Vec<PodId>> {
        if !self.has.reclaimable {
            return None;
        }
        self.victims(ssn, "reclaimable", reclaimer, candidates)
    }

    fn job_ready(&self, ssn: &Session<'_>, job: JobId) -> Option<bool> {
        if !self.has.job_ready {
            return None;
        }
        self.call(ssn, "job_ready", |py, obj, s| {
            yes_no(&obj.call_method1(pyo3::intern!(py, "job_ready"), (s, job.0))?, "job_ready")
        })?
    }

    fn job_starving(&self, ssn: &Session<'_>, job: JobId) -> Option<bool> {
        if !self.has.job_starving {
            return None;
        }
        self.call(ssn, "job_starving", |py, obj, s| {
            yes_no(&obj.call_method1(pyo3::intern!(py, "job_starving"), (s, job.0))?, "job_starving")
        })?
    }
}
