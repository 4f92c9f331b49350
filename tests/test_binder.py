"""Run where you read (issue 41): the `binder/` environment alone gives a JupyterLab that opens the
chapters as notebooks and runs them. A clean venv is made from `binder/requirements.txt` (as
repo2docker does, from the repository's root), `binder/postBuild` runs in it, and chapter 01 runs
under nbval with that venv's Python. Binder itself (Docker) is not run here."""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from lab_snippets import REPO_ROOT

# Not ``serial``: it is mostly pip reading its cache and chapter 01 under nbval, which must hold
# beside a neighbour anyway; in the parallel phase it overlaps the other worker's tests instead of
# adding its 70-120 s to the serial phase (issue 39).
pytestmark = [pytest.mark.slow, pytest.mark.timeout(2400)]


def test_a_venv_from_binder_alone_opens_chapters_as_notebooks_and_runs_one(tmp_path):
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True, timeout=120)
    py = venv / "bin" / "python"
    env = {**os.environ, "JUPYTER_CONFIG_DIR": str(tmp_path / "jupyter")}
    env.pop("PYTHONPATH", None)
    install = subprocess.run([str(py), "-m", "pip", "install", "-q", "-r", "binder/requirements.txt"],
                             cwd=REPO_ROOT, env=env, capture_output=True, text=True, timeout=1200)
    assert install.returncode == 0, install.stderr[-2000:]
    env["PATH"] = f"{venv / 'bin'}{os.pathsep}{env['PATH']}"
    post = subprocess.run(["bash", "binder/postBuild"], cwd=REPO_ROOT, env=env, capture_output=True,
                          text=True, timeout=120)
    assert post.returncode == 0, post.stderr[-2000:]
    settings = json.loads(next(Path(env["JUPYTER_CONFIG_DIR"]).rglob("*.json")).read_text())
    viewers = json.dumps(settings)
    assert "python" in viewers and "Jupytext Notebook" in viewers, f"no notebook viewer for .py: {viewers}"
    run = subprocess.run([str(py), "-m", "pytest", "-p", "no:cacheprovider", "-o", "addopts=",
                          "-p", "no:xdist", "-p", "lab_snippets.testing.nbplugin", "--nbval-lax",
                          "--nbval-current-env", "--nbval-cell-timeout=120", "-q",
                          "notebooks/01_async_def.py"],
                         cwd=REPO_ROOT, env=env, capture_output=True, text=True, timeout=900)
    assert run.returncode == 0, run.stdout[-3000:]
