"""--net FILE.py:FUNCTION and MODULE:FUNCTION: one resolver for every command, the net's source
kept in the checkpoint for eval and export, and an error for each way the name can be wrong."""
import os
import re
import sys

import pytest

from crossbow import ModelBuilder, net_source

EXAMPLE = os.path.join(os.path.dirname(__file__), "..", "..", "docs", "examples", "small_net.py")
GUIDE = os.path.join(os.path.dirname(__file__), "..", "..", "docs", "guide.md")


def write(folder, name, text):
    path = folder / name
    path.write_text(text)
    return str(path)


def test_a_file_a_module_and_a_zoo_name_each_give_a_builder_with_its_source(tmp_path,
                                                                           monkeypatch):
    b = net_source.builder(f"{EXAMPLE}:small_net", num_classes=4)
    assert isinstance(b, ModelBuilder) and b.num_classes == 4
    assert b.source == os.path.abspath(EXAMPLE) + ":small_net"
    assert b.to_spec()["source"] == b.source
    write(tmp_path, "my_nets.py", f"import runpy\nsmall = runpy.run_path({EXAMPLE!r})"
                                  f"['small_net']\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    assert net_source.builder("my_nets:small").source == "my_nets:small"
    assert net_source.builder("lenet").source == "lenet"


@pytest.mark.parametrize("text, net, error, message", [
    (None, "{dir}/absent.py:f", FileNotFoundError, r"no Python file '.*absent\.py'"),
    ("def small_net():\n    pass\n", "{file}:smal_net", ValueError,
     r"has no function 'smal_net'; did you mean 'small_net'\? \(its functions: small_net\)"),
    ("def f():\n    return 3\n", "{file}:f", TypeError,
     r"f\(\) returned int, not a crossbow.ModelBuilder"),
    ("f = 3\n", "{file}:f", TypeError, r"'f' in '.*' is a int, not a function"),
    ("def f(width):\n    pass\n", "{file}:f", TypeError,
     r"f\(width\) cannot be called with no arguments"),
    (None, "no_such_module_x:f", ModuleNotFoundError, r"cannot import module 'no_such_module_x'"),
])
def test_each_wrong_net_is_an_error_naming_it(tmp_path, text, net, error, message):
    file = write(tmp_path, "bad.py", text) if text else None
    with pytest.raises(error, match=message):
        net_source.builder(net.format(dir=tmp_path, file=file))


def test_num_classes_goes_to_the_function_and_it_must_take_it(tmp_path):
    file = write(tmp_path, "fixed.py", f"import runpy\n"
                                       f"def fixed():\n"
                                       f"    return runpy.run_path({EXAMPLE!r})['small_net']()\n")
    assert net_source.builder(f"{file}:fixed").num_classes == 10
    with pytest.raises(TypeError, match=r"fixed\(\) cannot be called with num_classes=5 "
                                        r"\(--num-classes\)"):
        net_source.builder(f"{file}:fixed", num_classes=5)


def guide_commands():
    """The `crossbow` lines of the guide's example of a net of one's own."""
    blocks = open(GUIDE).read().split("```")[1::2]  # the text inside each pair of fences
    block = next(b for b in blocks if "crossbow train --net docs/examples/small_net.py" in b)
    return [line.split()[1:] for line in block.replace("\\\n", " ").splitlines()
            if line.startswith("crossbow ")]


def test_the_guides_commands_train_evaluate_and_export_a_net_of_ones_own(tmp_path, capsys,
                                                                          monkeypatch):
    pytest.importorskip("crossbow._C", reason="crossbow._C is not built (scripts/setup.sh)")
    from crossbow import cli
    from test_scoring import digits_lmdb
    db, _, _ = digits_lmdb(tmp_path, 64, 1)
    monkeypatch.chdir(os.path.join(os.path.dirname(__file__), "..", ".."))
    paths = {"/tmp/mn_train": str(db), "/tmp/mn_test": str(db), "/tmp/own": str(tmp_path / "own"),
             "/tmp/own.onnx": str(tmp_path / "own.onnx")}
    commands = guide_commands()
    assert [c[0] for c in commands] == ["train", "eval", "export"]
    for words in commands:
        words = [paths.get(w, w) for w in words] + (["--no-progress"] if words[0] == "train"
                                                    else [])
        assert cli.main(words) == 0, words
    out = capsys.readouterr().out
    assert re.search(r"test loss [\d.]+, top-1", out)
    assert "own.onnx: " + os.path.abspath(EXAMPLE) + ":small_net" in out
    assert os.path.getsize(paths["/tmp/own.onnx"]) > 50_000 * 4  # the weights are in it
    # The checkpoint names its net: another --net is refused, naming both.
    assert cli.main(["eval", "--net", "lenet", "--checkpoint", paths["/tmp/own"], "--test-db",
                     str(db)]) == 1
    assert re.search(r"checkpoint '.*' is of net 'small_net' \(.*small_net.py:small_net\), not "
                     r"'lenet' \(--net lenet\)", capsys.readouterr().err)
