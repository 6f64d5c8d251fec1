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
    strict: bool = False,
    out: Optional[str] = None,
    outputs: Optional[str] = None,
    force: bool = False,
    scheduler: Any = None,
    stop: Optional["Stop"] = None,
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
    strict: bool = False,
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
    stop: Optional["Stop"] = None,
) -> Dict[str, Any]: ...
def columns() -> Dict[str, List[Tuple[str, str, bool]]]: ...
def version() -> str: ...
def register_plugin(name: str, factory: Any) -> None: ...
def unregister_plugin(name: str) -> bool: ...
def registered_plugins() -> List[str]: ...

class Stop:
    """A run's stop flag: set() ends the run at its next event."""

    def __init__(self) -> None: ...
    def set(self) -> None: ...
    def is_set(self) -> bool: ...

class SessionError(RuntimeError):
    """A session operation refused, or a Session or Statement used after its session."""

class Job:
    """A job as the session sees it when asked."""

    id: int
    name: str
    queue: str
    priority: int
    submit: float
    min_available: int
    ready: int
    pending: int
    phase: str
    gpus: float
    #: Pods Running.
    running: int
    #: Attained service, GPU-seconds (GPUs × ideal run time executed, plus GPU time lost when stopped).
    attained: float

class Pod:
    """A pod."""

    id: int
    job: int
    task: str
    index: int
    gpus: float
    cpu: float
    memory: int
    priority: int
    status: str
    node: Optional[int]

class Node:
    """A node and its resources now: (GPUs, CPU cores, memory bytes)."""

    id: int
    name: str
    allocatable: Tuple[float, float, int]
    #: Held by the pods placed on it (what binpack and nodeorder score by).
    used: Tuple[float, float, int]
    idle: Tuple[float, float, int]
    future_idle: Tuple[float, float, int]

class Statement:
    """Operations committed or discarded whole."""

    def allocate(self, p: int, n: int) -> None: ...
    def pipeline(self, p: int, n: int) -> None: ...
    def evict(self, p: int, reason: str = "") -> None: ...
    def commit(self) -> None: ...
    def discard(self) -> None: ...
    def __len__(self) -> int: ...

class Session:
    """One scheduling session, lent to a policy's schedule(session) or a plugin's hook for the call.

    A plugin's session is read-only: statement operations, set_phase, set_action
    and wakeup raise SessionError there."""

    @property
    def index(self) -> int: ...
    @property
    def now(self) -> float: ...
    @property
    def now_us(self) -> int: ...
    @property
    def node_count(self) -> int: ...
    @property
    def idle_total(self) -> Tuple[float, float, int]: ...
    def queues(self) -> List[Tuple[str, int]]: ...
    def pending_jobs(self) -> List[int]: ...
    def jobs(self) -> List[int]: ...
    def running_jobs(self) -> List[int]: ...
    def pods(self, j: int) -> List[int]: ...
    def job(self, j: int) -> Job: ...
    def pending_pods(self, j: int) -> List[int]: ...
    def pod(self, p: int) -> Pod: ...
    def node(self, n: int) -> Node: ...
    def fits(self, p: int, n: int, pipeline: bool = False) -> bool: ...
    def first_fit(self, p: int, pipeline: bool = False) -> Optional[int]: ...
    def fitting_nodes(self, p: int, pipeline: bool = False) -> List[int]: ...
    def statement(self) -> Statement: ...
    def set_phase(self, j: int, phase: str, reason: str = "") -> None: ...
    def set_action(self, action: str) -> None: ...
    def wakeup(self, at: float) -> None: ...
