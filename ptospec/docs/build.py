"""Generate the site sources (``site/docs``, ``site/mkdocs.yml``), check them, and run mkdocs.

Generation is deterministic: the same database always yields byte-identical files.
Only files carrying the generated-file marker are ever rewritten or removed.
"""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
from pathlib import Path

from ..errors import PtospecError
from ..model import Database
from ..outputs import remove, target, write_atomic
from .indexes import differences_page, family_page, home_page, kind_page, matrix_page, root_page
from .labels import LANG_NAMES, LANGS, label, text
from .markdown import GENERATED
from .pages import family_path, kind_path, op_page, op_path

EXTRA_CSS = f"""/* {GENERATED} */
.ptospec-math {{ overflow-x: auto; overflow-y: hidden; margin: 0.8em 0; }}
.ptospec-math math {{ font-size: 1.15em; }}
.md-typeset table:not([class]) {{ font-size: 0.7rem; }}
"""


class DocsError(PtospecError):
    """The site could not be generated or built."""


def site_dir(db: Database, explicit: str | None = None) -> Path:
    """``site/`` next to the spec database's ``specs/`` folder (the repository top), unless given."""
    return Path(explicit) if explicit else Path(db.root).resolve().parent / "site"


def _nav(db: Database, lang: str) -> list:
    families = {}
    for fam in db.isa.families:
        families[fam] = [db.ops[n] for n in sorted(db.ops) if db.ops[n].family == fam]
    fam_nav = [{text(db.isa.families[f].title, lang): family_path(lang, f)} for f in families]
    op_nav = [{n.upper(): op_path(lang, n)} for n in sorted(db.ops)]
    return [
        {label("home", lang): f"{lang}/index.md"},
        {label("matrix", lang): f"{lang}/matrix.md"},
        {label("differences_page", lang): f"{lang}/differences.md"},
        {label("families", lang): fam_nav},
        {label("kinds", lang): [{text(k.title, lang): kind_path(lang, k.name)} for k in db.kinds.values()]},
        {label("ops", lang): op_nav},
    ]


def mkdocs_config(db: Database) -> str:
    config = {
        "site_name": f"{label('site_title', 'en')} · {label('site_title', 'zh')}",
        "docs_dir": "docs",
        "site_dir": "build",
        "strict": True,
        "use_directory_urls": True,
        "theme": {"name": "material", "language": "en", "font": False,
                  "features": ["navigation.tabs", "navigation.sections", "search.highlight"]},
        "extra": {"alternate": [{"name": LANG_NAMES[lang], "link": f"/{lang}/", "lang": lang} for lang in LANGS]},
        "extra_css": ["assets/ptospec.css"],
        "plugins": [{"search": {"lang": ["en"]}}],
        "markdown_extensions": ["tables", "admonition", "attr_list", "md_in_html",
                                {"toc": {"permalink": True}},
                                {"pymdownx.highlight": {"use_pygments": True}}, "pymdownx.superfences"],
        "validation": {"omitted_files": "warn", "absolute_links": "warn", "unrecognized_links": "warn",
                       "anchors": "warn"},
        "nav": [{"Home": "index.md"}] + [{LANG_NAMES[lang]: _nav(db, lang)} for lang in LANGS],
    }
    # JSON is valid YAML and keeps the output byte-stable without a YAML emitter's quirks.
    return f"# {GENERATED}\n" + json.dumps(config, ensure_ascii=False, indent=2) + "\n"


def generate(db: Database) -> dict[str, str]:
    """Every generated file, keyed by its path relative to ``site/``."""
    files: dict[str, str] = {"mkdocs.yml": mkdocs_config(db), "docs/index.md": root_page(),
                             "docs/assets/ptospec.css": EXTRA_CSS}
    for lang in LANGS:
        files[f"docs/{lang}/index.md"] = home_page(db, lang)
        files[f"docs/{lang}/matrix.md"] = matrix_page(db, lang)
        files[f"docs/{lang}/differences.md"] = differences_page(db, lang)
        for fam in db.isa.families:
            ops = [db.ops[n] for n in sorted(db.ops) if db.ops[n].family == fam]
            files[f"docs/{family_path(lang, fam)}"] = family_page(db, fam, ops, lang)
        for name in sorted(db.ops):
            files[f"docs/{op_path(lang, name)}"] = op_page(db, db.ops[name], lang)
        for kind in db.kinds.values():
            files[f"docs/{kind_path(lang, kind.name)}"] = kind_page(db, kind, lang)
    return files


def _is_generated(path: Path) -> bool:
    if path.is_symlink() or not path.is_file():
        return False
    try:
        with path.open(encoding="utf-8") as fh:
            return GENERATED in fh.read(400)
    except (OSError, UnicodeDecodeError):
        return False


def _leftovers(files: dict[str, str], site: Path) -> list[str]:
    """Files we generated earlier that the database no longer produces (never followed through a link)."""
    docs = site / "docs"
    if not docs.is_dir() or docs.is_symlink():
        return []
    found = []
    for folder, dirs, names in os.walk(docs):  # os.walk does not descend into linked folders
        for name in names:
            path = Path(folder) / name
            rel = path.relative_to(site).as_posix()
            if rel not in files and _is_generated(path):
                found.append(rel)
        dirs.sort()
    return sorted(found)


def _current(path: Path, content: str) -> bool:
    try:
        return not path.is_symlink() and path.is_file() and path.read_text(encoding="utf-8") == content
    except (OSError, UnicodeDecodeError):
        return False


def stale(files: dict[str, str], site: Path) -> list[str]:
    """Paths (relative to ``site/``) that are missing, differ, or are obsolete generated files."""
    out = [rel for rel, content in sorted(files.items()) if not _current(site / rel, content)]
    return out + _leftovers(files, site)


def write(files: dict[str, str], site: Path) -> list[str]:
    """Write changed files (atomically, inside ``site``), remove obsolete generated ones; return what changed."""
    changed = []
    for rel, content in sorted(files.items()):
        path = target(site, rel)
        if (path.exists() or path.is_symlink()) and not _is_generated(path):
            raise DocsError(f"{path} exists and was not generated by ptospec; refusing to overwrite it",
                            rule="docs.foreign-file")
        if not _current(path, content):
            write_atomic(site, rel, content)
            changed.append(rel)
    for rel in _leftovers(files, site):
        remove(site, rel)
        changed.append(rel)
    return changed


def mkdocs_cmd(site: Path, *args: str) -> list[str]:
    return [sys.executable, "-m", "mkdocs", *args, "-f", str(site / "mkdocs.yml")]


def mkdocs_env() -> dict[str, str]:
    return {**os.environ, "NO_MKDOCS_2_WARNING": "1"}


def build_html(site: Path) -> None:
    """``mkdocs build --strict``: any warning (broken link, missing page) fails the build."""
    if importlib.util.find_spec("mkdocs") is None or importlib.util.find_spec("material") is None:
        raise DocsError("the docs need mkdocs and mkdocs-material: pip install -e '.[docs]'",
                        rule="docs.deps")
    proc = subprocess.run(mkdocs_cmd(site, "build", "--strict", "--clean"), capture_output=True, text=True,
                          check=False, env=mkdocs_env())
    if proc.returncode != 0:
        output = (proc.stdout + proc.stderr).strip()
        raise DocsError(f"mkdocs build --strict failed:\n{output}", rule="docs.mkdocs")
