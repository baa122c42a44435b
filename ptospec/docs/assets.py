"""Static parts of the site: stylesheet, the differences filter, theme overrides and the root page.

Everything here is interface, not data: it is written into ``site/`` by ``generate`` like the pages.
Nothing loads from the network: maths uses a locally installed OpenType math font (the Debian package
``fonts-dejavu-extra`` ships DejaVu Math TeX Gyre; ``.ci/install-browser`` installs it), scripts and
styles are site files.
"""

from __future__ import annotations

from html import escape

from .labels import LANG_NAMES, LANGS, label
from .markdown import GENERATED

MATH_FONTS = '"DejaVu Math TeX Gyre", "STIX Two Math", "Latin Modern Math", "Noto Sans Math", "Cambria Math", math'

_MANY_COLUMNS = ", ".join(f'.md-typeset table[data-cards="{n}"] :is(td, th)' for n in range(6, 16))

CSS = f"""/* {GENERATED} */
math {{ font-family: {MATH_FONTS}; }}
.ptospec-math {{ overflow-x: auto; overflow-y: hidden; margin: 0.8em 0; max-width: 100%; padding-left: 1em; }}
/* display formulas start at the left, one under another, instead of each centred on its own width */
.ptospec-math math {{ font-size: 1.15em; display: inline math; math-style: normal; }}
.md-typeset td math {{ font-size: 1.05em; }}
.md-typeset table:not([class]) {{ font-size: 0.7rem; }}
.md-typeset table:not([class]) td:nth-child(1) code {{ white-space: nowrap; word-break: keep-all; }}
mtd {{ text-align: left; }}
/* a table of many columns (a dtype table with several type variables): tighter cells, so it fits the column */
{_MANY_COLUMNS} {{ padding: 0.7em 0.6em; min-width: 4rem; }}
.md-typeset .ptospec-scope {{ font-size: 0.6rem; color: var(--md-default-fg-color--light); }}
.md-typeset .ptospec-msg {{ display: inline-block; margin-top: 0.3em; color: var(--md-default-fg-color--light);
  min-width: 16em; }}
/* a long formula comes laid out twice, for the column and for a phone's (ptospec.docs.mathml): one is shown */
.md-typeset math.pm-narrow {{ display: none; }}
/* narrow screens: a rule table's cells stack, one rule after another */
@media screen and (max-width: 44.9375em) {{
  .md-typeset math.pm-wide {{ display: none; }}
  .md-typeset math.pm-narrow {{ display: inline math; }}
  .md-typeset table:has(.ptospec-msg) thead {{ display: none; }}
  .md-typeset table:has(.ptospec-msg), .md-typeset table:has(.ptospec-msg) tbody,
  .md-typeset table:has(.ptospec-msg) tr, .md-typeset table:has(.ptospec-msg) td {{ display: block; }}
  .md-typeset table:has(.ptospec-msg) td {{ border-top: none; padding-top: 0.3em; padding-bottom: 0.3em; }}
  .md-typeset table:has(.ptospec-msg) tr {{ border-top: 1px solid var(--md-typeset-table-color); padding: 0.4em 0; }}
  .md-typeset .ptospec-msg {{ min-width: 0; }}
  /* the stacked rule table as wide as the screen: its messages wrap in view, a long formula scrolls in its cell */
  .md-typeset .md-typeset__table:has(.ptospec-msg) {{ display: block; }}
  .md-typeset table:has(.ptospec-msg) {{ width: 100%; }}
  .md-typeset table:has(.ptospec-msg) td {{ overflow-x: auto; }}
  /* a table of three or more columns: each row a card, each value after its column's name (ptospec.docs.hooks) */
  .md-typeset .md-typeset__table:has(table[data-cards]) {{ display: block; }}
  .md-typeset table[data-cards] {{ display: block; width: 100%; }}
  .md-typeset table[data-cards] thead {{ display: none; }}
  .md-typeset table[data-cards] tbody, .md-typeset table[data-cards] tr {{ display: block; }}
  .md-typeset table[data-cards] tr {{ border-top: 1px solid var(--md-typeset-table-color); padding: 0.5em 0; }}
  .md-typeset table[data-cards] tr:first-child {{ border-top: none; }}
  .md-typeset table[data-cards] td {{ display: block; border-top: none; padding: 0.15em 0.8em; }}
  .md-typeset table[data-cards] td:has(math) {{ overflow-x: auto; }}
  .md-typeset table[data-cards] td::before {{ content: attr(data-label) ": "; font-weight: 600;
    color: var(--md-default-fg-color--light); }}
  .md-typeset table[data-cards] td:first-child {{ font-weight: 600; }}
  .md-typeset table[data-cards] td code {{ overflow-wrap: anywhere; }}
  /* formulas a little smaller, flush left: more of each line in view */
  .ptospec-math {{ padding-left: 0; }}
  .ptospec-math math {{ font-size: 1em; }}
  .md-typeset td math {{ font-size: 0.95em; }}
}}
.md-typeset .ptospec-output pre > code {{ white-space: pre-wrap; overflow-wrap: anywhere; padding-right: 2.4em; }}
.md-typeset details.ptospec-diff > summary {{ font-weight: 600; }}
.md-typeset details.ptospec-diff .pd-meta {{ font-size: 0.65rem; color: var(--md-default-fg-color--light); }}
.ptospec-filter {{ display: flex; gap: 0.6em; flex-wrap: wrap; align-items: center; margin: 1em 0;
  position: sticky; top: 2.6rem; z-index: 2; background: var(--md-default-bg-color); padding: 0.4em 0; }}
.ptospec-filter input, .ptospec-filter select {{ font: inherit; font-size: 0.75rem; padding: 0.3em 0.5em;
  border: 1px solid var(--md-default-fg-color--lighter); border-radius: 0.2em; background: inherit; color: inherit; }}
.ptospec-filter input {{ min-width: 18em; }}
.ptospec-matrix-wrap {{ max-height: 78vh; overflow: auto; border: 1px solid var(--md-default-fg-color--lightest);
  font-size: 0.62rem; }}
table.ptospec-matrix {{ border-collapse: separate; border-spacing: 0; }}
table.ptospec-matrix th, table.ptospec-matrix td {{ padding: 0.25em 0.4em; border-bottom: 1px solid
  var(--md-default-fg-color--lightest); white-space: nowrap; vertical-align: top; }}
table.ptospec-matrix thead th {{ position: sticky; top: 0; z-index: 2; background: var(--md-default-bg-color);
  border-bottom: 2px solid var(--md-default-fg-color--lighter); text-align: left; }}
table.ptospec-matrix tbody th {{ position: sticky; left: 0; z-index: 1; background: var(--md-default-bg-color);
  text-align: left; font-weight: 600; }}
table.ptospec-matrix thead th:first-child {{ left: 0; z-index: 3; }}
table.ptospec-matrix td.pm-none {{ color: var(--md-default-fg-color--lighter); }}
table.ptospec-matrix td span {{ display: block; line-height: 1.25; }}
.pw-example {{ margin: 0.8em 0; }}
.pw-row {{ display: flex; flex-wrap: wrap; gap: 1.2em; align-items: flex-start; margin: 0.4em 0; }}
.pw-label {{ font-weight: 600; flex-basis: 100%; }}
.pw-tile {{ margin: 0; overflow-x: auto; max-width: 100%; }}
.pw-tile figcaption {{ font-size: 0.62rem; margin-top: 0.2em; }}
.pw-tile svg text {{ text-anchor: middle; font-family: var(--md-code-font-family, monospace);
  fill: var(--md-default-fg-color); }}
.pw-tile svg path.pw-lines {{ stroke: var(--md-default-fg-color--lighter); stroke-width: 1; fill: none; }}
.pw-valid {{ fill: var(--md-default-bg-color); background: var(--md-default-bg-color); }}
.pw-outside {{ fill: var(--md-default-fg-color--lightest); background: var(--md-default-fg-color--lightest); }}
.pw-written {{ fill: #ffe08a; background: #ffe08a; }}
.pw-tile svg rect.pw-region {{ fill: none; stroke: #1565c0; stroke-width: 2.5; stroke-dasharray: 5 3; }}
.pw-legend {{ font-size: 0.65rem; }}
.pw-key {{ display: inline-block; width: 1em; height: 1em; vertical-align: -0.15em; margin-left: 0.8em;
  border: 1px solid var(--md-default-fg-color--lighter); }}
.pw-values code {{ font-size: 0.75rem; }}
.pw-tile svg text.pw-index {{ font-size: 8px; fill: var(--md-default-fg-color--light); }}
.pw-store p {{ margin: 0 0 0.2em; }}
.pw-store figcaption {{ max-width: 20em; }}
.pw-box0 {{ fill: #dbe9f9; }} .pw-box1 {{ fill: #fde2c4; }} .pw-box2 {{ fill: #d5efd9; }} .pw-box3 {{ fill: #f2d7ef; }}
.pw-tile svg polyline.pw-order {{ fill: none; stroke: #c62828; stroke-width: 1; stroke-opacity: 0.8; }}
.pw-tile svg path.pw-thin {{ stroke-width: 0.4; }}
.pw-tile svg text.pw-boxno {{ font-weight: 700; fill: #333; }}
"""

