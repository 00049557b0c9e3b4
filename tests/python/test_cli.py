"""The crossbow command line."""
import json
import subprocess
import sys

import pytest

from crossbow import cli
from conftest import ROOT, needs_C


def test_summary_prints_layers_and_totals(capsys):
    assert cli.main(["summary", "resnet32"]) == 0
    out = capsys.readouterr().out
    assert "Total params: 464,154" in out and "res3_5b_conv" in out


def test_summary_with_classes(capsys):
    assert cli.main(["summary", "lenet", "--num-classes", "100"]) == 0
    assert f"Total params: {431_080 + 90 * 501:,}" in capsys.readouterr().out


def test_summary_of_an_unknown_net_is_an_error_with_a_did_you_mean(capsys):
    assert cli.main(["summary", "resnet33"]) == 1
    assert ("unknown net 'resnet33'; did you mean 'resnet34'? (nets: lenet, resnet20"
            in capsys.readouterr().err)


def test_a_misspelt_flag_is_a_usage_error_with_a_did_you_mean(capsys):
    with pytest.raises(SystemExit) as e:
        cli.main(["train", "--net", "lenet", "--train-db", "x", "--sync-perod", "3"])
    err = capsys.readouterr().err
    assert e.value.code == 2
    assert "unrecognized arguments: --sync-perod 3; did you mean '--sync-period'?" in err


def test_ops_lists_operators(capsys):
    pytest.importorskip("crossbow._C", reason="crossbow._C is not built (scripts/setup.sh)")
    import crossbow
    assert cli.main(["ops"]) == 0
    out = capsys.readouterr().out
    registered = crossbow.operators()
    assert out.rstrip().endswith(f"{len(registered)} operators") and len(registered) > 20
    for name, _ in registered:
        assert name in out


def test_ops_explains_one(capsys):
    pytest.importorskip("crossbow._C", reason="crossbow._C is not built (scripts/setup.sh)")
    import crossbow
    assert cli.main(["ops", "Conv"]) == 0
    assert crossbow.operator_doc("Conv") in capsys.readouterr().out
    assert cli.main(["ops", "Covn"]) == 1
    assert "did you mean 'Conv'" in capsys.readouterr().err


def test_ops_without_the_extension_says_how_to_build_it(no_C, capsys):
    assert cli.main(["ops"]) == 1
    assert "scripts/setup.sh" in capsys.readouterr().err


def test_convert_without_the_extension_says_how_to_build_it(no_C, capsys):
    """The parser is built without the extension, though the imageset flags come from it."""
    from crossbow import convert
    convert._imageset_flags.cache_clear()
    assert cli.main(["convert", "imageset", "--resize_width", "32", "r/", "l", "db"]) == 1
    assert "scripts/setup.sh" in capsys.readouterr().err
    convert._imageset_flags.cache_clear()


def test_python_dash_m_crossbow():
    env = {"PYTHONPATH": f"{ROOT}/python", "PATH": "/usr/bin:/bin"}
    r = subprocess.run([sys.executable, "-m", "crossbow", "summary", "lenet"], env=env,
                       capture_output=True, text=True, cwd="/")
    assert r.returncode == 0, r.stderr
    assert "Total params: 431,080" in r.stdout


@needs_C
@pytest.mark.parametrize("argv, message", [
    (["summary", "lenet", "--num-classes", "0"], "num_classes (--num-classes) must be >= 1, got 0"),
    (["summary", "resnet18", "--input-size", "32"], "input_size (--input-size) must be in [64, 224]"),
    (["spec", "--net", "lenet", "--weight-decay", "-1"],
     "weight_decay (--weight-decay) must be finite and >= 0, got -1"),
    (["spec", "--net", "lenet", "--precision", "fp8"], "precision (--precision) must be fp32, bf16, tf32 or fp16, got 'fp8'"),
    (["eval", "--net", "lenet", "--checkpoint", ROOT, "--test-db", ROOT, "--batch-size", "0"],
     "batch_size (--batch-size) must be > 0, got 0"),
])
def test_flags_shared_with_train_are_checked_by_the_option_table(argv, message, capsys):
    assert cli.main(argv) == 1
    assert message in capsys.readouterr().err


@needs_C
def test_flags_shared_with_train_take_the_option_tables_defaults(monkeypatch, capsys):
    """spec's --weight-decay is the table's command default; eval keeps its own batch of 100."""
    from crossbow import trainer
    table = trainer.option_table()
    monkeypatch.setitem(table, "weight_decay", table["weight_decay"]._replace(default=0.125))
    assert cli.main(["spec", "--net", "lenet"]) == 0
    assert json.loads(capsys.readouterr().out)["solver"]["weight_decay"] == 0.125
    args = cli.parser().parse_args(["eval", "--checkpoint", "c", "--test-db", "d"])
    assert (args.batch_size, args.workers) == (trainer.EVAL_BATCH_SIZE, table["workers"].default)
