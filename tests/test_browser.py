"""The built book in a real browser: headless Debian Chromium, driven by Playwright, on a loopback server.

Every page loads with no console error and no request leaving 127.0.0.1; every chapter shows its
figures, its exercise and its slime section, and offers its .py and .ipynb for download; the
previous/next links walk the table of contents; search finds a word. Screenshots of the
introduction and one chapter, light and dark, go to test-artifacts/.

Run with: pytest -m book -p no:xdist tests/test_browser.py   (needs /usr/bin/chromium: .ci/setup
installs Debian's package when run as root; never `playwright install`).
"""

from __future__ import annotations

import functools
import http.server
import json
import os
import re
import threading
from pathlib import Path
from urllib.parse import urlsplit

import pytest
import yaml

from lab_snippets.book import chapters

pytestmark = pytest.mark.book
CHROMIUM = Path("/usr/bin/chromium")
ARTIFACTS = chapters.ROOT / "test-artifacts"
CHROMIUM_ARGS = [  # no background traffic: the machine's network is closed, and the test forbids it anyway
    "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking",
    "--disable-component-update", "--disable-sync",
]
LOOPBACK = {"127.0.0.1"}
SEARCH_WORD = "semaphore"


class QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, format, *args):  # noqa: A002 - the base class's name
        pass


@pytest.fixture(scope="module")
def site(book_html):
    """The built book served from a loopback http.server on a free port."""
    handler = functools.partial(QuietHandler, directory=str(book_html))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, name="book-server")
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=10)
        assert not thread.is_alive(), "the book server thread did not stop"


@pytest.fixture(scope="module")
def browser():
    if not CHROMIUM.exists():
        if os.geteuid() == 0:
            pytest.fail(f"{CHROMIUM} is missing: `bash .ci/setup` installs Debian's chromium when run "
                        "as root")
        pytest.skip(f"{CHROMIUM} is missing (install Debian's chromium package)")
    from playwright.sync_api import sync_playwright

    with sync_playwright() as pw:
        chromium = pw.chromium.launch(executable_path=str(CHROMIUM), headless=True, args=CHROMIUM_ARGS)
        try:
            yield chromium
        finally:
            chromium.close()


class Watch:
    """Records what a browser context asked for and complained about; aborts every non-loopback request."""

    def __init__(self) -> None:
        self.outside: list[str] = []
        self.errors: list[str] = []
        self.page_url = ""

    def route(self, route) -> None:
        url = route.request.url
        if urlsplit(url).hostname in LOOPBACK:
            route.continue_()
        else:
            self.outside.append(f"{self.page_url} -> {url}")
            route.abort()

    def attach(self, page) -> None:
        page.on("console", lambda msg: msg.type == "error" and self.errors.append(
            f"{self.page_url}: console: {msg.text}"))
        page.on("pageerror", lambda exc: self.errors.append(f"{self.page_url}: page error: {exc}"))
        page.on("websocket", lambda ws: self.outside.append(f"{self.page_url} -> websocket {ws.url}"))
        page.on("requestfailed", lambda req: urlsplit(req.url).hostname in LOOPBACK
                and "ERR_ABORTED" not in (req.failure or "")  # a request cut short by the next navigation
                and self.errors.append(f"{self.page_url}: failed to load {req.url}: {req.failure}"))
        page.on("response", lambda resp: resp.status >= 400 and self.errors.append(
            f"{self.page_url}: HTTP {resp.status} for {resp.url}"))


@pytest.fixture
def open_page(browser):
    """``open_page(color_scheme)`` → (page, watch); the test's contexts are closed at teardown."""
    contexts = []

    def opener(color_scheme: str = "light"):
        context = browser.new_context(color_scheme=color_scheme, viewport={"width": 1280, "height": 900},
                                      service_workers="block")
        contexts.append(context)
        watch = Watch()
        context.route("**/*", watch.route)
        page = context.new_page()
        watch.attach(page)
        return page, watch

    yield opener
    for context in contexts:
        context.close()


def goto(page, watch: Watch, url: str) -> None:
    watch.page_url = url
    response = page.goto(url, wait_until="load")
    assert response is not None and response.ok, f"{url}: {response and response.status}"


toc_order = chapters.toc_order


def launch_configured() -> bool:
    config = yaml.safe_load((chapters.ROOT / "_config.yml").read_text(encoding="utf-8"))
    return bool(str((config.get("repository") or {}).get("url") or "").strip())


