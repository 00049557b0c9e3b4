"""The PyTorch run's per-epoch lines (bench_train.py statistical's log) as a metrics file that
`crossbow plot` reads: epoch, time, test accuracy, learning rate, images/s over the epoch."""
import json, sys
prev = None
for line in open(sys.argv[1]):
    if not line.startswith('{"peer"') or '"epoch"' not in line:
        continue
    r = json.loads(line)
    rate = None if prev is None else (r["images"] - prev["images"]) / (r["time"] - prev["time"])
    if prev is None:
        rate = r["images"] / r["time"]
    print(json.dumps({"epoch": r["epoch"], "time": r["time"], "accuracy": r["accuracy"],
                      "lr": r["lr"], "images_per_s": rate}))
    prev = r
