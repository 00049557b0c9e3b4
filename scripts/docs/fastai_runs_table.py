#!/usr/bin/env python3
"""Collects runs of fastai itself (scripts/peer/fastai_imagenette.py) into
docs/reproduction/fastai/ and rewrites their table in docs/reproduction.md.

    scripts/docs/fastai_runs_table.py [RUN_DIR ...]

Each RUN_DIR holds the run's metrics.jsonl (its --output); it is kept as
docs/reproduction/fastai/NAME.jsonl, NAME being the folder's name. Without arguments it only
rewrites the table from the files kept. A run still going shows the epochs it has done.
"""
import argparse
import glob
import json
import os
import shutil

from reproduction_table import rewrite

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
DOCS = os.path.join(ROOT, "docs", "reproduction", "fastai")
PAGE = os.path.join(ROOT, "docs", "reproduction.md")
BEGIN, END = "<!-- fastai: scripts/docs/fastai_runs_table.py -->", "<!-- /fastai -->"


def read_run(path):
    """(header, epoch lines) of a metrics file: the last header (a resumed run writes one per
    start) and each epoch's last line."""
    header, epochs = None, {}
    with open(path) as f:
        for line in f:
            record = json.loads(line)
            if "recipe" in record:
                header = record
            elif "epoch" in record:
                epochs[record["epoch"]] = record
    if header is None:
        raise ValueError(f"{path}: no header line (is it the --output of fastai_imagenette.py?)")
    return header, [epochs[e] for e in sorted(epochs)]


def row(name, header, epochs):
    last = epochs[-1] if epochs else {}
    done = f"{len(epochs)} of {header['epochs']}"

    def percent(key):
        return f"{last[key] * 100:.2f}%" if key in last else "-"
    best = f"{max(e['accuracy'] for e in epochs) * 100:.2f}%" if epochs else "-"
    minutes = f"{last['time'] / 60:.1f}" if last else "-"
    rate = f"{sum(e['images_per_s'] for e in epochs) / len(epochs):.1f}" if epochs else "-"
    return (f"| [{name}](reproduction/fastai/{name}.jsonl) | {header['recipe']}, {header['net']}, "
            f"seed {header['seed']} | {header['mode']}, {header['threads']} threads, "
            f"{header['workers']} workers | {done} | {percent('accuracy')} | {best} | "
            f"{percent('top5')} | {minutes} | {rate} | fastai {header['fastai']}, torch "
            f"{header['torch'].split('+')[0]} | {header.get('cpu', '-')}, "
            f"{header.get('started', '-')[:10]} |")


def table():
    lines = ["| run | recipe, net, seed | configuration | epochs | final top-1 | best top-1 | "
             "final top-5 | training minutes | images/s | versions | machine, date |",
             "|---|---|---|---|---|---|---|---|---|---|---|"]
    for path in sorted(glob.glob(os.path.join(DOCS, "*.jsonl"))):
        name = os.path.basename(path)[:-len(".jsonl")]
        lines.append(row(name, *read_run(path)))
    return "\n".join(lines)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[1])
    ap.add_argument("runs", nargs="*", help="run folders with a metrics.jsonl")
    for run_dir in ap.parse_args().runs:
        source = os.path.join(run_dir, "metrics.jsonl")
        read_run(source)
        os.makedirs(DOCS, exist_ok=True)
        shutil.copyfile(source, os.path.join(DOCS, os.path.basename(os.path.normpath(run_dir))
                                             + ".jsonl"))
    rewrite(PAGE, BEGIN, END, table())
    print(table())


if __name__ == "__main__":
    main()
