"""End-to-end: build the site, open it in real headless Chromium, check what a reader sees.

The site is served under a sub-path (``/pto/``) to prove its links are relative; one page is also
opened from disk. Probes run in a harness page of the test's own that frames a site page (same
origin) and reports measurements as JSON; screenshots of English and Chinese op pages and of the
dtype matrix are written to $PTOSPEC_SCREENSHOTS (or a temporary folder) and their paths printed.
One Chromium serves the whole module, driven over the DevTools protocol (``tests/cdp.py``): each page
is a tab of it, read back as soon as the harness says its probe has run.

Skipped when no Chromium binary is installed (``.ci/install-browser`` installs Debian's ``chromium``
with the math and CJK fonts).
"""

from __future__ import annotations

import functools
import http.server
import json
import os
import re
import threading
import urllib.parse
from collections.abc import Iterator
from pathlib import Path

import pytest
from cdp import Browser, Page  # tests/cdp.py and tests/site_build.py, beside this file
from site_build import BROWSER, SITE_URL, finished

from ptospec.cli import main
from ptospec.loader import load_database

ROOT = Path(__file__).resolve().parent.parent
pytestmark = pytest.mark.skipif(BROWSER is None, reason="no chromium binary found (run .ci/install-browser)")
PREFIX = "/pto"  # the site is served under a sub-path
FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
         "--disable-component-update", "--disable-sync", "--no-first-run"]

