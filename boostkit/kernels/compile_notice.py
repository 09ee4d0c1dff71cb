"""The one line printed when a process is about to compile kernels that are not in the cache.

numba compiles a kernel at its first call and keeps the machine code in its on-disk cache
(``cache=True``, in ``__pycache__`` or ``NUMBA_CACHE_DIR``). A fresh environment therefore
compiles every kernel its first fit uses, which takes seconds to a minute on a busy machine,
while a warm cache loads them in milliseconds. numba's ``"numba:compile"`` event fires only
when a function is about to be compiled, not when it is loaded from the cache; a listener on it
prints :data:`MESSAGE` to ``sys.stderr`` the first time a function of boostkit or of one of
its plugins (a module named ``boostkit...``) is compiled in the process, and never again.
"""

from __future__ import annotations

import sys
import threading

from numba.core import event

MESSAGE = "boostkit: compiling kernels, first run only (numba keeps them in its on-disk cache)"


class CompileNotice(event.Listener):
    """Prints :data:`MESSAGE` once, at the first compilation of a ``boostkit...`` function."""

    def __init__(self) -> None:
        self.said = False
        self._lock = threading.Lock()

    def on_start(self, compiling) -> None:
        function = getattr(compiling.data["dispatcher"], "py_func", None)
        module = getattr(function, "__module__", None) or ""
        if self.said or not module.startswith("boostkit"):
            return
        with self._lock:
            if self.said:
                return
            self.said = True
        print(MESSAGE, file=sys.stderr, flush=True)

    def on_end(self, compiling) -> None:
        pass


#: The process's one listener, registered when :mod:`boostkit.kernels` is first imported.
NOTICE = CompileNotice()
event.register("numba:compile", NOTICE)
