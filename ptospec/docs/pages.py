"""One Markdown page per instruction, in one language."""

from __future__ import annotations

import re
from collections.abc import Callable

from .. import attrs
from ..asm.forms import FORMS, print_template
from ..expr.ast import Attr, walk
from ..expr.latex import (
    CELL_EM,
    LINE_EM,
    PHONE_CELL_EM,
    PHONE_LINE_EM,
    bindings_latex,
    condition_latex,
    counted,
    expression_latex,
    statement_latex,
)
from ..expr.latex_width import latex_width
from ..expr.parser import parse_expr
from ..model import Database, DTypeTable, Mode, OpSpec, Rule
from . import worked
from .examples import asm_examples, cpp_example
from .labels import LANGS, label, text
from .markdown import HEADER, code, fence, prose, table
from .mathml import math_block, math_inline


def op_path(lang: str, op: str) -> str:
    return f"{lang}/ops/{op}.md"


def family_path(lang: str, family: str) -> str:
    return f"{lang}/families/{family}.md"


def _other(lang: str) -> str:
    return next(x for x in LANGS if x != lang)


def language_link(lang: str, rel: str) -> str:
    """A link to the same page in the other language (``rel`` is relative to the language root).

    Each language is its own mkdocs project, so this is a plain relative HTML link between the builds."""
    up = "../" * (rel.count("/") + 1)
    other = _other(lang)
    href = f"{up}{other}/{rel.removesuffix('.md')}.html"
    name = label("other_language", lang)
    return f'<a class="ptospec-lang" href="{href}" hreflang="{other}" lang="{other}">{name}</a>\n'


_SPACE = re.compile(r"\s")  # what str.isspace calls white space


def source_cell(db: Database, ref) -> str:
    """A source reference: a link into the upstream repository at the checked commit; seed pages are internal,
    and a reference that is no path in that repository (``PTOAS docs/...``, the assembler's) is plain text."""
    if ref.kind == "seed":
        return ""
    upstream = db.isa.upstream
    path = ref.ref.split("#", 1)[0]
    if not upstream or _SPACE.search(path):
        return code(ref.ref)
    return f"[{code(ref.ref)}](https://github.com/{upstream['repository']}/blob/{upstream['commit']}/{path})"


def _math(latex: str) -> str:
    return math_inline(latex)


NARROW_EM = 21.0  # formulas inside prose or a table's text column
PHONE_NARROW_EM = 15.0  # the same on a phone


def _display(render: Callable[[float], str]) -> str:
    """A display formula laid out for the page's column and again for a phone's (``render(line width in em)``);
    the stylesheet shows one of the two."""
    return math_block(render(LINE_EM), render(PHONE_LINE_EM))


def _inline(render: Callable[[float], str], wide: float = LINE_EM, narrow: float = PHONE_CELL_EM) -> str:
    """An inline formula (in a table cell or prose) laid out for ``wide`` em and again for a phone's ``narrow``."""
    return math_inline(render(wide), render(narrow))


def _definitions(lets, separator: str, context: tuple, line: float = LINE_EM) -> str:
    """``k = ..., l = ...``: inline when they fit one line, else each on a line of its own (a display block,
    or ``separator`` between them where blocks cannot go, as in a table cell). ``context``: the syntax trees of
    the statement or rule they belong to (names given to long parts differ from theirs)."""
    bindings = [(n, node) for n, node, _ in lets]
    # on a phone: a table cell's width, or in prose the column's
    wide = bindings_latex(bindings, line, context)
    narrow = bindings_latex(bindings, PHONE_CELL_EM if separator else PHONE_LINE_EM, context)
    if sum(latex_width(r) for r in wide) + 0.5 * len(wide) <= line:
        return ", ".join(math_inline(w, n) for w, n in zip(wide, narrow, strict=True))
    if separator:
        return separator.join(math_inline(w, n) for w, n in zip(wide, narrow, strict=True))
    return "\n\n" + "\n".join(math_block(w, n) for w, n in zip(wide, narrow, strict=True))


