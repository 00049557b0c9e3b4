"""fastai's ranger and Adam (crossbow.recipes.FASTAI_RANGER, FASTAI_ADAM) through fastai's
schedules (FASTAI_SCHEDULES), 20 steps on a learner's own gradients: against fastai's equations
written out in numpy (everywhere) and against fastai's optimisers themselves (in the peer's
venv), to 1e-6. Weight decay and eps are larger than the recipes' so that each rule moves the
weights by more than the tolerance: decay on the bias, eps where PyTorch's RAdam puts it, a
momentum that does not cycle, slow weights not copied at the first step."""
import json

import numpy as np
import pytest

from crossbow import ModelBuilder, recipes

from fastai_peer import reference
from test_fastai_schedule import combined_cos

_C = pytest.importorskip("crossbow._C", reason="crossbow._C is not built (scripts/setup.sh)")

EPOCHS, ITERATIONS, B = 5, 4, 8  # 20 steps
LR, WD, EPS = 1e-2, 0.1, 1e-2
CASES = {  # name: (optimizer, schedule)
    "ranger_flat_cos": ("ranger", "flat_cos"),
    "ranger_one_cycle": ("ranger", "one_cycle"),
    "adam_one_cycle": ("adam", "one_cycle"),
}
SOLVERS = {"ranger": recipes.FASTAI_RANGER, "adam": recipes.FASTAI_ADAM}


def schedule(name):
    options = dict(recipes.FASTAI_SCHEDULES[name](EPOCHS), lr=LR, optimizer="adamw")
    at = [i / ITERATIONS for i in range(EPOCHS * ITERATIONS)]
    return _C.schedule(json.dumps(options), at)


def spec(optimizer):
    """Softmax regression with fastai's `optimizer`."""
    m = ModelBuilder("softmax_regression")
    m.softmax_loss(m.fc(m.input("data", shape=(3, 2, 2)), 4, name="fc"))
    solver = dict(SOLVERS[optimizer], weight_decay=WD, eps=EPS)
    return json.dumps(m.to_spec(lr=LR, seed=3, **solver))


def data():
    rng = np.random.default_rng(0)
    labels = rng.integers(0, 4, EPOCHS * ITERATIONS * B).astype(np.int32)
    images = (rng.normal(size=(len(labels), 3, 2, 2)) + labels[:, None, None, None] * 0.3)
    return images.astype(np.float32), labels


def run_learner(case):
    """The learner's weights before each step and after the last, and its gradients, stepping
    at the schedule's rate and (one-cycle) momentum."""
    optimizer, name = CASES[case]
    learner = _C.Learner(spec(optimizer))
    images, labels = data()
    plan = schedule(name)
    history, grads = [], []
    for t, lr in enumerate(plan["lr"]):
        learner.set_learning_rate(lr)
        if not np.isnan(plan["momentum"][t]):
            learner.set_momentum(plan["momentum"][t])
        history.append({p: learner.get(p).astype(np.float64) for p in ("fc_w", "fc_b")})
        learner.forward_backward(images[t * B:(t + 1) * B], labels[t * B:(t + 1) * B])
        grads.append({p: learner.gradient(p).astype(np.float64) for p in ("fc_w", "fc_b")})
        learner.update()
    history.append({p: learner.get(p).astype(np.float64) for p in ("fc_w", "fc_b")})
    return history, grads, plan


class FastaiEquations:
    """fastai.optimizer's callbacks in numpy: weight_decay (p *= 1 - lr wd, not on the bias:
    the Learner's do_wd), average_grad with dampening, average_sqr_grad, step_stat, then
    adam_step or radam_step (eps after the bias correction; a plain momentum step while
    r <= 5), and for ranger Lookahead (slow weights copied at the first step, k 6, alpha 0.5)."""

    def __init__(self, w0, optimizer):
        self.w = {p: w.copy() for p, w in w0.items()}
        self.radam = optimizer == "ranger"
        self.avg = {p: np.zeros_like(w) for p, w in w0.items()}
        self.sqr = {p: np.zeros_like(w) for p, w in w0.items()}
        self.slow, self.step = None, 0

    def __call__(self, grads, lr, mom):
        if self.radam and self.slow is None:
            self.slow = {p: w.copy() for p, w in self.w.items()}
        self.step += 1
        sqr_mom, t = 0.99, self.step
        for p, g in grads.items():
            w = self.w[p]
            if w.ndim > 1:
                w *= 1 - lr * WD
            self.avg[p] = mom * self.avg[p] + (1 - mom) * g
            self.sqr[p] = sqr_mom * self.sqr[p] + (1 - sqr_mom) * g * g
            debias1, debias2 = 1 - mom ** t, 1 - sqr_mom ** t
            denominator = np.sqrt(self.sqr[p] / debias2) + EPS
            if not self.radam:
                w -= lr / debias1 * self.avg[p] / denominator
                continue
            r_inf = 2 / (1 - sqr_mom) - 1
            r = r_inf - 2 * t * sqr_mom ** t / (1 - sqr_mom ** t)
            if r > 5:
                v = np.sqrt((r - 4) * (r - 2) * r_inf / ((r_inf - 4) * (r_inf - 2) * r))
                w -= lr * v / debias1 * self.avg[p] / denominator
            else:
                w -= lr / debias1 * self.avg[p]
        if self.radam and self.step % 6 == 0:
            for p, w in self.w.items():
                self.slow[p] += 0.5 * (w - self.slow[p])
                w[...] = self.slow[p]


