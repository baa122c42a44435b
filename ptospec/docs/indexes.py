"""Pages spanning many instructions: home, families, the dtype matrix, all differences."""

from __future__ import annotations

from ..model import Database, OpSpec
from .labels import LANG_NAMES, LANGS, label, text
from .markdown import HEADER, code, prose, table
from .pages import differences_block, language_link


def _ops_by_family(db: Database) -> dict[str, list[OpSpec]]:
    groups: dict[str, list[OpSpec]] = {name: [] for name in db.isa.families}
    for name in sorted(db.ops):
        groups.setdefault(db.ops[name].family, []).append(db.ops[name])
    return groups


def root_page() -> str:
    out = [HEADER, f"# {label('site_title', 'en')} · {label('site_title', 'zh')}\n"]
    out += [f"- [{LANG_NAMES[lang]}]({lang}/index.md)" for lang in LANGS]
    return "\n".join(out) + "\n"


def home_page(db: Database, lang: str) -> str:
    out = [HEADER, f"# {label('site_title', lang)}\n", language_link(lang, "index.md"),
           label("home_intro", lang) + "\n",
           f"- [{label('matrix', lang)}](matrix.md)", f"- [{label('differences_page', lang)}](differences.md)", "",
           f"## {label('profiles', lang)}\n"]
    out.append(table([label("name", lang), label("profile", lang), label("description", lang),
                      label("profile_numerics", lang)],
                     [[code(p.name), prose(text(p.title, lang)), prose(text(p.description, lang)),
                       prose(text(p.numerics_text, lang)) if p.numerics_text else ""]
                      for p in db.isa.profiles.values()]))
    out.append(f"## {label('families', lang)}\n")
    for fam, ops in _ops_by_family(db).items():
        title = text(db.isa.families[fam].title, lang) if fam in db.isa.families else fam
        out.append(f"### [{prose(title)}](families/{fam}.md)\n")
        out += [f"- [{op.name.upper()}](ops/{op.name}.md): {prose(text(op.summary, lang))}" for op in ops]
        out.append("")
    return "\n".join(out)


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
    dtypes = list(db.isa.dtypes)
    out = [HEADER, f"# {label('matrix', lang)}\n", language_link(lang, "matrix.md"), label("matrix_intro", lang) + "\n"]
    rows = []
    for name in sorted(db.ops):
        op = db.ops[name]
        for mode in op.modes:
            for var in mode.type_vars:
                users = [o.name for o in mode.operands if o.dtype == var]
                if all(o.role == "tmp" for o in mode.operands if o.dtype == var):
                    continue
                cells = []
                for dt in dtypes:
                    profs = [p for p, tbl in op.dtypes.items() if any(
                        mode.name in r.modes and dt in r.types.get(var, ()) for r in tbl.rows)]
                    profs.sort(key=list(db.isa.profiles).index)
                    cells.append(" ".join(profs))
                rows.append([f"[{op.name}](ops/{op.name}.md)", code(mode.name),
                             f"{code(var)} ({', '.join(users)})", *cells])
    out.append(table([label("op", lang), label("mode", lang), label("type_var", lang), *dtypes], rows))
    return "\n".join(out)


def kind_page(db: Database, kind, lang: str) -> str:
    """A shared instruction shape: what it fixes, its params, and the instructions that use it."""
    users = [db.ops[n] for n in sorted(db.ops) if db.ops[n].kind == kind.name]
    out = [HEADER, f"# {prose(text(kind.title, lang))}\n", language_link(lang, f"kinds/{kind.name}.md"),
           f"{code(kind.name)} · `specs/kinds/{kind.name}.yaml`\n", prose(text(kind.description, lang)) + "\n"]
    if kind.params:
        out.append(f"## {label('params', lang)}\n")
        rows = []
        for p in kind.params.values():
            default = "" if p.required else code(str(p.default)) if p.default not in ("", None) else '""'
            rows.append([code(p.name + (f"({', '.join(p.args)})" if p.args else "")), prose(text(p.text, lang)),
                         default])
        out.append(table([label("name", lang), label("meaning", lang), label("default", lang)], rows))
    out.append(f"## {label('ops', lang)}\n")
    rows = []
    for op in users:
        params = "; ".join(f"{code(k)} = {code(v)}" for k, v in op.params.items() if isinstance(v, str))
        rows.append([f"[{op.name.upper()}](../ops/{op.name}.md)", params, prose(text(op.summary, lang))])
    out.append(table([label("op", lang), label("params", lang), label("summary", lang)], rows))
    return "\n".join(out)


def differences_page(db: Database, lang: str) -> str:
    out = [HEADER, f"# {label('differences_page', lang)}\n", language_link(lang, "differences.md"),
           label("differences_intro", lang) + "\n"]
    counts: dict[str, int] = {}
    for op in db.ops.values():
        for d in op.differences:
            counts[d.kind] = counts.get(d.kind, 0) + 1
    total = sum(counts.values())
    out.append(table([label("kind", lang), label("count", lang)],
                     [[code(k), str(v)] for k, v in sorted(counts.items())] + [[label("total", lang), str(total)]]))
    out.append(table([label("op", lang), label("count", lang), label("kind", lang)],
                     [[f"[{name.upper()}](#{name})", str(len(db.ops[name].differences)),
                       ", ".join(sorted({code(d.kind) for d in db.ops[name].differences}))]
                      for name in sorted(db.ops) if db.ops[name].differences]))
    for name in sorted(db.ops):
        op = db.ops[name]
        if not op.differences:
            continue
        out.append(f"## {op.name.upper()} {{#{op.name}}}\n")
        out.append(f"[{label('op_page', lang)}](ops/{op.name}.md)\n")
        out += differences_block(op, lang)
    return "\n".join(out)