def _operand_users(op: OpSpec, var: str) -> list[str]:
    names: list[str] = []
    for mode in op.modes:
        for o in mode.operands:
            if o.dtype == var and o.name not in names:
                names.append(o.name)
    return names


def _dtype_cell(db: Database, profile: str, dtypes: tuple[str, ...], lang: str) -> str:
    every = [n for n, dt in db.isa.dtypes.items() if dt.profiles is None or profile in dt.profiles]
    if set(dtypes) == set(every):
        return label("any", lang)
    return ", ".join(code(d) for d in dtypes)


def _dtype_section(db: Database, op: OpSpec, lang: str) -> list[str]:
    out = [f"## {label('dtypes', lang)}\n"]
    all_modes = tuple(m.name for m in op.modes)
    variables: list[str] = []
    for mode in op.modes:
        variables += [v for v in mode.type_vars if v not in variables]
    for prof in db.isa.profiles:
        tbl: DTypeTable | None = op.dtypes.get(prof)
        if tbl is None:
            continue
        title = text(db.isa.profiles[prof].title, lang)
        out.append(f"### {prof} — {prose(title)}\n")
        out.append(f"{label('basis', lang)}: {code(tbl.basis)} · {label('sources', lang)}: "
                   f"{', '.join(code(s) for s in tbl.sources)}\n")
        if tbl.note:
            out.append(prose(text(tbl.note, lang)) + "\n")
        header = [label("modes", lang)] + [f"{v} ({', '.join(_operand_users(op, v))})" for v in variables]
        header.append(label("notes", lang))
        rows = []
        for row in tbl.rows:
            modes = label("all_modes", lang) if row.modes == all_modes else ", ".join(code(m) for m in row.modes)
            cells = [_dtype_cell(db, prof, row.types[v], lang) if v in row.types else "—" for v in variables]
            rows.append([modes, *cells, prose(text(row.note, lang))])
        out.append(table(header, rows))
    return out


def _as_written(stmt) -> str:
    """A statement as its YAML gives it: the text, then its keys."""
    parts = [stmt.text + (f"    when {stmt.when_text}" if stmt.when is not None else "")]
    parts += [f"    let {name} = {text}" for name, _node, text in stmt.lets]
    if stmt.where is not None:
        parts.append(f"    where {stmt.where_text}")
    if stmt.combine:
        parts.append(f"    combine: {stmt.combine}")
    if stmt.writes != "valid":
        parts.append(f"    writes: {stmt.writes}")
    return "\n".join(parts)


def _scope(rule: Rule, db: Database, op: OpSpec) -> tuple[str, str]:
    profiles = ", ".join(code(p) for p in rule.profiles) if set(rule.profiles) != set(db.isa.profiles) else ""
    modes = ", ".join(code(m) for m in rule.modes) if set(rule.modes) != {m.name for m in op.modes} else ""
    return profiles, modes


def _check_cell(rule: Rule, lang: str) -> str:
    """The check, its definitions and its guard, each on a line of its own (long conditions broken too)."""
    check, when = rule.check, rule.when
    parts = [_inline(lambda line: condition_latex(check, line), CELL_EM)] if check is not None else []
    if rule.let:
        parts.append(f"{label('where', lang)} {_definitions(rule.let, '<br>', (check, when), CELL_EM)}")
    if when is not None:
        parts.append(f"{label('when', lang)} {_inline(lambda line: condition_latex(when, line - 5), CELL_EM)}")
    return "<br>".join(parts)


def _rule_cell(rule: Rule, db: Database, op: OpSpec, lang: str) -> str:
    """The rule's id, with the profiles and modes it is limited to (if any) below it."""
    profiles, modes = _scope(rule, db, op)
    scope = [f"{label('profiles', lang)}: {profiles}"] if profiles else []
    scope += [f"{label('modes', lang)}: {modes}"] if modes else []
    return code(rule.id) + "".join(f'<br><span class="ptospec-scope">{x}</span>' for x in scope)


