"""The chapter pages' Sphinx extension (``lab_snippets.book.pages``) on small inputs."""

from lab_snippets.book import pages

SOLUTION = '''async def scaled(x: int) -> int:
    """Twice x."""
    ### BEGIN SOLUTION
    await asyncio.sleep(0)
    return 2 * x
    ### END SOLUTION
'''


def test_the_reader_gets_the_cell_a_student_notebook_gives():
    # counterfactual: a stub that keeps the region's lines, or drops the signature and docstring
    stub = pages.student_stub(SOLUTION)
    assert stub.splitlines()[:2] == ['async def scaled(x: int) -> int:', '    """Twice x."""']
    assert "    raise NotImplementedError()" in stub.splitlines()
    assert "2 * x" not in stub and "BEGIN SOLUTION" not in stub


def test_the_line_over_the_reader_cell_exists_in_both_editions():
    assert set(pages.YOUR_CELL) == {"en", "zh"} and all(pages.YOUR_CELL.values())
