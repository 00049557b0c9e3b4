"""docs/results.md and the raw output beside it: every file in docs/results/ is named on the
page, itself or by a folder that holds it (so a reader finds the figure it backs), and every
docs/results/ file or folder the page names, at any depth, is there (so a figure said to be
backed is)."""
import os
import re

from conftest import ROOT
from test_cited_paths import expand

PAGE = os.path.join(ROOT, "docs", "results.md")
RAW = os.path.join(ROOT, "docs", "results")
NAMED = re.compile(r"docs/results/([\w.{},/-]*[\w}-])")


def named_paths(text):
    return {one for path in NAMED.findall(text) for one in expand(path)}


def unnamed_and_missing(text):
    """(files under docs/results/ that neither the page nor a folder it names names, paths the
    page names that are not there)."""
    named = named_paths(text)
    present = {os.path.relpath(os.path.join(folder, name), RAW)
               for folder, _, names in os.walk(RAW) for name in names}

    def covered(path):
        parts = path.split(os.sep)
        return any("/".join(parts[:i]) in named for i in range(1, len(parts) + 1))

    unnamed = {p for p in present if not covered(p)}
    missing = {p for p in named if not os.path.exists(os.path.join(RAW, p))}
    return unnamed, missing


def test_the_raw_output_and_the_page_name_each_other():
    text = open(PAGE).read()
    unnamed, missing = unnamed_and_missing(text)
    assert unnamed == set(), "raw output the page does not name"
    assert missing == set(), "files the page names that docs/results/ lacks"
    assert named_paths(text)  # the page names its raw output


def test_a_missing_file_in_a_subfolder_is_found():
    page = "docs/results/averaging/no_such_run.jsonl and docs/results/averaging/seed1/."
    assert unnamed_and_missing(page)[1] == {"averaging/no_such_run.jsonl"}
