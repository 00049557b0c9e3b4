"""fastai's own xresnets against the zoo's, run in the peer's venv (torch and fastai; imported
by tests/python/test_xresnet_fastai.py in a subprocess): the same parameters under mapped
names, and with the same weights (crossbow.interop) the same logits in inference, and the same
loss, gradients, batch-norm statistics and spectral-norm vectors after a training step."""
import json
import sys

import numpy as np
import torch  # before crossbow._C, which would load the system's NCCL first

from crossbow import interop, nets, torch_names  # noqa: E402
import torch_zoo  # noqa: E402

SIZE, BATCH, CLASSES = 64, 8, 10


def _randomise(twin, seed):
    """Every statistic, affine term, bias and the attention's gain away from fastai's init (its
    residual branches start at 0), so that each tensor changes the output."""
    from fastai.layers import SimpleSelfAttention
    nn = torch.nn
    g = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        for m in twin.modules():
            if isinstance(m, nn.BatchNorm2d):
                m.running_mean.normal_(0, 0.1, generator=g)
                m.running_var.uniform_(0.5, 2.0, generator=g)
                m.weight.uniform_(0.5, 1.5, generator=g)
                m.bias.normal_(0, 0.1, generator=g)
            elif isinstance(m, (nn.Conv1d, nn.Conv2d, nn.Linear)) and m.bias is not None:
                m.bias.normal_(0, 0.1, generator=g)
            elif isinstance(m, SimpleSelfAttention):
                for vector in (m.conv.weight_u, m.conv.weight_v):
                    vector.normal_(0, 1, generator=g)
                    vector /= vector.norm()
    return twin


def _attention_gains(twin, x):
    """Sets each attention's gain so that its term, gamma (x x^T) (W x), is half its input's
    size at most (its sums over C x L products grow with both): larger, it would swamp the
    net; smaller, it would hardly count."""
    from fastai.layers import SimpleSelfAttention
    sizes = {}

    def measure(module, inputs, output):
        sizes[module] = float(inputs[0].abs().max()), float((output - inputs[0]).abs().max())
    layers = [m for m in twin.modules() if isinstance(m, SimpleSelfAttention)]
    hooks = [m.register_forward_hook(measure) for m in layers]
    with torch.no_grad():
        for m in layers:
            m.gamma.fill_(1.0)
        twin.eval()(torch.from_numpy(x))
        for m in layers:
            m.gamma.fill_(0.5 * sizes[m][0] / sizes[m][1])
    for hook in hooks:
        hook.remove()
    return layers


def _relative_gap(ours, theirs, floor=0.0):
    """max |ours - theirs| over max |theirs| (at least `floor`)."""
    theirs = np.asarray(theirs, np.float64).reshape(-1)
    scale = max(floor, np.abs(theirs).max())
    return float(np.abs(np.asarray(ours, np.float64).reshape(-1) - theirs).max() / scale)


def check(net):
    torch.manual_seed(0)  # fastai's own init
    twin = _randomise(torch_zoo.twin(net, CLASSES), 0)
    model = nets.build(net, num_classes=CLASSES, input_size=SIZE)
    names = torch_names.mapping(model.builder)
    keys = [k for k in twin.state_dict() if not k.endswith("num_batches_tracked")]
    out = {"params": [sum(p.numel() for p in twin.parameters()), model.num_params()],
           "unmapped": sorted(set(keys) - set(names.values()))}
    rng = np.random.default_rng(1)
    x = rng.normal(0, 1, (BATCH, 3, SIZE, SIZE)).astype(np.float32)
    y = rng.integers(0, CLASSES, BATCH).astype(np.int32)
    attention = _attention_gains(twin, x)
    interop.from_torch(model, twin.state_dict())

    twin.eval()
    with torch.no_grad():
        logits = twin(torch.from_numpy(x)).numpy()
        gains = [float(m.gamma) for m in attention]
        for m in attention:
            m.gamma.zero_()
        without = twin(torch.from_numpy(x)).numpy()
        for m, gain in zip(attention, gains):
            m.gamma.fill_(gain)
    out["logits_gap"] = _relative_gap(model.forward(x, ["fc"])["fc"], logits, floor=1.0)
    out["logits_spread"] = float(np.ptp(logits))
    out["attention_effect"] = float(np.abs(logits - without).max())

    twin.train()
    loss = torch.nn.functional.cross_entropy(twin(torch.from_numpy(x)), torch.from_numpy(y).long())
    loss.backward()
    learner = model.learner
    out["loss"] = [float(loss), float(learner.forward_backward(x, y))]
    theirs = dict(twin.named_parameters())
    out["gradient_gaps"] = {blob: _relative_gap(learner.gradient(blob),
                                                theirs[names[blob]].grad.numpy())
                            for blob in model.builder.params}
    state = twin.state_dict()
    out["state_gaps"] = {blob: _relative_gap(learner.get(blob), state[names[blob]].numpy())
                         for blob in model.builder.state}
    return out


if __name__ == "__main__":
    print(json.dumps({net: check(net) for net in sys.argv[1:]}))