# Probes, run against the framed page's window ``w`` and document ``d``; each returns a JSON-able value.
PROBES = {
    "page": """function (w, d) {
      var q = function (s) { return d.querySelector(s); };
      var alt = Array.prototype.map.call(d.querySelectorAll('a.md-select__link'),
                                         function (a) { return [a.hreflang, a.href]; });
      var maths = Array.prototype.map.call(d.querySelectorAll('.ptospec-math'), function (m) {
        var cs = w.getComputedStyle(m), art = q('article').getBoundingClientRect(), r = m.getBoundingClientRect();
        return {overflow: cs.overflowX, scroll: m.scrollWidth, client: m.clientWidth,
                inside: r.right <= art.right + 1};
      });
      var braces = Array.prototype.filter.call(d.querySelectorAll('math mo'), function (mo) {
        return mo.textContent === '{' || mo.textContent === '(';
      }).map(function (mo) { return mo.getBoundingClientRect().height /
                                    parseFloat(w.getComputedStyle(mo).fontSize); });
      var svgs = Array.prototype.map.call(d.querySelectorAll('.pw-example svg'), function (s) {
        var r = s.getBoundingClientRect();
        return {w: r.width, h: r.height, texts: s.querySelectorAll('text').length,
                written: s.querySelectorAll('rect.pw-written').length};
      });
      var diffs = Array.prototype.map.call(d.querySelectorAll('details.ptospec-diff'),
                                           function (x) { return x.open; });
      var mathFont = d.querySelector('math') ? w.getComputedStyle(d.querySelector('math')).fontFamily : '';
      return {lang: d.documentElement.lang, alternates: alt, maths: maths, braces: braces, svgs: svgs,
              diffsOpen: diffs, mathFont: mathFont,
              copyButtons: d.querySelectorAll('button[data-md-type=copy]').length,
              search: (q('input.md-search__input') || {}).placeholder || '',
              toc: (q('.md-nav--secondary > label.md-nav__title') || {}).textContent || '',
              footer: (q('.ptospec-provenance') || {}).textContent || '',
              rootLinks: Array.prototype.filter.call(d.querySelectorAll('[href],[src]'), function (e) {
                var v = e.getAttribute('href') || e.getAttribute('src');
                return v.charAt(0) === '/' && v.charAt(1) !== '/';
              }).length,
              text: d.querySelector('article').textContent};
    }""",
    "matrix": """function (w, d) {
      var wrap = d.querySelector('.ptospec-matrix-wrap'), ths = d.querySelectorAll('thead th');
      var first = ths[0], last = ths[ths.length - 1], wr = wrap.getBoundingClientRect();
      wrap.scrollTop = 2000; wrap.scrollLeft = wrap.scrollWidth;
      var fr = first.getBoundingClientRect(), lr = last.getBoundingClientRect();
      var cell = d.querySelector('tbody tr:last-child th').getBoundingClientRect();
      var out = {columns: ths.length, sticky: w.getComputedStyle(first).position,
                 headerStays: Math.abs(fr.top - wr.top) < 2,
                 lastVisible: lr.right <= wr.right + 1 && lr.left >= wr.left,
                 firstColumnStays: Math.abs(cell.left - wr.left) < 2, wrapWidth: wr.width,
                 scrollable: wrap.scrollWidth >= wrap.clientWidth};
      wrap.scrollTop = 0; wrap.scrollLeft = 0;
      return out;
    }""",
    "narrow": """function (w, d) {
      function wide(el) { return el.scrollWidth > el.clientWidth + 1; }
      function shown(el) { return w.getComputedStyle(el).display !== 'none'; }
      var art = d.querySelector('article');
      var cards = Array.prototype.map.call(art.querySelectorAll('table[data-cards]'), function (t) {
        return {thead: shown(t.querySelector('thead')), labels: t.querySelectorAll('td[data-label]').length};
      });
      var rules = Array.prototype.filter.call(art.querySelectorAll('table'), function (t) {
        return t.querySelector('.ptospec-msg'); }).map(function (t) { return w.getComputedStyle(t).display; });
      var right = art.getBoundingClientRect().right;
      function clipped(el) {
        for (var p = el.parentElement; p && p !== art; p = p.parentElement)
          if (w.getComputedStyle(p).overflowX !== 'visible') return true;
        return false;
      }
      return {width: w.innerWidth, pageScrolls: d.documentElement.scrollWidth > w.innerWidth + 1,
              boxes: Array.prototype.filter.call(art.querySelectorAll('.ptospec-math'), wide).length,
              outside: Array.prototype.filter.call(art.querySelectorAll('math'), function (m) {
                var r = m.getBoundingClientRect(); return r.width && r.right > right + 1 && !clipped(m); }).length,
              tables: Array.prototype.filter.call(art.querySelectorAll('.md-typeset__scrollwrap'), wide).length,
              cells: Array.prototype.filter.call(art.querySelectorAll('td'), function (c) {
                return w.getComputedStyle(c).overflowX !== 'visible' && wide(c); }).length,
              narrowShown: Array.prototype.filter.call(art.querySelectorAll('math.pm-narrow'), shown).length,
              wideShown: Array.prototype.filter.call(art.querySelectorAll('math.pm-wide'), shown).length,
              cards: cards, rules: rules};
    }""",
    "filter": """function (w, d) {
      var form = d.getElementById('ptospec-filter'), input = form.querySelector('input');
      var all = d.querySelectorAll('details.ptospec-diff').length;
      input.value = 'tcolmin'; input.dispatchEvent(new w.Event('input'));
      var shown = Array.prototype.filter.call(d.querySelectorAll('section.pd-op'), function (s) { return !s.hidden; })
        .map(function (s) { return s.dataset.op; });
      var count = form.querySelector('.pd-count').textContent;
      var sel = form.querySelector('select'); sel.value = 'simulator-bug'; input.value = '';
      sel.dispatchEvent(new w.Event('change'));
      var bugs = Array.prototype.filter.call(d.querySelectorAll('details.ptospec-diff'), function (x) {
        return !x.hidden; }).map(function (x) { return x.dataset.kind; });
      return {all: all, shown: shown, count: count, bugs: bugs,
              open: Array.prototype.filter.call(d.querySelectorAll('details.ptospec-diff'),
                                                function (x) { return x.open; }).length};
    }""",
}

HARNESS = """<!doctype html><html><body style="margin:0">
<iframe id="f" src="{src}" style="border:0;width:{width}px;height:{height}px"></iframe>
<pre id="out"></pre><pre id="error"></pre><div id="results"></div>
<script>
var probe = {probe};
var f = document.getElementById('f');
// once the framed page has loaded and its fonts are in, give its scripts a moment, then measure
f.addEventListener('load', function () {{
  f.contentDocument.fonts.ready.then(function () {{ setTimeout(function () {{
    try {{
      var w = f.contentWindow, d = f.contentDocument;
      if ({scroll!r}) {{ var el = d.querySelector({scroll!r}); if (el) el.scrollIntoView(); }}
      if (probe) document.getElementById('out').textContent = JSON.stringify(probe(w, d));
    }} catch (e) {{
      document.getElementById('error').textContent = String(e);
    }} finally {{
      document.body.dataset.done = '1';
    }}
  }}, 300); }});
}});
setInterval(function () {{
  var doc = f.contentDocument, list = doc && doc.querySelector('.md-search-result__list');
  if (list) document.getElementById('results').innerHTML = list.innerHTML;
}}, 100);
</script></body></html>"""


MISSING: list[str] = []  # site paths the browser asked for and the server did not have


