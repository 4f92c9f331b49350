"""The course's tested helpers.

Importing the package first skips jsonschema's optional ``rfc3987_syntax`` import: it compiles a
grammar at import (≈ 3 s of CPU), only for the "iri" string format, which no notebook schema uses.
``nbformat`` imports jsonschema, so every process that reads notebooks (pytest and its workers, the
nbval plugin, the graders) would pay it; the plugin is loaded with ``-p`` before nbval for that.
"""

import sys

if "jsonschema" not in sys.modules:
    sys.modules.setdefault("rfc3987_syntax", None)
