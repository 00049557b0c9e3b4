#!/usr/bin/env python3
"""Writes docs/cli.md, the reference of the `crossbow` command: every command and flag with its
default, rule and help, read from the command's argparse parsers (python/crossbow/cli.py and
the modules it calls) and, for the training options, from the C++ option table
(`_C.trainer_options()`, crossbow/train/trainer_options.cc), so that no default is written
by hand. Needs the C++ extension, which holds the table.

    scripts/docs/cli_reference.py            rewrite docs/cli.md
    scripts/docs/cli_reference.py --check    exit 1, saying so, where docs/cli.md differs
"""
import argparse
import os
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "python"))

from crossbow import _native, cli  # noqa: E402
from crossbow.options import option_table  # noqa: E402

PAGE = os.path.join(ROOT, "docs", "cli.md")
TITLES = {"positional arguments": "arguments", "options": "flags"}
INTRO = """# The `crossbow` command

Every command and flag, with its default and the rule its value must keep. Written by
`scripts/docs/cli_reference.py` from the command's parsers and the table of training options
(`crossbow/train/trainer_options.cc`); `tests/python/test_cli_reference.py` fails when this page
differs from what the script writes. Every training option is also a keyword argument of
`crossbow.Trainer` (`--lr-policy` is `lr_policy`); see the [guide](guide.md) for what they do
together.
"""


def commands(parser, line="crossbow", about=""):
    """(command line, parser, what it does) of the command and its subcommands, depth first."""
    yield line, parser, about or parser.description
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            helps = {a.dest: a.help for a in action._choices_actions}
            for name, sub in action.choices.items():
                yield from commands(sub, f"{line} {name}", helps.get(name, ""))


def anchor(line):
    return line.replace(" ", "-")


def _cell(text):
    return " ".join(str(text).split()).replace("|", "\\|")


def _shown(value):
    if isinstance(value, (list, tuple)):
        return " ".join(_shown(v) for v in value) if value else None
    if isinstance(value, bool):
        return "true" if value else "false"
    return None if value is None else str(value)


def _flag(parser, action):
    formatter = parser._get_formatter()
    if not action.option_strings:
        return formatter._format_args(action, action.dest)
    flag = ", ".join(action.option_strings)
    if action.nargs == 0:
        return flag
    return f"{flag} {formatter._format_args(action, action.dest.upper())}"


def _default(action):
    if action.required or action.default is argparse.SUPPRESS:
        return ""
    if isinstance(action, argparse.BooleanOptionalAction):
        return f"`{action.option_strings[0 if action.default else 1]}`"
    if action.nargs == 0:
        return "off"
    shown = _shown(action.default)
    if shown is None:
        return "none"
    return f"`{shown}`" if shown else '`""`'


def _table_rule(option):
    """The table's rule; "auto or" it for a number that may be left to the engine (alpha)."""
    if option["type"] == "str" and option["default"] == '"auto"' and option["rule"]:
        return "auto or " + option["rule"]
    return option["rule"]


def _exclusions(parser, action):
    return [other for group in parser._mutually_exclusive_groups if action in group._group_actions
            for other in group._group_actions if other is not action]


def _rule(parser, action, table_rule):
    rules = ["required"] if action.required and action.option_strings else []
    if table_rule:
        rules.append(table_rule)
    elif action.choices is not None:
        rules.append("one of " + ", ".join(map(str, action.choices)))
    elif action.type in (int, float):
        rules.append({int: "an integer", float: "a number"}[action.type])
    if action.nargs == "+":
        rules.append("one or more")
    rules += [f"not with {other.option_strings[-1]}" for other in _exclusions(parser, action)]
    return "; ".join(rules)


def rows(parser, table):
    """[(group title, [(flag, default, rule, help)])] of a parser's arguments, in its order."""
    groups = []
    for group in parser._action_groups:
        found = []
        for action in group._group_actions:
            if isinstance(action, (argparse._HelpAction, argparse._SubParsersAction)):
                continue
            option = table.get(action.dest)
            from_table = option is not None and action.help == option_table()[action.dest].help
            doc, rule = (option["doc"], _table_rule(option)) if from_table else (action.help or "",
                                                                               "")
            found.append((_flag(parser, action), _default(action),
                          _rule(parser, action, rule), doc))
        if found:
            groups.append((TITLES.get(group.title, group.title), found))
    return groups


def _synopsis(line, parser):
    formatter = parser._get_formatter()
    flagged = any(a.option_strings and not isinstance(a, argparse._HelpAction)
                  for a in parser._actions)
    words = [line] + (["[flags]"] if flagged else [])
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            words.append("SUBCOMMAND ...")
        elif not action.option_strings:
            words.append(formatter._format_args(action, action.dest))
    return " ".join(words)


def page():
    """The text of docs/cli.md."""
    table = {o["name"]: o for o in _native.load().trainer_options()}
    listed = list(commands(cli.parser()))[1:]
    blocks = [INTRO.strip(), "\n".join(["| command | what it does |", "|---|---|"] + [
        f"| [`{line}`](#{anchor(line)}) | {_cell(about)} |" for line, _, about in listed])]
    for line, parser, about in listed:
        blocks += [f"## {line}", f"{_cell(about)}: `{_synopsis(line, parser)}`"]
        subcommands = [sub for sub, _, _ in listed if sub.rsplit(" ", 1)[0] == line]
        if subcommands:
            blocks.append("Subcommands: " + ", ".join(f"[`{s}`](#{anchor(s)})"
                                                      for s in subcommands) + ".")
        for title, found in rows(parser, table):
            blocks += [title[0].upper() + title[1:] + ":", "\n".join(
                ["| flag | default | rule | help |", "|---|---|---|---|"] +
                [f"| `{_cell(flag)}` | {default} | {_cell(rule)} | {_cell(doc)} |"
                 for flag, default, rule, doc in found])]
    return "\n\n".join(blocks) + "\n"


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--check", action="store_true",
                    help="write nothing; exit 1 where docs/cli.md is not what it would write")
    args = ap.parse_args(argv)
    text = page()
    with open(PAGE) if os.path.exists(PAGE) else open(os.devnull) as f:
        current = f.read()
    if args.check:
        if current != text:
            print(f"{os.path.relpath(PAGE, ROOT)} is stale: run scripts/docs/cli_reference.py",
                  file=sys.stderr)
            return 1
        return 0
    if current != text:
        with open(PAGE, "w") as f:
            f.write(text)
    print(f"wrote {os.path.relpath(PAGE, ROOT)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
