"""The autotuner's search for bench_train statistical's sma-b16 (ResNet-20, the full CIFAR-10,
bf16), with a window of 20 iterations alone (autotune_seconds 0, the search before) and of at
least 2 s (the default now), rounds alternating; then each count's steady images/s from a
fixed-count run of 25 s, for the truth the trials estimate."""
import json, sys, time
sys.path.insert(0, "/work/main/scripts")
import crossbow
from crossbow import recipes
from tta_recipes import HE_BATCH, HE_LR
W = "/work/runs/tta_amx80f"
dbs = dict(train=f"{W}/cifar10_train_lmdb")
opts = dict(momentum=0.9, weight_decay=1e-4, **recipes.small_batch(16, "sma", "auto", HE_LR, HE_BATCH))
opts = {k: v for k, v in opts.items() if k not in ("warmup", "warmup_start")}
rounds = int(sys.argv[1]) if len(sys.argv) > 1 else 3
for r in range(rounds):
    for seconds in (0, 2):
        t = time.time()
        res = crossbow.Trainer(net="resnet20", train_db=dbs["train"], workers=2, precision="bf16",
                               progress=False, autotune_only=True, autotune_seconds=seconds,
                               **opts).fit()
        print(json.dumps(dict(round=r, autotune_seconds=seconds, chose=res["learners_per_device"],
                              took_s=round(time.time() - t, 1),
                              trials={d["learners_per_device"]: round(d["images_per_s"])
                                      for d in res["autotune"]})), flush=True)
for k in (2, 3, 4):
    o = dict(opts, learners=str(k))
    res = crossbow.Trainer(net="resnet20", train_db=dbs["train"], workers=2, precision="bf16",
                           progress=False, time_limit=25, **o).fit()
    print(json.dumps(dict(steady_learners=k, images_per_s=round(res["images_per_s"]))), flush=True)
