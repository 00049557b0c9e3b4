"""The PyTorch peer's CIFAR-10 loader (scripts/peer/torch_cifar.py) in each configuration
bench_train.py can give it (--peer-workers 0, 1, 2; --peer-augment sample or batch), under the
peer's Python: the whole-batch crop and mirror against the same window cut image by image, and
one epoch of each configuration on the bundled sample, every output image a crop (mirrored or
not) of the image its index names, each image once, the crops and mirrors varied."""
import json
import subprocess

import peer
from test_bench_tta import SAMPLE, peer_with_torch

_CHECK = r"""
import json, sys
import numpy as np, torch, torch.nn.functional as F
from torch_cifar import MEAN, STD, crop_and_mirror, train_loader

folder, work = sys.argv[1:3]
torch.set_num_threads(1)
torch.manual_seed(0)
np.random.seed(0)
out = {}
# The gather against slicing each padded image.
x = torch.randint(0, 256, (6, 3, 32, 32), dtype=torch.uint8)
rows, cols = torch.tensor([0, 8, 3, 4, 1, 7]), torch.tensor([8, 0, 5, 4, 2, 7])
mirror = torch.tensor([False, True, True, False, False, True])
one_by_one = []
for image, r, c, m in zip(x, rows, cols, mirror):
    window = F.pad(image, (4, 4, 4, 4))[:, r:r + 32, c:c + 32]
    one_by_one.append(window.flip(2) if m else window)
expected = (torch.stack(one_by_one).float() / 255 - MEAN) / STD
out["gather_error"] = float((crop_and_mirror(x, rows, cols, mirror) - expected).abs().max())

# Every window of `images`: [162, N, C, 32, 32] for (row, col, mirror) in 9 x 9 x 2.
def windows(images):
    n = len(images)
    return torch.stack([crop_and_mirror(images, torch.full((n,), r), torch.full((n,), c),
                                        torch.full((n,), m)) for r in range(9) for c in range(9)
                        for m in (False, True)])

for workers in (0, 1, 2):
    for augment in ("sample", "batch"):
        loader = train_loader(folder, work, 128, workers, augment)
        source = loader.dataset.x
        loader.dataset.y = torch.arange(len(source))  # labels that name each image
        seen, unmatched, drawn = [], 0, []
        for images, index in loader:
            assert images.shape == (128, 3, 32, 32) and images.dtype == torch.float32
            seen += index.tolist()
            picks = windows(source[index[:8]])
            error = (picks - images[:8]).abs().flatten(2).max(2).values  # [162, 8]
            best = error.min(0)
            unmatched += int((best.values > 1e-5).sum())
            drawn += best.indices.tolist()
        out[f"{workers} {augment}"] = dict(
            images=len(seen), distinct=len(set(seen)), unmatched=unmatched,
            mirrored=sum(d % 2 for d in drawn) / len(drawn),
            windows=len({d // 2 for d in drawn}))
print(json.dumps(out))
"""


def test_each_loader_configuration_crops_and_mirrors_every_image_once(tmp_path):
    python = peer_with_torch()
    r = subprocess.run([python, "-c", _CHECK, SAMPLE, str(tmp_path)], capture_output=True,
                       text=True, timeout=600, env=peer.env())
    assert r.returncode == 0, r.stderr[-3000:]
    out = json.loads(r.stdout.splitlines()[-1])
    assert out.pop("gather_error") < 1e-6
    assert sorted(out) == [f"{w} {a}" for w in (0, 1, 2) for a in ("batch", "sample")]
    for config, got in out.items():
        # 15 batches of 128 from 2,000 images (the last partial one dropped), 8 checked each:
        # 120 draws of 162 windows (81 places); mirrored half the time (0.3-0.7 fails with odds
        # near 1e-5, and the draws are seeded).
        assert (got["images"], got["distinct"], got["unmatched"]) == (1920, 1920, 0), config
        assert 0.3 < got["mirrored"] < 0.7 and got["windows"] > 30, (config, got)