def _under(cell: str, rule: Rule, lang: str) -> str:
    """A rule's condition with its message on a line below it: the column keeps the formula's width and the
    message wraps under it."""
    return f'{cell}<br><span class="ptospec-msg">{prose(text(rule.message, lang))}</span>'


def _rules_sections(db: Database, op: OpSpec, lang: str) -> list[str]:
    out: list[str] = []
    placement = [r for r in op.rules if r.kind in ("loc", "layout")]
    if placement:
        out.append(f"## {label('layout_rules', lang)}\n")
        rows = [[_rule_cell(r, db, op, lang), ", ".join(code(o) for o in r.operands),
                 _under(", ".join(code(a) for a in r.allow), r, lang)] for r in placement]
        out.append(table([label("rule_scope", lang), label("operands", lang), label("allowed_message", lang)],
                         rows))
    checks = [r for r in op.rules if r.kind == "check"]
    for phase, key in (("static", "static_checks"), ("runtime", "runtime_checks")):
        chosen = [r for r in checks if r.phase == phase]
        if not chosen:
            continue
        out.append(f"## {label(key, lang)}\n")
        rows = [[_rule_cell(r, db, op, lang), _under(_check_cell(r, lang), r, lang)] for r in chosen]
        out.append(table([label("rule_scope", lang), label("check_message", lang)], rows))
    return out


def _tmp_section(db: Database, op: OpSpec, lang: str) -> list[str]:
    tmps: list[str] = []
    for mode in op.modes:
        tmps += [o.name for o in mode.operands if o.role == "tmp" and o.name not in tmps]
    if not tmps:
        return []
    out = [f"## {label('tmp', lang)}\n"]
    for mode in op.modes:
        rows = []
        for o in mode.operands:
            if o.role != "tmp":
                continue
            for prof in db.isa.profiles:
                if prof in o.usage:
                    rows.append([code(o.name), code(prof), prose(text(o.usage[prof], lang))])
        if rows:
            if len(op.modes) > 1:
                out.append(f"**{label('mode', lang)} {code(mode.name)}** — {prose(text(mode.title, lang))}\n")
            out.append(table([label("operands", lang), label("profile", lang), label("usage", lang)], rows))
    shape_fields = {"rows", "cols", "valid_row", "valid_col"}
    sizing = [r for r in op.rules if r.check is not None and any(
        isinstance(n, Attr) and n.obj in tmps and n.name in shape_fields
        for node in (r.check, *(x[1] for x in r.let)) for n in walk(node))]
    if sizing:
        out.append(f"### {label('sizing', lang)}\n")
        for r in sizing:
            profiles, _ = _scope(r, db, op)
            scope = f" ({profiles})" if profiles else ""
            out.append(f"{code(r.id)}{scope}: {prose(text(r.message, lang))}\n")
            bindings = [(n, node) for n, node, _ in r.let]
            out += [math_block(wide, narrow) + "\n" for wide, narrow in zip(
                bindings_latex(bindings, LINE_EM, (r.check,)), bindings_latex(bindings, PHONE_LINE_EM, (r.check,)),
                strict=True)]
            if r.check is not None:
                out.append(_display(lambda line, check=r.check: condition_latex(check, line)) + "\n")
    return out


def _operand_text(db: Database, operand, lang: str) -> str:
    """An operand's meaning; attributes list their enum's values, inputs their value domain."""
    meaning = prose(text(operand.text, lang))
    if operand.is_global:
        meaning += f" — {label('global_operand', lang)} ({code('!pto.partition_tensor_view<...>')}, " \
                   f"[{label('global_layouts', lang)}](../index.md))"
    if operand.is_typed_attr:
        meaning += f" — {code(attrs.describe(db.isa, operand))}"
        if operand.dialect_default is not None:
            meaning += f", {label('attr_default', lang)} {code(attrs.spell_value(operand.dialect_default))}"
    elif operand.is_attr:
        enum = db.isa.enums[operand.enum]
        values = ", ".join(f"{code(v)} ({prose(text(enum.value_text[v], lang))})" for v in enum.values)
        meaning += f" — {code(enum.cpp)}: {values}"
    if operand.domain is not None:
        meaning += (f" — {label('domain', lang)} "
                    f"{_inline(lambda line: condition_latex(operand.domain, line), NARROW_EM, PHONE_NARROW_EM)}")
    if operand.alias_of:
        what = "alias_in_place" if operand.alias_in_place else "alias_view"
        meaning += f" — {label(what, lang)} {code(operand.alias_of)}, {label('alias_at', lang)} " \
                   f"{_inline(lambda line: expression_latex(operand.alias_at, line), NARROW_EM, PHONE_NARROW_EM)}"
    return meaning