# The differences filter: free text and kind; records are <details data-kind=...> grouped under
# <section class="pd-op"> per instruction. Runs only on a page that has the filter form.
JS = f"""// {GENERATED}
(function () {{
  function setup() {{
    var form = document.getElementById("ptospec-filter");
    if (!form || form.dataset.ready) return;
    form.dataset.ready = "1";
    var text = form.querySelector("input"), kind = form.querySelector("select");
    var count = form.querySelector(".pd-count");
    var sections = Array.prototype.slice.call(document.querySelectorAll("section.pd-op"));
    function apply() {{
      var words = text.value.toLowerCase().split(/\\s+/).filter(Boolean), k = kind.value, shown = 0;
      sections.forEach(function (sec) {{
        var any = false;
        sec.querySelectorAll("details.ptospec-diff").forEach(function (d) {{
          var body = (sec.dataset.op + " " + d.textContent).toLowerCase();
          var ok = (!k || d.dataset.kind === k) && words.every(function (w) {{ return body.indexOf(w) >= 0; }});
          d.hidden = !ok;
          if (ok) {{ any = true; shown += 1; }}
        }});
        sec.hidden = !any;
      }});
      count.textContent = String(shown);
    }}
    text.addEventListener("input", apply);
    kind.addEventListener("change", apply);
    var q = new URLSearchParams(window.location.search).get("filter");
    if (q) text.value = q;
    apply();
  }}
  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", setup);
  else setup();
}})();
"""

