"""The learners' optimisers against torch.optim's documented equations, written out in numpy,
step by step on the learner's own gradients, with weight decay and a learning-rate drop; against
torch.optim itself where a PyTorch is at hand (this interpreter's, or the peer venv's, run as a
subprocess); and their state across a checkpoint, bit for bit."""
import json
import os
import subprocess
import sys

import numpy as np
import pytest

from crossbow import ModelBuilder

_C = pytest.importorskip("crossbow._C", reason="crossbow._C is not built (scripts/setup.sh)")

STEPS, DROP, B = 12, 6, 8
MU, WD, BETAS, EPS = 0.9, 0.05, (0.9, 0.99), 1e-8
PEER = os.path.expanduser("~/.cache/crossbow/peer-venv/bin/python")

# name: (to_spec's optimiser keywords, the learning rate before the drop)
CASES = {
    "sgd_pytorch": (dict(momentum_convention="pytorch"), 0.1),
    "sgd_pytorch_nesterov": (dict(momentum_convention="pytorch", nesterov=True), 0.1),
    "adamw": (dict(optimizer="adamw", betas=BETAS), 0.01),
    # beta2 0.99: RAdam's rectification starts at step 6, so both of its branches run.
    "radam": (dict(optimizer="radam", betas=BETAS), 0.01),
    "sgd_lookahead": (dict(momentum_convention="pytorch", lookahead_k=4, lookahead_alpha=0.5), 0.1),
    "radam_lookahead": (dict(optimizer="radam", betas=BETAS, lookahead_k=4, lookahead_alpha=0.5),
                        0.01),
    # Where eps is added shows only where it is not small beside sqrt(v): eps 0.1 with the
    # weights' gradients near 1e-3 (TINY_INPUTS), the biases' near 0.1 to 1.
    "adamw_eps": (dict(optimizer="adamw", betas=BETAS, eps=0.1), 0.05),
    "radam_eps": (dict(optimizer="radam", betas=BETAS, eps=0.1), 0.05),
}
TINY_INPUTS = 1e-3  # the scale of the inputs of a case with its own eps


def spec(lr, **solver):
    m = ModelBuilder("softmax_regression")
    x = m.input("data", shape=(3, 2, 2))
    m.softmax_loss(m.fc(x, 4, name="fc"))
    return json.dumps(m.to_spec(lr=lr, momentum=MU, weight_decay=WD, seed=3, **solver))


def data(n, seed=0):
    rng = np.random.default_rng(seed)
    labels = rng.integers(0, 4, n).astype(np.int32)
    images = (rng.normal(size=(n, 3, 2, 2)) + labels[:, None, None, None] * 0.3).astype(np.float32)
    return images, labels


def rates(lr):
    return [lr if t < DROP else lr / 10 for t in range(STEPS)]


def run_learner(name):
    """The learner's parameters before each step and after the last, and its gradients."""
    solver, lr = CASES[name]
    learner = _C.Learner(spec(lr, **solver))
    images, labels = data(STEPS * B)
    if "eps" in solver:
        images *= TINY_INPUTS
    params = learner.param_names()
    history, grads = [], []
    for t, rate in enumerate(rates(lr)):
        learner.set_learning_rate(rate)
        history.append({p: learner.get(p).astype(np.float64) for p in params})
        learner.forward_backward(images[t * B:(t + 1) * B], labels[t * B:(t + 1) * B])
        grads.append({p: learner.gradient(p).astype(np.float64) for p in params})
        learner.update()
    history.append({p: learner.get(p).astype(np.float64) for p in params})
    return history, grads


