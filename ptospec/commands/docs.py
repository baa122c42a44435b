"""``ptospec docs build|serve``: the reference site generated from the spec database."""

from __future__ import annotations

import os
import re
import sys
import time
from pathlib import Path

from ..errors import InvocationError
from ._common import database


def register(sub) -> None:
    p = sub.add_parser("docs", help="generate and build the reference site",
                       description="Generate Markdown pages (English and Chinese) from the spec database into "
                       "site/docs and site/mkdocs.yml, and build the static site with mkdocs (strict).")
    dsub = p.add_subparsers(dest="docs_command", metavar="ACTION")
    dsub.required = True
    b = dsub.add_parser("build", help="generate the pages and build site/build with mkdocs --strict")
    b.add_argument("--site", metavar="DIR", help="site folder (default: site/ next to specs/)")
    b.add_argument("--check", action="store_true",
                   help="only check that the committed generated files are up to date (exit 1 naming stale files)")
    b.add_argument("--no-html", action="store_true", help="generate the Markdown only, skip mkdocs")
    b.add_argument("--site-url", metavar="URL", default=os.environ.get("PTOSPEC_SITE_URL", ""),
                   help="public address of the built site (its build/ folder), for sitemaps and canonical links "
                   "(default: $PTOSPEC_SITE_URL; links work without it, under any sub-path and from disk)")
    b.set_defaults(func=run_build)
    s = dsub.add_parser("serve", help="build the site and serve site/build on the loopback interface")
    s.add_argument("--site", metavar="DIR", help="site folder (default: site/ next to specs/)")
    s.add_argument("--port", default="8000", help="port on 127.0.0.1, 0 .. 65535 (default: 8000)")
    s.set_defaults(func=run_serve)


def run_build(args) -> int:
    from ..docs.build import build_date, build_html, build_lock, generate, site_dir, stale, write

    db = database(args)
    site = site_dir(db, args.site)
    files = generate(db)
    if args.check:
        out_of_date = stale(files, site)
        for rel in out_of_date:
            print(f"ptospec: stale generated file: {site / rel}", file=sys.stderr)
        if out_of_date:
            print(f"ptospec: {len(out_of_date)} generated file(s) out of date; run 'ptospec docs build'",
                  file=sys.stderr)
            return 1
        print(f"{len(files)} generated files up to date")
        return 0
    start = time.perf_counter()
    with build_lock(site):
        changed = write(files, site)
        print(f"generated {len(files)} files in {site} ({len(changed)} changed)")
        if not args.no_html:
            build_html(site, args.site_url, build_date(Path(db.root)))
            print(f"built {site / 'build'} in {time.perf_counter() - start:.2f}s")
    return 0


def run_serve(args) -> int:
    from ..docs.build import build_date, build_html, build_lock, generate, site_dir, write

    port = str(args.port).strip()
    if not re.fullmatch(r"[0-9]{1,5}", port) or int(port) > 65535:  # refused before the build; ASCII digits only
        raise InvocationError(f"--port must be 0 .. 65535 in digits, got {args.port!r}", rule="cli.args",
                              where="--port")
    port = str(int(port))
    db = database(args)
    site = site_dir(db, args.site)
    with build_lock(site):
        write(generate(db), site)
        build_html(site, "", build_date(Path(db.root)))
    cmd = [sys.executable, "-m", "http.server", "--bind", "127.0.0.1", "--directory", str(site / "build"),
           port]
    print(f"serving {site / 'build'} on http://127.0.0.1:{port}/ (Ctrl-C stops)")
    sys.stdout.flush()
    os.execv(cmd[0], cmd)  # the server takes over this process: Ctrl-C and kill reach it directly
    return 0  # pragma: no cover
