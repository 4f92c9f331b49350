"""Recovering from a kernel that a timed-out cell left stuck (used by ``validate`` and the grader)."""

from __future__ import annotations


class RecoveringMixin:
    """For an nbclient ``NotebookClient``: restart a stuck kernel and replay earlier cells.

    ipykernel turns SIGINT during an async cell into a cancellation scheduled on the event
    loop; a coroutine that blocks the loop (``time.sleep``, ``while True``) never sees it and
    the kernel stays busy forever.  After a timed-out cell we probe the kernel; if it does
    not answer, we restart it and re-run the code cells that had completed, so that the
    remaining parts are still graded.  The timed-out cell itself is not replayed.
    """

    max_restarts = 3
    restarts = 0

    def _init_recovery(self):
        if not hasattr(self, "_completed"):
            self._completed = []

    @staticmethod
    def timed_out(cell):
        return any(o.get("ename") == "CellTimeoutError" for o in cell.get("outputs", []))

    def run_quiet(self, source, index, timeout=None):
        from nbformat.v4 import new_code_cell
        cell = new_code_cell(source)
        saved, saved_iopub, original = self.timeout, self.iopub_timeout, self.nb.cells[index]
        if timeout is not None:
            self.timeout, self.iopub_timeout = timeout, min(1, self.iopub_timeout)
        try:
            self.execute_cell(cell, index, store_history=False)
        finally:
            self.timeout, self.iopub_timeout = saved, saved_iopub
            self.nb.cells[index] = original  # nbclient stores the executed cell at index
        return cell

    def kernel_alive(self, index):
        replies = []
        hook = self.on_cell_executed
        self.on_cell_executed = lambda **kw: replies.append(kw["execute_reply"])
        try:
            self.run_quiet("pass", index, timeout=min(3, self.timeout or 3))
        finally:
            self.on_cell_executed = hook
        return bool(replies) and replies[-1].get("content", {}).get("status") == "ok"

    def restart_and_replay(self, index, after_start=None):
        from jupyter_core.utils import run_sync
        from nbclient.exceptions import DeadKernelError
        self._init_recovery()  # a kernel can die before any cell completed: nothing to replay then
        self.restarts += 1
        if self.restarts > self.max_restarts:
            raise DeadKernelError(f"kernel stuck again after {self.max_restarts} restarts")
        run_sync(self.km.restart_kernel)(now=True)
        run_sync(self.kc.wait_for_ready)(timeout=self.startup_timeout)
        if after_start:
            after_start(index)
        for j in self._completed:
            replay = self.run_quiet(self.nb.cells[j].source, j)
            if self.timed_out(replay) and not self.kernel_alive(j):
                raise DeadKernelError("kernel hung again while restoring earlier cells")
            self.after_replay(j)

    def after_replay(self, index):
        pass

    def after_cell(self, cell, index, after_start=None):
        """Call after each executed code cell; returns True if the kernel was restarted."""
        self._init_recovery()
        if not self.timed_out(cell):
            self._completed.append(index)
            return False
        if self.kernel_alive(index):
            return False
        self.restart_and_replay(index, after_start)
        return True

