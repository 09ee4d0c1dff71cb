"""Numba kernels: the hot loops of boostkit, kept apart from the API.

Every kernel is a plain module-level function over arrays and scalars, compiled with
``cache=True`` so the compilation is paid once per machine, not once per process. The tests keep a
naive numpy reference beside each kernel and one CI step runs them with ``NUMBA_DISABLE_JIT=1``.
A plugin that needs its own hot loop writes its own ``@njit`` function the same way.

That first compilation is the cold start (docs/performance.md): numba compiles each function a
kernel calls as a library of its own and then links and optimises it again into every caller.
A function that only passes its work on (a kernel's serial form calling its block with the whole
range, a column's steps) is therefore ``inline="always"``: its body is compiled into its callers
once instead. A process about to compile prints one line, :data:`compile_notice.MESSAGE`.
"""

from . import compile_notice  # noqa: F401  (registers the notice)