def all_pages(html: Path) -> list[str]:
    """Every page of the book: the toc's, the index and search (not stale files of older builds)."""
    pages = [f"{doc}.html" for doc in toc_order()] + ["genindex.html", "search.html"]
    missing = [p for p in pages if not (html / p).exists()]
    assert missing == [], f"pages not built: {missing}"
    return pages


# --------------------------------------------------------------------------- the tests

def test_every_page_loads_locally_without_errors(site, book_html, open_page):
    page, watch = open_page()
    pages = all_pages(book_html)
    watch.page_url = f"{site}/index.html"
    page.goto(watch.page_url)  # a redirect to the root page
    page.wait_for_url(f"{site}/{toc_order()[0]}.html", timeout=10_000)
    for name in pages:
        goto(page, watch, f"{site}/{name}")
        assert page.title(), f"{name}: no title"
    assert watch.outside == [], "requests left the machine:\n" + "\n".join(watch.outside[:30])
    assert watch.errors == [], "\n".join(watch.errors[:30])


CHAPTER_FACTS = """() => {
  const article = document.querySelector('article') || document.body;
  const imgs = [...article.querySelectorAll('.cell_output img')];
  const h2 = [...article.querySelectorAll('h2')].map(h => h.textContent.replace(/[#\\u00b6]/g, '').trim());
  const quotes = [...article.querySelectorAll('.slime-quote')];
  const dl = [...document.querySelectorAll('.dropdown-download-buttons a, a.btn[href*="_sources/"]')]
    .map(a => a.getAttribute('href'));
  return {
    images: imgs.map(i => ({src: i.getAttribute('src'), ok: i.complete && i.naturalWidth > 0,
                            alt: i.getAttribute('alt')})),
    headings: h2,
    quotes: quotes.map(q => ({visible: q.offsetWidth > 0 && q.offsetHeight > 0, text: q.innerText.length})),
    downloads: dl,
    launch: document.querySelectorAll('.dropdown-launch-buttons').length,
    sideways: [...article.querySelectorAll('div.cell_input pre')]
      .filter(e => !e.closest('.tag_hide-input, .tag_hide-cell') && e.scrollWidth > e.clientWidth + 1)
      .map(e => e.innerText.split('\\n').reduce((a, b) => b.length > a.length ? b : a, '')),
    cut: [...article.querySelectorAll('div.cell_output div.output:not(.text_html) pre')]
      .filter(e => e.scrollWidth > e.clientWidth + 1).map(e => e.textContent.slice(0, 80)),
    text: article.innerText,
  };
}"""


@pytest.mark.parametrize("chapter", chapters.existing(), ids=lambda c: c.stem)
def test_chapter_page_shows_figures_exercise_and_slime(site, open_page, chapter):
    page, watch = open_page()
    goto(page, watch, f"{site}/notebooks/{chapter.stem}.html")
    facts = page.evaluate(CHAPTER_FACTS)
    # every chapter that draws shows its figures (23 draws none since session 11: its one figure
    # plotted only the notebook's own waits, so the chapter prints the dump's latency instead)
    draws = re.search(r"\.plot\(|\bplt\.|subplots\(", chapter.path.read_text(encoding="utf-8"))
    assert facts["images"] or not draws, "no figure on the page"
    broken = [i["src"] for i in facts["images"] if not i["ok"]]
    assert broken == [], f"figures that did not load: {broken}"
    assert any(h.startswith("Exercise") for h in facts["headings"]), \
        f"no Exercise heading in {facts['headings']}"
    assert any(h == "In slime" for h in facts["headings"]), "no 'In slime' section"
    assert facts["quotes"] and all(q["visible"] and q["text"] > 0 for q in facts["quotes"]), \
        "slime quote not shown"
    assert "BEGIN HIDDEN TESTS" not in facts["text"], "hidden tests are shown"
    # A visible line of code (88 characters at most, test_reading) fits the column at 1280 px
    # (custom.css sets the code's size); counterfactual: the theme's 14 px shows 81 characters.
    assert facts["sideways"] == [], (
        f"code cells scroll sideways at 1280 px; their longest lines: {facts['sideways'][:3]}")
    # A printed result wraps at the column (custom.css); counterfactual: the theme's `pre` (no wrap).
    assert facts["cut"] == [], f"results run off the column's right edge: {facts['cut'][:3]}"
    # A laptop's 1200 px window too (custom.css sets a smaller size below 1280 px; a reader at 1200
    # px scrolled sideways in every chapter); counterfactual: the 1280 px size at every width.
    page.set_viewport_size({"width": 1200, "height": 900})
    narrow = page.evaluate(CHAPTER_FACTS)
    assert narrow["sideways"] == [], (
        f"code cells scroll sideways at 1200 px; their longest lines: {narrow['sideways'][:3]}")
    # Both downloads are offered, and both are served.
    wanted = {f"_sources/notebooks/{chapter.stem}.py", f"_sources/notebooks/{chapter.stem}.ipynb"}
    offered = {re.sub(r"^(\.\./)+", "", h) for h in facts["downloads"]}
    assert wanted <= offered, f"download buttons offer {sorted(offered)}"
    notebook = page.request.get(f"{site}/_sources/notebooks/{chapter.stem}.ipynb")
    assert notebook.ok
    nb = json.loads(notebook.text())
    assert nb["nbformat"] == 4 and nb["cells"][0]["source"]
    assert "BEGIN HIDDEN TESTS" not in notebook.text(), "the downloadable .ipynb carries hidden tests"
    source = page.request.get(f"{site}/_sources/notebooks/{chapter.stem}.py")
    assert source.ok and source.text().startswith("# %%")
    assert "BEGIN HIDDEN TESTS" not in source.text(), "the downloadable .py carries hidden tests"
    # Launch buttons only with a repository URL configured (_config.yml `repository.url`).
    assert facts["launch"] == (1 if launch_configured() else 0)
    assert watch.outside == [] and watch.errors == [], "\n".join(watch.outside + watch.errors)


