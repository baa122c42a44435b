"""Generate the site sources (``site/docs``, ``site/mkdocs.yml``), check them, and run mkdocs.

Generation is deterministic: the same database always yields byte-identical files.
Only files carrying the generated-file marker are ever rewritten or removed.
"""

from __future__ import annotations

import datetime
import importlib.metadata
import importlib.util
import json
import logging
import multiprocessing
import os
import shutil
import subprocess
import tempfile
from pathlib import Path

from ..errors import PtospecError
from ..memo import PerDatabase
from ..model import Database
from ..outputs import output_lock, remove, remove_temporaries, target, write_atomic
from ..workers import fork_pool
from .assets import ALTERNATE, COPYRIGHT, CSS, HOOK, JS, WORKER_SHIM, root_index
from .indexes import differences_page, family_page, home_page, kind_page, matrix_page
from .kernels_page import PATH as KERNELS_PATH
from .kernels_page import kernel_sources, kernels_page
from .labels import LANG_NAMES, LANGS, label, text
from .markdown import GENERATED
from .pages import family_path, kind_path, op_page, op_path
from .program_page import PATH as PROGRAM_PATH
from .program_page import program_page


class DocsError(PtospecError):
    """The site could not be generated or built."""


def site_dir(db: Database, explicit: str | None = None) -> Path:
    """``site/`` next to the spec database's ``specs/`` folder (the repository top), unless given."""
    return Path(explicit) if explicit else Path(db.root).resolve().parent / "site"


def _in_lang(path: str, lang: str) -> str:
    """A page path relative to the language's own docs folder (each language is its own mkdocs project)."""
    return path.removeprefix(f"{lang}/")


def _nav(db: Database, lang: str) -> list:
    families = {}
    for fam in db.isa.families:
        families[fam] = [db.ops[n] for n in sorted(db.ops) if db.ops[n].family == fam]
    fam_nav = [{text(db.isa.families[f].title, lang): _in_lang(family_path(lang, f), lang)} for f in families]
    op_nav = [{n.upper(): _in_lang(op_path(lang, n), lang)} for n in sorted(db.ops)]
    kinds = [{text(k.title, lang): _in_lang(kind_path(lang, k.name), lang)} for k in db.kinds.values()]
    return [
        {label("home", lang): "index.md"},
        {label("matrix", lang): "matrix.md"},
        {label("differences_page", lang): "differences.md"},
        {label("program_page", lang): PROGRAM_PATH},
        {label("kernels_page", lang): KERNELS_PATH},
        {label("families", lang): fam_nav},
        {label("kinds", lang): kinds},
        {label("ops", lang): op_nav},
    ]


def version() -> str:
    """The database version: the installed ptospec distribution's (pyproject) version."""
    try:
        return importlib.metadata.version("ptospec")
    except importlib.metadata.PackageNotFoundError:  # pragma: no cover - running from a bare checkout
        from .. import __version__

        return __version__


def mkdocs_config(db: Database, lang: str) -> str:
    """``site/<lang>/mkdocs.yml``: one mkdocs project per language, so every page carries its own
    ``lang``, interface strings and search index; the projects share the theme overrides."""
    upstream = db.isa.upstream
    config = {
        "site_name": label("site_title", lang),
        "docs_dir": f"../docs/{lang}",
        "site_dir": f"../build/{lang}",
        "strict": True,
        # Pages are files (ops/tadd.html): the build works from disk and under any sub-path.
        "use_directory_urls": False,
        "theme": {"name": "material", "language": lang, "font": False, "custom_dir": "../overrides",
                  "features": ["navigation.tabs", "navigation.sections", "navigation.top", "search.highlight",
                               "content.code.copy"]},
        "extra": {
            "alternate": [{"name": LANG_NAMES[x], "link": f"../{x}/", "lang": x} for x in LANGS],
            "generator": False,
            "provenance": {"database": label("database", lang), "version": version(),
                           "upstream_label": label("upstream", lang), "repository": upstream.get("repository", ""),
                           "commit": upstream.get("commit", ""), "built_label": label("built", lang)},
            "build_date": "",  # set at build time (see build_info), so generated files stay stable
            # before the theme's bundle: search from a page opened from disk, ranking (see WORKER_SHIM)
            "polyfills": ["assets/worker-shim.js"],
        },
        "extra_css": ["assets/ptospec.css"],
        "extra_javascript": ["assets/ptospec.js"],
        # "_" and "." separate words too: "tmatmul_acc" and "pto.tadd" are found by their parts
        "plugins": [{"search": {"lang": ["en"], "separator": r"[\s\-_.]+"}}],
        "markdown_extensions": ["tables", "admonition", "attr_list", "md_in_html", "pymdownx.details",
                                {"toc": {"permalink": True, "permalink_title": label("permalink", lang)}},
                                {"pymdownx.highlight": {"use_pygments": True}}, "pymdownx.superfences"],
        "validation": {"omitted_files": "warn", "absolute_links": "warn", "unrecognized_links": "warn",
                       "anchors": "warn"},
        "hooks": ["../hooks/ptospec_math.py"],
        "nav": _nav(db, lang),
    }
    # JSON is valid YAML and keeps the output byte-stable without a YAML emitter's quirks.
    return f"# {GENERATED}\n" + json.dumps(config, ensure_ascii=False, indent=2) + "\n"