def _as_written(stmt) -> str:
    """A statement as the spec writes it, with its keys (where, when, writes: tile, reads: tile)."""
    parts = [stmt.text]
    if stmt.where is not None:
        parts.append(f"where {stmt.where_text}")
    if stmt.when is not None:
        parts.append(f"when {stmt.when_text}")
    parts += [f"{key}: tile" for key in ("writes", "reads") if getattr(stmt, key) == "tile"]
    return "    ".join(parts)


def _counts(mode: Mode) -> bool:
    """Whether the mode's semantics count (``sum(v < n: select(c, 1, 0))``, shown as ``#{...}``)."""
    roots = [node for stmt in mode.semantics for node in (stmt.value, stmt.when, stmt.where, *stmt.target.indices,
                                                         *(n for _, n, _ in stmt.lets)) if node is not None]
    return any(counted(node) is not None for root in roots for node in walk(root))


def _state_table(db: Database, mode: Mode, lang: str) -> list[str]:
    """The configuration registers a mode writes (each field with its value) or reads (each field)."""
    if mode.effect is not None and mode.effect.sets:
        rows = [[code(f"{reg}.{name}"),
                 _inline(lambda line, node=node: expression_latex(node, line), NARROW_EM, PHONE_NARROW_EM),
                 prose(text(db.isa.state[reg].fields[name], lang))]
                for reg, fields in mode.effect.sets.items() for name, (node, _text) in fields.items()]
        return [label("state_sets", lang) + "\n",
                table([label("state_field", lang), label("value", lang), label("meaning", lang)], rows)]
    if mode.reads_state:
        rows = [[code(reg), prose(text(db.isa.state[reg].text, lang)),
                 ", ".join(code(f) for f in db.isa.state[reg].fields)] for reg in mode.reads_state]
        return [label("state_reads", lang) + "\n",
                table([label("state_register", lang), label("meaning", lang), label("state_fields", lang)], rows)]
    return []


def _pipe_line(db: Database, mode: Mode, lang: str) -> list[str]:
    """The pipe the mode runs on (isa.yaml ``pipes``), with what that pipe is."""
    pipes = db.isa.pipes
    if mode.pipe is None or pipes is None:
        return []
    known = [u for u in mode.pipe.units if u in pipes.units]
    if len(known) == 1:
        units = prose(text(pipes.units[known[0]].text, lang))
    else:
        units = "; ".join(f"{code(u)}: {prose(text(pipes.units[u].text, lang))}" for u in known)
    return [label("pipe_line", lang).format(pipe=code(mode.pipe.describe()), units=units,
                                            source=code(pipes.source)) + "\n"]


