"""The cold start: the one-line notice before compiling, what a fit compiles, and that an import
compiles nothing.

Each test runs Python in a subprocess with its own numba cache directory (``NUMBA_CACHE_DIR``),
empty at first, so that numba really compiles: the notice is printed exactly once by a process
that compiles boostkit's kernels, and not at all by one that finds them in the cache.
"""

from __future__ import annotations

import os
import subprocess
import sys

import numba
import pytest

from boostkit.kernels.compile_notice import MESSAGE

pytestmark = pytest.mark.skipif(numba.config.DISABLE_JIT, reason="nothing compiles without the JIT")

# A stump's search over a histogram of 6 features: one group of four and two features alone.
# It compiles its group's function once, for an integer index (a counter starting from the
# constant 0 made numba compile it a second time, for the literal 0); it prints the
# specialisations compiled, which a warm cache loads without compiling any.
SMALL_KERNEL = """
import numpy as np
from boostkit.kernels import splits
hist = np.arange(6 * 5 * 2, dtype=float).reshape(6, 5, 2) % 7
cut = splits.lowest_error_cut(hist, np.ones((6, 4), dtype=bool), 1e-9, np.empty((6, 4)),
                              np.empty((2, 2)))
print(cut, len(splits._error_cuts_of_four.signatures))
"""

FIT = """
import boostkit
from boostkit.datasets import load
data = load("breast_cancer_wisconsin", dropna=True)
model = boostkit.Booster("adaboost", n_rounds=3).fit(data.X, data.y)
print(model.predict(data.X).tolist())
"""

# The start of the scripts below: records every function numba compiles in the process.
RECORD_COMPILES = """
from numba.core import event
from numba.core.dispatcher import ObjModeLiftedWith

compiled = []

class RecordCompiles(event.Listener):
    def on_start(self, compiling):
        compiled.append(compiling.data["dispatcher"])

    def on_end(self, compiling):
        pass

event.register("numba:compile", RecordCompiles())

def compiled_functions():
    # (module, qualified name) of each function compiled, one per specialisation; an
    # object-mode block, compiled as a function of its function's name, left out.
    return [(d.py_func.__module__, d.py_func.__qualname__) for d in compiled
            if not isinstance(d, ObjModeLiftedWith)]
"""

# Every numba function compiled while boostkit is imported and its plugins are loaded (which
# registers their margin losses, checked when they are made), one "module.name" per line.
IMPORT = RECORD_COMPILES + """
import boostkit
print("import:", *(f"{module}.{name}" for module, name in compiled_functions()))
boostkit.get_registry()
print("plugins:", *(f"{module}.{name}" for module, name in compiled_functions()))
"""


def run_python(code: str, cache_dir) -> subprocess.CompletedProcess:
    env = dict(os.environ, NUMBA_CACHE_DIR=str(cache_dir), NUMBA_NUM_THREADS="1",
               OMP_NUM_THREADS="1")
    completed = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True,
                               text=True)
    assert completed.returncode == 0, completed.stderr
    return completed


@pytest.fixture(scope="module")
def filled_cache(tmp_path_factory):
    """A cache directory that a first process (returned with it) filled with its kernels."""
    cache_dir = tmp_path_factory.mktemp("numba-cache")
    return cache_dir, run_python(SMALL_KERNEL, cache_dir)


def test_the_notice_is_printed_once_by_a_compiling_process_and_not_from_a_warm_cache(
        filled_cache):
    cache_dir, cold = filled_cache
    assert cold.stderr.count(MESSAGE) == 1, cold.stderr
    assert any(cache_dir.rglob("*.nbi")), "the kernels were not cached"
    warm = run_python(SMALL_KERNEL, cache_dir)
    assert MESSAGE not in warm.stderr, warm.stderr
    assert warm.stdout.split()[0] == cold.stdout.split()[0]


def test_a_cold_stump_search_compiles_its_group_of_four_once(filled_cache):
    _, cold = filled_cache
    assert cold.stdout.split()[1] == "1", cold.stdout


def test_a_process_compiling_only_its_own_functions_prints_no_notice(filled_cache):
    cache_dir, _ = filled_cache
    own = run_python("import boostkit, numba\nnumba.njit(lambda x: 2 * x)(3.0)", cache_dir)
    assert MESSAGE not in own.stderr, own.stderr


