"""Numba kernels: the hot loops of boostkit, kept apart from the API.

Every kernel is a plain module-level function over arrays and scalars, compiled with
``cache=True`` so the compilation is paid once per machine, not once per process. The tests keep a
naive numpy reference beside each kernel and one CI step runs them with ``NUMBA_DISABLE_JIT=1``.
A plugin that needs its own hot loop writes its own ``@njit`` function the same way.
"""
