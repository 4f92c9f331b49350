"""show_source: the page shows a worker's source as it is in its module, trimmed where asked."""

import pytest

from lab_snippets import showcode
from lab_snippets.proc_workers import _cmd_chatter


def test_whole_function_is_its_source():
    lines = showcode.source_lines(_cmd_chatter)
    assert lines[0].startswith("def _cmd_chatter(") and lines[-1].strip() == "return args.exit", (
        "the whole function, first to last line, is shown")
    assert "# ..." not in lines


def test_docstring_is_left_out_and_the_body_kept():
    from lab_snippets.service_workers import handle

    lines = showcode.source_lines(handle)
    assert lines[0].startswith("async def handle(") and not any('"""' in line for line in lines), (
        "the docstring is left out")
    assert lines[1].strip() == "number, duration, *cleanup = job", "the body starts right after the signature"
    assert showcode._without_docstring(["x = 1"]) == ["x = 1"], "source that is no function is kept whole"


def test_trimmed_to_first_and_last_with_markers():
    lines = showcode.source_lines(_cmd_chatter, first="_write_all(2", last="_write_all(1")
    assert (
        [line.strip() for line in lines]
        == ["# ...", '_write_all(2, args.err_bytes, b"e")', '_write_all(1, args.out_bytes, b"o")', "# ..."]
    ), "only the lines from first to last, with a marker for each side left out"


def test_missing_anchor_is_an_error():
    with pytest.raises(ValueError, match="holds"):
        showcode.source_lines(_cmd_chatter, first="no such line")
    with pytest.raises(ValueError, match="after"):
        showcode.source_lines(_cmd_chatter, first="_write_all(1", last="_write_all(2")


def test_show_source_displays_a_python_block_under_its_path(monkeypatch):
    shown = []
    monkeypatch.setattr("IPython.display.display", lambda obj: shown.append(obj))
    showcode.show_source(_cmd_chatter, first="_write_all(2", last="_write_all(1")
    text = shown[0].data
    assert text.startswith("`lab_snippets/proc_workers.py` · `_cmd_chatter`"), "headed by the module's path"
    assert "```python\n# ...\n" in text and text.rstrip().endswith("```"), "a fenced Python block"


def test_a_decorated_function_is_labelled_with_its_own_file():
    """Chapter 24's alarm_timeout (a @contextmanager) was labelled "contextlib.py · alarm_timeout":
    the label named the wrapper's file, not the file its source comes from."""
    from lab_snippets.cpu_work import alarm_timeout

    assert showcode._where(alarm_timeout) == "lab_snippets/cpu_work.py"
    assert showcode.source_lines(alarm_timeout)[0] == "@contextmanager"
