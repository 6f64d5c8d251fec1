//! `lahar._native`: the Rust side of the `lahar` Python package. It loads
//! scenarios and sweeps through the same functions as the CLI (so the errors are
//! the CLI's), runs them without the GIL, and hands back a run's files as bytes —
//! exactly what the CLI would write — for the Python side to read as DataFrames.
//! The Python API (`lahar.run`, `lahar.validate`, `lahar.sweep`) lives in
//! python/lahar/; docs/python.md documents it.

use lahar::input::{Load, Source};
use lahar::scenario::{Diagnostic, ScenarioError, Warning};
use pyo3::exceptions::{PyRuntimeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict, PyList};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

mod lend;
mod plugin;
mod policy;
mod session;

/// A run's stop flag, raised from Python (`lahar.run` raises it on Ctrl-C): the
/// run ends at its next event.
#[pyclass(module = "lahar._native", frozen)]
struct Stop(Arc<AtomicBool>);

#[pymethods]
impl Stop {
    #[new]
    fn new() -> Stop {
        Stop(Arc::default())
    }

    /// Ends the run at its next event.
    fn set(&self) {
        self.0.store(true, Ordering::Relaxed);
    }

    /// Whether it was raised.
    fn is_set(&self) -> bool {
        self.0.load(Ordering::Relaxed)
    }
}

pyo3::create_exception!(
    _native,
    InputError,
    PyValueError,
    "Bad input: the same errors `lahar validate` prints, each with its file, line, column and field path."
);
pyo3::create_exception!(
    _native,
    RunError,
    PyRuntimeError,
    "A run or sweep that failed after its input was accepted (its outputs could not be written)."
);

/// Why a call failed, as plain data (made without the GIL).
enum Failed {
    /// Bad input: every diagnostic.
    Input(Vec<Diagnostic>),
    /// The work failed.
    Run(String),
}

impl From<ScenarioError> for Failed {
    fn from(e: ScenarioError) -> Failed {
        Failed::Input(e.errors)
    }
}

impl From<lahar::error::RunError> for Failed {
    fn from(e: lahar::error::RunError) -> Failed {
        use lahar::error::RunError as E;
        match e {
            E::Input(e) => Failed::Input(e.errors),
            e @ (E::Source(_) | E::Output(_)) => Failed::Input(vec![whole(e.to_string())]),
            e => Failed::Run(e.to_string()),
        }
    }
}

/// The `outputs=` argument (every row file without it).
fn outputs_arg(list: Option<&str>) -> Result<lahar_reports::Outputs, Failed> {
    match list {
        Some(list) => lahar_reports::Outputs::parse(list)
            .map_err(|m| Failed::Input(vec![Diagnostic { path: "outputs".into(), ..whole(m) }])),
        None => Ok(lahar_reports::Outputs::ALL),
    }
}

/// A diagnostic of no file and no place.
fn whole(message: String) -> Diagnostic {
    Diagnostic { file: String::new(), at: None, path: String::new(), message }
}

impl Failed {
    /// The Python exception: `InputError` carries `errors` (dicts of `file`,
    /// `line`, `column`, `path`, `message`) and the first one's fields as
    /// attributes; its text is what the CLI prints.
    fn raise(self, py: Python<'_>) -> PyErr {
        match self {
            Failed::Run(m) => RunError::new_err(m),
            Failed::Input(errors) => {
                let text = ScenarioError { errors: errors.clone() }.to_string();
                let err = InputError::new_err(text);
                if let Err(e) = describe(py, &err, &errors) {
                    return e;
                }
                err
            }
        }
    }
}

/// Sets `errors` and the first error's fields on `err`.
fn describe(py: Python<'_>, err: &PyErr, errors: &[Diagnostic]) -> PyResult<()> {
    let value = err.value(py);
    let list = PyList::empty(py);
    for d in errors {
        list.append(diagnostic(py, d)?)?;
    }
    value.setattr("errors", &list)?;
    let first = errors.first().cloned().unwrap_or_else(|| whole(String::new()));
    value.setattr("file", &first.file)?;
    value.setattr("line", first.at.map(|a| a.0))?;
    value.setattr("column", first.at.map(|a| a.1))?;
    value.setattr("path", &first.path)?;
    value.setattr("message", first_line(&first.message))?;
    Ok(())
}