class _Handler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args) -> None:
        pass

    def send_error(self, code: int, message: str | None = None, explain: str | None = None) -> None:
        if code == 404:
            MISSING.append(self.path)
        super().send_error(code, message, explain)

    def translate_path(self, path: str) -> str:
        # The site lives under PREFIX; anything else is outside it (404).
        parsed = urllib.parse.urlparse(path).path
        if parsed.startswith(PREFIX + "/"):
            return super().translate_path(parsed[len(PREFIX):])
        return str(Path(self.directory) / "__outside__")

    def do_GET(self) -> None:
        if self.path.startswith("/__harness__"):
            query = urllib.parse.parse_qs(urllib.parse.urlparse(self.path).query)
            page = HARNESS.format(src=query["src"][0], probe=PROBES.get(query.get("probe", [""])[0], "null"),
                                  scroll=query.get("scroll", [""])[0], width=query.get("w", ["1400"])[0],
                                  height=query.get("h", ["1000"])[0])
            self._send(page.encode(), "text/html")
        else:
            super().do_GET()

    def _send(self, body: bytes, ctype: str) -> None:
        self.send_response(200)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)


@pytest.fixture(scope="module")
def site(request, tmp_path_factory) -> Path:
    """The site, built with ``--site-url`` under PREFIX: by the build started at collection (see
    ``site_build``; it ran beside the other tests), or here when none was started."""
    built = finished(request.config)
    if built is not None:
        status, out, log = built
        assert status == 0, log[-3000:]
        return out / "build"
    out = tmp_path_factory.mktemp("site")
    args = ["--specs", str(ROOT / "specs"), "docs", "build", "--site", str(out), "--site-url", SITE_URL]
    assert main(args) == 0
    return out / "build"


@pytest.fixture(scope="module")
def server(site: Path) -> Iterator[str]:
    handler = functools.partial(_Handler, directory=str(site))
    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{httpd.server_address[1]}"
    httpd.shutdown()
    httpd.server_close()


@pytest.fixture(scope="module")
def browser() -> Iterator[Browser]:
    """The module's one headless Chromium."""
    chromium = Browser(BROWSER, FLAGS)
    yield chromium
    chromium.close()


def visit(browser: Browser, server: str, page: str, probe: str = "", scroll: str = "", width: int = 1400) -> Page:
    """A tab showing the harness around site page ``page``, once the harness has run ``probe`` (if any)."""
    query = urllib.parse.urlencode({"src": f"{PREFIX}/{page}", "probe": probe, "scroll": scroll, "w": width,
                                    "h": 1000})
    tab = browser.page(f"{server}/__harness__?{query}", width=1400, height=1000)
    assert tab.wait_for("document.body && document.body.dataset.done === '1'"), f"{page} did not finish loading"
    return tab


def probed(tab: Page, page: str, name: str) -> dict:
    """What probe ``name`` measured on the tab's page."""
    found = tab.evaluate("document.getElementById('out').textContent")
    error = tab.evaluate("document.getElementById('error').textContent")
    assert found, f"probe {name} on {page} reported nothing: {error}"
    return json.loads(found)


def probe(browser: Browser, server: str, page: str, name: str, scroll: str = "", width: int = 1400) -> dict:
    tab = visit(browser, server, page, name, scroll, width)
    try:
        return probed(tab, page, name)
    finally:
        tab.close()


def screenshot(tab: Page, out: Path) -> Path:
    tab.screenshot(out)
    assert out.is_file() and out.stat().st_size > 30_000, f"{out} looks blank"
    print(f"screenshot: {out}")
    return out


def shoot(browser: Browser, server: str, page: str, out: Path, scroll: str = "") -> Path:
    tab = visit(browser, server, page, scroll=scroll)
    try:
        return screenshot(tab, out)
    finally:
        tab.close()


def dump_dom(browser: Browser, url: str) -> str:
    """The document at ``url`` after its load event, serialized."""
    tab = browser.page(url)
    try:
        tab.loaded()
        return tab.html()
    finally:
        tab.close()


@pytest.fixture(scope="module")
def shots(tmp_path_factory) -> Path:
    """Where screenshots go: $PTOSPEC_SCREENSHOTS if set (to keep them), else a temporary folder."""
    keep = os.environ.get("PTOSPEC_SCREENSHOTS")
    if keep:
        Path(keep).mkdir(parents=True, exist_ok=True)
        return Path(keep)
    return tmp_path_factory.mktemp("screenshots")


