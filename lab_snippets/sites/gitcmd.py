"""The one git wrapper of the package: never prompts, never hangs (every call has a timeout)."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

GIT_TIMEOUT = 30.0


def run_git(args: list[str], *, repo: str | os.PathLike[str] | None = None, bare: bool = False,
            input: bytes | None = None, timeout: float = GIT_TIMEOUT) -> subprocess.CompletedProcess[bytes]:
    """``git [-C repo | --git-dir repo] ARGS``; output captured as bytes; never raises on a git error.

    Raises ``FileNotFoundError`` when git is not installed and ``subprocess.TimeoutExpired``
    after ``timeout`` seconds. ``GIT_TERMINAL_PROMPT=0`` and the C locale keep it from asking
    for credentials and keep its messages parseable.
    """
    prefix = ["git"]
    if repo is not None:
        prefix += ["--git-dir", str(Path(repo))] if bare else ["-C", str(Path(repo))]
    env = dict(os.environ, GIT_TERMINAL_PROMPT="0", LC_ALL="C", LANG="C")
    return subprocess.run(prefix + list(args), input=input, capture_output=True, timeout=timeout,
                          env=env, check=False)
