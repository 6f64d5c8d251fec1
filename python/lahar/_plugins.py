"""Volcano plugins written in Python, registered by name and named in a conf.

    @lahar.register_plugin("gpu-pack")
    class GpuPack:
        score_by_node = True            # the score reads the pod and the node only

        def __init__(self, arguments):  # the conf entry's `arguments`, as a dict
            self.weight = arguments.get("weight", 1)

        def node_score(self, session, pod, node):
            n, p = session.node(node), session.pod(pod)
            return self.weight * (n.used[0] + p.gpus) / max(n.allocatable[0], 1)

and in volcano-scheduler.conf:  ``- name: gpu-pack`` with ``arguments: {weight: 2}``.
"""

import inspect
from typing import Any, Callable, Dict, List, Optional, TypeVar

from . import _native

F = TypeVar("F", bound=Callable[..., Any])


def register_plugin(name: str, factory: Optional[F] = None):
    """Registers ``factory`` as the Volcano plugin ``name``.

    ``factory(arguments)`` is called once per run for each conf entry naming the
    plugin, with that entry's ``arguments`` as a dict (as written: the plugin
    checks them), and returns the plugin object: a class is the usual factory.
    The object's methods are the extension points it answers (docs/python.md
    lists them); its ``score_by_node`` attribute (default False) promises that
    its node score reads only the pod's request, the node's fixed facts and the
    node's ``used``, which lets lahar reuse a score while the node is unchanged.

    A registration replaces an earlier one of the same name and lasts for the
    process; the names of built-in plugins are refused. Used as a decorator
    (``@register_plugin("name")``) it returns the class unchanged.
    """
    if factory is None:

        def decorate(f: F) -> F:
            _native.register_plugin(name, _taking_arguments(name, f))
            return f

        return decorate
    _native.register_plugin(name, _taking_arguments(name, factory))
    return factory


def _taking_arguments(name: str, factory: Any) -> Any:
    """``factory`` as a callable of the arguments: one that takes none (a class
    without ``__init__``) is called without them, and refuses a conf that gives
    some."""
    if not callable(factory):
        return factory  # the native side says what is wrong
    try:
        sig = inspect.signature(factory)
    except (TypeError, ValueError):
        return factory
    try:
        sig.bind({})
        return factory
    except TypeError:
        pass
    try:
        sig.bind()
    except TypeError:
        raise TypeError(
            f"register_plugin({name!r}, ...): the factory must take the conf's arguments (one dict) or nothing"
        ) from None

    def make(arguments: Dict[str, Any]) -> Any:
        if arguments:
            given = ", ".join(sorted(arguments))
            raise ValueError(f"plugin `{name}` takes no arguments; its conf entry gives: {given}")
        return factory()

    return make


def unregister_plugin(name: str) -> bool:
    """Removes plugin ``name``; False if it was not registered."""
    return _native.unregister_plugin(name)


def registered_plugins() -> List[str]:
    """The names registered, sorted."""
    return list(_native.registered_plugins())