def _mode_sections(db: Database, op: OpSpec, mode: Mode, lang: str, heading: str) -> list[str]:
    out: list[str] = []
    if heading:
        out.append(f"## {label('mode', lang)} {code(mode.name)}: {prose(text(mode.title, lang))}\n")
    h = "###" if heading else "##"
    out.append(f"{h} {label('operands', lang)}\n")
    rows = [[code(o.name), code(o.role), code(o.dtype or o.enum or o.attr_type), _operand_text(db, o, lang)]
            for o in mode.operands]
    out.append(table([label("name", lang), label("role", lang), label("type_var", lang), label("meaning", lang)],
                     rows))
    out += _pipe_line(db, mode, lang)
    out.append(f"{h} {label('semantics', lang)}\n")
    if mode.effect is not None:  # an instruction without data semantics: what it does instead
        out.append(label("cross_core" if mode.cross_core else "no_data_semantics", lang)
                   .format(kind=code(mode.effect.kind)) + "\n")
        out.append(prose(text(mode.effect.text, lang)) + "\n")
        out += _state_table(db, mode, lang)
    elif mode.reads_state:  # configuration registers an earlier instruction set
        out += _state_table(db, mode, lang)
    written = "\n".join(_as_written(s) for s in mode.semantics)
    same = next((m for m in op.modes[:op.modes.index(mode)]
                 if [_as_written(s) for s in m.semantics] == [_as_written(s) for s in mode.semantics]), None)
    if mode.effect is not None:
        pass
    elif same is not None:  # modes that differ only in operands or attributes: say so once
        out.append(label("same_semantics", lang).format(mode=code(same.name)) + "\n")
    else:
        note = label("count_note", lang).format(count=_math(r"\#\{0 \le m < n \mid c\}"), m=_math("m"), c=_math("c"))
        out.append(label("semantics_intro", lang) + (f" {note}" if _counts(mode) else "") + "\n")
        for stmt in mode.semantics:
            out.append(_display(lambda line, stmt=stmt: statement_latex(stmt, line)) + "\n")
            if stmt.lets:
                context = (stmt.target, stmt.value, stmt.domain, stmt.when, stmt.where)
                out.append(f"{label('where', lang)} {_definitions(stmt.lets, '', context)}\n")
        out.append(f'<details class="ptospec-source" markdown="1">\n<summary>{label("as_written", lang)}</summary>\n')
        out.append(fence(written, "text"))
        out.append("</details>\n")
    out.append(f"{h} {label('assembly', lang)}\n")
    templates = [[label(f"form_{f}", lang), code(print_template(op, mode, f))] for f in FORMS]
    out.append(table([label("form", lang), label("asm_lines", lang)], templates))
    out.append(f"{h} {label('cpp', lang)}\n")
    out.append(fence(mode.cpp_signature, "cpp"))
    out.append(f"{h} {label('examples', lang)}\n")
    out.append(f"{label('example_intro', lang)} {code(mode.example.profile)}:\n")
    out.append(table([label("operands", lang), label("descriptor", lang)],
                     [[code(n), code(t)] for n, t in mode.example.tiles.items()]))
    out.append(f"**{label('auto', lang)}**\n")
    out.append(fence(cpp_example(db, mode, manual=False), "cpp"))
    out.append(f"**{label('manual', lang)}**\n")
    out.append(fence(cpp_example(db, mode, manual=True), "cpp"))
    out.append(f"**{label('asm_lines', lang)}**\n")
    lines = asm_examples(db, op, mode)
    out.append(fence("\n".join(f"// {label(f'form_{f}', lang)}\n{lines[f]}" for f in FORMS), "text"))
    return out


def differences_block(db: Database, op: OpSpec, lang: str) -> list[str]:
    """Each recorded difference as a collapsed block: topic as the summary, claims and resolution inside."""
    out: list[str] = []
    for d in op.differences:
        kind = label(f"diff_kind_{d.kind}", lang)
        out.append(f'<details class="ptospec-diff note" data-kind="{d.kind}" id="{op.name}-{d.id}" markdown="1">')
        out.append(f"<summary>{prose(text(d.topic, lang))}</summary>\n")
        out.append(f'<p class="pd-meta">{kind} · <code>{d.id}</code></p>\n')
        out.append(f"{label('claims', lang)}:\n")
        for src, says in d.claims:
            ref = op.sources.get(src)
            where = ""
            if ref is not None:
                cell = source_cell(db, ref)
                where = f" ({cell or label('seed_source', lang)})"
            out.append(f"- **{prose(src)}**{where}: {prose(text(says, lang))}")
        out.append("")
        out.append(f"**{label('resolution', lang)}:** {prose(text(d.resolution, lang))}\n")
        for obs in d.observed:
            parts = [f"{label('observed', lang)}: {code(obs.profile)} → {code(obs.category)}"]
            if obs.modes:
                parts.append(f"{label('observed_modes', lang)} {', '.join(code(m) for m in obs.modes)}")
            if obs.rules:
                parts.append(f"{label('observed_rules', lang)} {', '.join(code(r) for r in obs.rules)}")
            if obs.when is not None:
                when = _inline(lambda line, obs=obs: condition_latex(obs.when, line), NARROW_EM, PHONE_NARROW_EM)
                parts.append(f"{label('observed_when', lang)} {when}")
            out.append(f"- {'; '.join(parts)}")
        if d.observed:
            out.append("")
        out.append("</details>\n")
    return out


