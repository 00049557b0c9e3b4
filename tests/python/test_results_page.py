"""docs/results.md and the raw output beside it: every file in docs/results/ is named on the
page (so a reader finds the figure it backs), and every docs/results/ file the page names is
there (so a figure said to be backed is)."""
import os
import re

from conftest import ROOT

PAGE = os.path.join(ROOT, "docs", "results.md")
RAW = os.path.join(ROOT, "docs", "results")


def test_the_raw_output_and_the_page_name_each_other():
    text = open(PAGE).read()
    named = set(re.findall(r"docs/results/([\w.-]+)", text))
    present = set(os.listdir(RAW))
    assert present - named == set(), "raw output the page does not name"
    assert named - present == set(), "files the page names that docs/results/ lacks"
    assert named  # the page names its raw output