class Reference:
    """torch.optim's documented steps: SGD (momentum, dampening 0, L2 weight decay), AdamW,
    RAdam with decoupled_weight_decay=True; Lookahead (Zhang et al. 2019, Algorithm 1) around
    them."""

    def __init__(self, w0, optimizer="sgd", nesterov=False, lookahead_k=None,
                 lookahead_alpha=0.5, eps=EPS, **_):
        self.w = {p: w.copy() for p, w in w0.items()}
        self.kind, self.nesterov, self.k, self.alpha, self.eps = optimizer, nesterov, \
            lookahead_k, lookahead_alpha, eps
        self.m = {p: np.zeros_like(w) for p, w in w0.items()}
        self.v = {p: np.zeros_like(w) for p, w in w0.items()}
        self.slow = {p: w.copy() for p, w in w0.items()}
        self.t = 0

    def step(self, grads, lr):
        self.t += 1
        t, (b1, b2) = self.t, BETAS
        for p, g in grads.items():
            w = self.w[p]
            if self.kind == "sgd":
                d = g + WD * w
                self.m[p] = MU * self.m[p] + d
                w -= lr * (d + MU * self.m[p] if self.nesterov else self.m[p])
                continue
            w *= 1 - lr * WD
            self.m[p] = b1 * self.m[p] + (1 - b1) * g
            self.v[p] = b2 * self.v[p] + (1 - b2) * g * g
            m_hat, bc2 = self.m[p] / (1 - b1 ** t), 1 - b2 ** t
            if self.kind == "adamw":
                w -= lr * m_hat / (np.sqrt(self.v[p] / bc2) + self.eps)
                continue
            rho_inf = 2 / (1 - b2) - 1
            rho = rho_inf - 2 * t * b2 ** t / bc2
            if rho > 5:
                r = np.sqrt((rho - 4) * (rho - 2) * rho_inf / ((rho_inf - 4) * (rho_inf - 2) * rho))
                w -= lr * m_hat * r * np.sqrt(bc2) / (np.sqrt(self.v[p]) + self.eps)
            else:
                w -= lr * m_hat
        if self.k and t % self.k == 0:
            for p in self.w:
                self.slow[p] += self.alpha * (self.w[p] - self.slow[p])
                self.w[p][...] = self.slow[p]


@pytest.mark.parametrize("name", sorted(CASES))
def test_learner_follows_torch_optims_equations_through_a_rate_drop(name):
    solver, lr = CASES[name]
    history, grads = run_learner(name)
    ref = Reference(history[0], **solver)
    for t, rate in enumerate(rates(lr)):
        ref.step(grads[t], rate)
        for p, w in ref.w.items():
            # A step moves a weight by about lr / 10 or more; float32 rounding stays near 1e-7.
            np.testing.assert_allclose(history[t + 1][p], w, rtol=0, atol=2e-6,
                                       err_msg=f"{name}: {p} after step {t + 1}")
    moved = max(np.abs(history[-1][p] - history[0][p]).max() for p in ref.w)
    assert moved > 1e-2, f"{name}: the weights hardly moved ({moved})"


_TORCH_SCRIPT = r"""
import sys, numpy as np, torch
d = np.load(sys.argv[1], allow_pickle=True)
kind, nesterov, k, alpha = str(d["kind"]), bool(d["nesterov"]), int(d["k"]), float(d["alpha"])
names = list(d["names"])
params = [torch.nn.Parameter(torch.tensor(d["w0_" + n], dtype=torch.float64)) for n in names]
wd, betas, eps, mu = float(d["wd"]), tuple(map(float, d["betas"])), float(d["eps"]), float(d["mu"])
lrs = [float(lr) for lr in d["lrs"]]
if kind == "sgd":
    opt = torch.optim.SGD(params, lr=lrs[0], momentum=mu, weight_decay=wd, nesterov=nesterov)
elif kind == "adamw":
    opt = torch.optim.AdamW(params, lr=lrs[0], betas=betas, eps=eps, weight_decay=wd)
else:
    opt = torch.optim.RAdam(params, lr=lrs[0], betas=betas, eps=eps, weight_decay=wd,
                            decoupled_weight_decay=True)
slow = [p.detach().clone() for p in params]
out = {}
for t, lr in enumerate(lrs):
    for group in opt.param_groups:
        group["lr"] = lr
    for p, n in zip(params, names):
        p.grad = torch.tensor(d["g%d_%s" % (t, n)], dtype=torch.float64)
    opt.step()
    if k and (t + 1) % k == 0:
        with torch.no_grad():
            for p, s in zip(params, slow):
                s += alpha * (p - s)
                p.copy_(s)
    for p, n in zip(params, names):
        out["w%d_%s" % (t + 1, n)] = p.detach().numpy().copy()
np.savez(sys.argv[2], **out)
"""


def _torch_python():
    try:
        import torch  # noqa: F401
        return sys.executable
    except ImportError:
        return PEER if os.path.exists(PEER) else None