def kind_path(lang: str, kind: str) -> str:
    return f"{lang}/kinds/{kind}.md"


def expression_params(db: Database, op: OpSpec, line: float = LINE_EM) -> list[str]:
    """The op's kind parameters that are expressions, as ``name(args) = value`` in LaTeX, each value laid out
    to stay within ``line`` em."""
    kind = db.kinds.get(op.kind) if op.kind else None
    if kind is None:
        return []
    out = []
    for name, value in op.params.items():
        param = kind.params.get(name)
        if param is None or not param.args or not isinstance(value, str):
            continue
        head = f"\\mathrm{{{name}}}({', '.join(param.args)})"
        out.append(f"{head} = {expression_latex(parse_expr(value), max(line - latex_width(head) - 1.3, line / 2))}")
    return out


def _kind_line(db: Database, op: OpSpec, lang: str) -> list[str]:
    kind = db.kinds.get(op.kind) if op.kind else None
    if kind is None:
        return []
    line = f"{label('kind', lang)}: [{prose(text(kind.title, lang))}](../kinds/{kind.name}.md)"
    defs = ", ".join(math_inline(wide, narrow) for wide, narrow in zip(
        expression_params(db, op), expression_params(db, op, PHONE_LINE_EM), strict=True))
    return [line + (f", {label('kind_defines', lang)} {defs}" if defs else "") + "\n"]


def _worked_section(db: Database, op: OpSpec, lang: str) -> list[str]:
    if not any(m.has_data_semantics for m in op.modes):  # nothing to work through: say why
        mode = op.modes[0]
        key = "no_worked_cross_core" if mode.cross_core else "no_worked_effect"
        kind = code(mode.effect.kind) if mode.effect is not None else ""
        return [f"## {label('worked', lang)}\n", label(key, lang).format(op=op.name.upper(), kind=kind) + "\n"]
    w = worked.compute(db, op)
    mode = f" · {label('worked_mode', lang)} {code(w.mode)}" if len(op.modes) > 1 else ""
    return [f"## {label('worked', lang)}\n", f"{label('worked_intro', lang)} {code(w.profile)}{mode}.\n",
            worked.render(db, w, lang) + "\n"]


def _usage_section(op: OpSpec, lang: str) -> list[str]:
    """What a kernel writer must know beyond the semantics: asynchronous, overloads, cost (``usage``)."""
    if not op.usage:
        return []
    out = [f"## {label('usage_notes', lang)}\n"]
    for note in op.usage:
        sources = ", ".join(code(s) for s in note.sources)
        out.append(f"- **{label(f'usage_{note.kind}', lang)}** {prose(text(note.text, lang))} "
                   f"({label('source', lang)}: {sources})")
    out.append("")
    return out


def _perf_cell(cell: str | dict[str, str], lang: str) -> str:
    return prose(text(cell, lang) if isinstance(cell, dict) else cell)


def _status_line(op: OpSpec, lang: str) -> list[str]:
    """A warning when the instruction was removed or renamed upstream after the snapshot, with its evidence."""
    st = op.status
    if not st:
        return []
    to = f" → {st['to'].upper()}" if st.get("to") else ""
    return [f"!!! warning \"{label('status-' + st['state'], lang)}{to}\"\n    {prose(text(st['text'], lang))} "
            f"({label('source', lang)}: {prose(st['source'])})\n"]


