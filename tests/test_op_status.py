"""An instruction's upstream status (``status:`` of an op file): removed or renamed after the checked snapshot."""

from __future__ import annotations

import json

import jsonschema
import pytest

from ptospec.docs.pages import op_page
from ptospec.loader import schema


def test_tpairreducesum_is_marked_removed_with_its_evidence(db):
    st = db.ops["tpairreducesum"].status
    assert st["state"] == "removed" and "PTOAS pull request #1325" in st["source"]
    page = op_page(db, db.ops["tpairreducesum"], "en")
    assert '!!! warning "Removed upstream after the checked snapshot"' in page and "#1325" in page
    assert "!!! warning" not in op_page(db, db.ops["tadd"], "en")


@pytest.mark.parametrize("status, ok", [
    ({"state": "renamed", "to": "tnew", "source": "a commit", "text": {"en": "x", "zh": "x"}}, True),
    ({"state": "renamed", "source": "a commit", "text": {"en": "x", "zh": "x"}}, False),  # renamed to what?
    ({"state": "removed", "text": {"en": "x", "zh": "x"}}, False),  # no evidence
    ({"state": "deprecated", "source": "s", "text": {"en": "x", "zh": "x"}}, False),
])
def test_status_schema(status, ok):
    sub = json.loads(json.dumps(schema("op")["properties"]["status"]))
    sub["properties"]["text"] = {"type": "object"}  # the bilingual text's own schema is tested with every op file
    valid = jsonschema.Draft202012Validator(sub).is_valid(status)
    assert valid is ok


def test_show_and_list_name_the_status(capsys):
    from ptospec.cli import main

    assert main(["show", "tpairreducesum"]) == 0
    head = capsys.readouterr().out.splitlines()[1]
    assert head.startswith("  REMOVED upstream after the snapshot:") and "#1325" in head
    assert main(["list", "--family", "reduce-and-expand"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert [ln.endswith("removed upstream") for ln in lines if ln.startswith(("tpairreducesum ", "trowsum "))] \
        == [True, False]
