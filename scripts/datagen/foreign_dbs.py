#!/usr/bin/env python3
"""Copies of a converter's LMDB as other writers make them, without crossbow_meta.json: the
same records written by Python's `lmdb` with a chosen map_size (any number of bytes, which LMDB
keeps as given, a whole number of pages or not), and as Caffe's convert_imageset writes them
(Datum records keyed "%08d_<file>", a commit every 1,000 records, the map starting at LMDB's
10 MiB and doubled when full). The tests and bench_imagenet.py's start-up runs read them beside
the converter's DB. Needs the `lmdb` package.

    scripts/datagen/foreign_dbs.py SRC_DB DST python MAP_SIZE
    scripts/datagen/foreign_dbs.py SRC_DB DST caffe
"""
import argparse

import lmdb

CAFFE_COMMIT = 1000
LMDB_DEFAULT_MAP = 10 << 20


def records(src):
    """(key, value) bytes of every record of `src`, in key order."""
    env = lmdb.open(str(src), readonly=True, lock=False)
    with env.begin() as txn:
        out = list(txn.cursor())
    env.close()
    return out


def python_lmdb(src, dst, map_size):
    """`src`'s records in one transaction of Python's lmdb, at `map_size` bytes."""
    env = lmdb.open(str(dst), map_size=map_size)
    with env.begin(write=True) as txn:
        for key, value in records(src):
            txn.put(key, value)
    env.close()


def caffe(src, dst):
    """`src`'s records as convert_imageset writes them: key "%08d_<file>" (the file is the part
    of `src`'s key after its first "_"), a commit every 1,000, the map doubled when full."""
    env = lmdb.open(str(dst), map_size=LMDB_DEFAULT_MAP)
    pending = []

    def commit():
        while True:
            try:
                with env.begin(write=True) as txn:
                    for key, value in pending:
                        txn.put(key, value)
                break
            except lmdb.MapFullError:
                env.set_mapsize(env.info()["map_size"] * 2)
        pending.clear()

    for i, (key, value) in enumerate(records(src)):
        pending.append((b"%08d_%s" % (i, key.split(b"_", 1)[-1]), value))
        if len(pending) == CAFFE_COMMIT:
            commit()
    commit()
    env.close()


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("src")
    ap.add_argument("dst")
    ap.add_argument("writer", choices=("python", "caffe"))
    ap.add_argument("map_size", nargs="?", type=int, help="python: the map size in bytes")
    args = ap.parse_args(argv)
    if args.writer == "python":
        if not args.map_size:
            ap.error("python needs MAP_SIZE")
        python_lmdb(args.src, args.dst, args.map_size)
    else:
        caffe(args.src, args.dst)


if __name__ == "__main__":
    main()
