"""The site page of the program layer (specs/program.yaml): views, tile buffers, block indices and the
synchronisation instructions, with their rules."""

from __future__ import annotations

from ..model import Database
from ..program.spec import program_spec
from .labels import label, text
from .markdown import HEADER, code, prose, table
from .pages import language_link

PATH = "programs.md"


def program_page(db: Database, lang: str) -> str:
    spec = program_spec(db)
    out = [HEADER, f"# {label('program_page', lang)}\n", language_link(lang, PATH),
           label("program_intro", lang) + "\n"]
    for name, instr in spec.instructions.items():
        if not instr.synchronisation:
            out += _instruction(spec, name, instr, lang, "##")
    out.append(f"## {label('synchronisation', lang)}\n")
    out.append(prose(text(spec.sync_summary, lang)) + "\n")
    out.append(table([label("enum", lang), label("enumerators", lang)],
                     [[code(e), ", ".join(code(v) for v in values)] for e, values in spec.enums.items()]))
    for name in spec.sync:
        out += _instruction(spec, name, spec.instructions[name], lang, "###")
    if spec.module_checks:
        out.append(f"## {label('module_checks', lang)}\n")
        for name, check in spec.module_checks.items():
            out += _instruction(spec, name, check, lang, "###", title=name)
    if spec.memrefs is not None:
        out.append(f"## {label('memrefs', lang)}\n")
        out.append(prose(text(spec.memrefs.summary, lang)) + "\n")
        for name, operation in spec.memrefs.operations.items():
            out += _instruction(spec, name, operation, lang, "###", title=name)
    out.append(f"## {label('targets', lang)}\n")
    out.append(table([label("target_arch", lang), label("profile", lang)],
                     [[code(a) + (f" ({label('default_marker', lang)})" if a == spec.default_target else ""), code(p)]
                      for a, p in spec.targets.items()]))
    out.append(f"## {label('dtype_spellings', lang)}\n")
    out.append(", ".join(f"{code(a)} = {code(t)}" for a, t in spec.dtype_aliases.items()) + "\n")
    return "\n".join(out)


def _instruction(spec, name: str, instr, lang: str, heading: str, title: str | None = None) -> list[str]:
    out = [f"{heading} {title or 'pto.' + name}\n", prose(text(instr.summary, lang)) + "\n",
           f"```mlir\n{instr.syntax}\n```\n"]
    if instr.operands:
        shown = [code(n) + (f" ({code(e)})" if e else "") for n, e in instr.operands]
        out.append(f"{label('operands', lang)}: " + ", ".join(shown)
                   + ("; " + label("attributes", lang) + ": " + ", ".join(code(a) for a in instr.attributes)
                      if instr.attributes else "") + "\n")
    if instr.rules:
        rows = []
        for r in instr.rules:
            check = code(r.check_text) + (f" ({label('per_dimension', lang)})" if r.per_dim else "")
            if r.profiles:
                check += " — " + ", ".join(code(p) for p in r.profiles)
            evidence = ", ".join(code(spec.sources[e]["ref"]) for e in r.evidence)
            message = f'<br><span class="ptospec-msg">{prose(text(r.message, lang))}</span>'
            rows.append([code(r.id), check + message, evidence])
        out.append(table([label("rule", lang), label("check_message", lang), label("evidence", lang)], rows))
    return out
