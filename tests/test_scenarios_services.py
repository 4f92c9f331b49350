"""``lab_snippets.scenarios_services.rebind``: the stand-ins reach the copy, and only the copy."""

import time
import types

import pytest

from lab_snippets.scenarios_services import rebind

NAMESPACE = """
import time
from time import monotonic as now_fn

def helper():
    return time.monotonic()

def reads_clock():
    return (time.monotonic(), now_fn(), helper(), score("ab"))

def score(text):
    return len(text)
"""


def _namespace() -> dict:
    scope: dict = {}
    exec(compile(NAMESPACE, "<student>", "exec"), scope)  # noqa: S102 - a fixed test source
    return scope


def test_stand_ins_reach_the_copy_through_every_binding_and_helper():
    scope = _namespace()
    fake = types.SimpleNamespace(monotonic=lambda: -1.0)
    copy = rebind(scope["reads_clock"], {"score": lambda text: "stand-in"},
                  objects=[(time, fake), (time.monotonic, fake.monotonic)])
    assert copy() == (-1.0, -1.0, -1.0, "stand-in"), (
        "the module, the function imported under another name, a helper defined beside it and a "
        "replaced name must all be the stand-ins in the copy")


def test_the_original_namespace_is_left_as_it_was():
    scope = _namespace()
    fake = types.SimpleNamespace(monotonic=lambda: -1.0)
    rebind(scope["reads_clock"], {"score": lambda text: "stand-in"}, objects=[(time, fake)])
    got = scope["reads_clock"]()
    assert got[0] > 0 and got[3] == 2, "rebinding must not change the function it copies, nor its namespace"
    assert scope["time"] is time and scope["helper"].__globals__ is scope


def test_the_copy_keeps_defaults_and_name():
    scope: dict = {}
    exec("def f(a, b=2, *, c=3):\n    return a + b + c\n", scope)  # noqa: S102 - a fixed test source
    copy = rebind(scope["f"])
    assert copy(1) == 6 and copy(1, c=0) == 3 and copy.__name__ == "f", "defaults and keyword defaults kept"


def test_only_plain_functions():
    with pytest.raises(TypeError, match="plain function"):
        rebind(len)
