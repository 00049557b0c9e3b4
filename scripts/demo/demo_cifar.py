#!/usr/bin/env python3
"""Converts the bundled CIFAR-10 sample to LMDB and trains a CIFAR ResNet with SMA and
auto-tuned learners for a few minutes; prints accuracy, images/s and the learners chosen."""
import argparse
import os
import tempfile

import crossbow
from crossbow import convert, trainer


def main():
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--data", default=os.path.join(root, "data", "samples", "cifar10"),
                    help="folder with train/<class>/*.jpg and test/<class>/*.jpg")
    ap.add_argument("--work", default=os.path.join(tempfile.gettempdir(), "crossbow_demo"))
    ap.add_argument("--net", default="resnet20")
    ap.add_argument("--epochs", type=int, default=40)
    ap.add_argument("--minutes", type=float, default=4.0, help="stop earlier if this runs out")
    ap.add_argument("--batch-size", type=int, default=16)
    args = ap.parse_args()

    dbs = {}
    for split in ("train", "test"):
        dbs[split] = os.path.join(args.work, f"cifar10_{split}_lmdb")
        convert.image_folders(os.path.join(args.data, split) + "/", dbs[split], overwrite=True,
                              progress=False)
    metrics = os.path.join(args.work, "metrics.jsonl")
    result = crossbow.Trainer(net=args.net, train_db=dbs["train"], test_db=dbs["test"],
                              batch_size=args.batch_size, learners="auto", sync="sma",
                              epochs=args.epochs, time_limit=60 * args.minutes, lr=0.05,
                              lr_policy="multistep",
                              steps=[args.epochs // 2, args.epochs * 3 // 4],
                              weight_decay=5e-4, warmup=1, metrics=metrics, log_every=20).fit()
    print(trainer.describe(result))
    print(f"learners chosen by the autotuner: {result['learners_per_device']} per device; "
          f"metrics in {metrics} (plot them with `crossbow plot {metrics}`)")


if __name__ == "__main__":
    main()