@pytest.mark.slow
def test_a_first_fit_prints_the_notice_once_and_the_second_process_none(tmp_path):
    cold = run_python(FIT, tmp_path)
    assert cold.stderr.count(MESSAGE) == 1, cold.stderr
    warm = run_python(FIT, tmp_path)
    assert MESSAGE not in warm.stderr, warm.stderr
    assert warm.stdout == cold.stdout


def test_a_cold_import_and_plugin_load_compile_nothing(tmp_path):
    """Making the registered margin losses checks their functions in plain Python; a kernel is
    compiled when a fit first calls it, never at import."""
    cold = run_python(IMPORT, tmp_path)
    assert cold.stdout.splitlines() == ["import:", "plugins:"], cold.stdout
    assert MESSAGE not in cold.stderr, cold.stderr


# A kernel that calls lowest_error_cut_when_reached on one branch, run on the other: it prints
# its answer and whether lowest_error_cut was compiled.
WHEN_REACHED = RECORD_COMPILES + """
import numba
import numpy as np
from boostkit.kernels.splits import lowest_error_cut_when_reached

@numba.njit
def search(hist, valid, scores, sides):
    if hist[0, 0, 0] >= 0.0:
        return -5
    return lowest_error_cut_when_reached(hist, valid, 1e-12, scores, sides)

print(search(np.ones((2, 3, 2)), np.ones((2, 2), dtype=np.bool_), np.empty((2, 2)),
             np.empty((2, 2))), "lowest_error_cut" in [name for _, name in compiled_functions()])
"""


def test_a_kernel_calling_the_search_when_reached_compiles_it_only_when_it_is_reached(tmp_path):
    """lowest_error_cut_when_reached is compiled with its caller, lowest_error_cut (~1.6 s) is
    not (its answers: test_round_kernels)."""
    cold = run_python(WHEN_REACHED, tmp_path)
    assert cold.stdout.split() == ["-5", "False"], cold.stdout
    assert "NumbaWarning" not in cold.stderr, cold.stderr


# Bins a data set of one kind of column and prints the sorts numba compiled.
BINNING = RECORD_COMPILES + """
import numpy as np
from boostkit.kernels.binning import quantile_bins

X = np.random.default_rng(0).normal(size=(500, 3)).astype({dtype})
quantile_bins(X.astype(np.float64), np.ones(500, dtype=bool), 255, np.zeros(3, dtype=np.int64),
              255, np.empty((3, 254)), np.empty(3, dtype=np.int64), np.empty((3, 500), np.uint8),
              np.empty((3, 256), dtype=np.int64))
print(*sorted({{name for _, name in compiled_functions() if name.startswith("sort")}}))
"""


@pytest.mark.slow  # a cold compile in a subprocess: 3-4 s each
@pytest.mark.parametrize(("dtype", "sort"), [("np.float64", "sort_column"),
                                             ("np.float32", "sort_float32_column")])
def test_binning_compiles_only_the_column_sort_its_values_need(tmp_path, dtype, sort):
    """float32 values sort on 32-bit keys, others on 64-bit ones: a cold binning of columns of
    one kind compiles one of the two sorts (each ~2.5 s of compiling with its radix sort)."""
    cold = run_python(BINNING.format(dtype=dtype), tmp_path)
    assert cold.stdout.split() == [sort], cold.stdout


# A first batched fit (the default adaboost, every component compiled), recording every
# boostkit function numba compiles, one line per specialisation (an object-mode block, which
# numba compiles with its function as a function of the same name, left out).
FIT_COMPILES = RECORD_COMPILES + """
import boostkit
from boostkit.datasets import load
data = load("breast_cancer_wisconsin", dropna=True)
boostkit.Booster("adaboost", n_rounds=10).fit(data.X, data.y)
print(*(name for module, name in compiled_functions() if module.startswith("boostkit")),
      sep="\\n")
"""


@pytest.mark.slow
def test_a_first_batched_fit_compiles_each_kernel_once_and_none_of_the_per_round_path(tmp_path):
    """One specialisation per function, the batch kernel's and not the per-round path's
    (which a batched fit never calls), and one column sort (breast cancer's values are all
    float32 values)."""
    compiled = run_python(FIT_COMPILES, tmp_path).stdout.split()
    assert "run_batch" in compiled, compiled
    assert len(compiled) == len(set(compiled)), compiled
    per_round = {"lowest_error_cut", "cell_term_pass_into", "_gather", "all_finite"}
    assert not per_round & set(compiled), compiled
    assert "sort_column" not in compiled, compiled