def assert_trajectory(history, weights_after, case):
    for t, after in enumerate(weights_after):
        for p, w in after.items():
            # Steps of about 1e-3 in float32: rounding stays near 1e-8 over 20 of them.
            np.testing.assert_allclose(history[t + 1][p], w, rtol=0, atol=1e-6,
                                       err_msg=f"{case}: {p} after step {t + 1}")
    moved = max(np.abs(history[-1][p] - history[0][p]).max() for p in history[0])
    assert moved > 5e-3, f"{case}: the weights hardly moved ({moved})"


@pytest.mark.parametrize("case", sorted(CASES))
def test_the_learner_follows_fastais_equations(case):
    """The rate and momentum too from fastai's equations (test_fastai_schedule.py's)."""
    history, grads, _ = run_learner(case)
    optimizer, name = CASES[case]
    pos = np.arange(EPOCHS * ITERATIONS) / (EPOCHS * ITERATIONS)
    if name == "one_cycle":
        lrs = combined_cos(0.25, LR / 25, LR, LR / 1e5, pos)
        moms = combined_cos(0.25, 0.95, 0.85, 0.95, pos)
    else:  # ranger's mom, constant
        lrs, moms = combined_cos(0.75, LR, LR, LR / 1e5, pos), np.full(len(pos), 0.95)
    reference_run = FastaiEquations(history[0], optimizer)
    after = []
    for t, (lr, mom) in enumerate(zip(lrs, moms)):
        reference_run(grads[t], lr, mom)
        after.append({p: w.copy() for p, w in reference_run.w.items()})
    assert_trajectory(history, after, case)


@pytest.mark.parametrize("case", sorted(CASES))
def test_the_learner_follows_fastais_optimizer_itself(case, tmp_path):
    history, grads, _ = run_learner(case)
    optimizer, name = CASES[case]
    as_torch = {"fc_w": "weight", "fc_b": "bias"}
    cfg = dict(optimizer=optimizer, schedule=name, lr=LR, wd=WD, eps=EPS, epochs=EPOCHS,
               iterations=ITERATIONS,
               w0={as_torch[p]: w.tolist() for p, w in history[0].items()},
               grads=[{as_torch[p]: g.tolist() for p, g in step.items()} for step in grads])
    fastai = reference("optimizer", cfg, tmp_path)
    after = [{p: np.array(w[as_torch[p]]) for p in as_torch} for w in fastai["weights"]]
    assert_trajectory(history, after, case)


def test_the_engine_gives_each_iteration_its_momentum_posted_ahead_or_not():
    """Every other iteration posted ahead with its rate and momentum (as the trainer posts
    them), the others set before they run: the learner's own trajectory, bit for bit."""
    images, labels = data()
    plan = schedule("one_cycle")
    learner = _C.Learner(spec("adam"))
    one = _C.EngineOptions(sync="sgd", learners=1, threads_per_learner=1)
    engine = _C.Engine(spec("adam"), one, _C.ArraySource(images, labels, B))
    steps = len(plan["lr"])
    for t in range(steps):
        learner.set_learning_rate(plan["lr"][t])
        learner.set_momentum(plan["momentum"][t])
        learner.forward_backward(images[t * B:(t + 1) * B], labels[t * B:(t + 1) * B])
        learner.update()
        if t % 2 == 1:  # posted ahead by the iteration before
            engine.iterate()
            continue
        engine.set_learning_rate(plan["lr"][t])
        engine.set_momentum(plan["momentum"][t])
        ahead = t + 1 < steps
        engine.iterate(next_rate=plan["lr"][t + 1] if ahead else None,
                       next_momentum=plan["momentum"][t + 1] if ahead else None)
    for p in ("fc_w", "fc_b"):
        np.testing.assert_array_equal(engine.state()[f"learner0/{p}"], learner.get(p), err_msg=p)


def test_a_momentum_schedule_for_sgd_is_refused():
    m = ModelBuilder("softmax_regression")
    m.softmax_loss(m.fc(m.input("data", shape=(3, 2, 2)), 4, name="fc"))
    learner = _C.Learner(json.dumps(m.to_spec(lr=LR)))
    with pytest.raises(ValueError, match="sets the beta1 of adamw and radam; sgd's momentum"):
        learner.set_momentum(0.9)
