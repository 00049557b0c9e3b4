"""The C++ layers include only downwards (docs/design/README.md, "Layers").

core <- comm, operators <- engine <- train, and data (beside the engine) <- train: a file in a
layer may include its own layer and those it stands on, never one above or beside it. The
bindings (python/src) and the tests stand above everything.
"""

import pathlib
import re
import sys

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]

# layer: (its folders, the layers it may include besides itself)
LAYERS = {
    "core": (["crossbow/core"], []),
    "comm": (["crossbow/comm"], ["core"]),
    "operators": (["operators"], ["core"]),
    "engine": (["crossbow/engine"], ["core", "comm"]),
    "data": (["data"], ["core"]),
    "train": (["crossbow/train"], ["core", "comm", "engine", "data"]),
}
SOURCE_SUFFIXES = {".h", ".cc", ".cu"}
INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.MULTILINE)


def layer_of(path):
    """The layer a repository path (file or included header) belongs to, or None."""
    for name, (folders, _) in LAYERS.items():
        if any(path == f or path.startswith(f + "/") for f in folders):
            return name
    return None


def crossings():
    """(file, included header, the file's layer, the header's layer) for each wrong-way include."""
    found = []
    for name, (folders, allowed) in LAYERS.items():
        for folder in folders:
            for path in sorted((ROOT / folder).rglob("*")):
                if path.suffix not in SOURCE_SUFFIXES:
                    continue
                rel = path.relative_to(ROOT).as_posix()
                for header in INCLUDE.findall(path.read_text()):
                    target = layer_of(header)
                    if target is not None and target != name and target not in allowed:
                        found.append((rel, header, name, target))
    return found


def test_every_layer_has_sources():
    for name, (folders, _) in LAYERS.items():
        files = [p for f in folders for p in (ROOT / f).rglob("*") if p.suffix in SOURCE_SUFFIXES]
        assert files, f"layer {name}: no sources under {folders} (moved? update LAYERS)"


def test_no_include_crosses_a_layer_the_wrong_way():
    bad = [f"{f} ({a}) includes {h} ({b})" for f, h, a, b in crossings()]
    assert not bad, "includes against the layering:\n" + "\n".join(bad)


@pytest.mark.parametrize(
    "file, header, expected",
    [
        ("crossbow/engine/engine.cc", "crossbow/train/trainer_options.h", "train"),
        ("data/loader.cc", "crossbow/engine/engine.h", "engine"),
        ("operators/eltwise_op.cc", "crossbow/engine/learner.h", "engine"),
        ("crossbow/core/tensor.h", "operators/conv_op.h", "operators"),
    ],
)
def test_a_wrong_way_include_is_found(tmp_path, monkeypatch, file, header, expected):
    """The scan itself: plant one wrong-way include in a copy of the file and see it reported."""
    for name, (folders, _) in LAYERS.items():
        for folder in folders:
            (tmp_path / folder).mkdir(parents=True, exist_ok=True)
    planted = tmp_path / file
    planted.write_text(f'#include "{header}"\n')
    monkeypatch.setattr(sys.modules[__name__], "ROOT", tmp_path)
    assert crossings() == [(file, header, layer_of(file), expected)]
