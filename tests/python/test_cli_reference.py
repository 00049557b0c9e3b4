"""docs/cli.md is what scripts/docs/cli_reference.py writes from the `crossbow` command's parsers
and the C++ option table: a command, flag, default or rule changed in the code and not in the
page fails here."""
import argparse

import pytest

import cli_reference
from crossbow import cli
from crossbow.options import option_table

pytest.importorskip("crossbow._C", reason="the option table is in crossbow._C (scripts/setup.sh)")


def test_the_page_is_what_the_script_writes():
    with open(cli_reference.PAGE) as f:
        current = f.read().splitlines()
    written = cli_reference.page().splitlines()
    first = next((i for i, (a, b) in enumerate(zip(current, written)) if a != b),
                 min(len(current), len(written)))
    assert current == written, (
        f"docs/cli.md is stale from line {first + 1} (run scripts/docs/cli_reference.py):\n"
        f"  page:   {current[first] if first < len(current) else '(end)'}\n"
        f"  script: {written[first] if first < len(written) else '(end)'}")


def _every_flag(parser, line="crossbow"):
    """(command line, its first flag or its argument's name) of every argument, and (command
    line, None) of every command."""
    yield line, None
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                yield from _every_flag(sub, f"{line} {name}")
        elif not isinstance(action, argparse._HelpAction):
            yield line, (action.option_strings or [action.metavar or action.dest])[0]


def test_every_command_and_flag_has_a_row():
    text = cli_reference.page()
    sections = dict(s.split("\n", 1) for s in text.split("\n## ")[1:])
    flags = list(_every_flag(cli.parser()))[1:]
    assert len(flags) > 200 and len({line for line, _ in flags}) >= 16
    for line, flag in flags:
        assert line in sections, f"no section for {line}"
        if flag is None:
            continue
        rows = [r for r in sections[line].splitlines() if r.startswith("| `")]
        row = next((r for r in rows if r.startswith((f"| `{flag}", f"| `[{flag}"))), None)
        assert row is not None, f"{line}: no row for {flag}"
        assert not row.endswith("|  |"), f"{line}: {flag} says nothing of what it does"


def _row(text, section, flag):
    body = text.split(f"\n## {section}\n", 1)[1].split("\n## ", 1)[0]
    return next(r for r in body.splitlines() if r.startswith(f"| `{flag} "))


def test_defaults_and_rules_come_from_the_option_table(monkeypatch):
    """A default changed in the table reaches every command that shares the flag, and the rule
    column is the table's."""
    table = option_table()
    monkeypatch.setitem(table, "weight_decay", table["weight_decay"]._replace(default=0.125))
    text = cli_reference.page()
    for command in ("crossbow train", "crossbow spec"):
        assert _row(text, command, "--weight-decay").startswith(
            "| `--weight-decay WEIGHT_DECAY` | `0.125` | finite and >= 0 | weight decay: ")
    # eval's own batch, and the table's rule for it
    assert _row(text, "crossbow eval", "--batch-size").startswith(
        "| `--batch-size IMAGES` | `100` | > 0 | images per learner per iteration |")
    assert "| `--time-limit SECONDS` | none | finite and > 0 |" in _row(text, "crossbow train",
                                                         "--time-limit")


def test_check_fails_on_a_stale_page(tmp_path, monkeypatch, capsys):
    page = tmp_path / "cli.md"
    monkeypatch.setattr(cli_reference, "PAGE", str(page))
    assert cli_reference.main([]) == 0 and cli_reference.main(["--check"]) == 0
    page.write_text(page.read_text().replace("| `--lr LR` | `0.1` |", "| `--lr LR` | `0.2` |"))
    assert cli_reference.main(["--check"]) == 1
    assert "is stale: run scripts/docs/cli_reference.py" in capsys.readouterr().err