def test_previous_and_next_walk_the_table_of_contents(site, open_page):
    """Each page's 'next' link leads to the following page of the toc and 'previous' to the one before;
    clicking them navigates (checked by clicking on the first pages, by the links' targets on all)."""
    page, watch = open_page()
    order = [f"{site}/{doc}.html" for doc in toc_order()]

    def link(selector: str) -> str | None:
        found = page.locator(selector)
        return found.first.evaluate("a => a.href.split('#')[0]") if found.count() else None

    for i, url in enumerate(order):
        goto(page, watch, url)
        assert link("a.left-prev") == (order[i - 1] if i > 0 else None), f"{url}: previous"
        assert link("a.right-next") == (order[i + 1] if i + 1 < len(order) else None), f"{url}: next"
    goto(page, watch, order[0])
    for expected in order[1:3]:
        with page.expect_navigation():
            page.locator("a.right-next").first.click()
        assert page.url.split("#")[0] == expected
    with page.expect_navigation():
        page.locator("a.left-prev").first.click()
    assert page.url.split("#")[0] == order[1]
    assert watch.outside == [] and watch.errors == [], "\n".join(watch.outside + watch.errors)


def test_search_finds_a_word_offline(site, open_page):
    page, watch = open_page()
    goto(page, watch, f"{site}/{toc_order()[0]}.html")
    # The header's search box, as a reader uses it: Ctrl+K opens it, Enter searches.
    page.keyboard.press("Control+k")
    box = page.locator("input[name='q']:visible").first
    box.fill(SEARCH_WORD)
    with page.expect_navigation():
        box.press("Enter")
    assert urlsplit(page.url).path.endswith("search.html")
    results = page.locator("#search-results ul.search li")
    results.first.wait_for(timeout=20_000)
    links = results.locator("a").evaluate_all("els => els.map(a => a.getAttribute('href'))")
    assert len(links) >= 1
    assert any("notebooks/06_semaphore" in h for h in links) or not chapters.BY_NUMBER["06"].path.exists()
    assert watch.outside == [] and watch.errors == [], "\n".join(watch.outside + watch.errors)


READABILITY = """(selector) => {
  function rgb(s) { const m = s.match(/[\\d.]+/g).map(Number);
                    return {r: m[0], g: m[1], b: m[2], a: m.length > 3 ? m[3] : 1}; }
  function lum(c) { const f = v => { v /= 255;
                                     return v <= 0.03928 ? v / 12.92 : Math.pow((v + 0.055) / 1.055, 2.4); };
                    return 0.2126 * f(c.r) + 0.7152 * f(c.g) + 0.0722 * f(c.b); }
  function background(el) { for (; el; el = el.parentElement) {
                              const c = rgb(getComputedStyle(el).backgroundColor);
                              if (c.a > 0.5) return c; } return {r: 255, g: 255, b: 255, a: 1}; }
  const worst = [];
  for (const root of document.querySelectorAll(selector)) {
    for (const el of [root, ...root.querySelectorAll('div, a, span')]) {
      if (!el.childNodes.length
          || ![...el.childNodes].some(n => n.nodeType === 3 && n.textContent.trim())) continue;
      const fg = lum(rgb(getComputedStyle(el).color)), bg = lum(background(el));
      const ratio = (Math.max(fg, bg) + 0.05) / (Math.min(fg, bg) + 0.05);
      worst.push([ratio, el.textContent.trim().slice(0, 40)]);
    }
  }
  worst.sort((a, b) => a[0] - b[0]);
  return worst.slice(0, 3);
}"""


