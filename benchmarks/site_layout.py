"""How readable the op pages are at a desktop and a phone width: every op page of a built site opened from disk
(or served on the loopback interface, ``--serve``) in headless Chromium (``tests/cdp.py``), at 1280 and 375 CSS
px, counting what a reader has to scroll sideways.

Counts, per width and language:
- formula boxes that scroll (a display formula wider than its box),
- formulas out of the column (a formula whose right edge passes the text column and no box clips it),
- tables that scroll (a table wider than its scroll wrapper), split into rule tables, dtype tables and others;
  a dtype table that scrolls with its first column held in view (sticky) is counted apart,
- table cells that scroll (a stacked rule table's cell holding a formula wider than the screen),
- pages wider than the screen (the whole page scrolls sideways).

Usage: python benchmarks/site_layout.py [--site site/build] [--lang en zh] [--ops tload tmatmul] [--list]
       [--serve] [--shots DIR]  (screenshots of the chosen pages at both widths)
Build the site first (``ptospec docs build``).
"""

from __future__ import annotations

import argparse
import base64
import functools
import http.server
import json
import os
import resource
import sys
import threading
import time
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))
from cdp import Browser  # noqa: E402  (tests/cdp.py: the browser test's DevTools driver)
from site_build import BROWSER  # noqa: E402

from ptospec.docs.labels import label  # noqa: E402

WIDTHS = (1280, 375)
FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
         "--disable-component-update", "--disable-sync", "--no-first-run"]

# What a reader would have to scroll sideways on the page now shown (see the module docstring).
PROBE = """(function () {
  var art = document.querySelector('article'), ar = art.getBoundingClientRect();
  function clipped(el) {
    for (var p = el.parentElement; p && p !== art; p = p.parentElement)
      if (getComputedStyle(p).overflowX !== 'visible') return true;
    return false;
  }
  function where(el, tags) {
    var h = null, all = art.querySelectorAll(tags || 'h2, h3');
    for (var i = 0; i < all.length; i++)
      if (all[i].compareDocumentPosition(el) & Node.DOCUMENT_POSITION_FOLLOWING) h = all[i];
    return h ? h.textContent.replace(/\\u00b6/g, '').trim() : '';
  }
  function wide(el) { return el.scrollWidth > el.clientWidth + 1; }
  var out = {boxes: [], outside: [], tables: [], cells: [],
             page: document.documentElement.scrollWidth > window.innerWidth + 1};
  art.querySelectorAll('.ptospec-math').forEach(function (b) {
    if (wide(b)) out.boxes.push([where(b), b.scrollWidth, b.clientWidth]);
  });
  art.querySelectorAll('math').forEach(function (m) {
    var r = m.getBoundingClientRect();
    if (r.width && r.right > ar.right + 1 && !clipped(m)) out.outside.push([where(m), Math.round(r.right - ar.right)]);
  });
  art.querySelectorAll('table').forEach(function (t) {
    var box = t.closest('.md-typeset__scrollwrap') || t.parentElement;
    if (!wide(box)) return;
    var kind = t.querySelector('.ptospec-msg') ? 'rule' : where(t) + '\\n' + where(t, 'h2');
    var first = t.querySelector('tbody td'), sticky = first && getComputedStyle(first).position === 'sticky';
    out.tables.push([where(t), kind, sticky, box.scrollWidth, box.clientWidth]);
  });
  art.querySelectorAll('td').forEach(function (c) {
    if (getComputedStyle(c).overflowX !== 'visible' && wide(c))
      out.cells.push([where(c), c.scrollWidth, c.clientWidth]);
  });
  return JSON.stringify(out);
})()"""


def _kind(section: str) -> str:
    """A scrolling table's kind, from the probe's 'rule' or the headings (h2/h3, then h2) it is under."""
    if section == "rule":
        return "rule"
    for key, kind in (("operands", "operand"), ("dtypes", "dtype"), ("performance", "performance"),
                      ("semantics", "semantics"), ("assembly", "assembly"), ("sources", "sources")):
        if any(head.startswith(label(key, lang)) for head in section.split("\n") for lang in ("en", "zh")):
            return kind
    return "other"


def measure(browser: Browser, page: Path, shots: Path | None, url: str) -> dict[int, dict]:
    """The probe's findings on ``page``, opened at ``url``, at each width (one tab, resized)."""
    tab = browser.page(url, width=WIDTHS[0], height=900)
    try:
        tab.loaded()
        found = {}
        for width in WIDTHS:
            browser.send("Emulation.setDeviceMetricsOverride",
                         {"width": width, "height": 900, "deviceScaleFactor": 1, "mobile": False}, tab._session)
            tab.wait_for(f"document.fonts.status === 'loaded' && window.innerWidth === {width}", timeout=20)
            tab.evaluate("new Promise(function (r) { requestAnimationFrame(function () { "
                         "requestAnimationFrame(r); }); })")
            found[width] = json.loads(tab.evaluate(PROBE))
            if shots is not None:
                lang, name = page.parent.parent.name, page.stem
                height = tab.evaluate("document.documentElement.scrollHeight")
                step = 2 * 900 if width < 800 else 1200  # the page in pieces an image viewer shows legibly
                for n, top in enumerate(range(0, height, step)):
                    clip = {"x": 0, "y": top, "width": width, "height": min(step, height - top), "scale": 1}
                    data = browser.send("Page.captureScreenshot", {"format": "png", "clip": clip,
                                                                   "captureBeyondViewport": True},
                                        tab._session)["data"]
                    (shots / f"{lang}-{name}-{width}-{n:02d}.png").write_bytes(base64.b64decode(data))
        return found
    finally:
        tab.close()