fn diagnostic<'py>(py: Python<'py>, d: &Diagnostic) -> PyResult<Bound<'py, PyDict>> {
    let out = PyDict::new(py);
    out.set_item("file", &d.file)?;
    out.set_item("line", d.at.map(|a| a.0))?;
    out.set_item("column", d.at.map(|a| a.1))?;
    out.set_item("path", &d.path)?;
    out.set_item("message", first_line(&d.message))?;
    Ok(out)
}

/// A message without the source lines under it (the exception's text keeps them).
fn first_line(message: &str) -> &str {
    message.lines().next().unwrap_or_default()
}

/// A warning as summary.json lists it.
fn warning<'py>(py: Python<'py>, w: &Warning) -> PyResult<Bound<'py, PyDict>> {
    let out = PyDict::new(py);
    out.set_item("kind", w.kind)?;
    out.set_item("count", w.count)?;
    out.set_item("location", w.location())?;
    out.set_item("file", &w.file)?;
    out.set_item("line", w.at.map(|a| a.0))?;
    out.set_item("column", w.at.map(|a| a.1))?;
    out.set_item("path", &w.path)?;
    out.set_item("message", w.text())?;
    Ok(out)
}

/// The input, as the Python side describes it: `kind` is `default`, `file`,
/// `text` or `snapshot`; `value` the path or the text; `base` the folder a
/// text's relative paths resolve against.
struct Input {
    kind: String,
    value: String,
    base: PathBuf,
    seed: Option<u64>,
    set: Vec<String>,
    conf: Option<PathBuf>,
    sessions: Option<u64>,
}

impl Input {
    /// The scenario; with `strict`, its warnings are errors (`--strict`).
    fn load_strict(&self, strict: bool) -> Result<lahar::scenario::Scenario, Failed> {
        let s = self.load()?;
        if strict && !s.warnings.is_empty() {
            return Err(Failed::Input(s.warnings.iter().map(Warning::as_error).collect()));
        }
        Ok(s)
    }

    fn load(&self) -> Result<lahar::scenario::Scenario, Failed> {
        let path = Path::new(&self.value);
        let source = match self.kind.as_str() {
            "default" => Source::Default,
            "file" => Source::File(path),
            "snapshot" => Source::Snapshot(path),
            "text" => Source::Text { text: &self.value, file: "<string>", base: &self.base },
            k => return Err(Failed::Run(format!("unknown input kind `{k}` (a bug of the lahar package)"))),
        };
        let l = Load { source, conf: self.conf.as_deref(), sessions: self.sessions, set: &self.set, seed: self.seed };
        Ok(lahar::input::load(&l)?)
    }
}