@pytest.mark.parametrize("scheme", ["light", "dark"])
def test_screenshots_and_readability(site, open_page, scheme):
    """Screenshots for a reader's eye; the slime quote's text keeps a 4.5:1 contrast; figures sit on white."""
    ARTIFACTS.mkdir(exist_ok=True)
    page, watch = open_page(scheme)
    goto(page, watch, f"{site}/{toc_order()[0]}.html")
    assert page.evaluate("document.documentElement.dataset.theme") == scheme
    page.screenshot(path=ARTIFACTS / f"intro-{scheme}.png", full_page=True)
    existing = chapters.existing()
    assert existing, "no chapter to show"
    chapter = next((c for c in existing if c.number == "06"), existing[0])
    goto(page, watch, f"{site}/notebooks/{chapter.stem}.html")
    page.screenshot(path=ARTIFACTS / f"chapter-{chapter.number}-{scheme}.png")
    figure = page.locator(".cell_output img").first
    # a figure sits in its answer's fold (round 17): open it, as a reader clicks "Show the answer"
    figure.evaluate("i => { for (let d = i.closest('details'); d; d = d.parentElement.closest('details'))"
                    " d.open = true; }")
    figure.scroll_into_view_if_needed()
    figure.screenshot(path=ARTIFACTS / f"chapter-{chapter.number}-figure-{scheme}.png")
    assert figure.evaluate("i => getComputedStyle(i).backgroundColor") == "rgb(255, 255, 255)"
    assert figure.evaluate("i => getComputedStyle(i).filter") == "none"
    quote = page.locator(".slime-quote").first
    quote.scroll_into_view_if_needed()
    page.screenshot(path=ARTIFACTS / f"chapter-{chapter.number}-slime-{scheme}.png")
    worst = page.evaluate(READABILITY, ".slime-quote")
    assert worst and worst[0][0] >= 4.5, f"slime quote text hard to read in the {scheme} theme: {worst}"
    assert watch.outside == [] and watch.errors == [], "\n".join(watch.outside + watch.errors)


# --------------------------------------------------------------------------- the Chinese edition

ZH_SEARCH = ("信号量", "notebooks/06_semaphore")


def test_zh_every_page_loads_locally_without_errors(site, book_html, open_page):
    page, watch = open_page()
    pages = all_pages(book_html / "zh_CN")
    for name in pages:
        goto(page, watch, f"{site}/zh_CN/{name}")
        assert page.evaluate("document.documentElement.lang").lower().startswith("zh"), f"{name}: lang"
        assert re.search(r"[\u4e00-\u9fff]", page.title()), f"zh {name}: title {page.title()!r}"
    assert watch.outside == [], "requests left the machine:\n" + "\n".join(watch.outside[:30])
    assert watch.errors == [], "\n".join(watch.errors[:30])