def test_english_op_page(browser: Browser, server: str, shots: Path) -> None:
    tab = visit(browser, server, "en/ops/tcvt.html", "page", scroll="#sizing-rules")
    got = probed(tab, "en/ops/tcvt.html", "page")
    assert got["lang"] == "en"
    assert got["rootLinks"] == 0, "root-absolute links break under a sub-path"
    # Formulas sit in boxes that would scroll a formula too wide, and never overflow the column; TCVT's widest
    # (the tmp sizing rules) are broken into lines that fit the column.
    assert got["maths"] and all(m["overflow"] == "auto" and m["inside"] for m in got["maths"])
    assert not [m for m in got["maths"] if m["scroll"] > m["client"] + 1], "a TCVT formula scrolls at 1400 px"
    # A math font with stretchy delimiters: the piecewise brace is much taller than one line.
    assert "DejaVu Math TeX Gyre" in got["mathFont"]
    assert max(got["braces"]) > 2.0, got["braces"]
    # Worked example: input and output grids with values, written cells marked.
    assert len(got["svgs"]) >= 2 and all(s["w"] > 50 and s["texts"] > 0 for s in got["svgs"])
    assert any(s["written"] > 0 for s in got["svgs"])
    assert got["diffsOpen"] and not any(got["diffsOpen"]), "difference records must start collapsed"
    assert got["copyButtons"] > 0
    assert "ptospec" in got["footer"] and "3186c381" in got["footer"] and re.search(r"\d{4}-\d\d-\d\d", got["footer"])
    assert ("zh", f"{PREFIX}/zh/ops/tcvt.html") in [(h, urllib.parse.urlparse(u).path) for h, u in got["alternates"]]
    screenshot(tab, shots / "en-tcvt-sizing.png")  # the probed tab: scrolled to the sizing rules
    tab.close()
    shoot(browser, server, "en/ops/tcolsum.html", shots / "en-tcolsum.png", scroll="#worked-example")


@pytest.mark.parametrize("page", ["en/ops/tload.html", "zh/ops/tcvt.html", "zh/ops/mscatter.html",
                                  "en/ops/tmrgsort.html", "zh/ops/tquant.html"])
def test_op_page_at_phone_width(browser: Browser, server: str, shots: Path, page: str) -> None:
    """At 375 px nothing scrolls sideways: formulas are shown in their narrow layout and stay in the column (TMRGSORT's
    counts over subscripted terms, TQUANT's wide target indices and nested calls), tables of three or more
    columns are cards (each value after its column's name), rule tables stack (the message under the check).
    (``benchmarks/site_layout.py`` counts the same over every op page.)"""
    tab = visit(browser, server, page, "narrow", width=375)
    got = probed(tab, page, "narrow")
    assert got["width"] == 375
    assert not got["pageScrolls"] and got["boxes"] == 0 and got["tables"] == 0 and got["cells"] == 0, got
    assert got["outside"] == 0, got
    assert got["narrowShown"] > 0 and got["wideShown"] == 0, got
    assert got["cards"] and all(not c["thead"] and c["labels"] for c in got["cards"]), got["cards"]
    assert got["rules"] and set(got["rules"]) == {"block"}, got["rules"]
    screenshot(tab, shots / f"{page.replace('/', '-').removesuffix('.html')}-375.png")
    tab.close()


def test_chinese_op_page(browser: Browser, server: str, shots: Path) -> None:
    got = probe(browser, server, "zh/ops/trowmax.html", "page")
    assert got["lang"] == "zh"
    assert got["search"] == "搜索" and got["toc"].strip() == "目录"
    assert "规格数据库" in got["footer"]
    assert ("en", f"{PREFIX}/en/ops/trowmax.html") in [(h, urllib.parse.urlparse(u).path) for h, u in got["alternates"]]
    # Chinese prose throughout, including the recorded differences (claims and resolutions).
    assert "已记录的来源差异" in got["text"] and "结论" in got["text"]
    assert len(re.findall(r"[\u4e00-\u9fff]", got["text"])) > 800
    assert len(got["svgs"]) >= 2
    shoot(browser, server, "zh/ops/trowmax.html", shots / "zh-trowmax.png", scroll="details.ptospec-diff")
    shoot(browser, server, "zh/ops/tcolsum.html", shots / "zh-tcolsum.png")


def test_dtype_matrix_at_1400px(browser: Browser, server: str, shots: Path) -> None:
    tab = visit(browser, server, "en/matrix.html", "matrix")
    got = probed(tab, "en/matrix.html", "matrix")
    assert got["columns"] == 3 + len(load_database(ROOT / "specs").isa.dtypes)
    assert got["sticky"] == "sticky" and got["headerStays"] and got["firstColumnStays"]
    assert got["lastVisible"], "the last dtype column must be reachable by scrolling"
    assert got["wrapWidth"] > 1000
    screenshot(tab, shots / "en-matrix.png")  # the probe scrolled the matrix back to its start
    tab.close()


