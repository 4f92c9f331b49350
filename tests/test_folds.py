"""``lab_snippets.book.folds``: the check and the Why after an answer go inside its fold; nothing
else moves. Counterfactuals: a merge that takes any following dropdown (a "Going further" would
vanish into the answer), one that stops at the first check (a second check stays outside), one
that moves an exercise's cells, and one that drops the Why's text."""

from __future__ import annotations

from bs4 import BeautifulSoup

from lab_snippets.book.folds import merge


def _cell(tags: str, label: str, whole: bool, text: str) -> str:
    fold_cls = "above-input" if whole else "below-input"
    inp = f'<div class="cell_input docutils container"><pre>{text} input</pre></div>'
    out = f'<div class="cell_output docutils container"><pre>{text} output</pre></div>'
    summary = (f'<summary><p class="collapsed admonition-title">{label}</p>'
               f'<p class="expanded admonition-title">Hide</p></summary>')
    inner = f'<details class="admonition hide {fold_cls}">{summary}{inp if whole else ""}{out}</details>'
    return f'<div class="cell {tags} docutils container">{"" if whole else inp}{inner}</div>'


def _drop(title: str, text: str) -> str:
    return (f'<details class="sd-sphinx-override sd-dropdown sd-card sd-mb-3">'
            f'<summary class="sd-summary-title">'
            f'<span class="sd-summary-text">{title}</span></summary>'
            f'<div class="sd-summary-content sd-card-body docutils"><p>{text}</p></div></details>')


ANSWER = _cell("tag_hide-output", "Show the answer", False, "answer")
CLAIM = _cell("tag_claim tag_hide-cell", "Show the check", True, "claim")
CHECK = _cell("tag_hide-cell", "Show the check", True, "plain check")
WHY = _drop("Why", "because of permits")
FURTHER = _drop("Going further", "the folded cells below")
EXPERIMENT = _cell("tag_hide-cell", "Show the experiment", True, "experiment")
SOLUTION = _cell("tag_solution tag_hide-cell", "Show the solution", True, "solution")


def _top_level(html: str) -> list[str]:
    soup = BeautifulSoup(html, "html.parser")
    out = []
    for tag in soup.find_all(recursive=False):
        if tag.name == "details":
            out.append(tag.find(class_="sd-summary-text").get_text(strip=True))
        elif tag.name == "div":
            out.append(tag.find("p", class_="collapsed").get_text(strip=True))
        else:
            out.append(tag.name)
    return out


def test_the_checks_and_the_why_go_inside_the_answer_and_the_next_dropdown_stays():
    html, moved = merge(ANSWER + CLAIM + CHECK + WHY + FURTHER + "<p>next</p>")
    assert _top_level(html) == ["Show the answer", "Going further", "p"], _top_level(html)
    assert moved == 3
    soup = BeautifulSoup(html, "html.parser")
    fold = soup.find("div", class_="cell").find("details")
    texts = fold.get_text(" ", strip=True)
    assert texts.index("answer output") < texts.index("because of permits") < texts.index("claim input") \
        < texts.index("plain check input"), "output, then Why, then the checks"
    assert fold.find(class_="answer-why-title").get_text() == "Why"
    assert len(fold.find_all("details")) == 2, "each check keeps its own fold inside the answer"


def test_a_paragraph_ends_the_run_and_the_zh_titles_are_known():
    html, moved = merge(ANSWER + "<p>between</p>" + CLAIM + WHY)
    assert moved == 0 and html == ANSWER + "<p>between</p>" + CLAIM + WHY
    zh_answer = ANSWER.replace("Show the answer", "显示答案")
    zh_check = CHECK.replace("Show the check", "显示检查")
    html, moved = merge(zh_answer + zh_check + _drop("为什么会这样", "因为"))
    assert moved == 2 and _top_level(html) == ["显示答案"]


def test_a_going_further_takes_its_experiments_but_not_an_exercise_nor_after_another_dropdown():
    html, _ = merge(FURTHER + EXPERIMENT + CHECK + "<p>x</p>")
    assert _top_level(html) == ["Going further", "p"]
    html, _ = merge(FURTHER + SOLUTION)
    assert _top_level(html) == ["Going further", "Show the solution"]
    html, _ = merge(FURTHER + _drop("Python versions", "v") + EXPERIMENT)
    assert _top_level(html) == ["Going further", "Python versions", "Show the experiment"]


def test_a_fold_with_only_the_input_takes_nothing():
    setup = ANSWER.replace('<div class="cell_output docutils container"><pre>answer output</pre></div>', "")
    html, moved = merge(setup + CLAIM)
    assert moved == 0
