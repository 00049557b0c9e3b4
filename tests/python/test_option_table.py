"""The C++ table of options (crossbow/train/trainer_options.cc) is the one source of the
Trainer's keyword arguments, the `crossbow train` flags and the checks of their values."""
import json
import os
import subprocess
import sys

import pytest

from crossbow import cli, options, trainer
from conftest import ROOT

_C = pytest.importorskip("crossbow._C", reason="crossbow._C is not built (scripts/setup.sh)")


def test_python_options_are_the_cpp_table_in_its_order_with_its_defaults():
    table = _C.trainer_options()
    assert [o["name"] for o in table] == list(trainer.OPTIONS)
    for o in table:
        default = json.loads(o["default"])
        option = trainer.OPTIONS[o["name"]]
        assert option.default == (tuple(default) if isinstance(default, list) else default)
        assert option.help.startswith(o["doc"]), o["name"]


def test_every_flag_has_the_tables_type_unit_and_rule():
    train = cli.parser().commands["train"]
    actions = {a.dest: a for a in train._actions}
    for o in _C.trainer_options():
        action = actions[o["name"]]
        assert action.help.startswith(o["doc"])
        if o["type"] in ("int", "float", "floats") and o["rule"]:
            assert f"({o['rule']})" in action.help, o["name"]
        if o["unit"]:
            assert action.metavar == o["unit"].upper(), o["name"]
    assert actions["time_limit"].metavar == "SECONDS"
    assert "(finite and >= 0)" in actions["lr"].help


@pytest.mark.parametrize("name", [o["name"] for o in _C.trainer_options()
                                  if o["type"] in ("int", "float", "floats") and
                                  o["rule"].startswith((">", "in", "finite and"))])
def test_each_numeric_rule_refuses_the_value_just_outside_it(name):
    """A value outside each option's rule, made from the rule's own text, is a ValueError that
    names the option as a keyword and as a flag."""
    rule = trainer.OPTIONS[name]
    text = dict((o["name"], o["rule"]) for o in _C.trainer_options())[name]
    bound = text.replace("finite and ", "")
    if bound.startswith("in"):
        low = float(bound[4:].split(",")[0])
        bad = low - 1 if bound[3] == "[" else low
    else:
        low = float(bound.split()[-1])
        bad = low - 1 if bound.startswith(">=") else low
    if rule.kind is int:
        bad = int(bad)
    value = [bad] if rule.is_list else bad
    flag = "--" + name.replace("_", "-")
    with pytest.raises(ValueError, match=rf"^{name} \({flag}\) must be "):
        _C.check_trainer_options(json.dumps({"epochs": 1, name: value}))


def test_the_options_read_outside_the_engine_are_the_nets_and_the_data_loaders():
    readers = {o["name"]: o["reader"] for o in _C.trainer_options()}
    net = {name for name, reader in readers.items() if reader == "net"}
    data = {name for name, reader in readers.items() if reader == "data"}
    assert {"momentum", "weight_decay", "label_smoothing", "input_size"} <= net
    assert data == {"batch_size", "workers", "augment", "min_crop_area", "eval_crop", "mean",
                    "std", "num_classes", "read_order"}
    assert {name for name, reader in readers.items() if reader == "python"} == {"tensorboard"}
    assert not (net | data) & {"sync", "sync_period", "lr", "alpha", "outer_lr", "seed"}


def test_non_finite_numbers_reach_the_checks_and_are_refused():
    with pytest.raises(ValueError, match=r"lr \(--lr\) must be finite and >= 0, got nan"):
        _C.check_trainer_options(options.as_json({"lr": float("nan"), "epochs": 1}))
    with pytest.raises(ValueError, match=r"steps \(--steps\) must be finite and >= 0, got "
                                         r"\[1.0, inf\]"):
        _C.check_trainer_options(options.as_json({"steps": [1.0, float("inf")], "epochs": 1}))


_ONE_MORE_ENTRY = """
import json, sys
sys.path[:0] = [{python!r}]
from crossbow import _native
_native.load()._add_option_for_test("test_only_ratio", "a ratio that only this test reads",
                                    0.5, 2.0)
from crossbow import cli, trainer
action = {{a.dest: a for a in cli.parser().commands["train"]._actions}}["test_only_ratio"]
try:
    trainer.checked_options(dict(epochs=1, test_only_ratio=0.25))
    refused = None
except ValueError as e:
    refused = str(e)
kept = trainer.checked_options(dict(epochs=1, test_only_ratio=3))["test_only_ratio"]
print(json.dumps(dict(flags=action.option_strings, help=action.help, default=action.default,
                      refused=refused, kept=kept)))
"""


def test_one_more_entry_in_the_table_is_a_flag_and_a_checked_keyword():
    """The table's promise from the Python side (the C++ side: option_table_entry_test.cc): an
    entry added before anything reads the table (in a fresh process) is a `crossbow train`
    flag with its doc and rule, and a Trainer keyword that the entry's rule checks."""
    code = _ONE_MORE_ENTRY.format(python=os.path.join(ROOT, "python"))
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
    got = json.loads(done.stdout.strip().splitlines()[-1])
    assert got["flags"] == ["--test-only-ratio"]
    assert got["help"].startswith("a ratio that only this test reads (finite and >= 0.5)")
    assert got["default"] == 2.0
    assert got["refused"] == ("test_only_ratio (--test-only-ratio) must be finite and >= 0.5, "
                              "got 0.25")
    assert got["kept"] == 3
