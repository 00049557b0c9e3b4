#!/usr/bin/env python3
"""Trains LeNet on MNIST IDX files with one Crossbow learner; prints accuracy and images/s."""

import argparse
import time

import numpy as np

import crossbow.nets
from crossbow.datasets import load_mnist
from crossbow import _native, archives


def main():
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--data", help="folder with the four MNIST IDX files (default: mnist/ in "
                                   "the data folder)")
    archives.add_argument(ap)
    ap.add_argument("--epochs", type=int, default=3)
    ap.add_argument("--batch-size", type=int, default=64)
    ap.add_argument("--lr", type=float, default=0.05, help="initial; decays linearly to 0")
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args()

    try:
        folder = args.data or archives.path("mnist", args.data_dir)
        xtr, ytr, xte, yte = load_mnist(folder)
    except FileNotFoundError as e:
        ap.exit(1, f"demo_mnist: {e}\n")
    print(f"MNIST from {folder}: {len(xtr)} training and {len(xte)} test images")
    model = crossbow.nets.build("lenet", 10, lr=args.lr, momentum=0.9, weight_decay=5e-4,
                                seed=args.seed, threads=args.threads)
    print(f"LeNet, {model.num_params():,} parameters, batch {args.batch_size}, "
          f"{args.threads} thread(s)")
    rng = np.random.default_rng(args.seed)
    b = args.batch_size
    train_time = 0.0
    total_steps, step = args.epochs * (len(xtr) // b), 0
    for epoch in range(1, args.epochs + 1):
        order = rng.permutation(len(xtr))
        steps = len(xtr) // b
        bar = _native.load().ProgressBar()  # the trainer's, on the console log lines share
        start = time.perf_counter()
        for s in range(steps):
            model.set_learning_rate(args.lr * (1 - step / total_steps))  # linear decay
            step += 1
            idx = order[s * b:(s + 1) * b]
            loss = model.step(np.ascontiguousarray(xtr[idx]), np.ascontiguousarray(ytr[idx]))
            elapsed = time.perf_counter() - start
            rate = (s + 1) * b / elapsed if elapsed > 0 else 0.0
            eta = (steps - s - 1) * b / rate if rate > 0 else 0.0
            bar.update(f"epoch {epoch}/{args.epochs}", (s + 1) / steps, rate, eta, loss)
        bar.finish()
        train_time += time.perf_counter() - start
        result = model.evaluate(xte, yte, batch_size=500)
        print(f"epoch {epoch}: test top-1 {result['top1'] * 100:.2f}%, loss {result['loss']:.4f}")
    images = args.epochs * (len(xtr) // b) * b
    print(f"result: test accuracy {result['top1'] * 100:.2f}% after {args.epochs} epochs, "
          f"training {images / train_time:.0f} images/s")


if __name__ == "__main__":
    main()
