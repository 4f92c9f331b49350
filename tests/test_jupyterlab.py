"""JupyterLab serves every chapter (a jupytext `.py` file) as a notebook through its contents API."""

import json
import os
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import jupytext
import pytest

from lab_snippets.book import chapters

EXISTING = chapters.existing()


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def get(url: str, timeout: float = 10):
    with urllib.request.urlopen(url, timeout=timeout) as response:  # noqa: S310 - loopback only
        return response.status, response.read()


@pytest.fixture(scope="module")
def lab(tmp_path_factory):
    port = free_port()
    home = tmp_path_factory.mktemp("jupyter")
    cmd = [str(Path(sys.executable).with_name("jupyter")), "lab", "--no-browser", "--ip=127.0.0.1",
           f"--port={port}", "--ServerApp.token=", "--ServerApp.password=", "--ServerApp.port_retries=0",
           f"--ServerApp.root_dir={chapters.ROOT}"]
    if os.geteuid() == 0:
        cmd.append("--allow-root")
    env = {**os.environ, "JUPYTER_RUNTIME_DIR": str(home / "runtime"), "JUPYTER_DATA_DIR": str(home / "data"),
           "JUPYTER_CONFIG_DIR": str(home / "config"), "IPYTHONDIR": str(home / "ipython")}
    log = (home / "server.log").open("wb")
    proc = subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT, env=env, cwd=chapters.ROOT,
                            start_new_session=True)
    base = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 60
        while True:
            assert proc.poll() is None, f"jupyter lab exited: {(home / 'server.log').read_text()[-2000:]}"
            try:
                if get(f"{base}/api/status", timeout=2)[0] == 200:
                    break
            except OSError:
                pass
            assert time.monotonic() < deadline, "jupyter lab did not answer within 60 s"
            time.sleep(0.3)
        yield base
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=15)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(timeout=10)
        log.close()
    assert proc.returncode is not None


@pytest.mark.parametrize("chapter", EXISTING, ids=[c.stem for c in EXISTING])
def test_contents_api_serves_the_chapter_as_a_notebook(lab, chapter):
    status, body = get(f"{lab}/api/contents/notebooks/{chapter.stem}.py?type=notebook&content=1", timeout=30)
    assert status == 200
    model = json.loads(body)
    assert model["type"] == "notebook" and model["format"] == "json"
    cells = model["content"]["cells"]
    expected = jupytext.read(chapter.path, fmt="py:percent")
    assert cells[0]["cell_type"] == "markdown"
    assert cells[0]["source"].splitlines()[0] == f"# {chapter.number} · {chapter.title}"
    assert sum(c["cell_type"] == "code" for c in cells) == sum(c.cell_type == "code" for c in expected.cells)
