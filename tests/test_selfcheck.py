from collections import Counter

import pytest

from lab_snippets.book import chapters, selfcheck


@pytest.fixture(scope="module")
def per_chapter():
    return selfcheck.usage_by_chapter()


@pytest.mark.parametrize("chapter", [c for c in chapters.existing() if c.number != selfcheck.CAPSTONE],
                         ids=lambda c: c.stem)
def test_each_chapter_uses_what_it_teaches(per_chapter, chapter):
    found = selfcheck.taught_here(chapter.number, per_chapter.get(chapter.number, Counter()))
    assert found, f"the scanner finds none of chapter {chapter.number}'s mechanisms in its notebook"


def test_capstone_draws_on_several_chapters(per_chapter):
    if not chapters.BY_NUMBER[selfcheck.CAPSTONE].path.exists():
        pytest.skip("chapter 14 does not exist yet")
    assert len(selfcheck.borrowed(selfcheck.CAPSTONE, per_chapter[selfcheck.CAPSTONE])) >= 4


def test_taught_here_and_borrowed_on_a_made_up_usage():
    usage = Counter({"asyncio.Semaphore": 3, "asyncio.gather": 2, "os.system": 1})
    assert selfcheck.taught_here("06", usage) == [("asyncio.Semaphore", 3)]
    assert selfcheck.borrowed("06", usage) == ["03"]


def test_page_is_in_step_with_the_notebooks(per_chapter):
    page = selfcheck.PAGE.read_text(encoding="utf-8")
    assert page == selfcheck.render(per_chapter), "run `python -m lab_snippets.selfcheck`"