/// What a run hands back, made without the GIL.
struct Ran {
    summary_json: Option<String>,
    tables: Vec<(&'static str, Vec<u8>)>,
    warnings: Vec<Warning>,
    out_dir: Option<PathBuf>,
}

/// Runs a scenario. Without `out`, nothing is written: the row files come back
/// as bytes in `tables`, summary.json as `summary_json`. With `out`, the files
/// are written there as `lahar run --out` writes them.
#[pyfunction]
#[pyo3(signature = (kind, value, base, *, seed=None, set=Vec::new(), conf=None, sessions=None, strict=false, out=None, outputs=None, force=false, scheduler=None, stop=None))]
#[allow(clippy::too_many_arguments)]
fn run<'py>(
    py: Python<'py>,
    kind: String,
    value: String,
    base: PathBuf,
    seed: Option<u64>,
    set: Vec<String>,
    conf: Option<PathBuf>,
    sessions: Option<u64>,
    strict: bool,
    out: Option<PathBuf>,
    outputs: Option<String>,
    force: bool,
    scheduler: Option<Py<PyAny>>,
    stop: Option<PyRef<'py, Stop>>,
) -> PyResult<Bound<'py, PyDict>> {
    let input = Input { kind, value, base, seed, set, conf, sessions };
    let stop = stop.map_or_else(Default::default, |s| Arc::clone(&s.0));
    // Where the Python policy's or plugins' first exception goes.
    let failure = plugin::Failure { failed: Arc::default(), stop: Arc::clone(&stop) };
    let policy = scheduler.map(|obj| policy::PyPolicy::new(py, obj, failure.clone())).transpose()?;
    let reporting = failure.clone();
    let ran = py.detach(move || -> Result<Ran, Failed> {
        let outputs = outputs_arg(outputs.as_deref())?;
        let s = input.load_strict(strict)?;
        if s.placement.is_some() {
            let why =
                "a placement scenario (spec.placement) is run with `lahar run` (placements.csv, fragmentation.csv)";
            return Err(Failed::Input(vec![Diagnostic { path: "spec.placement".into(), ..whole(why.into()) }]));
        }
        let mut warnings = s.warnings.clone();
        let in_memory = out.is_none();
        let opts =
            lahar::RunOptions { out_dir: out, in_memory, outputs, force, stop: Some(stop), ..Default::default() };
        let policy = policy.map(|p| Box::new(p) as Box<dyn lahar_core::session::Scheduler>);
        let r = plugin::reporting_to(&reporting, || lahar::run_policy(s, &opts, policy))?;
        warnings.extend(r.run_warnings.iter().cloned());
        Ok(Ran {
            summary_json: r.summary_json.clone(),
            tables: r.tables.files.clone(),
            warnings,
            out_dir: (!in_memory).then(|| r.out_dir.clone()),
        })
    });
    // An exception of a Python policy or plugin is the call's (the run stopped at it).
    if let Some(e) = failure.take() {
        return Err(e);
    }
    let ran = ran.map_err(|f| f.raise(py))?;
    let out = PyDict::new(py);
    out.set_item("summary_json", ran.summary_json)?;
    let tables = PyDict::new(py);
    for (name, bytes) in &ran.tables {
        tables.set_item(*name, PyBytes::new(py, bytes))?;
    }
    out.set_item("tables", tables)?;
    let warnings = PyList::empty(py);
    for w in &ran.warnings {
        warnings.append(warning(py, w)?)?;
    }
    out.set_item("warnings", warnings)?;
    out.set_item("out_dir", ran.out_dir)?;
    Ok(out)
}

/// Loads and checks a scenario as `lahar validate` does: its counts and
/// warnings, or `InputError` (with `strict`, for the warnings too).
#[pyfunction]
#[pyo3(signature = (kind, value, base, *, seed=None, set=Vec::new(), conf=None, sessions=None, strict=false))]
#[allow(clippy::too_many_arguments)]
fn validate<'py>(
    py: Python<'py>,
    kind: String,
    value: String,
    base: PathBuf,
    seed: Option<u64>,
    set: Vec<String>,
    conf: Option<PathBuf>,
    sessions: Option<u64>,
    strict: bool,
) -> PyResult<Bound<'py, PyDict>> {
    let input = Input { kind, value, base, seed, set, conf, sessions };
    let checked = py.detach(move || -> Result<_, Failed> {
        let s = input.load_strict(strict)?;
        let jobs = if s.placement.is_some() { 0 } else { s.workload.count };
        Ok((s.name.clone(), s.cluster.len(), s.queues.len(), jobs, s.placement.is_some(), s.warnings.clone()))
    });
    let (name, nodes, queues, jobs, placement, ws) = checked.map_err(|f| f.raise(py))?;
    let out = PyDict::new(py);
    out.set_item("scenario", name)?;
    out.set_item("nodes", nodes)?;
    out.set_item("queues", queues)?;
    out.set_item("jobs", jobs)?;
    out.set_item("placement", placement)?;
    let warnings = PyList::empty(py);
    for w in &ws {
        warnings.append(warning(py, w)?)?;
    }
    out.set_item("warnings", warnings)?;
    Ok(out)
}

