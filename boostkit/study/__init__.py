"""Studies: compare algorithms across datasets with the statistics papers use.

A study (:class:`StudySpec`) is every algorithm (a registered name or a recipe string) on every
dataset, over the same seeded folds; each fit is a cell, written to an SQLite results database
(:class:`ResultStore`) as soon as it finishes, so a stopped study resumes where it stopped.
:func:`run_study` runs the cells serially, in local worker processes or on a Dask cluster.
``boostkit study`` on the command line does the same and writes the report.
"""

from .runner import StudyRun, run_cell, run_study, write_outputs
from .spec import Cell, Resampling, SpecError, StudySpec
from .store import ResultStore, StoreError

__all__ = ["Cell", "ResultStore", "Resampling", "SpecError", "StoreError", "StudyRun",
           "StudySpec", "run_cell", "run_study", "write_outputs"]