# The files of the last two databases, each with the example kernels it ran: a database is immutable, so a
# process that generates a site more than once (``docs build --check`` then a build) makes it once.
_GENERATED: PerDatabase[dict[str, str]] = PerDatabase(2)


def generate(db: Database) -> dict[str, str]:
    """Every generated file, keyed by its path relative to ``site/``."""
    sources = kernel_sources(db)
    return dict(_GENERATED.get(db, sources, lambda: _generate(db)))


def _generate(db: Database) -> dict[str, str]:
    files: dict[str, str] = {"docs/index.html": root_index(version()),
                             "overrides/partials/alternate.html": ALTERNATE,
                             "overrides/partials/copyright.html": COPYRIGHT,
                             "hooks/ptospec_math.py": HOOK}
    for lang in LANGS:
        files[f"{lang}/mkdocs.yml"] = mkdocs_config(db, lang)
        files[f"docs/{lang}/assets/ptospec.css"] = CSS
        files[f"docs/{lang}/assets/ptospec.js"] = JS
        files[f"docs/{lang}/assets/worker-shim.js"] = WORKER_SHIM
        files[f"docs/{lang}/index.md"] = home_page(db, lang)
        files[f"docs/{lang}/matrix.md"] = matrix_page(db, lang)
        files[f"docs/{lang}/differences.md"] = differences_page(db, lang)
        files[f"docs/{lang}/{PROGRAM_PATH}"] = program_page(db, lang)
        files[f"docs/{lang}/{KERNELS_PATH}"] = kernels_page(db, lang)
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
    found = []
    for top in ("docs", "overrides", "hooks", *LANGS, "mkdocs.yml"):
        where = site / top
        if where.is_symlink():
            continue
        if where.is_dir():
            for folder, dirs, names in os.walk(where):  # os.walk does not descend into linked folders
                for name in names:
                    path = Path(folder) / name
                    rel = path.relative_to(site).as_posix()
                    if rel not in files and _is_generated(path):
                        found.append(rel)
                dirs.sort()
        elif where.name not in files and _is_generated(where):
            found.append(where.relative_to(site).as_posix())
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
    """Write changed files (atomically, inside ``site``), remove obsolete generated ones and the temporary files
    of a write a kill cut short; return what changed."""
    changed = []
    remove_temporaries(site, files)
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


def build_date(root: Path) -> str:
    """The build date shown in the footer: ``PTOSPEC_BUILD_DATE``, else the date of the spec repository's
    last commit (reproducible), else today (UTC). Not part of any generated file, so ``--check`` ignores it."""
    explicit = os.environ.get("PTOSPEC_BUILD_DATE")
    if explicit:
        return explicit
    try:
        proc = subprocess.run(["git", "-C", str(root), "log", "-1", "--format=%cs"], capture_output=True,
                              text=True, check=False, timeout=10)
        if proc.returncode == 0 and proc.stdout.strip():
            return proc.stdout.strip()
    except (OSError, subprocess.TimeoutExpired):
        pass
    return datetime.datetime.now(datetime.UTC).date().isoformat()


class _Collect(logging.Handler):
    def __init__(self) -> None:
        super().__init__(logging.WARNING)
        self.lines: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.lines.append(f"{record.levelname}: {record.getMessage()}")


def _build_language(job: tuple[str, str, str, str, str]) -> str | None:
    """Build one language's mkdocs project into ``out`` in this process; the problems found, or None."""
    config_file, lang, site_url, date, out = job
    from mkdocs.commands.build import build
    from mkdocs.config import load_config
    from mkdocs.exceptions import MkDocsException

    collect = _Collect()
    logger = logging.getLogger("mkdocs")
    logger.addHandler(collect)
    logger.propagate = False
    try:
        overrides = {"site_url": site_url.rstrip("/") + f"/{lang}/"} if site_url else {}
        overrides["site_dir"] = out
        config = load_config(config_file=config_file, **overrides)
        config["extra"]["build_date"] = date
        build(config)
        inline_search_index(Path(out) / "search")
        return None
    except MkDocsException as exc:
        return "\n".join([*collect.lines, str(exc)])
    finally:
        logger.removeHandler(collect)


MANIFEST = ".ptospec-build"  # in site/build: every file of the last build, so only those are ever replaced
STAGING = ".ptospec-staging-"  # site/.ptospec-staging-*: a build in progress (or one a kill cut short)


