"""Version matrix: unit tests and every notebook (nbval, with the leak audit) on Python 3.11-3.15.

    nox -f .ci/noxfile.py                  # every interpreter found among 3.11, 3.12, 3.13, and
                                           # Debian forky's 3.13.x, 3.14, 3.15 (root built if missing)
    nox -f .ci/noxfile.py -s tests-3.13    # one interpreter
    nox -f .ci/noxfile.py -s forky-3.14    # forky's 3.14 only (-- notebooks/08_thread_pools.py: one chapter)
    nox -f .ci/noxfile.py -R               # reuse the venvs (skip reinstalling)

The current releases (3.13's latest patch release, 3.14, 3.15) come from Debian's forky suite, in a
root that ``.ci/forky-root`` builds once (mmdebstrap, needs root) and caches in ``.nox/forky/root``;
``forky-X.Y`` runs pytest inside it (bubblewrap, this repository bind-mounted at its own path) from
a venv in the root that holds ``requirements.txt``. On 3.15 Ray has no wheel: chapters 28-29 skip
with that reason.

Each interpreter gets its own venv (under the repository's ``.nox/``) with ``requirements.txt``
installed, which includes the course package itself (``-e .``), so everything runs from the
repository root, not from this file's folder. Interpreters are looked up on ``PATH`` and, when
pyenv is installed, among its installed versions (found through ``pyenv root``; no machine path
is written here). A missing interpreter is skipped, not an error, and nox never downloads one.
Pytest's own options (``pyproject.toml``: two xdist workers, ``--dist loadfile``, cell timeout)
apply; a JUnit report per interpreter lands in ``.nox/reports/``.
"""

from __future__ import annotations

import glob
import json
import os
import shutil
import subprocess
from pathlib import Path

import nox

ROOT = Path(__file__).resolve().parent.parent
PYTHONS = ["3.11", "3.12", "3.13"]
# Debian forky's CPython packages, run inside the root .ci/forky-root builds (3.13 there is the latest
# 3.13 patch release, 3.13.15 when this was written, beside pyenv's 3.13.0)
FORKY = ["3.13", "3.14", "3.15"]
FORKY_ROOT = ROOT / ".ci" / "forky-root"
# The chapters pyproject's addopts leave out ("not serial": the Ray chapters need the cores to
# themselves), run as .ci/test's serial phase runs them: one at a time, without xdist.
SERIAL_NOTEBOOKS = ["-o", "addopts=", "-p", "no:xdist", "-p", "no:cacheprovider",
                    "-p", "lab_snippets.testing.nbplugin", "--nbval-lax", "--nbval-current-env",
                    "--nbval-cell-timeout=60", "-m", "serial", "notebooks"]

nox.options.envdir = str(ROOT / ".nox")
nox.options.error_on_missing_interpreters = False
nox.options.download_python = "never"
nox.options.sessions = ["tests", "corpus", *(f"forky-{v}" for v in FORKY), "corpus-forky-3.14"]


