"""A one-line terminal progress bar with throughput and ETA."""

import sys
import time


class ProgressBar:
    def __init__(self, total, label="", unit="img", width=28, stream=None):
        self.total, self.label, self.unit, self.width = total, label, unit, width
        self.stream = stream or sys.stderr
        self.start = time.perf_counter()
        self.done = 0
        self.last_draw = 0.0

    def update(self, count, **fields):
        self.done += count
        now = time.perf_counter()
        if now - self.last_draw >= 0.1 or self.done >= self.total:
            self.last_draw = now
            self._draw(now, fields)

    def rate(self):
        elapsed = time.perf_counter() - self.start
        return self.done / elapsed if elapsed > 0 else 0.0

    def _draw(self, now, fields):
        frac = min(1.0, self.done / self.total) if self.total else 1.0
        filled = int(frac * self.width)
        rate = self.rate()
        eta = (self.total - self.done) / rate if rate > 0 else 0.0
        extra = "".join(f" {k} {v:.4g}" if isinstance(v, float) else f" {k} {v}" for k, v in fields.items())
        line = (f"\r{self.label} [{'#' * filled}{'.' * (self.width - filled)}] {frac * 100:5.1f}% "
                f"{rate:7.1f} {self.unit}/s ETA {eta:5.1f}s{extra}")
        self.stream.write(line)
        self.stream.flush()

    def close(self):
        self.stream.write("\n")
        self.stream.flush()
