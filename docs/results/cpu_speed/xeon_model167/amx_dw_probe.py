"""Step time of a one-conv net (data -> 3x3 conv C->C, stride 1 -> global pool -> fc -> loss),
bf16, one thread, batch 16: between two builds that differ only in the weight gradient's
kernel, the difference is that kernel's. Prints one line per shape: C H median_ms."""
import statistics, sys, time
import numpy as np
from crossbow.builder import ModelBuilder
from crossbow.model import Model

shapes = [tuple(int(v) for v in s.split("x")) for s in sys.argv[1:]]
for c, h in shapes:
    m = ModelBuilder(f"probe{c}x{h}")
    x = m.input("data", shape=(c, h, h))
    x = m.conv(x, c, kernel=3, stride=1, pad=1, bias=False, name="conv")
    x = m.global_avg_pool(x, name="pool")
    prob, _ = m.softmax_loss(m.fc(x, 10, name="fc"), "label")
    model = Model(m, threads=1, lr=0.01, momentum=0.9, weight_decay=1e-4, seed=1, precision="bf16")
    rng = np.random.default_rng(0)
    xs = rng.standard_normal((16, c, h, h), dtype=np.float32)
    ys = rng.integers(0, 10, 16).astype(np.int32)
    for _ in range(3):
        model.step(xs, ys)
    iters = max(5, int(2e9 / (2 * 16 * c * c * 9 * h * h)))
    times = []
    for _ in range(iters):
        t = time.perf_counter(); model.step(xs, ys); times.append(time.perf_counter() - t)
    print(c, h, "%.3f" % (1e3 * statistics.median(times)), flush=True)
