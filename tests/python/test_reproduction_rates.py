"""docs/reproduction.md's results table: generated from docs/reproduction/*.result.json, and each
row's stated rate per learner (one learner's rate times its lr_learner_scaling factor) is the
peak rate its committed metrics logged."""
import glob
import json
import os

import pytest

from conftest import ROOT

_C = pytest.importorskip("crossbow._C", reason="crossbow._C is not built (scripts/setup.sh)")

import reproduction_table  # noqa: E402

ROWS = sorted(glob.glob(os.path.join(ROOT, "docs", "reproduction", "*.result.json")))


def test_the_page_holds_the_table_its_rows_make():
    with open(reproduction_table.PAGE) as f:
        page = f.read()
    assert reproduction_table.table() in page, \
        "docs/reproduction.md is stale: run scripts/docs/reproduction_table.py"


@pytest.mark.parametrize("path", ROWS, ids=lambda p: os.path.basename(p).split(".")[0])
def test_each_rows_stated_rate_is_the_one_its_metrics_logged(path):
    """The metrics log the rate every 50 iterations: after a warm-up the first record of a
    decaying schedule (poly) is past the peak by a few percent, so the peak logged lies within
    [0.9, 1] of the stated rate; the wrong learner factor (sqrt(2) at 2 learners) lies outside."""
    with open(path) as f:
        row = json.load(f)
    with open(path.replace(".result.json", ".jsonl")) as f:
        logged = [r["lr"] for r in map(json.loads, f) if r.get("lr") is not None]
    stated = reproduction_table.rate_per_learner(row)
    assert logged and stated
    assert 0.9 * stated <= max(logged) <= stated * (1 + 1e-6), \
        f"{row['name']}: states {stated:g} a learner, its metrics peak at {max(logged):g}"
