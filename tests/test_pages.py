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


def test_a_stub_is_fitted_to_the_page_without_changing_what_it_means():
    # counterfactual: no fitting (a 103-column signature scrolls), or a wrap that breaks the code
    import ast
    long_def = ("async def first_results(start_work, wanted: int, limit: int, "
                "job_timeout: float | None = None) -> list:\n"
                '    """Results of the first `wanted` jobs to finish, never more than `limit` in '
                "flight, none\n    running longer than `job_timeout` seconds.\"\"\"\n"
                "    raise NotImplementedError()\n")
    fitted = pages.fit_to_page(long_def)
    assert max(map(len, fitted.splitlines())) <= pages.PAGE_COLUMNS
    assert ast.dump(ast.parse(fitted).body[0].args) == ast.dump(ast.parse(long_def).body[0].args)
    doc = " ".join(ast.get_docstring(ast.parse(fitted).body[0]).split())
    assert doc == " ".join(ast.get_docstring(ast.parse(long_def).body[0]).split())
    short = "def f(x):\n    return x\n"
    assert pages.fit_to_page(short) == short, "a cell that fits is shown as it is"
