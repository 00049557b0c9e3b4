"""crossbow.data.ImageDB on small LMDBs written here with the lmdb package and Datum bytes
serialised by hand (protobuf wire format), independently of Crossbow's own writer."""
import os
import struct

import lmdb
import numpy as np
import pytest

from crossbow import _native

pytestmark = pytest.mark.skipif(not _native.available(), reason="crossbow._C is not built")

from crossbow.data import ImageDB  # noqa: E402


def _varint(value):
    out = bytearray()
    value &= (1 << 64) - 1
    while True:
        byte = value & 0x7F
        value >>= 7
        out.append(byte | (0x80 if value else 0))
        if not value:
            return bytes(out)


def datum(pixels, label, encoded=False):
    """Caffe Datum bytes: fields 1-3 channels/height/width, 4 data, 5 label, 7 encoded."""
    out = b""
    if not encoded:
        c, h, w = pixels.shape
        out += b"\x08" + _varint(c) + b"\x10" + _varint(h) + b"\x18" + _varint(w)
    data = pixels if encoded else pixels.astype(np.uint8).tobytes()
    out += b"\x22" + _varint(len(data)) + data + b"\x28" + _varint(label)
    return out + (b"\x38\x01" if encoded else b"")


def write_db(path, values):
    env = lmdb.open(str(path), map_size=1 << 24)
    with env.begin(write=True) as txn:
        for i, value in enumerate(values):
            txn.put(b"%08d" % i, value)
    env.close()
    return str(path)


def image(i):
    """3x6x6 image of record i: pixel value i in every channel but with a gradient in x."""
    return np.stack([np.full((6, 6), i) + np.arange(6) * (c + 1) for c in range(3)])


@pytest.fixture
def db(tmp_path):
    return write_db(tmp_path / "db", [datum(image(i), i % 10) for i in range(21)])


def test_test_mode_reads_every_record_in_order_with_exact_pixels(db):
    data = ImageDB(db, batch_size=4, train=False, scale=1.0)
    assert len(data) == 6 and data.shape == (3, 6, 6)
    batches = list(data)
    assert [len(labels) for _, labels in batches] == [4, 4, 4, 4, 4, 1]
    images = np.concatenate([b[0] for b in batches])
    labels = np.concatenate([b[1] for b in batches])
    assert images.dtype == np.float32 and labels.dtype == np.int32
    np.testing.assert_array_equal(images, np.stack([image(i) for i in range(21)]))
    np.testing.assert_array_equal(labels, np.arange(21) % 10)
    assert data.corrupt_records == 0


def test_training_epochs_cover_every_record_and_depend_on_the_seed(db):
    def epochs(seed, workers):
        data = ImageDB(db, batch_size=5, crop=6, pad=2, mean=[0.5] * 3, std=[0.25] * 3,
                       seed=seed, workers=workers)
        return [np.concatenate([labels for _, labels in data]) for _ in range(2)], data

    (first, second), data = epochs(3, 1)
    assert sorted(first.tolist()) == sorted((np.arange(21) % 10).tolist())
    assert first.tolist() != second.tolist()
    (again, _), _ = epochs(3, 2)
    np.testing.assert_array_equal(first, again)
    assert type(data.source).__name__ == "ImageLoader"
    assert isinstance(data.source, _native.load().BatchSource)


def test_corrupt_records_are_skipped_and_counted(tmp_path):
    values = [datum(image(i), i) for i in range(8)]
    values[2] = b"\x0a\xff"                                     # truncated field
    values[5] = b"\x08\x01\x10\x02\x18\x02\x22\x01\x00"           # 1x2x2 with one byte
    values[6] = datum(b"\x89PNG\r\n\x1a\n\x00", 6, encoded=True)  # not a whole image
    data = ImageDB(write_db(tmp_path / "db", values), batch_size=3, train=False, num_classes=10)
    labels = np.concatenate([labels for _, labels in data])
    assert labels.tolist() == [0, 1, 3, 4, 7]
    assert data.corrupt_records == 3


def test_a_label_beyond_the_classes_stops_the_epoch_naming_the_record(tmp_path):
    """A DB without metadata (as Caffe writes one) is checked as its records are read."""
    values = [datum(image(i), i) for i in range(8)]
    values[5] = datum(image(5), 42)
    db = write_db(tmp_path / "db", values)
    data = ImageDB(db, batch_size=3, train=False, num_classes=10)
    with pytest.raises(ValueError, match=r"record \S*5 has label 42, outside \[0, 10\)"):
        list(data)
    assert len(list(ImageDB(db, batch_size=3, train=False, num_classes=43))) == 3


