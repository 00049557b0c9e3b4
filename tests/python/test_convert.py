"""Converters and the Datum codec through crossbow._C, checked against independent readers and
writers: the protobuf and lmdb packages, Pillow, numpy."""
import gzip
import json
import os
import subprocess

import numpy as np
import pytest

from conftest import ROOT
from crossbow import _native, cli, convert
from crossbow.datasets import read_idx

pytestmark = pytest.mark.skipif(not _native.available(), reason="crossbow._C is not built")
Image = pytest.importorskip("PIL.Image", reason="Pillow decodes the images independently")
lmdb = pytest.importorskip("lmdb")

SAMPLE = os.path.join(ROOT, "data", "samples", "cifar10")
MNIST = os.path.join(ROOT, "data", "samples", "mnist")
TOOL = os.path.join(ROOT, "build", "crossbow_convert")


def datum_class():
    """caffe.Datum built at run time from a descriptor, as caffe.proto declares it (proto2)."""
    from google.protobuf import descriptor_pb2, descriptor_pool, message_factory
    F = descriptor_pb2.FieldDescriptorProto
    file = descriptor_pb2.FileDescriptorProto(name="crossbow_test_caffe.proto",
                                              package="crossbow_test_caffe", syntax="proto2")
    message = file.message_type.add(name="Datum")
    for number, (name, kind) in enumerate([
            ("channels", F.TYPE_INT32), ("height", F.TYPE_INT32), ("width", F.TYPE_INT32),
            ("data", F.TYPE_BYTES), ("label", F.TYPE_INT32), ("float_data", F.TYPE_FLOAT),
            ("encoded", F.TYPE_BOOL)], start=1):
        label = F.LABEL_REPEATED if name == "float_data" else F.LABEL_OPTIONAL
        message.field.add(name=name, number=number, type=kind, label=label)
    pool = descriptor_pool.DescriptorPool()
    pool.Add(file)
    descriptor = pool.FindMessageTypeByName("crossbow_test_caffe.Datum")
    if hasattr(message_factory, "GetMessageClass"):
        return message_factory.GetMessageClass(descriptor)
    return message_factory.MessageFactory(pool).GetPrototype(descriptor)


def read_db(path):
    return list(convert.records(path))


def chw_to_rgb(datum):
    """A raw BGR CHW record as an RGB HWC array."""
    shape = (datum["channels"], datum["height"], datum["width"])
    chw = np.frombuffer(datum["data"], np.uint8).reshape(shape)
    return chw.transpose(1, 2, 0)[:, :, ::-1]


def test_protobuf_written_lmdb_reads_back_with_our_reader(tmp_path):
    Datum = datum_class()
    rng = np.random.default_rng(0)
    expected = []
    env = lmdb.open(str(tmp_path / "db"), map_size=1 << 24)
    with env.begin(write=True) as txn:
        for i in range(20):
            pixels = rng.integers(0, 256, size=(3, 5, 4), dtype=np.uint8)
            d = Datum(channels=3, height=5, width=4, data=pixels.tobytes(), label=i * 37 - 100)
            if i == 7:
                d.float_data.extend([0.5, -1.25])
            txn.put(f"{i:08d}".encode(), d.SerializeToString())
            expected.append((pixels, i * 37 - 100))
    env.close()
    records = read_db(tmp_path / "db")
    assert [k for k, _ in records] == [f"{i:08d}" for i in range(20)]
    for (key, datum), (pixels, label) in zip(records, expected):
        assert datum["label"] == label and not datum["encoded"]
        assert (datum["channels"], datum["height"], datum["width"]) == (3, 5, 4)
        assert np.array_equal(np.frombuffer(datum["data"], np.uint8).reshape(3, 5, 4), pixels)
    assert records[7][1]["float_data"] == [0.5, -1.25]


def test_our_bytes_are_protobufs_bytes():
    Datum = datum_class()
    fields = dict(channels=1, height=2, width=300, data=b"\x00\xffab", label=-5,
                  float_data=[1.0, -2.5], encoded=True)
    ours = _native.load().serialize_datum(**fields)
    theirs = Datum(**fields)
    assert ours == theirs.SerializeToString()
    assert Datum.FromString(ours) == theirs
    packed = b"\x32\x08" + np.array([3.0, 4.0], "<f4").tobytes()
    assert _native.load().parse_datum(packed)["float_data"] == [3.0, 4.0]