@pytest.mark.parametrize("name", sorted(CASES))
def test_learner_follows_torch_optim_itself(name, tmp_path):
    python = _torch_python()
    if python is None:
        pytest.skip(f"no PyTorch here and no peer venv at {PEER}: compared with the numpy "
                    "reference of torch.optim's equations only")
    solver, lr = CASES[name]
    history, grads = run_learner(name)
    names = sorted(history[0])
    inputs = dict(kind=solver.get("optimizer", "sgd"), nesterov=solver.get("nesterov", False),
                  k=solver.get("lookahead_k", 0), alpha=solver.get("lookahead_alpha", 0.5),
                  names=np.array(names), wd=WD, betas=np.array(BETAS),
                  eps=solver.get("eps", EPS), mu=MU,
                  lrs=np.array(rates(lr)),
                  **{f"w0_{n}": history[0][n] for n in names},
                  **{f"g{t}_{n}": g[n] for t, g in enumerate(grads) for n in names})
    np.savez(tmp_path / "in.npz", **inputs)
    subprocess.run([python, "-c", _TORCH_SCRIPT, str(tmp_path / "in.npz"),
                    str(tmp_path / "out.npz")], check=True, timeout=300)
    torch_run = np.load(tmp_path / "out.npz")
    for t in range(1, STEPS + 1):
        for n in names:
            np.testing.assert_allclose(history[t][n], torch_run[f"w{t}_{n}"], rtol=0, atol=2e-6,
                                       err_msg=f"{name}: {n} after step {t} against torch.optim")


def test_conventions_agree_at_a_constant_rate_and_part_at_the_drop():
    """caffe2's and pytorch's momentum SGD, plain and Nesterov, through the learner."""
    for nesterov in (False, True):
        runs = {}
        for convention in ("caffe2", "pytorch"):
            CASES["_probe"] = (dict(momentum_convention=convention, nesterov=nesterov), 0.1)
            try:
                runs[convention] = run_learner("_probe")[0]
            finally:
                del CASES["_probe"]
        for t in range(STEPS + 1):
            worst = max(np.abs(runs["caffe2"][t][p] - runs["pytorch"][t][p]).max() /
                        max(np.abs(runs["pytorch"][t][p]).max(), 1e-30) for p in runs["pytorch"][t])
            if t <= DROP:
                assert worst < 1e-6, f"nesterov={nesterov}: apart by {worst} at step {t}"
            else:
                assert worst > 1e-4, f"nesterov={nesterov}: still together at step {t}"


@pytest.mark.parametrize("solver", [dict(optimizer="radam", betas=BETAS, lookahead_k=3),
                                    dict(optimizer="adamw"), dict(momentum_convention="pytorch")],
                         ids=["radam_lookahead", "adamw", "sgd_pytorch"])
def test_optimiser_state_resumes_from_a_checkpoint_bit_for_bit(solver):
    images, labels = data(7 * B)  # after 7 iterations the source is back at batch 0

    def engine():
        return _C.Engine(spec(0.01, **solver), _C.EngineOptions(sync="sgd", learners=1),
                         _C.ArraySource(images, labels, B))

    straight, first = engine(), engine()
    for _ in range(7):
        straight.iterate()
        first.iterate()
    saved = first.state()
    state_names = [n for n in saved if n.startswith("learner0/") and
                   n.split("/")[1] not in ("fc_w", "fc_b")]
    assert state_names, "the checkpoint holds no optimiser state"
    resumed = engine()
    resumed.restore_state(saved, 7)
    for _ in range(5):
        straight.iterate()
        resumed.iterate()
    a, b = straight.state(), resumed.state()
    assert set(a) == set(b)
    for name in a:
        np.testing.assert_array_equal(b[name], a[name], err_msg=name)
    # Not vacuous: a restart from a fresh optimiser state would differ.
    fresh = engine()
    fresh.restore_state({k: v for k, v in saved.items() if k not in state_names} |
                        {k: np.zeros_like(saved[k]) for k in state_names}, 7)
    for _ in range(5):
        fresh.iterate()
    assert np.abs(fresh.state()["learner0/fc_w"] - a["learner0/fc_w"]).max() > 1e-6


