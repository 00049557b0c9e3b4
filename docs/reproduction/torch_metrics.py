"""The PyTorch run's curve (the `curve` of its line in bench_train.py statistical's
tta_runs.jsonl) as a metrics file that `crossbow plot` reads: epoch, time, test accuracy and
images/s over each epoch, one line an epoch.
    python3 torch_metrics.py tta_runs.jsonl > torch-he-resnet20-164ep.jsonl"""
import json, sys
for line in open(sys.argv[1]):
    run = json.loads(line)
    prev = {"time": 0.0, "images": 0}
    for point in run["curve"]:
        rate = (point["images"] - prev["images"]) / (point["time"] - prev["time"])
        print(json.dumps({"epoch": point["epoch"], "time": point["time"],
                          "accuracy": point["accuracy"], "images_per_s": rate}))
        prev = point
