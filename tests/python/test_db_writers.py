"""LMDBs from other writers (scripts/datagen/foreign_dbs.py), without crossbow_meta.json, beside
the converter's DB of the same records: Python's `lmdb` at map sizes that are and are not a
whole number of pages, and Caffe's convert_imageset. Each gives the converter's batches; before
the first batch of a random read order each reads what the converter's DB reads plus its key
listing's leaf pages (without metadata the keys are listed: the one difference), never the
kernel's read-around; and after `crossbow db check --write-metadata` what the converter's
DB reads."""
import ctypes
import json
import mmap
import os
import shutil
import struct

import numpy as np
import pytest

lmdb = pytest.importorskip("lmdb")
_C = pytest.importorskip("crossbow._C", reason="crossbow._C is not built (scripts/setup.sh)")

from crossbow import cli, convert  # noqa: E402
from crossbow.data import ImageDB  # noqa: E402
import foreign_dbs  # noqa: E402

N, SIDE = 4000, 60  # records of 10.8 KB, three overflow pages each: a 48 MiB DB
# Python's lmdb at 64 MiB and at sizes that are no whole number of pages; Caffe's writer.
WRITERS = {"python-64MiB": 64 << 20, "python-100000001": 100_000_001,
           "python-61234567": 61_234_567, "caffe": None}
MiB = 1 << 20
_LIBC = ctypes.CDLL(None, use_errno=True)
_LIBC.mmap.restype = ctypes.c_void_p
_LIBC.mmap.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int, ctypes.c_int,
                       ctypes.c_int, ctypes.c_long]
_LIBC.mincore.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_void_p]
_LIBC.munmap.argtypes = [ctypes.c_void_p, ctypes.c_size_t]


def resident_bytes(path):
    """Bytes of `path` in the page cache (mincore over a mapping of it)."""
    size, page = os.path.getsize(path), os.sysconf("SC_PAGESIZE")
    with open(path, "rb") as f:
        address = _LIBC.mmap(None, size, mmap.PROT_READ, mmap.MAP_SHARED, f.fileno(), 0)
        pages = (ctypes.c_ubyte * ((size + page - 1) // page))()
        rc = _LIBC.mincore(address, size, pages)
        _LIBC.munmap(address, size)
    assert rc == 0, os.strerror(ctypes.get_errno())
    return sum(p & 1 for p in pages) * page


def evicted(path):
    """Drops `path`'s pages from the page cache; False where they stay (tmpfs)."""
    fd = os.open(path, os.O_RDONLY)
    os.fdatasync(fd)
    os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
    os.close(fd)
    return resident_bytes(path) < MiB


def listing_bytes(db):
    """The pages a listing of the keys reads: the tree's branch and leaf pages."""
    env = lmdb.open(str(db), readonly=True, lock=False)
    stat = env.stat()
    env.close()
    return (stat["branch_pages"] + stat["leaf_pages"]) * stat["psize"]


@pytest.fixture(scope="module")
def dbs(tmp_path_factory):
    root = tmp_path_factory.mktemp("writers")
    with convert.Writer(root / "converted", N, progress=False) as w:
        for i in range(N):
            pixels = ((np.arange(3 * SIDE * SIDE) * 7 + i) % 251).astype(np.uint8).tobytes()
            w.write(f"{i:08d}_img{i}.png", pixels, channels=3, height=SIDE, width=SIDE,
                    label=i % 10)
    out = {"converted": root / "converted"}
    for name, map_size in WRITERS.items():
        out[name] = root / name
        if map_size is None:
            foreign_dbs.caffe(out["converted"], out[name])
        else:
            foreign_dbs.python_lmdb(out["converted"], out[name], map_size)
    return out


def written_map_size(db):
    """The map size LMDB stored, which a reader that sets none maps: mm_mapsize of the newer
    of the two meta pages (after the 16-byte page header: magic, version and address, then the
    size at 32; the transaction id at 144)."""
    page = os.sysconf("SC_PAGESIZE")
    with open(os.path.join(db, "data.mdb"), "rb") as f:
        head = f.read(2 * page)
    metas = [(struct.unpack_from("<Q", head, at + 144)[0],
              struct.unpack_from("<Q", head, at + 32)[0])
             for at in (0, page)]
    return max(metas)[1]


def test_the_writers_keep_their_map_sizes_and_write_no_metadata(dbs):
    for name, map_size in WRITERS.items():
        kept = written_map_size(dbs[name])
        if map_size is None:  # Caffe's: LMDB's 10 MiB, doubled until the records fit
            assert kept >= os.path.getsize(dbs[name] / "data.mdb")
            assert kept in [foreign_dbs.LMDB_DEFAULT_MAP << k for k in range(8)], name
        else:
            assert kept == map_size, name
        assert not (dbs[name] / "crossbow_meta.json").exists()


def batches(db, **options):
    return [(x.copy(), y.copy()) for x, y in ImageDB(str(db), 500, train=False, scale=1.0,
                                                       **options)]


def test_every_writer_gives_the_converters_batches(dbs):
    expected = batches(dbs["converted"])
    for name in WRITERS:
        got = batches(dbs[name])
        assert len(got) == len(expected) == N // 500, name
        for (x, y), (ex, ey) in zip(got, expected):
            np.testing.assert_array_equal(y, ey, err_msg=name)
            np.testing.assert_array_equal(x, ex, err_msg=name)


def first_batch_reads(db):
    """Bytes of the data file brought into the page cache by opening `db` and taking one batch
    of 4 in random order; None where the page cache keeps the file (tmpfs)."""
    data = os.path.join(db, "data.mdb")
    if not evicted(data):
        return None
    source = ImageDB(str(db), 4, read_order="random", workers=1, slots=4, scale=1.0).source
    source.next_batch()
    return resident_bytes(data)


def test_before_the_first_batch_each_reads_the_converters_pages_and_its_key_listing(dbs):
    """The converter's DB (counter keys in its metadata) reads a few tens of records, a few
    pages each, and the tree's branch pages; the others list their keys first, reading their
    leaf pages (about 130 KiB here) and nothing between them. Read-around (128 KiB or more a
    page fault, on every disk here) at each leaf or record would read several MiB."""
    converted = first_batch_reads(dbs["converted"])
    if converted is None:
        pytest.skip("the page cache keeps the DBs (tmpfs?)")
    assert converted < MiB
    for name in WRITERS:
        listed = listing_bytes(dbs[name])
        assert first_batch_reads(dbs[name]) <= converted + listed + (256 << 10), name


def test_metadata_from_db_check_makes_a_foreign_db_start_as_a_converted_one(dbs, tmp_path):
    converted = first_batch_reads(dbs["converted"])
    if converted is None:
        pytest.skip("the page cache keeps the DBs (tmpfs?)")
    for name in ("caffe", "python-100000001"):
        db = tmp_path / name  # a copy: the other tests read the DB without metadata
        shutil.copytree(dbs[name], db)
        assert cli.main(["db", "check", "--noprogress", "--write-metadata", str(db)]) == 0
        meta = json.loads((db / "crossbow_meta.json").read_text())
        assert meta["key_format"] == "counter" and meta["records"] == N, name
        assert first_batch_reads(db) <= converted + (256 << 10), name
