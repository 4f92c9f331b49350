"""The kernel manager the book's executor and the claim runner share, in a module of its own.

It lives apart from ``lab_snippets.book.preexec`` so that the claim runner (whose import closure is
in every recorded counterfactual's digest, ``claimrecord.run_digest``) does not reach the book's
build tooling and, through it, the Chinese edition's modules: a catalogue rule must not make every
claim kill stale."""

from __future__ import annotations

import os


def ipc_kernel_manager():
    """nbclient's kernel manager, over unix sockets rather than TCP on localhost.

    A kernel started over TCP without CurveZMQ keys logs ``Kernel is running over TCP without
    encryption...`` (ipykernel's ``init_sockets``), once per chapter in ``.ci/build``'s output,
    where a newcomer reads it as something wrong. The build's kernels talk only to this machine,
    so the unix sockets of IPC transport (in Jupyter's runtime folder, next to the connection file)
    are the right transport, and the kernel has nothing to warn about."""
    import uuid

    from jupyter_client.manager import AsyncKernelManager
    from jupyter_core.paths import jupyter_runtime_dir

    class IPCKernelManager(AsyncKernelManager):
        def __init__(self, **kw):
            super().__init__(**kw)
            runtime = jupyter_runtime_dir()
            os.makedirs(runtime, mode=0o700, exist_ok=True)
            self.transport = "ipc"  # the sockets' absolute path: the kernel runs in another folder
            self.ip = os.path.join(runtime, f"kernel-{uuid.uuid4().hex[:12]}-ipc")

    return IPCKernelManager
