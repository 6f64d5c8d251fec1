//! The live session lent to Python for the length of one call, through scoped
//! thread-locals: [`LIVE`] for a policy's `schedule(session)` (the session can be
//! changed), [`VIEW`] for a plugin's hook (read-only, as Volcano's plugins see
//! the session). Outside the call the slot is empty, so a `Session` or
//! `Statement` kept past its call (or used from another thread) raises instead of
//! touching a later session.

use lahar_core::session::Session;
use pyo3::exceptions::PyRuntimeError;
use pyo3::prelude::*;
use scoped_tls_hkt::{ReborrowMut, scoped_thread_local};

pyo3::create_exception!(
    _native,
    SessionError,
    PyRuntimeError,
    "A session operation refused: a pod not Pending (allocate, pipeline) or not Running (evict), a node without room, a change asked of a plugin's read-only session, or a Session or Statement used after its call ended."
);

/// The session as the mutable slot holds it: any `Session<'w>` behind one trait.
pub(crate) trait Access {
    fn access(&mut self, f: &mut dyn FnMut(&mut Session<'_>));
}

impl Access for Session<'_> {
    fn access(&mut self, f: &mut dyn FnMut(&mut Session<'_>)) {
        f(self)
    }
}

/// The session as the read-only slot holds it.
pub(crate) trait Look {
    fn look(&self, f: &mut dyn FnMut(&Session<'_>));
}

impl Look for Session<'_> {
    fn look(&self, f: &mut dyn FnMut(&Session<'_>)) {
        f(self)
    }
}

/// The lent session, for the length of one `schedule` call.
pub(crate) struct Live<'a>(pub(crate) &'a mut (dyn Access + 'a));

impl<'a, 'b> ReborrowMut<'a> for Live<'b> {
    type Result = Live<'a>;
    fn reborrow_mut(&'a mut self) -> Live<'a> {
        Live(&mut *self.0)
    }
}

scoped_thread_local!(pub(crate) static mut LIVE: for<'a> Live<'a>);
scoped_thread_local!(pub(crate) static VIEW: for<'a> &'a dyn Look);

const ENDED: &str = "the session has ended: a Session or Statement lives only during the call it was given to";

/// Runs `f` on the lent session, which a policy may change; `SessionError`
/// outside a `schedule` call, and in a plugin's hook (its session is read-only).
pub(crate) fn live<R>(f: impl FnOnce(&mut Session<'_>) -> R) -> PyResult<R> {
    if !LIVE.is_set() {
        if VIEW.is_set() {
            return Err(SessionError::new_err(
                "a plugin's session is read-only: plugins order, filter, score and vote; allocate, pipeline, evict, set_phase, set_action and wakeup belong to policies",
            ));
        }
        return Err(SessionError::new_err(ENDED));
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

/// Runs `f` on the lent session, read-only: a policy's or a plugin's.
pub(crate) fn view<R>(f: impl FnOnce(&Session<'_>) -> R) -> PyResult<R> {
    if LIVE.is_set() {
        return live(|s| f(s));
    }
    if !VIEW.is_set() {
        return Err(SessionError::new_err(ENDED));
    }
    let mut f = Some(f);
    let mut out = None;
    VIEW.with(|v| {
        v.look(&mut |s| {
            if let Some(f) = f.take() {
                out = Some(f(s));
            }
        })
    });
    out.ok_or_else(|| SessionError::new_err("the session was not reachable"))
}
