"""Graded labs on nbgrader: release student versions, let students validate, grade safely.

    python -m lab_snippets.labs release [CHAPTERS...] [--course-dir DIR]
    python -m lab_snippets.labs validate NOTEBOOK [--timeout S]
    python -m lab_snippets.labs grade SUBMISSIONS_DIR --out grades.csv [--course-dir DIR]

Chapters mark exercises with light cell tags (``solution``, ``tests``, ``hidden-tests``,
``points-N``) and ``### BEGIN SOLUTION`` / ``### BEGIN HIDDEN TESTS`` regions.  ``release``
expands the tags into nbgrader's schema-v3 cell metadata (through nbgrader's own metadata
upgrader and validator) and runs nbgrader's ``generate_assignment``.  ``grade`` treats every
submission as hostile: see ``book/instructors.md`` for the safety model.

Modules: ``markers`` (tags → nbgrader metadata), ``publish`` (release), ``student``
(validate, ``run_tests``), ``grader`` (grade), ``scoring`` (statuses), ``worker`` (the
trusted per-submission process), ``sandbox`` + ``kernel_init`` (bubblewrap), ``guard``
(runs in the kernel), ``spec`` (what the grader hands the worker), ``recovery``, ``cli``.
"""

from __future__ import annotations

from lab_snippets.labs.cli import main
from lab_snippets.labs.common import (
    COURSE_ID,
    DEFAULT_COURSE_DIR,
    NOTEBOOKS_DIR,
    REPO,
    LabError,
)
from lab_snippets.labs.grader import Options, Row, grade
from lab_snippets.labs.markers import (
    chapters_with_solutions,
    defined_names,
    has_solution,
    mark_notebook,
    read_notebook,
)
from lab_snippets.labs.publish import build_source, check_release, release
from lab_snippets.labs.sandbox import Isolation, detect_isolation
from lab_snippets.labs.scoring import STATUS_PRECEDENCE
from lab_snippets.labs.student import TestResult, TestRun, run_tests, validate

__all__ = [
    "COURSE_ID", "DEFAULT_COURSE_DIR", "NOTEBOOKS_DIR", "REPO", "STATUS_PRECEDENCE", "Isolation",
    "LabError", "Options", "Row", "TestResult", "TestRun", "build_source", "chapters_with_solutions",
    "check_release", "defined_names", "detect_isolation", "grade", "has_solution", "main",
    "mark_notebook", "read_notebook", "release", "run_tests", "validate",
]