# Search, wrapped around the theme's search worker (loaded before the theme's bundle: ``extra.polyfills``):
# - ranking: the page titled exactly as the query (an instruction's name) is moved to the top of the results;
#   the theme ranks prefix matches by rarity, so "tadd" would list TADDDEQRELU first;
# - from disk: a page opened from ``file://`` may not start a Web Worker, so there the worker script runs in a
#   hidden same-origin frame and messages pass as events; the theme then reads the index from
#   ``search/search_index.js`` (written by ``build_html``).
WORKER_SHIM = f"""// {GENERATED}
(function () {{
  var Native = window.Worker;
  if (!Native) return;
  var QUERY = 2, RESULT = 3;
  function plain(html) {{ return String(html || "").replace(/<[^>]*>/g, "").trim().toLowerCase(); }}
  function named(group, query) {{
    return group.some(function (doc) {{ return doc.location.indexOf("#") < 0 && plain(doc.title) === query; }});
  }}
  function rank(data, query) {{
    if (!data || data.type !== RESULT || !data.data || !data.data.items || !query) return data;
    var items = data.data.items, first = items.filter(function (g) {{ return named(g, query); }});
    if (!first.length) return data;
    data.data.items = first.concat(items.filter(function (g) {{ return first.indexOf(g) < 0; }}));
    return data;
  }}
  function load(doc, src) {{
    return new Promise(function (resolve, reject) {{
      var script = doc.createElement("script");
      script.src = src;
      script.onload = resolve;
      script.onerror = reject;
      (doc.head || doc.documentElement).appendChild(script);
    }});
  }}
  // The worker script in a hidden frame of this page's origin: post(data) sends to it, receive(data) hears it.
  function framed(url, receive) {{
    var frame = document.createElement("iframe"), pending = [], started = false;
    frame.setAttribute("aria-hidden", "true");
    frame.style.display = "none";
    document.documentElement.appendChild(frame);
    var scope = frame.contentWindow, base = new URL(url, window.location.href).href;
    scope.postMessage = function (data) {{ setTimeout(function () {{ receive(data); }}, 0); }};
    scope.importScripts = function () {{
      return Array.prototype.reduce.call(arguments, function (done, src) {{
        return done.then(function () {{ return load(scope.document, new URL(src, base).href); }});
      }}, Promise.resolve());
    }};
    function send(data) {{ scope.dispatchEvent(new scope.MessageEvent("message", {{ data: data }})); }}
    load(scope.document, base).then(function () {{ started = true; pending.splice(0).forEach(send); }});
    return {{ post: function (data) {{ if (started) send(data); else pending.push(data); }},
             stop: function () {{ frame.remove(); }} }};
  }}
  function native(url, receive) {{
    var worker = new Native(url);
    worker.addEventListener("message", function (event) {{ receive(event.data); }});
    return {{ post: function (data) {{ worker.postMessage(data); }}, stop: function () {{ worker.terminate(); }} }};
  }}
  function SearchWorker(url) {{
    var self = this;
    this.listeners = [];
    this.onmessage = null;
    this.query = "";
    var open = window.location.protocol === "file:" ? framed : native;
    this.inner = open(url, function (data) {{ self.deliver(rank(data, self.query)); }});
  }}
  SearchWorker.prototype.postMessage = function (data) {{
    if (data && data.type === QUERY) this.query = plain(data.data);
    this.inner.post(data);
  }};
  SearchWorker.prototype.deliver = function (data) {{
    var event = new MessageEvent("message", {{ data: data }});
    if (this.onmessage) this.onmessage(event);
    this.listeners.forEach(function (fn) {{ fn(event); }});
  }};
  SearchWorker.prototype.addEventListener = function (type, fn) {{ if (type === "message") this.listeners.push(fn); }};
  SearchWorker.prototype.removeEventListener = function (type, fn) {{
    this.listeners = this.listeners.filter(function (x) {{ return x !== fn; }});
  }};
  SearchWorker.prototype.terminate = function () {{ this.inner.stop(); }};
  window.Worker = SearchWorker;
}})();
"""