def test_truncated_and_garbage_bytes_are_value_errors():
    C = _native.load()
    good = C.serialize_datum(channels=3, height=4, width=5, data=bytes(60), label=1)
    failures = 0
    for size in range(len(good)):
        try:
            C.parse_datum(good[:size])
        except ValueError as e:
            assert "not a Datum record" in str(e)
            failures += 1
    assert failures > len(good) // 2
    rng = np.random.default_rng(1)
    for _ in range(2000):
        try:
            C.parse_datum(rng.integers(0, 256, rng.integers(0, 80), dtype=np.uint8).tobytes())
        except ValueError:
            pass
    with pytest.raises(ValueError, match="truncated data field"):
        C.parse_datum(b"\x22\x10abc")


def cifar_file(path, labels, images):
    """The official binary layout: label byte(s), then 1024 R, 1024 G, 1024 B bytes."""
    with open(path, "wb") as f:
        for label, image in zip(labels, images):
            f.write(bytes(label) + image.tobytes())


@pytest.mark.parametrize("classes", [10, 100])
def test_cifar_binaries(tmp_path, classes):
    rng = np.random.default_rng(classes)
    images = rng.integers(0, 256, size=(7, 3, 32, 32), dtype=np.uint8)
    fine = rng.integers(0, classes, 7)
    labels = [[f] if classes == 10 else [f % 20, f] for f in fine]
    cifar_file(tmp_path / "a.bin", labels[:4], images[:4])
    cifar_file(tmp_path / "b.bin", labels[4:], images[4:])
    files = [tmp_path / "a.bin", tmp_path / "b.bin"]
    db = tmp_path / "db"
    argv = ["convert", f"cifar{classes}", str(db)] + [str(f) for f in files] + ["--noprogress"]
    assert cli.main(argv) == 0
    records = read_db(db)
    assert [d["label"] for _, d in records] == list(fine)
    for (_, d), image in zip(records, images):
        assert np.array_equal(chw_to_rgb(d), image.transpose(1, 2, 0))
    if classes == 100:
        coarse = convert.cifar100(tmp_path / "coarse", files, coarse=True, progress=False)
        assert coarse["written"] == 7
        assert [d["label"] for _, d in read_db(tmp_path / "coarse")] == list(fine % 20)


def test_mnist_idx_gzipped_or_not(tmp_path):
    images = read_idx(os.path.join(MNIST, "t10k-images-idx3-ubyte.gz"))
    labels = read_idx(os.path.join(MNIST, "t10k-labels-idx1-ubyte.gz"))
    plain = tmp_path / "labels.idx"
    plain.write_bytes(gzip.decompress(open(os.path.join(MNIST, "t10k-labels-idx1-ubyte.gz"),
                                           "rb").read()))
    summary = convert.mnist(os.path.join(MNIST, "t10k-images-idx3-ubyte.gz"), plain,
                            tmp_path / "db", progress=False)
    assert summary["written"] == len(images) and summary["skipped"] == []
    records = read_db(tmp_path / "db")
    assert [d["label"] for _, d in records] == labels.tolist()
    d = records[123][1]
    assert (d["channels"], d["height"], d["width"]) == (1, 28, 28)
    assert np.array_equal(np.frombuffer(d["data"], np.uint8).reshape(28, 28), images[123])


def write_images(folder, rng):
    """Two PNGs and a JPEG, written by Pillow; returns {name: RGB array}."""
    folder.mkdir(parents=True, exist_ok=True)
    arrays = {}
    for name in ["a.png", "b.png", "c.jpg"]:
        arrays[name] = rng.integers(0, 256, size=(6, 5, 3), dtype=np.uint8)
        Image.fromarray(arrays[name]).save(folder / name, quality=95)
    return arrays


