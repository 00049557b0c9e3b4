"""Python's OPTIONS (the Trainer keyword arguments and `crossbow train` flags) against the C++
table that parses them (crossbow/engine/trainer_options.cc): the same names in the same order,
one default each."""
import json

import pytest

from crossbow import trainer

_C = pytest.importorskip("crossbow._C", reason="crossbow._C is not built (scripts/setup.sh)")


def test_options_and_the_cpp_table_name_the_same_options_with_the_same_defaults():
    table = _C.trainer_options()
    assert [name for name, _, _ in table] == list(trainer.OPTIONS)
    for name, default_json, _ in table:
        default = trainer.OPTIONS[name][0]
        expected = list(default) if isinstance(default, tuple) else default
        assert json.loads(default_json) == expected, name


def test_every_option_python_sends_is_one_cpp_reads_or_knows_as_python_only():
    python_only = {name for name, _, alone in _C.trainer_options() if alone}
    assert {"batch_size", "momentum", "weight_decay", "workers", "augment"} <= python_only
    assert not python_only & {"sync", "sync_period", "lr", "alpha", "outer_lr", "seed"}