def test_language_switch_leads_to_the_same_chapter(site, open_page):
    page, watch = open_page()
    chapter = chapters.existing()[len(chapters.existing()) // 2]
    english = f"{site}/notebooks/{chapter.stem}.html"
    chinese = f"{site}/zh_CN/notebooks/{chapter.stem}.html"
    goto(page, watch, english)
    with page.expect_navigation():
        page.locator(".edition-switch a").first.click()
    assert page.url.split("#")[0] == chinese
    assert page.locator("h1").first.inner_text().startswith(chapter.number)
    with page.expect_navigation():
        page.locator(".edition-switch a").first.click()
    assert page.url.split("#")[0] == english
    assert watch.outside == [] and watch.errors == [], "\n".join(watch.outside + watch.errors)


def test_zh_search_finds_a_chinese_word_offline(site, open_page):
    page, watch = open_page()
    goto(page, watch, f"{site}/zh_CN/{toc_order()[0]}.html")
    page.keyboard.press("Control+k")
    box = page.locator("input[name='q']:visible").first
    box.fill(ZH_SEARCH[0])
    with page.expect_navigation():
        box.press("Enter")
    assert urlsplit(page.url).path.endswith("zh_CN/search.html")
    results = page.locator("#search-results ul.search li")
    results.first.wait_for(timeout=20_000)
    links = results.locator("a").evaluate_all("els => els.map(a => a.getAttribute('href'))")
    assert any(ZH_SEARCH[1] in h for h in links), f"searching {ZH_SEARCH[0]!r} found {links[:10]}"
    assert watch.outside == [] and watch.errors == [], "\n".join(watch.outside + watch.errors)


def zh_search(page, watch, site: str, word: str) -> list[str]:
    """The links the zh search page lists for ``word``, once Sphinx's search has finished."""
    from urllib.parse import quote

    goto(page, watch, f"{site}/zh_CN/search.html?q={quote(word)}")
    # Sphinx retitles the results "Search Results" (in the page's language) when it has listed them all
    page.wait_for_function("() => document.querySelector('#search-results .search-summary') !== null && "
                           "document.querySelector('#search-results h2').innerText === "
                           "Documentation.gettext('Search Results')", timeout=20_000)
    return page.locator("#search-results ul.search li a").evaluate_all(
        "els => els.map(a => a.getAttribute('href'))")


def test_zh_search_finds_every_term_on_the_page_that_teaches_it(site, open_page):
    """Each Chinese word of TERMS.md (线程池, 进程组, 守护线程, 僵尸进程, 卡死 among them), typed into
    the zh search page, lists the page TERMS.md says teaches it."""
    from lab_snippets.book import zhsearch

    page, watch = open_page()
    missing = []
    pairs = [(w, p) for term in zhsearch.terms() for w, p in zip(term.words, term.pages, strict=True)]
    assert {"线程池", "进程组", "守护线程", "僵尸进程", "卡死"} <= {w for w, _ in pairs}
    zh_search(page, watch, site, "线程池")
    assert page.locator(".edition-switch a[hreflang='en']").count() == 1, (
        "the zh search page has no language switch")
    # Five words through the page itself (typed query, listed links); then every word through the
    # same page's search functions (Sphinx 7.4 searchtools: the query parsed and run as the page
    # does, without drawing the list), on one page load instead of one per word.
    through_the_page = {"线程池", "进程组", "守护线程", "僵尸进程", "卡死"}
    for word, doc in pairs:
        if word in through_the_page:
            links = zh_search(page, watch, site, word)
            if not any(urlsplit(h).path.endswith(f"{doc}.html") for h in links):
                missing.append(f"{word} → {doc}: the page listed {links[:4]}")
    found = page.evaluate("words => words.map(w => Search._performSearch(...Search._parseQuery(w))"
                          ".map(result => result[0]))", [w for w, _ in pairs])
    for (word, doc), docnames in zip(pairs, found, strict=True):
        if doc not in docnames:
            missing.append(f"{word} → {doc}: the search found {docnames[:4]}")
    assert missing == [], f"{len(missing)} of {len(pairs)} searches miss their page:\n" + "\n".join(missing)
    assert watch.outside == [] and watch.errors == [], "\n".join(watch.outside + watch.errors)


@pytest.mark.parametrize("width", [760, 380])
def test_call_site_explanation_is_not_clipped_by_the_output_scroll_box(browser, width):
    """nb_scroll_outputs caps outputs at 24em; a call site's explanation is prose and must show in
    full (without book/_static/custom.css, site 01b's ends mid-sentence at 380 px)."""
    import myst_nb

    from lab_snippets.sites import show_call_site

    css = "\n".join(path.read_text(encoding="utf-8") for path in (
        Path(myst_nb.__file__).parent / "static/mystnb.css", chapters.ROOT / "book/_static/custom.css"))
    page = browser.new_page(viewport={"width": width + 40, "height": 900})
    try:
        page.set_content(
            f'<html><head><style>{css}</style></head><body style="width:{width}px;margin:0">'
            '<div class="cell docutils container config_scroll_outputs">'
            '<div class="cell_output docutils container"><div class="output text_html">'
            f'{show_call_site("01b")._repr_html_()}</div></div></div></body></html>')
        box, explanation = page.evaluate("""() => [
            document.querySelector('div.cell_output').getBoundingClientRect().bottom,
            document.querySelector('.slime-explanation').getBoundingClientRect().bottom]""")
    finally:
        page.close()
    assert explanation <= box + 1, f"at {width} px the output box cuts the call-site explanation off"
