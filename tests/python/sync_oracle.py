"""The synchronisers' numpy reference, written from docs/design/engine.md's equations (not from
the C++), in float64: one learner's forward and backward pass through [BN ->] FC -> softmax
cross-entropy, the batch each learner reads, and `Reference`, every model-averaging
synchroniser (SMA, EASGD, local SGD, DiLoCo) with its period, warm-up and learning-rate
restarts. test_sma_reference.py, test_sync_reference.py and
test_model_averaging_reference.py check the engine against it."""
import numpy as np

EPS, BN_MOMENTUM = 1e-5, 0.9  # SpatialBN's defaults


def forward_backward(w, stats, x, y):
    """Gradients of the mean softmax cross-entropy of [BN ->] FC (BN where `w` has bn_s), and
    the BN statistics after this batch (running = m running + (1 - m) batch, with the unbiased
    variance)."""
    x = x.astype(np.float64)
    grads, new_stats = {}, dict(stats)
    if "bn_s" in w:
        mean, var = x.mean(axis=(0, 2, 3)), x.var(axis=(0, 2, 3))
        count = x.shape[0] * x.shape[2] * x.shape[3]
        new_stats = {"bn_rm": BN_MOMENTUM * stats["bn_rm"] + (1 - BN_MOMENTUM) * mean,
                     "bn_rv": BN_MOMENTUM * stats["bn_rv"]
                     + (1 - BN_MOMENTUM) * var * count / (count - 1)}
        xhat = (x - mean[:, None, None]) / np.sqrt(var[:, None, None] + EPS)
        x = w["bn_s"][:, None, None] * xhat + w["bn_b"][:, None, None]
    h = x.reshape(len(x), -1)
    logits = h @ w["fc_w"].T + w["fc_b"]
    p = np.exp(logits - logits.max(axis=1, keepdims=True))
    p /= p.sum(axis=1, keepdims=True)
    p[np.arange(len(y)), y] -= 1
    p /= len(y)
    grads["fc_w"], grads["fc_b"] = p.T @ h, p.sum(axis=0)
    if "bn_s" in w:
        dx = (p @ w["fc_w"]).reshape(x.shape)
        grads["bn_s"], grads["bn_b"] = (dx * xhat).sum(axis=(0, 2, 3)), dx.sum(axis=(0, 2, 3))
    return grads, new_stats


def learner_batch(t, n, j, images, labels, batch):
    """Learner j's batch of iteration t, of n learners: (t n + j) mod batches."""
    i = (t * n + j) % (len(labels) // batch)
    return images[i * batch:(i + 1) * batch], labels[i * batch:(i + 1) * batch]


def split(state, prefix, names):
    return {name: state[prefix + name].astype(np.float64) for name in names}


class Reference:
    """Every learner: g = grad + wd w; v = mu v - lr g; s = w; w = s + v. At a synchronising
    iteration (t < W, the warm-up, or t - W + 1 divisible by H), with N learners and z's
    statistics then the mean of the learners':
      sma/easgd  c_j = alpha (s_j - z); w_j -= c_j; C = sum_j c_j;
                 polyak: z' = z + C + mu_z (z - z_prev)
                 nesterov: u = mu_z u + C; z' = z + C + mu_z u
                 (easgd: mu_z = 0)
      localsgd   z = mean_j w_j; every learner takes z (w and statistics; v stays)
      diloco     d = mean_j w_j - z; u = mu_o u + d; z += lr_o (d + mu_o u); learners take z.
    `central` is z_prev, or the velocity u (nesterov, diloco). `restart()` is a learning-rate
    drop's: every learner from z (w = z, v = 0, statistics = z's)."""

    def __init__(self, start, params, stats, n, *, lr, mu, wd, batch, alpha=0.0, mu_z=0.0,
                 outer_lr=1.0, outer_mu=0.0, sync="sma", sync_period=1,
                 central_momentum_type="polyak", sync_warmup=0):
        self.params, self.stat_names, self.n, self.batch = params, stats, n, batch
        self.lr, self.mu, self.wd, self.alpha = lr, mu, wd, alpha
        self.outer_lr, self.outer_mu = outer_lr, outer_mu
        self.sync, self.period, self.warmup = sync, sync_period, sync_warmup
        self.nesterov = central_momentum_type == "nesterov"
        self.mu_z = 0.0 if sync == "easgd" else mu_z
        self.z = split(start, "z/", params)
        self.z_stats = split(start, "z/", stats)
        self.central = ({k: np.zeros_like(v) for k, v in self.z.items()}
                        if self.nesterov or sync == "diloco" else
                        {k: v.copy() for k, v in self.z.items()})
        self.restart()

    def restart(self):
        self.w = [{k: v.copy() for k, v in self.z.items()} for _ in range(self.n)]
        self.v = [{k: np.zeros_like(v) for k, v in self.z.items()} for _ in range(self.n)]
        self.stats = [dict(self.z_stats) for _ in range(self.n)]

    def synchronises(self, t):
        return t < self.warmup or (t - self.warmup + 1) % self.period == 0

    def iterate(self, t, images, labels, lr=None):
        lr = self.lr if lr is None else lr
        synchronise = self.synchronises(t)
        elastic = synchronise and self.sync in ("sma", "easgd")
        total = {k: np.zeros_like(v) for k, v in self.z.items()}
        for j in range(self.n):
            batch = learner_batch(t, self.n, j, images, labels, self.batch)
            grads, self.stats[j] = forward_backward(self.w[j], self.stats[j], *batch)
            for name in self.params:
                g = grads[name] + self.wd * self.w[j][name]
                self.v[j][name] = self.mu * self.v[j][name] - lr * g
                snapshot = self.w[j][name].copy()
                self.w[j][name] = snapshot + self.v[j][name]
                if elastic:
                    c = self.alpha * (snapshot - self.z[name])
                    self.w[j][name] -= c
                    total[name] += c
        if not synchronise:
            return
        for name in self.params:
            z, central = self.z[name], self.central[name]
            mean = np.mean([w[name] for w in self.w], axis=0)
            if elastic and self.nesterov:
                self.central[name] = self.mu_z * central + total[name]
                self.z[name] = z + total[name] + self.mu_z * self.central[name]
            elif elastic:
                self.z[name] = z + total[name] + self.mu_z * (z - central)
                self.central[name] = z
            elif self.sync == "localsgd":
                self.z[name], self.central[name] = mean, z
            else:
                d = mean - z
                self.central[name] = self.outer_mu * central + d
                self.z[name] = z + self.outer_lr * (d + self.outer_mu * self.central[name])
        self.z_stats = {k: np.mean([s[k] for s in self.stats], axis=0) for k in self.stat_names}
        if self.sync in ("localsgd", "diloco"):
            self.w = [{k: v.copy() for k, v in self.z.items()} for _ in range(self.n)]
            self.stats = [dict(self.z_stats) for _ in range(self.n)]
