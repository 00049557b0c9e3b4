#!/usr/bin/env python3
"""Writes the tables of docs/results.md from the measured results in docs/results/*.jsonl.

    scripts/docs/results_page.py            # rewrite the tables in place
    scripts/docs/results_page.py --check    # exit 1, with a diff, where the page is stale

The page's prose is written by hand; each table sits between `<!-- table: NAME.jsonl -->` and
`<!-- /table -->` and is replaced by the rows of docs/results/NAME.jsonl, in file order. Every
line of a results file is one JSON object with the fields of FIELDS (docs/results.md,
"How to read and add a row", says what each holds); a row whose raw output is missing, or
with a field missing, unknown or of the wrong type, stops the script with its file and line.
"""
import argparse
import difflib
import json
import os
import re
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
PAGE = os.path.join(ROOT, "docs", "results.md")
RESULTS = os.path.join(ROOT, "docs", "results")
# field: (type, required)
FIELDS = {
    "what": (str, True),
    "figure": (str, True),
    "measured": (str, True),
    "hardware": (str, True),
    "date": (str, True),
    "commit": (str, True),
    "command": (str, True),
    "raw": (list, True),
    "note": (str, False),
}
DATE = re.compile(r"\d{4}-\d{2}-\d{2}$")
TABLE = re.compile(r"(<!-- table: ([\w.-]+\.jsonl) -->\n)(.*?)(<!-- /table -->)", re.S)
HEADER = ("| what | figure | measured | hardware | date, commit | command | raw output |\n"
          "|---|---|---|---|---|---|---|\n")


def check_row(row, where, results):
    """Raises ValueError naming WHERE for a row that does not follow FIELDS or whose raw output
    is not under RESULTS."""
    if not isinstance(row, dict):
        raise ValueError(f"{where}: a row is a JSON object, found {type(row).__name__}")
    unknown = sorted(set(row) - set(FIELDS))
    if unknown:
        raise ValueError(f"{where}: unknown field(s) {', '.join(unknown)}; "
                         f"the fields are {', '.join(FIELDS)}")
    for name, (kind, required) in FIELDS.items():
        if name not in row:
            if required:
                raise ValueError(f"{where}: field '{name}' is missing")
            continue
        if not isinstance(row[name], kind) or not row[name]:
            raise ValueError(f"{where}: field '{name}' must be a non-empty {kind.__name__}")
    if not DATE.match(row["date"]):
        raise ValueError(f"{where}: date '{row['date']}' is not YYYY-MM-DD")
    for path in row["raw"]:
        if not isinstance(path, str) or path.startswith(("/", "..")) or \
                not os.path.isfile(os.path.join(results, path)):
            raise ValueError(f"{where}: raw output '{path}' is not a file under docs/results/")


def read_rows(path, results=RESULTS):
    """The checked rows of one results file."""
    rows = []
    with open(path) as f:
        for number, line in enumerate(f, 1):
            where = f"{os.path.relpath(path, ROOT)}:{number}"
            if not line.strip():
                continue
            try:
                row = json.loads(line)
            except json.JSONDecodeError as e:
                raise ValueError(f"{where}: not JSON ({e.msg})") from None
            check_row(row, where, results)
            rows.append(row)
    if not rows:
        raise ValueError(f"{os.path.relpath(path, ROOT)}: no rows")
    return rows


def _cell(text):
    return text.replace("|", "\\|").replace("\n", " ")


def render_table(rows):
    lines = []
    for r in rows:
        measured = r["measured"] + (f"; {r['note']}" if "note" in r else "")
        raw = ", ".join(f"[{os.path.basename(p)}](results/{p})" for p in r["raw"])
        lines.append(f"| {_cell(r['what'])} | **{_cell(r['figure'])}** | {_cell(measured)} | "
                     f"{_cell(r['hardware'])} | {r['date']}, {_cell(r['commit'])} | "
                     f"`{_cell(r['command'])}` | {raw} |\n")
    return HEADER + "".join(lines)


def render(page, results=RESULTS):
    """PAGE's text with every marked table rewritten from its results file."""
    found = TABLE.findall(page)
    if not found:
        raise ValueError("docs/results.md has no <!-- table: NAME.jsonl --> markers")

    def table(m):
        path = os.path.join(results, m.group(2))
        if not os.path.isfile(path):
            raise ValueError(f"docs/results/{m.group(2)}, which the page names, does not exist")
        rows = read_rows(path, results)
        return m.group(1) + render_table(rows) + m.group(4)

    return TABLE.sub(table, page)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--check", action="store_true",
                    help="write nothing; exit 1 with a diff where the page is stale")
    args = ap.parse_args()
    with open(PAGE) as f:
        page = f.read()
    try:
        new = render(page)
    except ValueError as e:
        sys.exit(f"results_page.py: {e}")
    if args.check:
        if new != page:
            sys.stdout.writelines(difflib.unified_diff(
                page.splitlines(True), new.splitlines(True), "docs/results.md", "generated"))
            sys.exit(1)
        return
    with open(PAGE, "w") as f:
        f.write(new)


if __name__ == "__main__":
    main()