def _pyenv_bin_dirs(versions: list[str]) -> list[str]:
    """``bin`` folders of the newest pyenv-installed CPython for each wanted ``X.Y`` (none without pyenv)."""
    pyenv = shutil.which("pyenv")
    if not pyenv:
        return []
    try:
        root = subprocess.run([pyenv, "root"], capture_output=True, text=True, check=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return []
    dirs = []
    for version in versions:
        found = [p for p in glob.glob(os.path.join(root, "versions", f"{version}.*", "bin"))
                 if os.access(os.path.join(p, f"python{version}"), os.X_OK)]
        found.sort(key=lambda p: [int(x) if x.isdigit() else 0
                                  for x in Path(p).parent.name.split(".")])
        if found:
            dirs.append(found[-1])
    return dirs


# pyenv's shims answer `python3.12` even when that version is not selected (and then fail), so
# put the real interpreters' folders first on PATH for nox's own interpreter discovery.
_extra = _pyenv_bin_dirs(PYTHONS)
if _extra:
    os.environ["PATH"] = os.pathsep.join([*_extra, os.environ.get("PATH", "")])


@nox.session(python=PYTHONS)
def tests(session: nox.Session) -> None:
    """Unit tests and every notebook under nbval + leak audit, on one interpreter."""
    session.chdir(ROOT)
    session.install("-r", "requirements.txt")
    session.env["SLIME_OFFLINE"] = os.environ.get("SLIME_OFFLINE", "1")
    reports = ROOT / ".nox" / "reports"
    reports.mkdir(parents=True, exist_ok=True)
    session.run("python", "-c", "import sys; print('Python', sys.version)")
    session.run("python", "-m", "pytest", "tests", "notebooks",
                # the corpus session grades the corpus on each interpreter and records it
                "--deselect", "tests/test_corpus.py::test_corpus_verdict",
                f"--junitxml={reports / f'tests-{session.python}.xml'}", *session.posargs)


@nox.session(python=PYTHONS)
def notebooks(session: nox.Session) -> None:
    """Only the notebooks (nbval + leak audit); pass a path to run one: ``-- notebooks/01_async_def.py``."""
    session.chdir(ROOT)
    session.install("-r", "requirements.txt")
    session.env["SLIME_OFFLINE"] = os.environ.get("SLIME_OFFLINE", "1")
    session.run("python", "-m", "pytest", *(session.posargs or ["notebooks"]))


@nox.session(python=PYTHONS)
def corpus(session: nox.Session) -> None:
    """The wrong-solution corpus (issue 13) on one interpreter: every chapter's reference, student
    stub and wrong solutions graded through ``labs.run_tests``.  Records this interpreter's
    verdicts in ``book/reference/corpus_verdicts.json`` and regenerates the instructor page's
    table, even when a verdict is wrong (the session then fails, and so does ``tests/test_corpus.py``).
    One chapter: ``-s corpus-3.12 -- --chapter 06``."""
    session.chdir(ROOT)
    session.install("-r", "requirements.txt")
    session.env["SLIME_OFFLINE"] = os.environ.get("SLIME_OFFLINE", "1")
    reports = ROOT / ".nox" / "reports"
    reports.mkdir(parents=True, exist_ok=True)
    out = reports / f"corpus-{session.python}.json"
    session.run("python", "-m", "lab_snippets.labs.corpus", "run", "--json", str(out),
                *session.posargs, success_codes=[0, 1])
    if not out.exists():  # `--install-only` runs nothing (a run that fails raises above)
        session.skip("no corpus run: the venv was only installed")
    session.run("python", "-m", "lab_snippets.labs.corpus", "record", str(out))
    _fail_on_wrong_verdicts(session, out, session.python)


def _fail_on_wrong_verdicts(session: nox.Session, run: Path, python: str) -> None:
    import sys
    sys.path.insert(0, str(ROOT))  # the good verdict of each kind, from the corpus module itself
    from lab_snippets.labs.corpus import GOOD

    wrong = [k for k, v in json.loads(run.read_text())["verdicts"].items()
             if v["verdict"] != GOOD[v["kind"]]]
    if wrong:
        session.error(f"wrong corpus verdicts on Python {python}: {', '.join(wrong)}")


def _forky_session(version: str):
    def forky(session: nox.Session) -> None:
        session.chdir(ROOT)
        if not shutil.which("bwrap"):
            session.skip("bubblewrap (bwrap) is not installed: apt-get install bubblewrap")
        session.run(str(FORKY_ROOT), "build", external=True)
        out = session.run(str(FORKY_ROOT), "venv", version, external=True, silent=True) or ""
        python = f"{out.strip().splitlines()[-1]}/bin/python"
        session.env["SLIME_OFFLINE"] = os.environ.get("SLIME_OFFLINE", "1")
        # the root's venv holds the package editable from the tree that first built it, which
        # is not mounted inside: import this tree's (the graded kernels inherit it)
        session.env["PYTHONPATH"] = str(ROOT)
        inside = [str(FORKY_ROOT), "run", python]
        session.run(*inside, "-c", "import sys; print('Python', sys.version)", external=True)
        reports = ROOT / ".nox" / "reports"
        reports.mkdir(parents=True, exist_ok=True)
        if session.posargs:
            session.run(*inside, "-m", "pytest", *session.posargs, external=True)
            return
        session.run(*inside, "-m", "pytest", "tests", "notebooks",
                    "--deselect", "tests/test_corpus.py::test_corpus_verdict",
                    f"--junitxml={reports / f'forky-{version}.xml'}", external=True)
        # the serial phase of .ci/test: the Ray chapters, one at a time (on 3.15 they skip, with the reason)
        session.run(*inside, "-m", "pytest", *SERIAL_NOTEBOOKS,
                    f"--junitxml={reports / f'forky-{version}-serial.xml'}", external=True)

    forky.__doc__ = (f"Unit tests and every notebook on Debian forky's python{version}, inside the "
                     "root .ci/forky-root builds; pass paths to run only those.")
    return forky


for _version in FORKY:
    nox.session(_forky_session(_version), name=f"forky-{_version}", python=False)


@nox.session(name="corpus-forky-3.14", python=False)
def corpus_forky(session: nox.Session) -> None:
    """The corpus (as the ``corpus`` session) on forky's python3.14 inside the root, recorded
    beside 3.11-3.13. One chapter: ``-- --chapter 06``."""
    session.chdir(ROOT)
    session.run(str(FORKY_ROOT), "build", external=True)
    out = session.run(str(FORKY_ROOT), "venv", "3.14", external=True, silent=True) or ""
    python = f"{out.strip().splitlines()[-1]}/bin/python"
    session.env["SLIME_OFFLINE"] = os.environ.get("SLIME_OFFLINE", "1")
    session.env["PYTHONPATH"] = str(ROOT)
    reports = ROOT / ".nox" / "reports"
    reports.mkdir(parents=True, exist_ok=True)
    run = reports / "corpus-forky-3.14.json"
    session.run(str(FORKY_ROOT), "run", python, "-m", "lab_snippets.labs.corpus", "run",
                "--json", str(run), *session.posargs, external=True, success_codes=[0, 1])
    session.run(str(FORKY_ROOT), "run", python, "-m", "lab_snippets.labs.corpus", "record",
                str(run), external=True)
    _fail_on_wrong_verdicts(session, run, "3.14 (forky)")