def test_bad_paths_and_options_fail_clearly(tmp_path):
    with pytest.raises(RuntimeError, match="missing"):
        ImageDB(str(tmp_path / "missing"), batch_size=2)
    (tmp_path / "junk").mkdir()
    (tmp_path / "junk" / "data.mdb").write_bytes(b"not an lmdb at all" * 100)
    with pytest.raises(RuntimeError, match="LMDB"):
        ImageDB(str(tmp_path / "junk"), batch_size=2)
    with pytest.raises(RuntimeError, match="empty"):
        ImageDB(write_db(tmp_path / "empty", []), batch_size=2)
    db = write_db(tmp_path / "db", [datum(image(0), 0)])
    with pytest.raises(ValueError, match="mean"):
        ImageDB(db, batch_size=2, mean=[0.5, 0.5])
    with pytest.raises(ValueError, match="batch_size"):
        ImageDB(db, batch_size=0)


def _jpeg(height, width, seed):
    import io
    from PIL import Image
    pixels = np.random.default_rng(seed).integers(0, 256, (height, width, 3), dtype=np.uint8)
    out = io.BytesIO()
    Image.fromarray(pixels).save(out, format="JPEG")
    return out.getvalue()


def test_the_imagenet_preset_takes_records_of_any_size_and_drops_none(tmp_path):
    sizes = [(160, 213), (213, 160), (160, 160), (300, 500), (90, 120), (64, 64)]
    values = [datum(_jpeg(h, w, i), i % 3, encoded=True) for i, (h, w) in enumerate(sizes)]
    db = write_db(tmp_path / "db", values)
    for train in (True, False):
        data = ImageDB(db, batch_size=4, train=train, preset="imagenet", input_size=48,
                       num_classes=3)
        batches = list(data)
        assert data.shape == (3, 48, 48)
        assert sum(len(labels) for _, labels in batches) == len(sizes)
        assert data.corrupt_records == 0


def test_a_preset_that_does_not_fit_the_data_is_refused_before_any_batch(tmp_path):
    db = write_db(tmp_path / "db", [datum(_jpeg(160, 213, 0), 0, encoded=True)])
    with pytest.raises(ValueError, match=r"160x213; preset 'cifar' takes 32x32 .* imagenet"):
        ImageDB(db, batch_size=1, preset="cifar", input_size=32)
    with pytest.raises(ValueError, match="unknown input preset 'cifra'; did you mean 'cifar'"):
        ImageDB(db, batch_size=1, preset="cifra", input_size=32)
    with pytest.raises(ValueError, match="preset 'imagenet' sets the transform; crop"):
        ImageDB(db, batch_size=1, preset="imagenet", input_size=32, crop=24)


def _crop_areas(db, **kwargs):
    """Area fractions of the random-resized crops of the ramp image below, read back from the
    pixels: channel 1 ramps along x, channels 0 and 2 along y, one step a pixel."""
    data = ImageDB(db, batch_size=64, preset="imagenet", input_size=64, **kwargs)
    images, _ = next(iter(data))
    mean, std = np.array([0.485, 0.456]), np.array([0.229, 0.224])
    y = (images[:, 0] * std[0] + mean[0]) * 255
    x = (images[:, 1] * std[1] + mean[1]) * 255
    spans = [(a.max(axis=(1, 2)) - a.min(axis=(1, 2)) + 1) / 256 for a in (x, y)]
    return spans[0] * spans[1]


def test_min_crop_area_bounds_the_random_resized_crops_and_needs_that_crop(tmp_path):
    ramp = np.arange(256)
    pixels = np.stack([np.tile(ramp[:, None], (1, 256)), np.tile(ramp, (256, 1)),
                       np.tile(ramp[:, None], (1, 256))])
    db = write_db(tmp_path / "db", [datum(pixels, 0)] * 64)
    default, bounded = _crop_areas(db), _crop_areas(db, min_crop_area=0.6)
    assert default.min() < 0.3 and default.max() <= 1.0
    assert bounded.min() > 0.55 and bounded.max() <= 1.0
    with pytest.raises(ValueError, match=r"has none \(preset 'cifar', training\)"):
        ImageDB(db, batch_size=1, preset="cifar", input_size=32, min_crop_area=0.5)
    with pytest.raises(ValueError, match=r"has none \(preset 'imagenet', evaluation\)"):
        ImageDB(db, batch_size=1, train=False, preset="imagenet", input_size=32,
                min_crop_area=0.5)
