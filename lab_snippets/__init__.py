"""The course's package: what the chapters import, and, in subpackages, the tooling that runs the course.

Top level (notebook helpers; the grading sandbox mounts only these, see ``NOTEBOOK_MODULES``):
``timeline``, ``asyncio_tools``, ``loopwatch``, ``thread_workers``, ``proc_workers``,
``framing``, ``agent_sim``, ``measure``, ``loopback_http``, ``service_workers``, ``hangs``,
``cpu_work``, ``figlang`` (each figure drawn in Chinese too, when the book is built), ``raylab``
(a private local Ray, bounded start), ``grading`` (the property checks hidden tests compose),
``scenarios`` (differential grading on generated scenarios, virtual time), ``scenarios_services``
(its stand-ins for Part V: ``rebind``), ``showcode`` (a worker's real source shown on the page),
``scenarios_threads`` (the same on real threads and
processes: side by side with the reference, stand-in processes) and
``sites`` (``show_call_site``: registry, resolver, view, the box's markup).

Subpackages (course tooling, never imported by a chapter): ``labs`` (release, validate,
grade, sandbox), ``inventory`` (slime source inventory), ``testing`` (nbval plugin, leak
audit), ``book`` (chapter table, Sphinx extension, self-check), ``bench`` (timing tools).
``chapters`` and ``selfcheck`` are aliases kept for their documented ``python -m`` commands.

Importing the package first skips jsonschema's optional ``rfc3987_syntax`` import: it compiles a
grammar at import (about 3 s of CPU), only for the "iri" string format, which no notebook schema
uses. ``nbformat`` imports jsonschema, so every process that reads notebooks (pytest and its
workers, the nbval plugin, the graders) would pay it; the plugin is loaded with ``-p`` before
nbval for that. Ray's own processes never import this package: ``raylab`` keeps the import out of
them through the environment they inherit.
"""

import sys
from pathlib import Path

# The modules a chapter may import: the only part of this package a student kernel sees
# when a lab is graded (``lab_snippets.labs.sandbox``). ``tests/test_layout.py`` keeps this
# list, the notebooks' imports and the package's top level in step.
NOTEBOOK_MODULES = (
    "agent_sim",
    "asyncio_tools",
    "cpu_work",
    "figlang",
    "framing",
    "grading",
    "hangs",
    "loopback_http",
    "loopwatch",
    "measure",
    "proc_workers",
    "raylab",
    "scenarios",
    "scenarios_services",
    "scenarios_threads",
    "service_workers",
    "showcode",
    "sites",
    "sites.gitcmd",
    "sites.markup",
    "sites.registry",
    "sites.resolver",
    "sites.view",
    "thread_workers",
    "timeline",
)

# This package's folder, and the repository's root (the folder holding notebooks/, book/, tests/):
# the one place either is computed.
PACKAGE_DIR = Path(__file__).resolve().parent
REPO_ROOT = PACKAGE_DIR.parent

if "jsonschema" not in sys.modules:
    sys.modules.setdefault("rfc3987_syntax", None)
