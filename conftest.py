# Chapter notebooks (notebooks/NN_slug.py) are collected and run by nbval through this plugin.
import pytest

pytest_plugins = ["lab_snippets.testing.nbplugin"]


@pytest.hookimpl(optionalhook=True)  # pytest-xdist's hook; absent under -p no:xdist
def pytest_xdist_make_scheduler(config, log):
    """Under ``--dist loadfile``, give each claim mutation and each corpus verdict a work unit of its own.

    Everything else stays grouped by file (a notebook's cells must run on one worker); the
    mutations and the verdicts, one fresh kernel each, are then shared by the workers instead of
    queueing on one (lab_snippets.testing.scheduling).
    """
    if config.getvalue("dist") == "loadfile":
        from lab_snippets.testing.scheduling import xdist_scheduler
        return xdist_scheduler(config, log)
    return None