# Theme overrides (Jinja, read by mkdocs-material through ``custom_dir``).
# The language switch links to the same page in the other language (both builds have the same pages).
ALTERNATE = """{#- """ + GENERATED + """ -#}
<div class="md-header__option">
  <div class="md-select">
    <button class="md-header__button md-icon" aria-label="{{ lang.t('select.language') }}">
      {% include ".icons/material/translate.svg" %}
    </button>
    <div class="md-select__inner">
      <ul class="md-select__list">
        {% for alt in config.extra.alternate %}
          <li class="md-select__item">
            <a href="{{ base_url }}/../{{ alt.lang }}/{{ page.url if page else '' }}" hreflang="{{ alt.lang }}"
               class="md-select__link">{{ alt.name }}</a>
          </li>
        {% endfor %}
      </ul>
    </div>
  </div>
</div>
"""

COPYRIGHT = """{#- """ + GENERATED + """ -#}
<div class="md-copyright ptospec-provenance">
  {%- set p = config.extra.provenance -%}
  {{ p.database }} {{ p.version }} · {{ p.upstream_label }}
  <code>{{ p.repository }}@{{ p.commit }}</code> · {{ p.built_label }} {{ config.extra.build_date }}
</div>
"""


# The mkdocs hook that turns the pages' maths placeholders into MathML (see ptospec.docs.mathml).
HOOK = f"""# {GENERATED}
from ptospec.docs.hooks import on_config, on_post_page  # noqa: F401
"""


def root_index(version: str) -> str:
    """``build/index.html``: the language choice, relative links only (works under a sub-path and from disk)."""
    links = "".join(f'<li><a href="{lang}/index.html" hreflang="{lang}" lang="{lang}">{escape(LANG_NAMES[lang])}'
                    f" · {escape(label('site_title', lang))}</a></li>" for lang in LANGS)
    return (f"<!doctype html>\n<!-- {GENERATED} -->\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
            f"<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">"
            f"<title>{escape(label('site_title', 'en'))} · {escape(label('site_title', 'zh'))}</title>"
            "<style>body{font-family:system-ui,sans-serif;max-width:40em;margin:4em auto;padding:0 1em}"
            "li{margin:.6em 0;font-size:1.2em}</style></head><body>"
            f"<h1>{escape(label('site_title', 'en'))}</h1><ul>{links}</ul>"
            f"<p>ptospec {escape(version)}</p></body></html>\n")