def test_differences_filter(browser: Browser, server: str) -> None:
    got = probe(browser, server, "en/differences.html", "filter")
    assert got["all"] > 300 and got["open"] == 0
    assert "tcolmin" in got["shown"] and len(got["shown"]) <= 3 and int(got["count"]) > 0
    assert got["bugs"] and set(got["bugs"]) == {"simulator-bug"}


def first_result(html: str) -> str:
    """The page (``ops/tadd.html``) of the first search result in a copied result list."""
    found = re.search(r'href="([^"?#]+)', html)
    return found.group(1).split(f"{PREFIX}/", 1)[-1].split("/", 1)[-1] if found else ""


@pytest.mark.parametrize(("lang", "query", "page"), [("en", "tadd", "ops/tadd.html"),
                                                      ("zh", "tmatmul", "ops/tmatmul.html")])
def test_search_ranks_the_named_instruction_first(browser: Browser, server: str, site: Path, lang: str, query: str,
                                                  page: str) -> None:
    index = json.loads((site / lang / "search" / "search_index.json").read_text(encoding="utf-8"))
    assert any(page in doc["location"] for doc in index["docs"])
    tab = visit(browser, server, f"{lang}/index.html?q={query}")
    try:
        # the harness copies the search box's result list as it fills; give the search worker time
        tab.wait_for(f"document.getElementById('results').innerHTML.indexOf('{page}') >= 0", timeout=20)
        results = tab.evaluate("document.getElementById('results').innerHTML")
    finally:
        tab.close()
    assert first_result(results) == page, f"typing {query!r} listed {first_result(results)!r} first"


def test_search_from_disk(browser: Browser, site: Path) -> None:
    """Opened from ``file://``: no Web Worker, no fetch; the search still answers (see WORKER_SHIM)."""
    tab = browser.page((site / "en" / "ops" / "tload.html").as_uri() + "?q=tmatmul_acc")
    try:
        # a DOM node does not come back through the protocol (it reads as nothing): wait on a boolean
        assert tab.wait_for("!!document.querySelector('.md-search-result__item > a')", timeout=20), \
            "no search result from disk within 20 s"
        href = tab.evaluate("document.querySelector('.md-search-result__item > a').getAttribute('href')")
    finally:
        tab.close()
    assert href.split("?")[0].endswith("/ops/tmatmul_acc.html"), href


def test_nothing_loads_from_another_host(site: Path) -> None:
    """No page, stylesheet or script of the site loads anything from the network (scripts, styles, frames,
    fonts, images); links to other sites (``<a href>``) are fine. (The theme's script names hosts it would
    load from only for features the site does not use, such as diagrams.)"""
    loads = re.compile(r"<(?:script|link|iframe|img|source|embed|object)\b[^>]*?\b(?:src|href|data)=[\"']"
                       r"(?:https?:)?//", re.I)
    css = re.compile(r"(?:@import\s+|url\(\s*)[\"']?(?:https?:)?//", re.I)
    found = []
    for path in sorted(site.rglob("*")):
        if path.suffix == ".html":
            html = path.read_text(encoding="utf-8")
            found += [f"{path.relative_to(site)}: {m.group(0)}" for m in loads.finditer(html)
                      if not re.search(r'rel="(?:canonical|alternate)"', m.group(0))]  # addresses, not loads
            found += [f"{path.relative_to(site)}: {m.group(0)}" for m in css.finditer(html)]
        elif path.suffix == ".css":
            found += [f"{path.relative_to(site)}: {m.group(0)}" for m in css.finditer(path.read_text(encoding="utf-8"))]
    assert not found, found[:10]


def test_opens_from_disk(browser: Browser, site: Path) -> None:
    dom = dump_dom(browser, (site / "zh" / "ops" / "tcolmin.html").as_uri())
    assert '<html lang="zh"' in dom and re.search(r"<math\b", dom) and "<svg" in dom
    assert 'href="../../en/ops/tcolmin.html"' in dom
    root = dump_dom(browser, (site / "index.html").as_uri())
    assert 'href="en/index.html"' in root and 'href="zh/index.html"' in root


def test_no_request_went_unanswered() -> None:
    """Every file the pages above asked for exists (no 404s: sitemaps, search index, assets, links)."""
    assert not [p for p in MISSING if not p.startswith("/favicon")], MISSING
