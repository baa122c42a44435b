"""The JSON Schemas of the spec files, shipped inside the package, and every violation of one as a problem."""

from __future__ import annotations

import json
from functools import cache
from importlib import resources
from typing import Any

from ..located import Located
from .problems import DatabaseErrors, Issues


@cache
def schema(name: str) -> dict[str, Any]:
    """The JSON Schema ``isa`` or ``op`` shipped inside the package."""
    text = resources.files("ptospec.schema").joinpath(f"{name}.schema.json").read_text(encoding="utf-8")
    return json.loads(text)


@cache
def _fast_validator(name: str):
    """A compiled validator (fastjsonschema) for the common case: files that are valid."""
    import fastjsonschema

    compiled = dict(schema(name))
    compiled["$schema"] = "http://json-schema.org/draft-07/schema#"  # the subset our schemas use
    return fastjsonschema.compile(compiled)


def _is_text_schema(sub: object) -> bool:
    """The schemas' bilingual prose shape (``$defs/text``): a mapping with one string per site language."""
    return isinstance(sub, dict) and sub.get("type") == "object" and sub.get("required") == ["en", "zh"]


def schema_errors(src: Located, schema_name: str, issues: Issues) -> bool:
    """Add every violation of the schema ``schema_name`` by ``src`` to ``issues``; whether there was one."""
    import fastjsonschema

    try:
        _fast_validator(schema_name)(src.data)
        return False
    except fastjsonschema.JsonSchemaException:
        pass  # collect every problem, with paths, from the reference validator
    import jsonschema

    validator = jsonschema.Draft202012Validator(schema(schema_name))
    found = False
    for err in sorted(validator.iter_errors(src.data), key=lambda e: list(map(str, e.absolute_path))):
        found = True
        path = tuple(err.absolute_path)
        location = "/".join(str(p) for p in path) or "(top level)"
        issues.add(src, path, f"{location}: {_message(err)}", f"schema.{err.validator}")
    return found


def _message(err) -> str:
    if err.validator == "oneOf":
        return f"{err.instance!r} does not match any allowed form"
    if _is_text_schema(err.schema) and err.validator in ("type", "required"):
        langs = err.schema["required"]
        if isinstance(err.instance, str):
            return (f"English-only text; prose is written in every site language: "
                    f"{{en: <this text>, {', '.join(f'{x}: <translation>' for x in langs if x != 'en')}}}")
        missing = [x for x in langs if not isinstance(err.instance, dict) or x not in err.instance]
        return f"prose needs every site language ({', '.join(langs)}); missing: {', '.join(missing)}"
    return err.message


def check_schema(src: Located, schema_name: str) -> None:
    """Raise ``DatabaseErrors`` listing every schema violation of ``src``."""
    issues = Issues()
    if schema_errors(src, schema_name, issues):
        raise DatabaseErrors(issues.items)
