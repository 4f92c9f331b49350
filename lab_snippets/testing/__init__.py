"""Course tooling: how the chapters are tested (the nbval plugin for ``notebooks/*.py`` and its
leak audit)."""
