"""Pages spanning many instructions: home, families, the dtype matrix, all differences."""

from __future__ import annotations

from html import escape

from ..expr.latex import CELL_EM, PHONE_CELL_EM, to_latex
from ..expr.parser import parse_expr
from ..model import Database, OpSpec, Source
from .labels import label, text
from .markdown import HEADER, code, prose, table
from .mathml import math_inline
from .pages import differences_block, expression_params, language_link, source_cell


def _ops_by_family(db: Database) -> dict[str, list[OpSpec]]:
    groups: dict[str, list[OpSpec]] = {name: [] for name in db.isa.families}
    for name in sorted(db.ops):
        groups.setdefault(db.ops[name].family, []).append(db.ops[name])
    return groups


def home_page(db: Database, lang: str) -> str:
    out = [HEADER, f"# {label('site_title', lang)}\n", language_link(lang, "index.md"),
           label("home_intro", lang) + "\n",
           f"- [{label('matrix', lang)}](matrix.md)", f"- [{label('differences_page', lang)}](differences.md)",
           f"- [{label('program_page', lang)}](programs.md)",
           *([f"- [{label('unimplemented_pages', lang)}](differences.md#unimplemented-pages)"]
             if db.isa.unimplemented_pages else []), "",
           f"## {label('profiles', lang)}\n"]
    out.append(table([label("name", lang), label("profile", lang), label("description", lang),
                      label("profile_numerics", lang)],
                     [[code(p.name), prose(text(p.title, lang)), prose(text(p.description, lang)),
                       prose(text(p.numerics_text, lang)) if p.numerics_text else ""]
                      for p in db.isa.profiles.values()]))
    out += global_layouts_section(db, lang)
    out.append(f"## {label('families', lang)}\n")
    for fam, ops in _ops_by_family(db).items():
        title = text(db.isa.families[fam].title, lang) if fam in db.isa.families else fam
        out.append(f"### [{prose(title)}](families/{fam}.md)\n")
        out += [f"- [{op.name.upper()}](ops/{op.name}.md): {prose(text(op.summary, lang))}" for op in ops]
        out.append("")
    if db.isa.unspecified:
        out.append(f"## {label('unspecified_pages', lang)}\n")
        out.append(table([label("name", lang), label("page", lang), label("reason", lang)],
                         [[code(name), code(page), prose(text(why, lang))] for page, name, why in db.isa.unspecified]))
    if db.isa.separate_isas:
        out.append(f"## {label('separate_isas', lang)}\n")
        out.append(table([label("name", lang), label("page", lang), label("header", lang), label("reason", lang)],
                         [[code(s.name), code(s.pages), code(s.header), prose(text(s.reason, lang))]
                          for s in db.isa.separate_isas]))
    return "\n".join(out)


def global_layouts_section(db: Database, lang: str) -> list[str]:
    """The global layouts: spelling, meaning, the placement the executor models, the profiles that accept them."""
    rows = []
    for g in db.isa.global_layouts.values():
        if g.tile_map:
            indices = ", ".join(to_latex(node) for node in g.tile_map)
            placement = math_inline(f"(i_0, \\dots, i_4) = ({indices})")
        else:
            placement = label("not_modelled", lang)
        rows.append([code(g.name), code(g.asm), prose(text(g.text, lang)), placement,
                     ", ".join(code(p) for p in g.profiles) or label("none", lang)])
    return [f"## {label('global_layouts', lang)}\n", label("global_layouts_intro", lang) + "\n",
            table([label("name", lang), label("asm_spelling", lang), label("meaning", lang), label("placement", lang),
                   label("profiles", lang)], rows)]


def family_page(db: Database, family: str, ops: list[OpSpec], lang: str) -> str:
    fam = db.isa.families.get(family)
    title = text(fam.title, lang) if fam else family
    out = [HEADER, f"# {prose(title)}\n", language_link(lang, f"families/{family}.md")]
    if fam:
        out.append(prose(text(fam.description, lang)) + "\n")
    if ops:
        out.append(table([label("op", lang), label("summary", lang)],
                         [[f"[{op.name.upper()}](../ops/{op.name}.md)", prose(text(op.summary, lang))]
                          for op in ops]))
    else:
        out.append(label("no_ops", lang) + "\n")
    return "\n".join(out)


