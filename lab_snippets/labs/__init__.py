"""Graded labs on nbgrader: release student versions, let students validate, grade safely.

    python -m lab_snippets.labs release [CHAPTERS...] [--course-dir DIR] [--lang zh_CN]
    python -m lab_snippets.labs validate NOTEBOOK [--timeout S]
    python -m lab_snippets.labs grade SUBMISSIONS_DIR --out grades.csv [--course-dir DIR]

Chapters mark exercises with light cell tags (``solution``, ``tests``, ``hidden-tests``,
``points-N``) and ``### BEGIN SOLUTION`` / ``### BEGIN HIDDEN TESTS`` regions.  ``release``
expands the tags into nbgrader's schema-v3 cell metadata (through nbgrader's own metadata
upgrader and validator) and runs nbgrader's ``generate_assignment``; ``--lang zh_CN`` makes the
student versions with their markdown in Chinese from the zh catalogues (in ``build/labs-zh_CN``).
``grade`` treats every submission as hostile: see ``book/instructors.md`` for the safety model.

Modules: ``markers`` (tags → nbgrader metadata), ``publish`` (release), ``student``
(validate, ``run_tests``), ``grader`` (grade), ``scoring`` (statuses), ``worker`` (the
trusted per-submission process), ``sandbox`` + ``kernel_init`` (bubblewrap), ``guard``
(runs in the kernel), ``spec`` (what the grader hands the worker), ``recovery``, ``cli``.
"""

from __future__ import annotations

import importlib

# Public names and the module that defines each. Loaded on first use, so that the sandbox
# launcher (``python -m lab_snippets.labs.sandbox``, run at every kernel start) and the worker
# import only what they need.
_EXPORTS = {
    "main": "cli",
    "COURSE_ID": "common", "DEFAULT_COURSE_DIR": "common", "NOTEBOOKS_DIR": "common",
    "REPO": "common", "LabError": "common",
    "Options": "spec", "Row": "grader", "grade": "grader",
    "chapters_with_solutions": "markers", "defined_names": "markers", "has_solution": "markers",
    "mark_notebook": "markers", "read_notebook": "markers",
    "build_source": "publish", "check_release": "publish", "release": "publish",
    "CONFIG_TEMPLATE": "publish", "nbgrader_config": "publish",
    "Isolation": "sandbox", "detect_isolation": "sandbox",
    "STATUS_PRECEDENCE": "scoring",
    "TestResult": "student", "TestRun": "student", "run_tests": "student", "validate": "student",
    "run_notebook": "student", "failure_message": "common",
}
__all__ = sorted(_EXPORTS)


def __getattr__(name: str):
    if name in _EXPORTS:
        value = getattr(importlib.import_module(f"lab_snippets.labs.{_EXPORTS[name]}"), name)
        globals()[name] = value
        return value
    raise AttributeError(f"module 'lab_snippets.labs' has no attribute {name!r}")


def __dir__():
    return sorted({*globals(), *_EXPORTS})