def test_a_rate_drop_restarts_the_optimiser_with_the_learners_from_z():
    images, labels = data(8 * B)
    e = _C.Engine(spec(0.01, optimizer="adamw", lookahead_k=3),
                  _C.EngineOptions(sync="sma", learners=2), _C.ArraySource(images, labels, B))
    for _ in range(4):
        e.iterate()
    before = e.state()
    assert np.abs(before["learner0/fc_w_exp_avg"]).max() > 0
    e.set_learning_rate(0.001)  # a drop: SMA restarts its learners from z
    after = e.state()
    for j in range(2):
        np.testing.assert_array_equal(after[f"learner{j}/fc_w"], after["z/fc_w"])
        np.testing.assert_array_equal(after[f"learner{j}/fc_w_slow"], after["z/fc_w"])
        for blob in ("fc_w_exp_avg", "fc_w_exp_avg_sq", "fc_w_step", "fc_w_lookahead_step"):
            assert not after[f"learner{j}/{blob}"].any(), blob


@pytest.mark.parametrize("options, message", [
    (dict(betas=(0.9, 0.99)), r"betas \(--betas\) is an option of optimizer \(--optimizer\) "
                              r"adamw and radam, not sgd"),
    (dict(eps=1e-6), r"eps \(--eps\) is an option of optimizer \(--optimizer\) adamw and radam"),
    (dict(optimizer="adamw", nesterov=True), r"nesterov \(--nesterov\) is an option of optimizer "
                                             r"\(--optimizer\) sgd, not adamw"),
    (dict(optimizer="radam", momentum_convention="pytorch"),
     r"momentum_convention \(--momentum-convention\) is an option of optimizer \(--optimizer\) "
     r"sgd, not radam"),
    (dict(optimizer="adamw", betas=(0.9,)), r"betas \(--betas\) takes two values"),
    (dict(optimizer="adamw", betas=(0.9, 1.0)), r"betas \(--betas\) must be"),
    (dict(lookahead_alpha=0.5), r"lookahead_alpha \(--lookahead-alpha\) needs lookahead_k "
                                r"\(--lookahead-k\)"),
    (dict(lookahead_k=0), r"lookahead_k \(--lookahead-k\) must be"),
    (dict(optimizer="adam"), r"optimizer \(--optimizer\) must be sgd, adamw or radam, got "
                             r"'adam'; did you mean 'adamw'"),
    (dict(lr_policy="cosine", warmup=5), r"lr policy 'cosine' \(--lr-policy\) ends at 3 "
                                         r"\(--epochs\), before its warm-up \(--warmup 5\)"),
    (dict(lr_policy="flatcos", warmup=3), r"lr policy 'flatcos' .* before its warm-up"),
])
def test_bad_optimiser_options_name_the_flag_before_any_data_is_read(options, message):
    import crossbow
    with pytest.raises(ValueError, match=message):  # the data does not exist: never read
        crossbow.Trainer("resnet20", "/nonexistent/train_lmdb", epochs=3, **options)


def test_trainer_options_reach_the_learner_spec():
    import crossbow
    images, labels = data(16)
    solver = crossbow.Trainer("resnet20", (images, labels), epochs=1, optimizer="radam",
                              betas=(0.95, 0.99), eps=1e-6, lookahead_k=6, lookahead_alpha=0.6,
                              weight_decay=0.01).learner_spec()["solver"]
    assert solver == {"lr": 0.1, "momentum": 0.9, "weight_decay": 0.01, "nesterov": False,
                      "bias_decay": True, "type": "radam", "momentum_convention": "caffe2",
                      "betas": [0.95, 0.99], "eps": 1e-6, "lookahead_k": 6,
                      "lookahead_alpha": 0.6}
    # left unset, the learner's defaults apply (SolverConfig)
    assert "betas" not in crossbow.Trainer("resnet20", (images, labels), epochs=1,
                                           optimizer="adamw").learner_spec()["solver"]


@pytest.mark.parametrize("solver, message", [
    (dict(optimizer="adamw", nesterov=True), "nesterov and momentum_convention are options of "
                                             "solver type sgd, not adamw"),
    (dict(eps=1e-6), "betas and eps are options of solver types adamw and radam, not sgd"),
    (dict(optimizer="adam"), "unknown solver type 'adam'; expected sgd, adamw or radam; did you "
                             "mean 'adamw'"),
])
def test_a_spec_with_another_optimisers_options_is_refused(solver, message):
    with pytest.raises(ValueError, match=message):
        _C.Learner(spec(0.1, **solver))