def _files_under(folder: Path) -> tuple[list[str], list[str]]:
    """(files, links and other non-regular entries) under ``folder``, relative, never followed."""
    files, odd = [], []
    for here, dirs, names in os.walk(folder):
        for name in [*names, *[d for d in dirs if (Path(here) / d).is_symlink()]]:
            path = Path(here) / name
            rel = path.relative_to(folder).as_posix()
            (files if path.is_file() and not path.is_symlink() else odd).append(rel)
    return sorted(files), sorted(odd)


def _check_replaceable(build: Path) -> None:
    """Refuse to replace ``site/build`` unless everything in it is what an earlier build listed in its manifest."""
    if not build.exists() and not build.is_symlink():
        return
    if build.is_symlink() or not build.is_dir():
        raise DocsError(f"refusing to replace {build}: it is not a folder", rule="docs.foreign-file")
    files, odd = _files_under(build)
    if not files and not odd:
        return
    manifest = build / MANIFEST
    listed: set[str] = set()
    if manifest.is_file() and not manifest.is_symlink():
        lines = manifest.read_text(encoding="utf-8", errors="replace").splitlines()
        if lines and GENERATED in lines[0]:
            listed = set(lines[1:]) | {MANIFEST}
    if not listed:
        raise DocsError(f"refusing to replace {build}: it has no {MANIFEST} manifest (an older ptospec built it, or "
                        "it is not ptospec's); remove it once and build again", rule="docs.foreign-file")
    foreign = odd + [f for f in files if f not in listed]
    if foreign:
        raise DocsError(f"refusing to replace {build}: {build / foreign[0]} was not built by ptospec "
                        f"({len(foreign)} such entr{'y' if len(foreign) == 1 else 'ies'}); move them away",
                        rule="docs.foreign-file")


def build_lock(site: Path):
    """One ``docs build`` at a time per site folder."""
    return output_lock(site, "docs build")


def build_html(site: Path, site_url: str = "", date: str = "") -> None:
    """Build every language with mkdocs --strict (any warning fails), in parallel, then the root page.

    mkdocs writes into a fresh folder beside ``build/`` that then takes its place, so a failed or killed build
    leaves the old site, and ``build/`` is replaced only when everything in it is listed in the manifest of the
    build that made it (nothing the user put there is deleted; a link there is never followed).
    ``site_url`` (optional, the public address of ``build/``) fills the sitemaps and canonical links;
    every link in the pages is relative, so the build also works under a sub-path and from disk.
    """
    if importlib.util.find_spec("mkdocs") is None or importlib.util.find_spec("material") is None:
        raise DocsError("the docs need mkdocs and mkdocs-material: pip install -e '.[docs]'",
                        rule="docs.deps")
    build = target(site, "build")
    _check_replaceable(build)
    with build_lock(site):
        for left in site.glob(f"{STAGING}*"):  # builds a kill cut short
            if left.is_dir() and not left.is_symlink():
                shutil.rmtree(left, ignore_errors=True)
        staging = Path(tempfile.mkdtemp(prefix=STAGING, dir=site))
        try:
            staging.chmod(0o755)
            _build_into(site, staging, site_url, date)
            _check_replaceable(build)  # (again: the user may have added files during the build)
            old = None
            if build.exists():
                old = Path(tempfile.mkdtemp(prefix=STAGING, dir=site))
                os.replace(build, old / "build")
            os.replace(staging, build)
            if old is not None:
                shutil.rmtree(old, ignore_errors=True)
        except OSError as exc:
            raise DocsError(f"cannot build {build}: {exc.strerror or exc}", rule="output.write",
                            where=str(build)) from None
        finally:
            shutil.rmtree(staging, ignore_errors=True)


def _build_into(site: Path, out: Path, site_url: str, date: str) -> None:
    jobs = [(str(site / lang / "mkdocs.yml"), lang, site_url, date, str(out / lang)) for lang in LANGS]
    if "fork" in multiprocessing.get_all_start_methods():
        with fork_pool(len(jobs)) as pool:
            problems = pool.map(_build_language, jobs)
    else:  # pragma: no cover - platforms without fork
        problems = [_build_language(job) for job in jobs]
    failed = [f"[{job[1]}] {p}" for job, p in zip(jobs, problems, strict=True) if p]
    if failed:
        raise DocsError("mkdocs build --strict failed:\n" + "\n".join(failed), rule="docs.mkdocs")
    (out / "index.html").write_bytes(target(site, "docs/index.html").read_bytes())
    files, _ = _files_under(out)
    (out / MANIFEST).write_text(f"# {GENERATED}: the files of this build (ptospec replaces only these)\n"
                                + "".join(f"{f}\n" for f in files), encoding="utf-8")


def inline_search_index(folder: Path) -> None:
    """``search/search_index.js`` beside the JSON index: a page opened from disk cannot fetch the JSON, so
    the theme loads this script instead (``var __index = ...``)."""
    index = folder / "search_index.json"
    if index.is_file():
        (folder / "search_index.js").write_text("var __index = " + index.read_text(encoding="utf-8"),
                                               encoding="utf-8")
