"""Unit tests of ``lab_snippets.labs.guard``, in a real IPython shell: each kind of tampering it watches
(the shell's classes and instance, ``sys`` hooks and the tracer, ``sys.modules``, IPython's events) is
undone and named in its report, and a submission that replaces a builtin cannot silence the report.

No kernel starts. ``python -m lab_snippets.bench.mutation labs/guard.py`` runs this file (with
``tests/test_labs_units.py``) against each mutant of the module.
"""

from __future__ import annotations

import builtins
import math
import sys

from lab_snippets.labs import guard


def test_a_method_of_the_shells_class_patched_or_added_is_undone(shell):
    """``InteractiveShell.run_cell`` replaced could run every later test cell as ``pass``."""
    cls = type(shell)
    original = cls.run_cell
    g = guard.install(shell, "n0nce", "_lab_g1")
    try:
        cls.run_cell = lambda self, *a, **k: None
        cls.sneaky = lambda self: None
        restored = g.restore()
        assert cls.run_cell is original and "sneaky" not in vars(cls)
    finally:
        cls.run_cell = original
        if "sneaky" in vars(cls):
            delattr(cls, "sneaky")
    assert restored == [f"{cls.__name__}.run_cell", f"{cls.__name__}.sneaky (added)"], restored


def test_a_failing_cell_cannot_be_made_to_pass_through_execution_result(shell):
    from IPython.core.interactiveshell import ExecutionResult

    original = ExecutionResult.raise_error
    g = guard.install(shell, "n0nce", "_lab_g2")
    try:
        ExecutionResult.raise_error = lambda self: None
        assert g.restore() == ["ExecutionResult.raise_error"]
        assert ExecutionResult.raise_error is original
    finally:
        ExecutionResult.raise_error = original


def test_an_instance_attribute_shadowing_a_method_is_removed(shell):
    g = guard.install(shell, "n0nce", "_lab_g3")
    try:
        shell.run_cell = lambda *a, **k: None
        assert g.restore() == [f"{type(shell).__name__} instance .run_cell"]
        assert "run_cell" not in vars(shell)
    finally:
        vars(shell).pop("run_cell", None)


def test_sys_hooks_and_the_tracer_are_put_back_as_they_were_at_install(shell):
    def profiler(frame, event, arg):
        return None

    def tracer(frame, event, arg):
        return None

    saved = (sys.gettrace(), sys.getprofile(), sys.displayhook)
    sys.settrace(None)
    sys.setprofile(profiler)  # trace and profile differ at install: each must come back as itself
    try:
        g = guard.install(shell, "n0nce", "_lab_g4")
        sys.displayhook = lambda value: None
        sys.settrace(tracer)
        sys.setprofile(None)
        restored = g.restore()
        now = (sys.gettrace(), sys.getprofile(), sys.displayhook)
    finally:
        sys.settrace(saved[0])
        sys.setprofile(saved[1])
        sys.displayhook = saved[2]
    assert restored == ["sys.displayhook", "sys.settrace/setprofile"], restored
    assert now == (None, profiler, saved[2])


def test_a_watched_module_swapped_in_sys_modules_is_put_back(shell):
    import types

    g = guard.install(shell, "n0nce", "_lab_g5")
    try:
        sys.modules["math"] = types.ModuleType("math")
        assert g.restore() == ["sys.modules[math]"]
        assert sys.modules["math"] is math
    finally:
        sys.modules["math"] = math


def test_an_event_callback_a_submission_registers_is_dropped(shell):
    def sneaky(*args):
        return None

    g = guard.install(shell, "n0nce", "_lab_g6")
    try:
        shell.events.register("pre_run_cell", sneaky)
        assert g.restore() == ["shell.events.pre_run_cell"]
        assert sneaky not in shell.events.callbacks["pre_run_cell"]
    finally:
        if sneaky in shell.events.callbacks["pre_run_cell"]:
            shell.events.unregister("pre_run_cell", sneaky)


def test_a_replaced_print_cannot_silence_the_report(shell, capsys):
    """The guard binds the builtins it uses when it is installed, before any student code."""
    g = guard.install(shell, "n0nce", "_lab_g7")
    original = builtins.print
    try:
        builtins.print = lambda *a, **k: None
        g.check()
        now = builtins.print
    finally:
        builtins.print = original
    assert capsys.readouterr().out.strip() == 'LAB-GUARD n0nce ["builtins.print"]'
    assert now is original