def matrix_page(db: Database, lang: str) -> str:
    """Op x dtype x profile as one raw HTML table in a scroll box: sticky header row and first column."""
    dtypes = list(db.isa.dtypes)
    profiles = list(db.isa.profiles)
    wide = "---\nhide:\n  - navigation\n  - toc\n---\n"  # the whole window for the table
    out = [wide, HEADER, f"# {label('matrix', lang)}\n", language_link(lang, "matrix.md"),
           label("matrix_intro", lang) + " " + label("matrix_legend", lang) + "\n"]
    head = "".join(f"<th>{escape(x)}</th>" for x in
                   (label("op", lang), label("mode", lang), label("type_var", lang), *dtypes))
    body = []
    for name in sorted(db.ops):
        op = db.ops[name]
        for mode in op.modes:
            for var in mode.type_vars:
                users = [o.name for o in mode.operands if o.dtype == var]
                if all(o.role == "tmp" for o in mode.operands if o.dtype == var):
                    continue
                cells = []
                for dt in dtypes:
                    profs = sorted((p for p, tbl in op.dtypes.items() if any(
                        mode.name in r.modes and dt in r.types.get(var, ()) for r in tbl.rows)), key=profiles.index)
                    cells.append("".join(f"<span>{p}</span>" for p in profs) if profs else "—")
                tds = "".join(f'<td class="pm-none">{c}</td>' if c == "—" else f"<td>{c}</td>" for c in cells)
                body.append(f'<tr><th><a href="ops/{op.name}.html">{op.name.upper()}</a></th>'
                            f"<td><code>{escape(mode.name)}</code></td>"
                            f"<td><code>{escape(var)}</code> ({escape(', '.join(users))})</td>{tds}</tr>")
    out.append(f'<div class="ptospec-matrix-wrap" tabindex="0"><table class="ptospec-matrix"><thead><tr>{head}</tr>'
               f"</thead><tbody>{''.join(body)}</tbody></table></div>\n")
    return "\n".join(out)


def kind_page(db: Database, kind, lang: str) -> str:
    """A shared instruction shape: what it fixes, its params, and the instructions that use it."""
    users = [db.ops[n] for n in sorted(db.ops) if db.ops[n].kind == kind.name]
    out = [HEADER, f"# {prose(text(kind.title, lang))}\n", language_link(lang, f"kinds/{kind.name}.md"),
           prose(text(kind.description, lang)) + "\n"]
    expressions = [p for p in kind.params.values() if p.args]
    if expressions:
        out.append(f"## {label('params', lang)}\n")
        rows = []
        for p in expressions:
            default = math_inline(to_latex(parse_expr(str(p.default)))) if p.default not in ("", None) else ""
            rows.append([math_inline(f"\\mathrm{{{p.name}}}({', '.join(p.args)})"), prose(text(p.text, lang)), default])
        out.append(table([label("name", lang), label("meaning", lang), label("default", lang)], rows))
        out.append(label("expr_params_note", lang) + "\n")
    out.append(f"## {label('ops', lang)}\n")
    rows = [[f"[{op.name.upper()}](../ops/{op.name}.md)", ", ".join(math_inline(wide, narrow) for wide, narrow in zip(
        expression_params(db, op, CELL_EM), expression_params(db, op, PHONE_CELL_EM), strict=True)),
             prose(text(op.summary, lang))] for op in users]
    out.append(table([label("op", lang), label("definition", lang), label("summary", lang)], rows))
    return "\n".join(out)


def unimplemented_section(db: Database, lang: str) -> list[str]:
    """The upstream pages recorded as describing nothing implemented (``unimplemented_pages``)."""
    if not db.isa.unimplemented_pages:
        return []
    rows = [[source_cell(db, Source(entry.name, "doc", entry.page)), code(entry.name),
             prose(text(entry.page_says, lang)), prose(text(entry.headers_show, lang))]
            for entry in db.isa.unimplemented_pages]
    return [f"## {label('unimplemented_pages', lang)} {{#unimplemented-pages}}\n",
            label("unimplemented_intro", lang) + "\n",
            table([label("upstream_page", lang), label("name", lang), label("page_says", lang),
                   label("headers_show", lang)], rows)]


def differences_page(db: Database, lang: str) -> str:
    """Every recorded difference, collapsed, grouped per instruction, with a text and kind filter."""
    # Not in the search index: every record is also on its instruction's page (and indexed there).
    out = ["---\nsearch:\n  exclude: true\n---\n", HEADER, f"# {label('differences_page', lang)}\n",
           language_link(lang, "differences.md"),
           label("differences_intro", lang) + "\n"]
    counts: dict[str, int] = {}
    for op in db.ops.values():
        for d in op.differences:
            counts[d.kind] = counts.get(d.kind, 0) + 1
    total = sum(counts.values())
    out.append(table([label("kind", lang), label("count", lang)],
                     [[f"{label(f'diff_kind_{k}', lang)} ({code(k)})", str(v)] for k, v in sorted(counts.items())]
                     + [[label("total", lang), str(total)]]))
    out += unimplemented_section(db, lang)
    options = "".join(f'<option value="{k}">{escape(label(f"diff_kind_{k}", lang))}</option>' for k in sorted(counts))
    out.append(f'<form id="ptospec-filter" class="ptospec-filter" role="search" onsubmit="return false">'
               f'<label>{label("filter", lang)} <input type="search" '
               f'placeholder="{escape(label("filter_placeholder", lang))}"></label>'
               f'<select aria-label="{escape(label("kind", lang))}"><option value="">'
               f'{escape(label("all_kinds", lang))}</option>{options}</select>'
               f'<span><span class="pd-count">{total}</span> {label("shown", lang)}</span></form>\n')
    for name in sorted(db.ops):
        op = db.ops[name]
        if not op.differences:
            continue
        out.append(f'<section class="pd-op" data-op="{op.name}" markdown="1">\n')
        out.append(f"## {op.name.upper()} {{#{op.name}}}\n")
        out.append(f"[{label('op_page', lang)}](ops/{op.name}.md)\n")
        out += differences_block(db, op, lang)
        out.append("</section>\n")
    return "\n".join(out)
