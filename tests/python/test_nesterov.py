"""`nesterov=True` follows Caffe2's convention (operators/sgd_op.h): v = m v - lr g, then
w += m v - lr g. PyTorch's SGD(nesterov=True) keeps b = m b + g and steps w -= lr (g + m b).
While the rate is constant the two take the same steps (v = -lr b throughout); at a change of
the rate they part, since Caffe2's v carries the old rate and PyTorch's b none. Both are
written here in numpy and fed the learner's own gradients, step by step."""
import os
import subprocess
import sys

import numpy as np
import pytest

from conftest import ROOT
from crossbow import _native
from test_native import batch, tiny

MOMENTUM, DECAY = 0.9, 1e-3


def caffe2_step(w, v, g, lr):
    g = g + DECAY * w
    v = MOMENTUM * v - lr * g
    return w + MOMENTUM * v - lr * g, v


def pytorch_step(w, b, g, lr):
    g = g + DECAY * w
    b = MOMENTUM * b + g
    return w - lr * (g + MOMENTUM * b), b


def gaps_to_each_convention(rates):
    """Per step: the largest difference between the learner's parameters and each
    convention's, as a fraction of that parameter's largest magnitude."""
    model = tiny(lr=rates[0], momentum=MOMENTUM, weight_decay=DECAY, nesterov=True)
    names = model.param_names()
    start = {n: model.get_param(n).astype(np.float64) for n in names}
    refs = {"caffe2": (caffe2_step, dict(start), {n: 0 * w for n, w in start.items()}),
            "pytorch": (pytorch_step, dict(start), {n: 0 * w for n, w in start.items()})}
    gaps = []
    for step, lr in enumerate(rates):
        x, y = batch(seed=step)
        model.set_learning_rate(lr)
        model.learner.forward_backward(x, y)
        grads = {n: model.learner.gradient(n).astype(np.float64) for n in names}
        model.learner.update()
        gap = {}
        for convention, (rule, weights, state) in refs.items():
            for n in names:
                weights[n], state[n] = rule(weights[n], state[n], grads[n], lr)
            gap[convention] = max(
                np.abs(model.get_param(n) - weights[n]).max() / np.abs(weights[n]).max()
                for n in names)
        gaps.append(gap)
    return gaps


@pytest.mark.skipif(not _native.available(), reason="needs the C++ extension (scripts/setup.sh)")
def test_nesterov_is_pytorchs_at_a_constant_rate_and_caffe2s_after_a_change():
    # float32 steps against float64 references: a few parts in a million over six steps; the
    # conventions part by m^2 (0.1 - 0.01) b after the drop, a few percent of the weights.
    gaps = gaps_to_each_convention([0.1, 0.1, 0.1, 0.01, 0.01, 0.01])
    for step, gap in enumerate(gaps):
        assert gap["caffe2"] < 1e-5, (step, gaps)
        if step < 3:
            assert gap["pytorch"] < 1e-5, (step, gaps)
        else:
            assert gap["pytorch"] > 1e-3, (step, gaps)


def compare_with_torch():
    """pytorch_step against torch.optim.SGD itself across a drop of the rate."""
    import torch
    rng = np.random.default_rng(0)
    w0 = rng.normal(size=5)
    p = torch.tensor(w0, requires_grad=True)
    sgd = torch.optim.SGD([p], lr=0.1, momentum=MOMENTUM, weight_decay=DECAY, nesterov=True)
    w, b = w0.copy(), np.zeros(5)
    for lr in (0.1, 0.1, 0.01, 0.01):
        g = rng.normal(size=5)
        for group in sgd.param_groups:
            group["lr"] = lr
        p.grad = torch.tensor(g)
        sgd.step()
        w, b = pytorch_step(w, b, g, lr)
        np.testing.assert_allclose(p.detach().numpy(), w, rtol=1e-12, atol=1e-12)


def test_the_pytorch_rule_here_is_torchs():
    """In a process that imports torch before crossbow._C (test_interop.py says why); skipped
    where torch is not installed (CI installs none)."""
    code = (f"import sys, torch; sys.path[:0] = [{os.path.dirname(__file__)!r}, "
            f"{os.path.join(ROOT, 'python')!r}]; import test_nesterov; "
            f"test_nesterov.compare_with_torch()")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=300)
    if "No module named 'torch'" in done.stderr:
        pytest.skip("needs PyTorch (pip install torch)")
    assert done.returncode == 0, done.stderr[-2000:]