def test_imageset_from_png_and_jpeg_with_bad_lines(tmp_path):
    arrays = write_images(tmp_path / "images", np.random.default_rng(2))
    (tmp_path / "images" / "broken.png").write_bytes(b"\x89PNG\r\n\x1a\n not really")
    (tmp_path / "list.txt").write_text("a.png 4\nbroken.png 1\nc.jpg 2\nno_label.png\nb.png 0\n")
    summary = convert.imageset(f"{tmp_path}/images/", tmp_path / "list.txt", tmp_path / "db",
                               progress=False)
    assert summary["written"] == 3
    assert sorted((w, r) for w, r, _ in summary["skipped"]) == [
        ("line 2 (broken.png)", "unreadable image"), ("line 4 (no_label.png)", "missing label")]
    assert "skipped 2: 1 missing label, 1 unreadable image" in summary["text"]
    records = dict(read_db(tmp_path / "db"))
    assert sorted(records) == ["00000000_a.png", "00000002_c.jpg", "00000003_b.png"]
    assert np.array_equal(chw_to_rgb(records["00000000_a.png"]), arrays["a.png"])
    assert records["00000003_b.png"]["label"] == 0
    jpeg = np.asarray(Image.open(tmp_path / "images" / "c.jpg").convert("RGB"))
    assert np.abs(chw_to_rgb(records["00000002_c.jpg"]).astype(int) - jpeg).max() <= 1

    convert.imageset(tmp_path / "images", tmp_path / "list.txt", tmp_path / "enc", encoded=True,
                     progress=False)
    encoded = dict(read_db(tmp_path / "enc"))
    assert encoded["00000002_c.jpg"]["encoded"]
    assert encoded["00000002_c.jpg"]["data"] == (tmp_path / "images" / "c.jpg").read_bytes()
    png = encoded["00000000_a.png"]["data"]
    (tmp_path / "back.png").write_bytes(png)
    assert np.array_equal(np.asarray(Image.open(tmp_path / "back.png")), arrays["a.png"])


def test_by_folder_on_the_cifar_sample(tmp_path):
    if not os.path.isdir(SAMPLE):
        pytest.skip(f"the CIFAR-10 sample is not at {SAMPLE}")
    root = os.path.join(SAMPLE, "test")
    classes = sorted(os.listdir(root))
    for encoded in (False, True):
        db = tmp_path / f"db{int(encoded)}"
        argv = ["convert", "imageset", "--by_folder", root + "/", str(db), "--noprogress"]
        assert cli.main(argv + (["--encoded"] if encoded else [])) == 0
        assert (db / "labels.txt").read_text().split() == classes
        records = read_db(db)
        assert len(records) == 500
        worst = 0
        for key, d in records:
            rel = key.split("_", 1)[1]
            assert d["label"] == classes.index(rel.split("/")[0])
            path = os.path.join(root, rel)
            if encoded:
                assert d["encoded"] and d["data"] == open(path, "rb").read()
            else:
                source = np.asarray(Image.open(path).convert("RGB")).astype(int)
                worst = max(worst, np.abs(chw_to_rgb(d).astype(int) - source).max())
        assert worst <= 1  # two builds of libjpeg-turbo (OpenCV's, Pillow's): 0 here


def test_the_tool_and_python_write_the_same_db(tmp_path):
    if not os.path.exists(TOOL):
        pytest.skip(f"{TOOL} is not built")
    root = os.path.join(SAMPLE, "test", "cat")
    (tmp_path / "list.txt").write_text("".join(f"{n} 3\n" for n in sorted(os.listdir(root))))
    flags = ["--shuffle", "--seed", "3", "--resize_width", "16", "--resize_height", "16"]
    subprocess.run([TOOL, "imageset", *flags, root + "/", str(tmp_path / "list.txt"),
                    str(tmp_path / "tool")], check=True, capture_output=True)
    assert cli.main(["convert", "imageset", *flags, root + "/", str(tmp_path / "list.txt"),
                     str(tmp_path / "py"), "--noprogress"]) == 0
    assert read_db(tmp_path / "tool") == read_db(tmp_path / "py")


def test_mean_against_numpy(tmp_path):
    rng = np.random.default_rng(3)
    images = rng.integers(0, 256, size=(9, 3, 4, 6), dtype=np.uint8)
    C = _native.load()
    env = lmdb.open(str(tmp_path / "db"), map_size=1 << 20)
    with env.begin(write=True) as txn:
        for i, image in enumerate(images):
            txn.put(f"{i:03d}".encode(), C.serialize_datum(3, 4, 6, image.tobytes(), 0))
        txn.put(b"999", b"\x22\x05ab")  # truncated: skipped, named
    env.close()
    stats = convert.mean(tmp_path / "db", progress=False)
    assert stats["records"] == 9
    assert np.allclose(stats["mean"], images.mean(axis=(0, 2, 3)), rtol=0, atol=1e-9)
    assert np.allclose(stats["std"], images.std(axis=(0, 2, 3)), rtol=0, atol=1e-9)
    assert [(w, r) for w, r, _ in stats["skipped"]] == [("key 999", "corrupt record")]


