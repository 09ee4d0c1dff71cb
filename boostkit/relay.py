"""A fit's hook relay, calling plain hook implementations without pluggy's general machinery.

A round calls five or six hooks (propose, the partition loss, calibrate, reweight, should-stop,
round-end). pluggy's ``HookCaller.__call__`` copies the implementation list, checks the
arguments against the spec and runs ``_multicall`` with its wrapper bookkeeping on every call:
about 1 µs each, a tenth of a whole round on 1 000 examples. A fit's plugin manager is private to
the fit and complete before the first round, so for a hook whose implementations are all plain
(no ``hookwrapper``/``wrapper``, no keyword-only defaults) the calls can be fixed once:
:class:`DirectRelay` gives such a hook a :class:`DirectCaller`, which calls the implementations
in pluggy's order (the last registered first) with pluggy's results (a ``firstresult`` hook: the
first answer that is not ``None``; otherwise the list of those answers). Every other hook, and
every hook of a traced fit (``BOOSTKIT_TRACE``), keeps its pluggy ``HookCaller``.
"""

from __future__ import annotations

import functools
import inspect
from typing import Any

import pluggy

__all__ = ["DirectCaller", "DirectRelay"]


class DirectCaller:
    """One hook's plain implementations, called as pluggy calls them.

    Attributes other than the call (``get_hookimpls``, ``spec``, ``name``) are the pluggy
    ``HookCaller``'s, so code that inspects a hook sees what it always saw.
    """

    __slots__ = ("_caller", "_calls", "_firstresult")

    def __init__(self, caller: pluggy.HookCaller):
        self._caller = caller
        self._calls = tuple(
            (impl.function, tuple(impl.argnames), _keywords(impl.function, impl.argnames))
            for impl in reversed(caller.get_hookimpls())
        )
        self._firstresult = bool(caller.spec.opts.get("firstresult", False))

    @staticmethod
    def supports(caller: pluggy.HookCaller) -> bool:
        """Whether ``caller``'s calls can be made directly (see the module docstring)."""
        spec = caller.spec
        return spec is not None and not caller.is_historic() and not spec.kwargdefaults and all(
            not (impl.hookwrapper or impl.wrapper or impl.kwargnames)
            for impl in caller.get_hookimpls()
        )

    def __call__(self, **kwargs: Any) -> Any:
        try:
            if self._firstresult:
                for function, names, keywords in self._calls:
                    # An implementation taking exactly the call's arguments gets them as they
                    # came; pluggy's list of them, in its order, otherwise.
                    result = (function(**kwargs) if kwargs.keys() == keywords
                              else function(*[kwargs[name] for name in names]))
                    if result is not None:
                        return result
                return None
            results = []
            for function, names, keywords in self._calls:
                result = (function(**kwargs) if kwargs.keys() == keywords
                          else function(*[kwargs[name] for name in names]))
                if result is not None:
                    results.append(result)
            return results
        except KeyError as exc:
            missing = exc.args[0] if exc.args else None
            if any(missing in names for _, names, _ in self._calls) and missing not in kwargs:
                raise pluggy.HookCallError(
                    f"hook call must provide argument {missing!r}") from exc
            raise

    def __getattr__(self, name: str) -> Any:
        return getattr(self._caller, name)

    def __repr__(self) -> str:
        return f"<DirectCaller {self._caller.name!r}>"


def _keywords(function, argnames) -> frozenset | None:
    """The argument names when ``function`` takes every one of them by keyword, else ``None``
    (a positional-only parameter: pluggy's positional call only)."""
    # A method's answer is its class's: decided once per function, not once per fit.
    return _function_keywords(getattr(function, "__func__", function), tuple(argnames))


@functools.lru_cache(maxsize=4096)
def _function_keywords(function, argnames: tuple) -> frozenset | None:
    try:
        parameters = inspect.signature(function).parameters
    except (TypeError, ValueError):
        return None
    if any(parameters[name].kind not in (inspect.Parameter.POSITIONAL_OR_KEYWORD,
                                         inspect.Parameter.KEYWORD_ONLY)
           for name in argnames if name in parameters):
        return None
    return frozenset(argnames) if all(name in parameters for name in argnames) else None


class DirectRelay:
    """``pm.hook`` with a :class:`DirectCaller` for every hook that allows one.

    Built once per fit, after every component and observer is registered: registering more
    plugins on ``pm`` afterwards would not be seen by the direct callers.
    """

    def __init__(self, pm: pluggy.PluginManager, direct: bool = True):
        for name, caller in vars(pm.hook).items():
            if isinstance(caller, pluggy.HookCaller):
                setattr(self, name, DirectCaller(caller)
                        if direct and DirectCaller.supports(caller) else caller)