class _Quiet(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args) -> None:
        pass


def _serve(site: Path) -> http.server.ThreadingHTTPServer:
    """``site`` served on a free port of 127.0.0.1, from a thread (stopped by the caller)."""
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(_Quiet, directory=str(site)))
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--site", type=Path, default=ROOT / "site" / "build",
                        help="the built site (default site/build)")
    parser.add_argument("--lang", nargs="+", default=["en", "zh"])
    parser.add_argument("--ops", nargs="+", help="only these op pages (default: all)")
    parser.add_argument("--list", action="store_true", help="list each scrolling formula and table")
    parser.add_argument("--shots", type=Path, help="write full-page screenshots of the pages here")
    parser.add_argument("--serve", action="store_true",
                        help="open the pages served over HTTP on 127.0.0.1 instead of from disk")
    args = parser.parse_args()
    if BROWSER is None:
        print("no chromium binary found (run .ci/install-browser)", file=sys.stderr)
        return 2
    args.site = args.site.resolve()  # pages are opened by file:// address
    pages = [p for lang in args.lang for p in sorted((args.site / lang / "ops").glob("*.html"))
             if not args.ops or p.stem in args.ops]
    if not pages:
        print(f"no op pages under {args.site} (build the site: ptospec docs build)", file=sys.stderr)
        return 2
    if args.shots:
        args.shots.mkdir(parents=True, exist_ok=True)
    start, before = time.perf_counter(), resource.getrusage(resource.RUSAGE_CHILDREN)
    counts: dict[int, Counter] = {w: Counter() for w in WIDTHS}
    listing: dict[int, list[str]] = {w: [] for w in WIDTHS}
    browser = Browser(BROWSER, FLAGS)
    server = _serve(args.site) if args.serve else None
    try:
        for k, page in enumerate(pages, 1):
            print(f"\r{k}/{len(pages)} {page.parent.parent.name}/{page.stem}        ", end="", file=sys.stderr,
                  flush=True)
            url = (f"http://127.0.0.1:{server.server_address[1]}/{page.relative_to(args.site).as_posix()}"
                   if server else page.as_uri())
            for width, got in measure(browser, page, args.shots, url).items():
                name = f"{page.parent.parent.name}/{page.stem}"
                c = counts[width]
                c["formula boxes that scroll"] += len(got["boxes"])
                c["formulas out of the column"] += len(got["outside"])
                c["pages wider than the screen"] += got["page"]
                c["table cells that scroll"] += len(got["cells"])
                got["tables"] = [[w, _kind(kind), *rest] for w, kind, *rest in got["tables"]]
                for _where, kind, sticky, *_ in got["tables"]:
                    c["tables that scroll"] += 1
                    c[f"  {kind} tables" + (" (first column sticky)" if sticky else "")] += 1
                listing[width] += [f"{name}: formula [{w}] {s} > {cl} px" for w, s, cl in got["boxes"]]
                listing[width] += [f"{name}: OUT OF COLUMN [{w}] by {d} px" for w, d in got["outside"]]
                listing[width] += [f"{name}: {kind} table [{w}] {s} > {cl} px{' sticky' if st else ''}"
                                   for w, kind, st, s, cl in got["tables"]]
                listing[width] += [f"{name}: cell [{w}] {s} > {cl} px" for w, s, cl in got["cells"]]
    finally:
        browser.close()
        if server is not None:
            server.shutdown()
            server.server_close()
        print(file=sys.stderr)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if args.list:
        for width in WIDTHS:
            print(f"--- {width} px")
            print("\n".join(listing[width]))
    keys = sorted({k for c in counts.values() for k in c}, key=lambda k: (k.startswith(" "), k))
    keys = [k for k in keys if not k.startswith(" ")] + sorted(k for k in keys if k.startswith(" "))
    print(f"{len(pages)} op pages ({', '.join(args.lang)}), {'served' if server else 'from disk'}:")
    print(f"{'':40}" + "".join(f"{w:>8} px" for w in WIDTHS))
    for key in keys:
        print(f"{key:40}" + "".join(f"{counts[w][key]:>11}" for w in WIDTHS))
    cpu = after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime
    print(f"wall {wall:.0f} s, Chromium CPU {cpu:.0f} s, load average {os.getloadavg()[0]:.1f} "
          f"({os.cpu_count()} cores)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