def test_missing_non_lmdb_and_empty_paths(tmp_path, capsys):
    with pytest.raises(RuntimeError, match="LMDB not found: .*nowhere"):
        read_db(tmp_path / "nowhere")
    (tmp_path / "folder").mkdir()
    with pytest.raises(RuntimeError, match="not an LMDB: .*folder"):
        convert.mean(tmp_path / "folder")
    (tmp_path / "file").write_bytes(os.urandom(10000))
    with pytest.raises(RuntimeError, match="not an LMDB: .*file"):
        read_db(tmp_path / "file")
    lmdb.open(str(tmp_path / "empty")).close()
    assert cli.main(["convert", "mean", str(tmp_path / "empty")]) == 1
    assert "empty LMDB: " in capsys.readouterr().err


def test_gray_and_resize_on_real_pixels(tmp_path):
    """Two colour blocks, 8x4 pixels, to gray at 4x2: each block keeps its own gray level
    (OpenCV's 0.299 R + 0.587 G + 0.114 B) and the image its new height and width."""
    colours = np.array([[200, 40, 10], [20, 90, 250]], np.uint8)
    image = np.zeros((4, 8, 3), np.uint8)
    image[:, :4], image[:, 4:] = colours[0], colours[1]
    (tmp_path / "images").mkdir()
    Image.fromarray(image).save(tmp_path / "images" / "blocks.png")
    (tmp_path / "list.txt").write_text("blocks.png 1\n")
    convert.imageset(tmp_path / "images", tmp_path / "list.txt", tmp_path / "db", gray=True,
                     resize_width=4, resize_height=2, progress=False)
    ((_, d),) = read_db(tmp_path / "db")
    assert (d["channels"], d["height"], d["width"]) == (1, 2, 4)
    pixels = np.frombuffer(d["data"], np.uint8).reshape(2, 4).astype(int)
    gray = colours.astype(float) @ [0.299, 0.587, 0.114]
    expected = np.repeat(np.round(gray)[None, :], 2, axis=1).repeat(2, axis=0)
    assert np.abs(pixels - expected).max() <= 1, (pixels, expected)


def test_writer_writes_what_the_converter_writes(tmp_path):
    root, classes = tmp_path / "images", ["cat", "dog", "emu"]
    rng = np.random.default_rng(0)
    for c, name in enumerate(classes):
        (root / name).mkdir(parents=True)
        for i, size in enumerate([(40, 30), (30, 50), (33, 33)][:c + 1]):
            pixels = rng.integers(0, 256, (size[1], size[0], 3), dtype=np.uint8)
            Image.fromarray(pixels).save(root / name / f"{i}.png")
    converted = tmp_path / "converted"
    convert.image_folders(root, converted, shuffle=True, resize_shorter=20, progress=False)
    records = read_db(converted)
    with convert.Writer(tmp_path / "written", len(records), progress=False,
                        class_names=classes) as writer:
        for key, d in records:
            writer.write(key, d["data"], channels=d["channels"], height=d["height"],
                         width=d["width"], label=d["label"])
    assert writer.summary["written"] == len(records) == 6
    assert read_db(tmp_path / "written") == records
    for name in ("crossbow_meta.json", "labels.txt"):
        assert (tmp_path / "written" / name).read_text() == (converted / name).read_text()
    with pytest.raises(ValueError, match="record writer is closed"):
        writer.write("x", b"", channels=1, height=1, width=1, label=0)


def meta_bytes(label):
    return _native.load().serialize_datum(3, 1, 2, bytes(6), label)


def test_writer_leaves_nothing_when_abandoned(tmp_path):
    with pytest.raises(RuntimeError, match="stop"):
        with convert.Writer(tmp_path / "db", 2, progress=False) as writer:
            writer.write("00000000", b"\x01\x02", channels=1, height=1, width=2, label=4)
            raise RuntimeError("stop")
    assert os.listdir(tmp_path) == []
    with convert.Writer(tmp_path / "db", 1, progress=False) as writer:
        writer.write("00000000", bytes(6), channels=3, height=1, width=2, label=7)
    with pytest.raises(RuntimeError, match="already exists"):
        convert.Writer(tmp_path / "db", 1, progress=False)
    meta = json.loads((tmp_path / "db" / "crossbow_meta.json").read_text())
    assert (meta["records"], meta["labels"], meta["bytes"]) == (1, [7, 7], len(meta_bytes(7)))