def op_page(db: Database, op: OpSpec, lang: str) -> str:
    fam = db.isa.families.get(op.family)
    fam_title = text(fam.title, lang) if fam else op.family
    out = [HEADER, f"# {op.name.upper()}\n", language_link(lang, f"ops/{op.name}.md"),
           f"{label('family', lang)}: [{prose(fam_title)}](../families/{op.family}.md)\n",
           *_kind_line(db, op, lang), *_status_line(op, lang),
           f"## {label('summary', lang)}\n", prose(text(op.summary, lang)) + "\n",
           f"## {label('description', lang)}\n", prose(text(op.description, lang)) + "\n",
           *_usage_section(op, lang), *_worked_section(db, op, lang)]
    if op.let:
        out.append(f"## {label('definitions', lang)}\n")
        bindings = [(n, node) for n, node, _ in op.let]
        out += [math_block(wide, narrow) + "\n" for wide, narrow in zip(
            bindings_latex(bindings, LINE_EM), bindings_latex(bindings, PHONE_LINE_EM), strict=True)]
    multi = len(op.modes) > 1
    if multi:
        out.append(f"## {label('modes', lang)}\n")
        out += [f"- {code(m.name)}: {prose(text(m.title, lang))}" for m in op.modes]
        out.append("")
    for mode in op.modes:
        out += _mode_sections(db, op, mode, lang, "mode" if multi else "")
    out += _dtype_section(db, op, lang)
    out += _rules_sections(db, op, lang)
    out += _tmp_section(db, op, lang)
    n = op.numerics
    out.append(f"## {label('numerics', lang)}\n")
    def named(value: str) -> str:  # a numerics value by its name on the pages (numerics_values in isa.yaml)
        return prose(text(db.isa.numerics_values[value], lang)) if value in db.isa.numerics_values else code(value)

    rows = [[label("nan", lang), named(n.nan)], [label("signed_zero", lang), named(n.signed_zero)],
            [label("ties", lang), named(n.ties)], [label("overflow", lang), named(n.overflow)]]
    rows += [[label(name, lang), named(value)] for name, value in (("division_by_zero", n.division_by_zero),
                                                                   ("shift_out_of_range", n.shift_out_of_range))
             if value != "not-applicable"]
    if n.exact:
        rows.append([label("exact", lang), ", ".join(code(d) for d in n.exact)])
    for p in n.exact_specials:
        variants = ", ".join(f"{f}: {v}" for f, v in db.isa.profiles[p].variants.items())
        rows.append([label("exact_specials", lang), f"{code(p)} ({prose(variants)})" if variants else code(p)])
    rows += [[f"{label('tolerance', lang)} {code(d)}", f"rtol {t.rtol:g}, atol {t.atol:g}"]
             for d, t in n.tolerance.items()]
    out.append(table([label("name", lang), label("value", lang)], rows))
    if n.notes:
        out.append(prose(text(n.notes, lang)) + "\n")
    if op.performance:
        out.append(f"## {label('performance', lang)}\n")
        for perf in op.performance:
            out.append(f"### {code(perf.profile)}: {prose(text(perf.title, lang))}\n")
            out.append(table([_perf_cell(c, lang) for c in perf.columns],
                             [[_perf_cell(c, lang) for c in row] for row in perf.rows]))
            out.append(f"{label('source', lang)}: {code(perf.source)}\n")
    if op.differences:
        out.append(f"## {label('differences', lang)}\n")
        out += differences_block(db, op, lang)
    out.append(f"## {label('sources', lang)}\n")
    out.append(table([label("name", lang), label("kind", lang), label("source", lang)],
                     [[code(s.id), code(s.kind), source_cell(db, s) or label("seed_source", lang)]
                      for s in op.sources.values()]))
    return "\n".join(out)
