"""lahar from Python: run GPU-cluster scheduling scenarios and read the results as DataFrames.

    import lahar
    r = lahar.run()                      # the embedded default scenario
    r.summary["metrics"]["jct_s"]["mean"]
    r.jobs.groupby("queue").wait_s.mean()

The simulator is lahar's Rust core: the same scenarios, the same errors and the
same outputs, byte for byte, as the ``lahar`` command. docs/python.md documents
the API.
"""

from ._api import TABLES, LaharWarning, Run, Validated, run, sweep, validate
from ._native import InputError, Job, Node, Pod, RunError, Session, SessionError, Statement
from ._native import version as _version
from ._plugins import register_plugin, registered_plugins, unregister_plugin

__version__: str = _version()

__all__ = [
    "TABLES",
    "InputError",
    "Job",
    "LaharWarning",
    "Node",
    "Pod",
    "Run",
    "RunError",
    "Session",
    "SessionError",
    "Statement",
    "Validated",
    "register_plugin",
    "registered_plugins",
    "run",
    "sweep",
    "unregister_plugin",
    "validate",
]
