#!/usr/bin/env python3
"""Collects `crossbow reproduce` runs into docs/reproduction/ and rewrites the results table of
docs/reproduction.md from every row kept there.

    scripts/docs/reproduction_table.py [RUN_DIR ...]

For each RUN_DIR (a reproduce output folder, finished or not) it keeps NAME.result.json (the
row), NAME.jsonl (the metrics) and NAME.png (the curves) in docs/reproduction/, NAME being
the folder's name. Without arguments it only rewrites the table from the rows kept.
"""
import argparse
import glob
import json
import os
import shutil

from crossbow import _native, reproduce
from crossbow.plot import plot

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
DOCS = os.path.join(ROOT, "docs", "reproduction")
PAGE = os.path.join(ROOT, "docs", "reproduction.md")
BEGIN, END = "<!-- results: scripts/docs/reproduction_table.py -->", "<!-- /results -->"


def collect(run_dir):
    name = os.path.basename(os.path.normpath(run_dir))
    with open(os.path.join(run_dir, "reproduce.json")) as f:
        settings = json.load(f)
    metrics = os.path.join(run_dir, "metrics.jsonl")
    row = reproduce.result_row(settings, metrics)
    row["name"] = name
    os.makedirs(DOCS, exist_ok=True)
    shutil.copyfile(metrics, os.path.join(DOCS, name + ".jsonl"))
    plot([metrics], os.path.join(DOCS, name + ".png"), [f"{row['recipe']} ({row['variant']})"])
    with open(os.path.join(DOCS, name + ".result.json"), "w") as f:
        json.dump(row, f, indent=1, sort_keys=True)
        f.write("\n")


def _percent(x):
    return f"{x * 100:.2f}%" if x is not None else "-"


def rate_per_learner(row):
    """Each learner's peak rate as the row states it: one learner's rate times the factor of
    its lr_learner_scaling for the learners it ran; None where the run chose none."""
    if not row.get("learners_chosen"):
        return None
    return row["lr"] * _native.load().learner_scale(row["lr_learner_scaling"],
                                                    row["learners_chosen"], row["sync"])


def _rate(row):
    rate = rate_per_learner(row)
    if rate is None:
        return "-"
    scale = rate / row["lr"]
    return f"{row['lr']:g}" if scale == 1 else f"{row['lr']:g} x {scale:.3g} = {rate:.3g}"


def table():
    rows = []
    for path in sorted(glob.glob(os.path.join(DOCS, "*.result.json"))):
        with open(path) as f:
            rows.append(json.load(f))
    lines = ["| run | recipe, overrides | sync, batch x learners | rate per learner | "
             "epochs (published) | best top-1 | final top-1 | published top-1 | minutes | "
             "images/s | machine |",
             "|---|---|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        done = (f"{r['epochs_done']:g} of {r['epochs']}" if not r["complete"]
                else f"{r['epochs']}") + f" ({r['published_epochs']:g})"
        if r["compressed"]:
            done += ", compressed"
        learners = r["learners"] if r["learners"] != "auto" else \
            f"auto: {r['learners_chosen']}"
        lines.append(
            f"| [{r['name']}](reproduction/{r['name']}.png) | {r['recipe']} ({r['variant']})"
            f"{''.join(f', {k} {v}' for k, v in sorted(r['overrides'].items()))} | {r['sync']}, "
            f"{r['batch_size']} x {learners} | {_rate(r)} | {done} | {_percent(r['best_top1'])} | "
            f"{_percent(r['final_top1'])} | {_percent(r['published_top1'])} | "
            f"{r['training_minutes']:g} | {r['images_per_s']:g} | {r['cpu']}"
            f"{', ' + r['gpu'] if r.get('gpu') else ''}, {r['commit']} |")
    return "\n".join(lines)


def between(page_path, begin, end):
    """The text between the `begin` and `end` markers of the page."""
    with open(page_path) as f:
        page = f.read()
    if begin not in page or end not in page:
        raise SystemExit(f"{page_path}: no {begin} ... {end} markers to put the table between")
    head, rest = page.split(begin, 1)
    return head, rest.split(end, 1)


def rewrite(page_path, begin, end, text):
    """Puts `text` between the `begin` and `end` markers of the page."""
    head, (_, tail) = between(page_path, begin, end)
    with open(page_path, "w") as f:
        f.write(head + begin + "\n" + text + "\n" + end + tail)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[1])
    ap.add_argument("runs", nargs="*", help="reproduce output folders")
    for run_dir in ap.parse_args().runs:
        collect(run_dir)
    rewrite(PAGE, BEGIN, END, table())
    print(table())


if __name__ == "__main__":
    main()
