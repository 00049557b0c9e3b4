"""docs/results.md's tables are what scripts/docs/results_page.py makes of docs/results/*.jsonl:
the page is regenerated and compared, every row's raw output exists, and a broken results file
is refused with its file and line."""
import json
import os
import re

import pytest

from conftest import ROOT
import results_page

PAGE = os.path.join(ROOT, "docs", "results.md")
RESULTS = os.path.join(ROOT, "docs", "results")
ROW = {"what": "ResNet-32, fp32", "figure": "1.32x", "measured": "67.8 against 89.5 ms",
       "hardware": "a CPU, 2 vCPUs", "date": "2026-12-07", "commit": "c8b15b6",
       "command": "python3 scripts/bench/bench_step.py", "raw": ["cpu/out.txt"]}


def test_the_page_is_what_the_results_files_give():
    with open(PAGE) as f:
        page = f.read()
    assert results_page.render(page) == page, \
        "docs/results.md is stale: run python3 scripts/docs/results_page.py"


def test_every_results_file_has_a_table_and_every_row_its_raw_output():
    with open(PAGE) as f:
        tables = set(re.findall(r"<!-- table: ([\w.-]+\.jsonl) -->", f.read()))
    files = {n for n in os.listdir(RESULTS) if n.endswith(".jsonl")}
    assert tables == files, "a results file without a table, or a table without its file"
    for name in files:
        for row in results_page.read_rows(os.path.join(RESULTS, name)):
            for raw in row["raw"]:
                assert os.path.isfile(os.path.join(RESULTS, raw)), f"{name}: {raw}"


@pytest.fixture
def results(tmp_path):
    os.makedirs(tmp_path / "cpu")
    (tmp_path / "cpu" / "out.txt").write_text("raw output\n")
    return tmp_path


def write(results, *rows):
    with open(results / "speed.jsonl", "w") as f:
        for row in rows:
            f.write((row if isinstance(row, str) else json.dumps(row)) + "\n")


PAGE_TEXT = "# Results\n\n<!-- table: speed.jsonl -->\nold\n<!-- /table -->\n\nprose\n"


def test_a_row_becomes_a_table_line_with_its_link_and_the_prose_stays(results):
    write(results, ROW, dict(ROW, figure="2.00x", note="bf16"))
    page = results_page.render(PAGE_TEXT, str(results))
    assert page.startswith("# Results\n\n<!-- table: speed.jsonl -->\n| what |")
    assert page.endswith("<!-- /table -->\n\nprose\n") and "old" not in page
    lines = [l for l in page.splitlines() if l.startswith("| ResNet")]
    assert lines == [
        "| ResNet-32, fp32 | **1.32x** | 67.8 against 89.5 ms | a CPU, 2 vCPUs | 2026-12-07, "
        "c8b15b6 | `python3 scripts/bench/bench_step.py` | [out.txt](results/cpu/out.txt) |",
        "| ResNet-32, fp32 | **2.00x** | 67.8 against 89.5 ms; bf16 | a CPU, 2 vCPUs | "
        "2026-12-07, c8b15b6 | `python3 scripts/bench/bench_step.py` | "
        "[out.txt](results/cpu/out.txt) |"]


def test_a_changed_figure_changes_the_page(results):
    write(results, ROW)
    before = results_page.render(PAGE_TEXT, str(results))
    write(results, dict(ROW, figure="1.33x"))
    assert results_page.render(before, str(results)) != before


@pytest.mark.parametrize("row, says", [
    (dict(ROW, raw=["cpu/missing.txt"]), "raw output 'cpu/missing.txt' is not a file"),
    (dict(ROW, raw=["../../README.md"]), "is not a file under docs/results/"),
    (dict(ROW, raw=[]), "field 'raw' must be a non-empty list"),
    ({k: v for k, v in ROW.items() if k != "commit"}, "field 'commit' is missing"),
    (dict(ROW, cpu="x"), "unknown field(s) cpu"),
    (dict(ROW, date="7 Dec 2026"), "is not YYYY-MM-DD"),
    (dict(ROW, figure=1.32), "field 'figure' must be a non-empty str"),
    ("{not json", "not JSON"),
])
def test_a_broken_row_is_refused_with_its_file_and_line(results, row, says):
    write(results, ROW, row)
    with pytest.raises(ValueError, match=r"speed\.jsonl:2: ") as e:
        results_page.render(PAGE_TEXT, str(results))
    assert says in str(e.value)


def test_a_results_file_named_by_the_page_must_exist_and_hold_rows(results):
    with pytest.raises(ValueError, match="speed.jsonl, which the page names, does not exist"):
        results_page.render(PAGE_TEXT, str(results))
    write(results)
    with pytest.raises(ValueError, match="no rows"):
        results_page.render(PAGE_TEXT, str(results))
    with pytest.raises(ValueError, match="no <!-- table"):
        results_page.render("# no tables\n", str(results))

