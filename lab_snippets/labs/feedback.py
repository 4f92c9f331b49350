"""Feedback that teaches without giving the hidden tests away.

nbgrader's ``generate_feedback`` renders each graded notebook as HTML for the student.  The
graded notebook holds the hidden tests' code (``grade`` runs the instructor's test cells) and
their tracebacks, which quote the failing lines.  ``HideTestCode`` (wired in by the
``nbgrader_config.py`` that ``labs release`` writes) keeps what a student should see: which test
cell failed and its message (the property that broke and the idea to revisit), and replaces the
hidden part of the cell and the traceback.
"""

from __future__ import annotations

from nbconvert.preprocessors import Preprocessor
from traitlets import Bool

from lab_snippets.labs.common import BEGIN_HIDDEN, END_HIDDEN, failure_message

PLACEHOLDER = "# (hidden tests: their code is not shown; a failure's message is below)"


def strip_hidden(source):
    """``source`` with each hidden-test region (markers included) replaced by one comment line."""
    out, inside = [], False
    for line in source.splitlines():
        s = line.strip()
        if s == BEGIN_HIDDEN:
            inside = True
            out.append(line[: len(line) - len(line.lstrip())] + PLACEHOLDER)
        elif s == END_HIDDEN:
            inside = False
        elif not inside:
            out.append(line)
    return "\n".join(out)


class HideTestCode(Preprocessor):
    """For hidden-test cells: drop the hidden code, and show a failure as its message only."""

    enabled = Bool(True, help="on by default (nbconvert's preprocessors are off unless enabled)").tag(
        config=True)

    def preprocess_cell(self, cell, resources, index):
        meta = cell.get("metadata", {}).get("nbgrader", {})
        if cell.get("cell_type") == "code" and BEGIN_HIDDEN in cell.get("source", ""):
            cell.source = strip_hidden(cell.source)
            message = failure_message(cell.get("outputs", []))
            outputs = []
            for o in cell.get("outputs", []):
                if o.get("output_type") == "error":
                    o["traceback"] = [f"Test failed: {message}"]
                    outputs.append(o)
                elif o.get("output_type") == "stream" and o.get("name") == "stderr":
                    outputs.append(o)  # nbgrader scores stderr as a failure: keep the evidence
            cell.outputs = outputs
        elif cell.get("cell_type") == "code" and meta.get("grade") and not meta.get("solution"):
            pass  # visible tests: the student has their code already
        return cell, resources
