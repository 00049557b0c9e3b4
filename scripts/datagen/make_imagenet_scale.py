#!/usr/bin/env python3
"""The data of the ImageNet-scale measurements (start-up, cold reads), made and timed under OUT:

  jpeg_N/   N small ImageNet-like JPEGs in ImageNet's layout (make_imagenet_like.py --scale)
  db_N/     those converted: `crossbow convert imageset --by_folder --shuffle --encoded`
  raw_G/    about G GiB of raw records at shorter side 160 (make_imagenet_like.py --raw-db),
            for a DB larger than this machine's memory

for each N of --records (1,281,167 and 10,000 by default: start-up at ImageNet's record count
against a small DB's) and G = --raw-gib (0: none). Each step runs as its own process and is
timed; its result (seconds, records/s, the process's peak RSS, bytes on disk) is printed as a
JSON line and kept as OUT/<name>.json, and a step whose JSON is there is not run again.
"""
import argparse
import json
import os
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))


def disk_bytes(path):
    """Bytes the files under `path` take on disk (allocated blocks, as du counts)."""
    if os.path.isfile(path):
        return os.stat(path).st_blocks * 512
    return sum(os.lstat(os.path.join(folder, name)).st_blocks * 512
               for folder, _, names in os.walk(path) for name in names)


def timed(argv):
    """Runs `argv`; its seconds and peak RSS (MB, from wait4: that process's own)."""
    started = time.perf_counter()
    process = subprocess.Popen(argv, stdout=sys.stderr)  # our stdout: the JSON lines alone
    _, status, usage = os.wait4(process.pid, 0)
    seconds = time.perf_counter() - started
    process.returncode = os.waitstatus_to_exitcode(status)
    if process.returncode != 0:
        raise subprocess.CalledProcessError(process.returncode, argv)
    return seconds, usage.ru_maxrss / 1024


def meta_records(db):
    with open(os.path.join(db, "crossbow_meta.json")) as f:
        return json.load(f)["records"]


def step(out, name, records, argv):
    """Runs one step unless OUT/<name>.json says it ran; its result. `records`: a count, or
    None for the count in the metadata of the DB it writes."""
    record = os.path.join(out, f"{name}.json")
    if os.path.exists(record):
        with open(record) as f:
            result = json.load(f)
        print(f"{name}: kept from an earlier run ({record})", file=sys.stderr)
        return result
    seconds, rss = timed(argv)
    path = os.path.join(out, name)
    records = meta_records(path) if records is None else records
    size = disk_bytes(path)
    result = dict(step=name, records=records, seconds=round(seconds, 1),
                  records_per_s=round(records / seconds), peak_rss_mb=round(rss),
                  disk_gib=round(size / 2**30, 3),
                  disk_mib_per_s=round(size / 2**20 / seconds), argv=argv)
    with open(record, "w") as f:
        json.dump(result, f)
    print(json.dumps(result), flush=True)
    return result


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("out", help="folder for the data and the timings")
    parser.add_argument("--records", type=int, nargs="*", default=[1_281_167, 10_000],
                        help="records of each JPEG-sourced DB")
    parser.add_argument("--scale", type=float, default=0.1, help="the JPEGs' sides times this")
    parser.add_argument("--raw-gib", type=float, default=36.0,
                        help="GiB of the raw DB (at least 1.5x memory for the cold-cache runs)")
    parser.add_argument("--classes", type=int, default=1000)
    parser.add_argument("--pool", type=int, default=256, help="distinct pictures of the raw DB")
    parser.add_argument("--workers", type=int, default=os.cpu_count())
    args = parser.parse_args(argv)
    os.makedirs(args.out, exist_ok=True)
    make = [sys.executable, os.path.join(HERE, "make_imagenet_like.py")]
    for n in args.records:
        folder = os.path.join(args.out, f"jpeg_{n}")
        step(args.out, f"jpeg_{n}", n,
             make + [folder, "--train", str(n), "--val", "0", "--scale", str(args.scale),
                     "--classes", str(args.classes), "--workers", str(args.workers)])
        step(args.out, f"db_{n}", n,
             [sys.executable, "-m", "crossbow", "convert", "imageset", "--by_folder",
              "--shuffle", "--encoded", os.path.join(folder, "train") + "/",
              os.path.join(args.out, f"db_{n}")])
    if args.raw_gib > 0:
        name = f"raw_{args.raw_gib:g}"
        db = os.path.join(args.out, name)
        step(args.out, name, None, make + ["--raw-db", db, "--gib", str(args.raw_gib),
                                           "--classes", str(args.classes), "--pool",
                                           str(args.pool)])


if __name__ == "__main__":
    main()