/// Runs a sweep into `out` as `lahar sweep` does; returns its cell counts and
/// the cells that failed. `kind` is `file` or `text`.
#[pyfunction]
#[pyo3(signature = (kind, value, base, out, *, jobs=None, resume=false, outputs=None, stop=None))]
#[allow(clippy::too_many_arguments)]
fn sweep<'py>(
    py: Python<'py>,
    kind: String,
    value: String,
    base: PathBuf,
    out: PathBuf,
    jobs: Option<usize>,
    resume: bool,
    outputs: Option<String>,
    stop: Option<PyRef<'py, Stop>>,
) -> PyResult<Bound<'py, PyDict>> {
    let stop = stop.map_or_else(Default::default, |s| Arc::clone(&s.0));
    let done = py.detach(move || -> Result<_, Failed> {
        let outputs = outputs_arg(outputs.as_deref())?;
        let sweep = match kind.as_str() {
            "file" => lahar::sweep::load(Path::new(&value))?,
            _ => lahar::sweep::load_str(&value, "<string>", &base)?,
        };
        let opts = lahar::sweep::ExecOptions {
            out,
            jobs,
            resume,
            shard: None,
            progress: false,
            plot_style: Default::default(),
            outputs,
            stop: Some(stop),
        };
        let (_, written) = lahar::sweep::run(&sweep, &opts).map_err(|e| match e {
            e @ lahar::sweep::ExecError::Mismatch(_) => Failed::Input(vec![whole(e.to_string())]),
            e => Failed::Run(e.to_string()),
        })?;
        let w =
            written.ok_or_else(|| Failed::Run("the sweep was interrupted before its tables were written".into()))?;
        Ok((w.cells, w.ok, w.failed, w.missing))
    });
    let (cells, ok, failed, missing) = done.map_err(|f| f.raise(py))?;
    let out = PyDict::new(py);
    out.set_item("cells", cells)?;
    out.set_item("ok", ok)?;
    out.set_item("failed", failed)?;
    out.set_item("missing", missing)?;
    Ok(out)
}

/// The columns of every row file: `{file: [(name, unit, text)]}`.
#[pyfunction]
fn columns(py: Python<'_>) -> PyResult<Bound<'_, PyDict>> {
    let out = PyDict::new(py);
    for (file, cols) in lahar_reports::schema::FILES {
        let list: Vec<(&str, &str, bool)> = cols.iter().map(|c| (c.name, c.unit, c.text)).collect();
        out.set_item(file, list)?;
    }
    Ok(out)
}

/// lahar's version.
#[pyfunction]
fn version() -> &'static str {
    lahar::VERSION
}

/// The extension module.
#[pymodule]
fn _native(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(run, m)?)?;
    m.add_function(wrap_pyfunction!(validate, m)?)?;
    m.add_function(wrap_pyfunction!(sweep, m)?)?;
    m.add_function(wrap_pyfunction!(columns, m)?)?;
    m.add_function(wrap_pyfunction!(version, m)?)?;
    m.add_function(wrap_pyfunction!(plugin::register_plugin, m)?)?;
    m.add_function(wrap_pyfunction!(plugin::unregister_plugin, m)?)?;
    m.add_function(wrap_pyfunction!(plugin::registered_plugins, m)?)?;
    m.add("InputError", m.py().get_type::<InputError>())?;
    m.add("RunError", m.py().get_type::<RunError>())?;
    m.add("SessionError", m.py().get_type::<lend::SessionError>())?;
    m.add_class::<Stop>()?;
    m.add_class::<session::PySession>()?;
    m.add_class::<session::PyStatement>()?;
    m.add_class::<session::PyJob>()?;
    m.add_class::<session::PyPod>()?;
    m.add_class::<session::PyNode>()?;
    Ok(())
}
