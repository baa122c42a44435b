"""End-to-end: build the site, open pages in real headless Chromium, check maths, tables, search, Chinese.

Skipped when no Chromium binary is installed (``.ci/install-browser`` installs Debian's ``chromium``).
"""

from __future__ import annotations

import functools
import http.server
import json
import re
import shutil
import subprocess
import tempfile
import threading
import time
import urllib.parse
from collections.abc import Iterator
from pathlib import Path

import pytest

from ptospec.cli import main

ROOT = Path(__file__).resolve().parent.parent
BROWSER = next((shutil.which(n) for n in ("chromium", "chromium-browser", "google-chrome") if shutil.which(n)), None)
pytestmark = pytest.mark.skipif(BROWSER is None, reason="no chromium binary found (run .ci/install-browser)")

# A page of the test's own (not part of the site): it frames a site page and copies the search results
# out of it; the slow image holds the load event back so --dump-dom runs after the search worker answered.
HARNESS = """<!doctype html><html><body>
<iframe id="f" src="{src}" width="1200" height="900"></iframe>
<div id="results"></div>
<img src="/__slow__.png" alt="">
<script>
setInterval(function () {{
  var doc = document.getElementById('f').contentDocument;
  var list = doc && doc.querySelector('.md-search-result__list');
  if (list) document.getElementById('results').innerHTML = list.innerHTML;
}}, 100);
</script></body></html>"""


class _Handler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args) -> None:
        pass

    def do_GET(self) -> None:
        if self.path.startswith("/__harness__"):
            src = urllib.parse.unquote(self.path.partition("src=")[2]) or "/en/"
            self._send(HARNESS.format(src=src).encode(), "text/html")
        elif self.path.startswith("/__slow__"):
            time.sleep(4)
            self._send(b"", "image/png")
        else:
            super().do_GET()

    def _send(self, body: bytes, ctype: str) -> None:
        self.send_response(200)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)


@pytest.fixture(scope="module")
def site(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("site")
    assert main(["--specs", str(ROOT / "specs"), "docs", "build", "--site", str(out)]) == 0
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


def dump_dom(url: str) -> str:
    with tempfile.TemporaryDirectory() as profile:
        proc = subprocess.run(
            [BROWSER, "--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
             "--disable-component-update", "--disable-sync", "--no-first-run", f"--user-data-dir={profile}",
             "--dump-dom", url],
            capture_output=True, text=True, timeout=120, check=False,
        )
    assert proc.returncode == 0, proc.stderr[-2000:]
    return proc.stdout


def test_op_page_renders_math_and_dtype_table(server: str) -> None:
    dom = dump_dom(f"{server}/en/ops/tcolargmax/")
    assert re.search(r"<math\b", dom), "no MathML in the rendered page"
    assert "argmax" in dom
    assert "Data types per profile" in dom
    assert re.search(r"<table>.*?<code>f16</code>.*?</table>", dom, re.S), "dtype table missing"
    assert "TASSIGN" in dom and "example_manual_index" in dom


def test_search_finds_op(server: str, site: Path) -> None:
    index = json.loads((site / "search" / "search_index.json").read_text(encoding="utf-8"))
    assert any("tcolmin" in doc["location"] for doc in index["docs"])
    dom = dump_dom(f"{server}/__harness__?src=/en/%3Fq%3Dtcolmin")
    results = dom.partition('<div id="results">')[2]
    assert "ops/tcolmin/" in results, "typing 'tcolmin' into the search box found no op page"


def test_chinese_trowmax_page(server: str) -> None:
    dom = dump_dom(f"{server}/zh/ops/trowmax/")
    assert "语义" in dom and "操作数" in dom
    assert re.search(r"[\u4e00-\u9fff]{4,}", dom.partition("<h1")[2]), "no Chinese prose on the page"
