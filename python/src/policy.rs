//! Scheduling policies written in Python: `lahar.run(..., scheduler=MyPolicy())`.
//!
//! [`PyPolicy`] is a [`Scheduler`] whose `schedule` calls the Python object's
//! `schedule(session)` on the engine's own thread, with the live session lent
//! for the call ([`crate::lend::LIVE`]): every method of the Python `Session` and
//! `Statement` is the Rust Session API acting on the session's real state (the
//! same fit checks, the same journal, the same decisions), with no copy of the
//! cluster and no other thread.

use crate::lend::{LIVE, Live, live};
use crate::plugin::Failure;
use crate::session::PySession;
use lahar_core::session::{Scheduler, Session};
use pyo3::prelude::*;
use std::sync::atomic::Ordering;

/// A Python object's `schedule(session)`, called once per session.
pub(crate) struct PyPolicy {
    obj: Py<PyAny>,
    name: String,
    /// Where its first exception goes (the run then stops).
    failure: Failure,
}

impl PyPolicy {
    /// The policy `obj`, named by its `name` attribute or else its class's name.
    pub(crate) fn new(py: Python<'_>, obj: Py<PyAny>, failure: Failure) -> PyResult<PyPolicy> {
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
        Ok(PyPolicy { obj, name, failure })
    }
}

impl Scheduler for PyPolicy {
    fn name(&self) -> &str {
        &self.name
    }

    fn schedule(&mut self, ssn: &mut Session<'_>) {
        if self.failure.stop.load(Ordering::Relaxed) {
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
            self.failure.record(e);
        }
    }
}
