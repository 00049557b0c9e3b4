"""`crossbow db check`, `convert imageset --resize-shorter/--max-side` from the command line, and
the block read order through ImageDB."""
import json

import numpy as np
import pytest

from crossbow import cli, convert
from crossbow.data import ImageDB

Image = pytest.importorskip("PIL.Image")
lmdb = pytest.importorskip("lmdb")


def folders(root, sizes):
    for i, (w, h) in enumerate(sizes):
        (root / f"c{i % 2}").mkdir(parents=True, exist_ok=True)
        pixels = np.random.default_rng(i).integers(0, 256, (h, w, 3), dtype=np.uint8)
        Image.fromarray(pixels).save(root / f"c{i % 2}" / f"{i}.png")
    return root


def test_resize_flags_keep_the_aspect_ratio_and_db_check_agrees(tmp_path, capsys):
    root = folders(tmp_path / "images", [(60, 30), (20, 50), (40, 40), (90, 45)])
    db = tmp_path / "db"
    assert cli.main(["convert", "imageset", "--by_folder", "--resize-shorter", "20",
                     "--noprogress", str(root), str(db)]) == 0
    meta = json.loads((db / "crossbow_meta.json").read_text())
    assert meta["records"] == 4 and meta["key_format"] == "counter" and meta["classes"] == 2
    assert sorted(d["height"] for _, d in convert.records(db)) == [20, 20, 20, 50]
    assert cli.main(["db", "check", "--noprogress", str(db)]) == 0
    assert "its metadata agrees" in capsys.readouterr().out
    capped = tmp_path / "capped"
    assert cli.main(["convert", "imageset", "--by_folder", "--max-side", "45", "--encoded",
                     "--noprogress", str(root), str(capped)]) == 0
    sizes = sorted((d["width"], d["height"]) for _, d in convert.records(capped))
    assert sizes == [(18, 45), (40, 40), (45, 23), (45, 23)]  # 22.5 rounds up


def test_db_check_finds_a_caffe_db_without_metadata_and_writes_it(tmp_path, capfd):
    from crossbow import _native
    C = _native.load()
    env = lmdb.open(str(tmp_path / "caffe"), map_size=1 << 24)
    with env.begin(write=True) as txn:
        for i in range(30):
            txn.put(b"%08d" % i, C.serialize_datum(1, 2, 2, b"abcd", i % 3))
    env.close()
    assert len(list(ImageDB(str(tmp_path / "caffe"), 8, num_classes=3))) == 4
    said = capfd.readouterr().err
    assert "has no metadata" in said and "labels are checked as records are read" in said
    assert f"crossbow db check {tmp_path / 'caffe'} --write-metadata" in said
    assert cli.main(["db", "check", "--noprogress", str(tmp_path / "caffe")]) == 1
    assert "no metadata" in capfd.readouterr().out
    assert cli.main(["db", "check", "--noprogress", "--write-metadata",
                     str(tmp_path / "caffe")]) == 0
    meta = json.loads((tmp_path / "caffe" / "crossbow_meta.json").read_text())
    assert meta["labels"] == [0, 2] and meta["records"] == 30


def test_block_order_reads_whole_blocks_a_window_at_a_time(tmp_path):
    """200 records in blocks of 4: windows of 16 blocks (64 records) hold whole blocks, so a
    uniform shuffle (whose first 64 records are 16 whole blocks with odds below 1e-40) fails."""
    from crossbow import _native
    C = _native.load()
    env = lmdb.open(str(tmp_path / "db"), map_size=1 << 24)
    with env.begin(write=True) as txn:
        for i in range(200):
            txn.put(b"%08d" % i, C.serialize_datum(1, 1, 1, bytes([i]), i))
    env.close()
    data = ImageDB(str(tmp_path / "db"), 10, read_order="block", block_records=4, scale=1.0)
    assert data.block_records == 4
    labels = np.concatenate([labels for _, labels in data]).tolist()
    assert sorted(labels) == list(range(200))
    assert labels != list(range(200))
    windows = [labels[at:at + 64] for at in range(0, 200, 64)]
    for window in windows:
        blocks = {label // 4 for label in window}
        assert sorted(window) == [4 * b + r for b in sorted(blocks) for r in range(4)]
    assert [len({label // 4 for label in w}) for w in windows] == [16, 16, 16, 2]
    assert ImageDB(str(tmp_path / "db"), 10, read_order="random").block_records == 0
    with pytest.raises(ValueError, match="read_order"):
        ImageDB(str(tmp_path / "db"), 10, read_order="blocks")
