"""The autotuner's search for bench_train statistical's sma-b16 (ResNet-20, the full CIFAR-10,
bf16, batch 16, 2-s windows), with its adds confirmed (autotune_confirm, the default since
07acf79) and with single windows (the search before), rounds alternating; the choice, the time
the search took and every window it measured."""
import json, sys, time
sys.path.insert(0, "/work/main/scripts")
import crossbow
from crossbow import recipes
from tta_recipes import HE_BATCH, HE_LR
W = "/work/runs/tta_amx167"
opts = dict(momentum=0.9, weight_decay=1e-4, **recipes.small_batch(16, "sma", "auto", HE_LR, HE_BATCH))
opts = {k: v for k, v in opts.items() if k not in ("warmup", "warmup_start")}
rounds = int(sys.argv[1]) if len(sys.argv) > 1 else 3
for r in range(rounds):
    for confirm in ((True, False) if r % 2 == 0 else (False, True)):
        t = time.time()
        res = crossbow.Trainer(net="resnet20", train_db=f"{W}/cifar10_train_lmdb", workers=2,
                               precision="bf16", progress=False, autotune_only=True,
                               autotune_confirm=confirm, **opts).fit()
        print(json.dumps(dict(round=r, confirm=confirm, chose=res["learners_per_device"],
                              took_s=round(time.time() - t, 1),
                              windows=[[d["learners_per_device"], round(d["images_per_s"]),
                                        d["action"]] for d in res["autotune"]])), flush=True)
