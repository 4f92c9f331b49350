"""Unit tests of ``labs.recovery``: when a stuck kernel is restarted and what is replayed.

The kernel is a fake (``Client.execute_cell``): a cell either completes, or times out (it gets the
``CellTimeoutError`` output nbclient gives it); the probe ``pass`` gets an ``ok`` reply only from a
kernel that still answers. No kernel starts here.
"""

from __future__ import annotations

import pytest
from nbclient.exceptions import DeadKernelError
from nbformat.v4 import new_code_cell, new_notebook, new_output

from lab_snippets.labs.recovery import RecoveringMixin

HANG = "while True: pass"


class Client(RecoveringMixin):
    """The parts of nbclient's ``NotebookClient`` the mixin uses, over a fake kernel."""

    def __init__(self, sources=("a = 1", "b = 2", HANG, "c = 3"), answers=True):
        self.timeout, self.iopub_timeout, self.startup_timeout = 30, 4, 60
        self.nb = new_notebook(cells=[new_code_cell(s) for s in sources])
        self.answers = answers      # does the kernel reply to a probe?
        self.on_cell_executed = None
        self.ran = []               # (source, index, timeout, iopub_timeout, store_history)
        self.events = []            # restarts, after_start, after_replay, in order
        self.hangs = {HANG}
        client = self

        class KernelManager:
            def restart_kernel(self, now):
                client.events.append(("restart", now))

        class KernelClient:
            def wait_for_ready(self, timeout):
                client.events.append(("ready", timeout))

        self.km, self.kc = KernelManager(), KernelClient()

    def execute_cell(self, cell, index, store_history):
        self.ran.append((cell.source, index, self.timeout, self.iopub_timeout, store_history))
        self.nb.cells[index] = cell  # as nbclient does
        if cell.source in self.hangs:
            cell.outputs.append(new_output("error", ename="CellTimeoutError", evalue="", traceback=[]))
        elif cell.source == "pass" and self.answers and self.on_cell_executed:
            self.on_cell_executed(cell=cell, cell_index=index,
                                  execute_reply={"content": {"status": self.answers}})

    def after_replay(self, index):
        self.events.append(("replayed", index))


@pytest.fixture(autouse=True)
def _sync_run(monkeypatch):
    """The fake kernel's methods are plain functions: run_sync just calls them."""
    monkeypatch.setattr("jupyter_core.utils.run_sync", lambda fn: fn)


def _done(client, index):
    """Cell ``index`` as nbclient leaves it after running it (a timeout output if it hangs)."""
    cell = new_code_cell(client.nb.cells[index].source)
    if cell.source in client.hangs:
        cell.outputs.append(new_output("error", ename="CellTimeoutError", evalue="", traceback=[]))
    return cell


def test_a_cell_is_timed_out_only_with_nbclients_timeout_error():
    timed = {"outputs": [{"output_type": "error", "ename": "CellTimeoutError"}]}
    failed = {"outputs": [{"output_type": "error", "ename": "AssertionError"}]}
    assert RecoveringMixin.timed_out(timed) and not RecoveringMixin.timed_out(failed)
    assert Client().timed_out(timed), "timed_out is called on the client too (a static method)"
    assert not Client().timed_out({})


def test_a_completed_cell_is_remembered_and_no_probe_runs():
    client = Client(answers="ok")
    assert client.after_cell(_done(client, 0), 0) is False
    assert client.after_cell(_done(client, 1), 1) is False
    assert client._completed == [0, 1], "completed cells are what a restart replays"
    assert client.ran == [], "a cell that finished needs no probe of the kernel"


def test_a_timed_out_cell_on_a_kernel_that_answers_is_not_restarted():
    client = Client(answers="ok")
    cell = client.nb.cells[2]
    assert client.after_cell(_done(client, 2), 2) is False, "the kernel answered: no restart"
    assert client.events == [] and client._completed == [], "a timed-out cell is never replayed"
    [(source, index, timeout, iopub, history)] = client.ran
    assert (source, index, history) == ("pass", 2, False), "one probe, kept out of the history"
    assert (timeout, iopub) == (3, 1), "the probe waits at most 3 s (1 s for its outputs)"
    assert (client.timeout, client.iopub_timeout) == (30, 4), "the probe's timeouts are put back"
    assert client.nb.cells[2] is cell, "the probe does not replace the notebook's cell"


def test_the_probe_takes_a_short_timeout_also_when_the_client_has_none():
    client = Client(answers="ok")
    client.timeout = None
    assert client.kernel_alive(0)
    assert client.ran[0][2] == 3, "no cell timeout: the probe still gives up after 3 s"
    client.timeout = 1
    client.kernel_alive(0)
    assert client.ran[1][2] == 1, "a cell timeout under 3 s bounds the probe too"


@pytest.mark.parametrize(("answers", "alive"), [("ok", True), ("error", False), (False, False)])
def test_the_kernel_is_alive_only_if_it_answers_the_probe_ok(answers, alive):
    client = Client(answers=answers)
    hook = client.on_cell_executed = object()
    assert client.kernel_alive(1) is alive
    assert client.on_cell_executed is hook, "the client's own hook is put back"


def test_a_stuck_kernel_is_restarted_and_the_completed_cells_replayed_in_order():
    client = Client(answers=False)
    started = []
    for i in (0, 1):
        client.after_cell(_done(client, i), i)
    restarted = client.after_cell(_done(client, 2), 2, after_start=lambda i: started.append(
        (i, list(client.events))))
    assert restarted is True
    assert started == [(2, [("restart", True), ("ready", 60)])], "after_start runs once the kernel is up"
    assert client.events[-2:] == [("replayed", 0), ("replayed", 1)]
    replays = [r for r in client.ran if r[0] != "pass"]
    assert replays == [("a = 1", 0, 30, 4, False), ("b = 2", 1, 30, 4, False)], \
        "the completed cells, in order, with the cell timeout, out of the history; not the stuck one"
    assert client.restarts == 1


def test_restarts_are_capped_at_max_restarts():
    client = Client(sources=("a = 1",), answers=False)
    assert client.restarts == 0, "a new client has restarted nothing"
    for _ in range(client.max_restarts):
        client.restart_and_replay(0)
    with pytest.raises(DeadKernelError, match="after 3 restarts"):
        client.restart_and_replay(0)
    assert [e for e in client.events if e[0] == "restart"] == [("restart", True)] * 3


def test_a_replay_that_hangs_on_a_dead_kernel_gives_up():
    client = Client(sources=("a = 1", "b = 2"), answers=False)
    client._completed = [0, 1]
    client.hangs = {"a = 1"}
    with pytest.raises(DeadKernelError, match="hung again while restoring"):
        client.restart_and_replay(1)
    assert ("replayed", 0) not in client.events


def test_a_replay_that_times_out_on_a_live_kernel_goes_on():
    client = Client(sources=("a = 1", "b = 2"), answers="ok")
    client._completed = [0, 1]
    client.hangs = {"a = 1"}
    client.restart_and_replay(1)
    assert client.events[-2:] == [("replayed", 0), ("replayed", 1)]


def test_a_kernel_lost_before_any_cell_completed_is_restarted_with_nothing_to_replay():
    """The worker restarts a kernel that died in (or hung before) the first cell it ran; there is
    nothing to replay yet, and that must not be an error (it was an AttributeError)."""
    client = Client(answers=False)
    client.restart_and_replay(0)
    assert client.events == [("restart", True), ("ready", 60)]
    assert client.restarts == 1
