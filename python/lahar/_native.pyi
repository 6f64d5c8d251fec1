"""Type stubs of the Rust extension module lahar._native (python/src/lib.rs)."""

from typing import Any, Dict, List, Optional, Tuple

class InputError(ValueError):
    """Bad input: the errors ``lahar validate`` prints."""

    #: Every error: dicts of file, line, column, path, message.
    errors: List[Dict[str, Any]]
    #: The first error's file (``<string>`` for YAML text, ``<command line>`` for an override).
    file: str
    #: Its 1-based line, when known.
    line: Optional[int]
    #: Its 1-based column, when known.
    column: Optional[int]
    #: Its field path (``spec.cluster.nodeGroups[0].count``), or empty.
    path: str
    #: What is wrong and what was expected.
    message: str

class RunError(RuntimeError):
    """A run or sweep that failed after its input was accepted."""

def run(
    kind: str,
    value: str,
    base: str,
    *,
    seed: Optional[int] = None,
    set: List[str] = ...,
    conf: Optional[str] = None,
    sessions: Optional[int] = None,
    out: Optional[str] = None,
    outputs: Optional[str] = None,
    force: bool = False,
) -> Dict[str, Any]: ...
def validate(
    kind: str,
    value: str,
    base: str,
    *,
    seed: Optional[int] = None,
    set: List[str] = ...,
    conf: Optional[str] = None,
    sessions: Optional[int] = None,
) -> Dict[str, Any]: ...
def sweep(
    kind: str,
    value: str,
    base: str,
    out: str,
    *,
    jobs: Optional[int] = None,
    resume: bool = False,
    outputs: Optional[str] = None,
) -> Dict[str, Any]: ...
def columns() -> Dict[str, List[Tuple[str, str, bool]]]: ...
def version() -> str: ...
