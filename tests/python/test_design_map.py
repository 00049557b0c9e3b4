"""docs/design/README.md's map: every file it names exists and holds every symbol named beside
it, so that a newcomer following a row lands on the code it promises."""

import pathlib
import re

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]
MAP = ROOT / "docs" / "design" / "README.md"
ROW = re.compile(r"^\|[^|]+\|\s*`([^`]+)`\s*\|\s*(`[^|]+`)\s*\|\s*$")


def rows(text):
    """(file, [symbols]) of each map row: a table row whose last two cells are a backticked
    path and backticked symbols."""
    return [(m.group(1), re.findall(r"`([^`]+)`", m.group(2)))
            for m in map(ROW.match, text.splitlines()) if m]


def missing(text, root):
    """What does not resolve: files that do not exist, and symbols their file lacks."""
    out = []
    for path, symbols in rows(text):
        file = root / path
        if not file.is_file():
            out.append(f"{path}: no such file")
            continue
        body = file.read_text()
        for symbol in symbols:
            if not re.search(r"(?<![\w:])" + re.escape(symbol) + r"(?!\w)", body):
                out.append(f"{path}: no {symbol}")
    return out


def test_the_map_has_rows():
    assert len(rows(MAP.read_text())) >= 10


def test_every_row_resolves():
    problems = missing(MAP.read_text(), ROOT)
    assert not problems, "docs/design/README.md:\n" + "\n".join(problems)


def test_every_linked_note_exists():
    for link in re.findall(r"\]\(([^)#]+)\)", MAP.read_text()):
        assert (MAP.parent / link).is_file(), link


@pytest.mark.parametrize("row, problem", [
    ("| x | `operators/eltwise_op.cc` | `EltwiseOp::Gone` |",
     "operators/eltwise_op.cc: no EltwiseOp::Gone"),
    ("| x | `operators/gone_op.cc` | `EltwiseOp` |", "operators/gone_op.cc: no such file"),
    ("| x | `operators/eltwise_op.cc` | `EltwiseOp`, `elu` |", "operators/eltwise_op.cc: no elu"),
])
def test_a_broken_row_is_reported(row, problem):
    assert missing(row, ROOT) == [problem]
