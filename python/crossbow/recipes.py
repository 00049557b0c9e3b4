"""Published training recipes, each as published and as Crossbow's small-batch SMA version,
for ``crossbow reproduce``. A recipe's schedule is kept as fractions of the run (warm-up,
learning-rate drops), so that a run compressed to fewer epochs keeps its shape.

The small-batch SMA version (variant ``sma``) of every recipe follows ``small_batch``, the one
rule from batch size and learner count that ``scripts/bench/bench_train.py statistical`` uses too:
batch 16 per learner, auto-tuned learners, the published learning rate scaled by the square
root of 16 / the published batch (Krizhevsky 2014; Hoffer et al. 2017: it keeps the gradient
noise of the published run), and by the trainer by the square root of the learner count; one
epoch of linear warm-up from a tenth of it, SMA's central momentum 0.9 and alpha left to its
default, the published weight decay and momentum, and the published drops at the same
fractions of the run (docs/design/engine.md, "The small-batch rule").
"""
import dataclasses
import math

from crossbow.names import did_you_mean


@dataclasses.dataclass(frozen=True)
class Recipe:
    name: str
    net: str
    dataset: str            # a key of crossbow.archives.DATASETS
    source: str             # the paper, table or figure that publishes it
    published_top1: float   # the published test/validation top-1 (0-1); 0 where none is
    epochs: int             # the published length
    drops: tuple            # multistep: fractions of the run at which the rate is divided by 10
    warmup: float           # fraction of the run of linear warm-up (0: none)
    published: dict         # Trainer options as published
    sma: dict               # Trainer options of the small-batch SMA version
    notes: str = ""
    flat: float = 0.0       # flatcos (when no drops): the fraction of the run at the base rate
    cosine: bool = False    # no drops: cosine from the end of the warm-up (else flatcos)
    fastai: str = ""        # fastai's schedule in place of the above: a key of FASTAI_SCHEDULES

    def options(self, variant="sma", epochs=None):
        """The Trainer options of `variant` ("published" or "sma") over `epochs` (default:
        the published length): the schedule's drops at the same fractions of the run."""
        if variant not in VARIANTS:
            raise ValueError(_unknown("variant", variant, VARIANTS))
        epochs = self.epochs if epochs is None else epochs
        if not epochs > 0:
            raise ValueError(f"epochs (--epochs) must be > 0, got {epochs}")
        if self.fastai:
            schedule = FASTAI_SCHEDULES[self.fastai](epochs)
        elif self.drops:
            schedule = multistep(epochs, self.drops, self.warmup)
        else:
            schedule = flat_cosine(epochs, 0.0 if self.cosine else self.flat, self.warmup)
        o = dict(net=self.net, **schedule)
        o.update(self.published if variant == "published" else self.sma)
        return o


VARIANTS = ("sma", "published")


def multistep(epochs, drops, warmup=0.0):
    """Trainer options of a run of `epochs` whose rate is divided by 10 at each fraction of the
    run in `drops`, after a linear warm-up from a tenth over the fraction `warmup`."""
    return dict(epochs=epochs, lr_policy="multistep", gamma=0.1,
                steps=[round(f * epochs, 3) for f in drops], warmup=round(warmup * epochs, 3),
                warmup_start=0.1)


def flat_cosine(epochs, flat, warmup=0.0):
    """Trainer options of a run of `epochs` at the base rate for the fraction `flat` of it, then
    a cosine to 0 at its end (fastai's fit_flat_cos; flat 0: the cosine from the end of the
    warm-up), after a linear warm-up over the fraction `warmup`."""
    policy = dict(lr_policy="flatcos", flat_fraction=flat) if flat else dict(lr_policy="cosine")
    return dict(epochs=epochs, **policy, warmup=round(warmup * epochs, 3), warmup_start=0.1)


# fastai's schedules at their defaults (fastai.callback.schedule), per iteration:
# fit_flat_cos keeps the rate for 3/4 of the run, then a cosine takes it to lr / 1e5 (div_final);
# fit_one_cycle rises along a cosine from lr / 25 (div) over the first quarter (pct_start), falls
# along another to lr / 1e5, and moves the momentum (Adam's beta1) 0.95 -> 0.85 -> 0.95 (the
# Learner's moms) along the same two cosines.
FASTAI_LR_END = 1e-5
FASTAI_SCHEDULES = {
    "flat_cos": lambda epochs: dict(epochs=epochs, lr_policy="flatcos", flat_fraction=0.75,
                                    lr_end=FASTAI_LR_END, warmup=0.0),
    "one_cycle": lambda epochs: dict(epochs=epochs, lr_policy="onecycle", warmup=0.25 * epochs,
                                     warmup_start=1 / 25, lr_end=FASTAI_LR_END,
                                     momentum_cycle=[0.95, 0.85, 0.95]),
}
# fastai's optimisers as Crossbow's (fastai.optimizer): decoupled weight decay p *= 1 - lr wd,
# kept off biases and batch norms (the Learner's wd_bn_bias=False). Adam at its defaults
# (sqr_mom 0.99, eps 1e-5, wd 1e-2; its mom is the schedule's); ranger = Lookahead(RAdam) with k
# 6, alpha 0.5, mom 0.95, sqr_mom 0.99, eps 1e-6 after the bias correction.
FASTAI_ADAM = dict(optimizer="adamw", betas=[0.9, 0.99], eps=1e-5, weight_decay=1e-2,
                   bias_decay=False)
FASTAI_RANGER = dict(optimizer="radam", radam_eps="corrected", lookahead_k=6,
                     lookahead_alpha=0.5, betas=[0.95, 0.99], eps=1e-6, weight_decay=1e-2,
                     bias_decay=False)

# SMA's momentum of the average model (Koliousis et al. 2019), whatever the learner count.
CENTRAL_MOMENTUM = 0.9


def small_batch(batch_size, sync="sma", learners="auto", published_lr=0.1, published_batch=128):
    """Crossbow's small-batch rule: the Trainer options that a recipe published at
    (published_lr, published_batch) gets at `batch_size` per learner with `sync` and
    `learners`. `lr` is one learner's rate, from its batch by the square-root rule; the
    trainer multiplies it by sqrt(N) for SMA's N learners (lr_learner_scaling sqrt, applied once
    the autotuner has fixed N), which bench_averaging.py measured to recover part of the epochs
    two learners lost against one (docs/design/engine.md). Warm-up
    of one epoch from a tenth of the rate; SMA's alpha at its default and its central momentum
    CENTRAL_MOMENTUM. The schedule's drops stay at the published fractions (multistep)."""
    if not batch_size >= 1:
        raise ValueError(f"batch_size must be >= 1, got {batch_size}")
    o = dict(batch_size=batch_size, learners=learners, sync=sync,
             lr=round(published_lr * math.sqrt(batch_size / published_batch), 4), warmup=1.0,
             warmup_start=0.1)
    if sync == "sma":
        o.update(central_momentum=CENTRAL_MOMENTUM, lr_learner_scaling="sqrt")
    return o

# He et al. 2016, section 4.2: 64k iterations at batch 128 on 50k images (163.8 epochs; the
# trainer counts whole epochs), lr /10 at 32k and 48k.
_HE_EPOCHS = 164
_HE = dict(batch_size=64, learners="2", sync="ssgd", lr=0.1, momentum=0.9, weight_decay=1e-4)


def _sma(published_lr, published_batch, **published):
    return dict(published, **small_batch(16, published_lr=published_lr,
                                         published_batch=published_batch))


_BATCH_NOTE = ("batch 128 as 2 learners x 64 with S-SGD (the gradient averaged over the 128 "
               "images), so that both cores work")


def _he(net, error_percent, **published):
    return Recipe(
        name=f"he-{net}", net=net, dataset="cifar10",
        source="He et al. 2016, Deep Residual Learning, Table 6 (CIFAR-10)",
        published_top1=round(1 - error_percent / 100, 4), epochs=_HE_EPOCHS,
        drops=(32 / 64, 48 / 64), warmup=0.0, published=dict(_HE, **published),
        sma=_sma(0.1, 128, momentum=0.9, weight_decay=1e-4), notes=_BATCH_NOTE)


# fastai's Imagenette leaderboard at 128 px (github.com/fastai/imagenette, its January 2020
# notes): fastai's train_imagenette example with Ranger (RAdam + Lookahead k 6, alpha 0.5), lr
# 8e-3, betas 0.95 and 0.99, eps 1e-6, decoupled weight decay 1e-2 kept off biases and batch
# norms, batch 64, flat-then-cosine with 3/4 of the run flat, label smoothing 0.1,
# random-resized crops of at least 35% of the image, from imagenette2-160, no mixup at 5 and 20
# epochs. Its records are means of five runs: 85.77% after 5 epochs (its 2020-10 entry, a
# smaller net on the same script) and 91.57% after 20 (the 2020-01 net with MaxBlurPool).
_FASTAI = dict(lr=8e-3, batch_size=64, learners="2", sync="ssgd", optimizer="radam",
               lookahead_k=6, lookahead_alpha=0.5, betas=[0.95, 0.99], eps=1e-6, weight_decay=1e-2,
               bias_decay=False, label_smoothing=0.1, min_crop_area=0.35, input_size=128,
               num_classes=10)
_FASTAI_NOTE = ("the leaderboard's net is xse_resnext50 (SE-ResNeXt-50 with self-attention and "
                "Mish); the zoo's resnet50d is its ResNet-D skeleton without those; batch 64 "
                "as 2 learners x 32 with S-SGD, so that both cores work")


# fastai's own two Imagenette recipes at 128 px, as the peer trains them
# (scripts/peer/fastai_imagenette.py): random-resized crops of at least 35% of the image and
# flips, evaluated on the image squashed and centre-cropped as fastai's RandomResizedCrop does;
# batch 64, here as 2 learners x 32 with S-SGD. The SMA versions take the small-batch rule's
# rate; the one-cycle keeps its own warm-up.
_FASTAI_DATA = dict(min_crop_area=0.35, eval_crop="squash", input_size=128, num_classes=10)
_FASTAI_BATCH = dict(batch_size=32, learners="2", sync="ssgd")


def _fastai_recipe(name, net, lr, schedule, top1, source, **options):
    sma = small_batch(16, published_lr=lr, published_batch=64)
    if schedule == "one_cycle":
        del sma["warmup"], sma["warmup_start"]
    return Recipe(name=name, net=net, dataset="imagenette", source=source, published_top1=top1,
                  epochs=5, drops=(), warmup=0.0, fastai=schedule,
                  published=dict(_FASTAI_DATA, **options, **_FASTAI_BATCH, lr=lr),
                  sma=dict(_FASTAI_DATA, **options, **sma),
                  notes="batch 64 as 2 learners x 32 with S-SGD, so that both cores work")


_BOT = dict(momentum=0.9, nesterov=True, weight_decay=1e-4, bias_decay=False,
            label_smoothing=0.1, mixup_alpha=0.2, input_size=128, num_classes=10)


def _fastai(epochs, top1, net="resnet50d", **net_options):
    return Recipe(
        name=f"fastai-imagenette-{epochs}ep", net=net, dataset="imagenette",
        source=f"fastai's Imagenette leaderboard, 128 px, {epochs} epochs",
        published_top1=top1, epochs=epochs, drops=(), flat=0.75, warmup=0.0,
        published=dict(_FASTAI, batch_size=32, **net_options),
        sma=dict(_FASTAI, **net_options, **small_batch(16, published_lr=8e-3,
                                                       published_batch=64)),
        notes=_FASTAI_NOTE)


RECIPES = {r.name: r for r in (
    _he("resnet20", 8.75),
    _he("resnet32", 7.51),
    _he("resnet56", 6.97),
    # "0.01 until the training error is below 80% (about 400 iterations), then 0.1": a
    # linear warm-up from 0.01 over the first 400 iterations stands in for it.
    dataclasses.replace(_he("resnet110", 6.43), warmup=400 / 64000),
    Recipe(name="vgg16-cifar", net="vgg16", dataset="cifar10",
           source="VGG-16 with batch norm on CIFAR-10, He et al.'s schedule (commonly "
                  "reported ~93.5%)",
           published_top1=0.935, epochs=_HE_EPOCHS, drops=(32 / 64, 48 / 64), warmup=0.0,
           published=dict(_HE, weight_decay=5e-4),
           sma=_sma(0.1, 128, momentum=0.9, weight_decay=5e-4), notes=_BATCH_NOTE),
    # Goyal et al. 2017: lr 0.1 x batch/256, 5 warm-up epochs, /10 at 30, 60 and 80 of 90
    # epochs, weight decay 1e-4, the last batch norm of each residual block starting at scale 0
    # (their appendix); applied to Imagenette at 128 px (no published figure). The SMA version
    # starts those at 1: at batch 16 over 20 epochs the zero start ended lower
    # (docs/reproduction.md, goyal-resnet18-imagenette-sma-20ep-crop035-ls01-zero).
    *(Recipe(name=f"goyal-{net}-imagenette", net=net, dataset="imagenette",
             source="Goyal et al. 2017, Accurate, Large Minibatch SGD, on Imagenette at 128 px",
             published_top1=0.0, epochs=90, drops=(30 / 90, 60 / 90, 80 / 90),
             warmup=5 / 90,
             published=dict(batch_size=128, learners="2", sync="ssgd", lr=0.1,
                            momentum=0.9, weight_decay=1e-4, zero_init_residual=True,
                            input_size=128, num_classes=10),
             sma=_sma(0.1, 256, momentum=0.9, weight_decay=1e-4, input_size=128,
                      num_classes=10),
             notes="batch 256 as 2 learners x 128 with S-SGD")
      for net in ("resnet18", "resnet50")),
    _fastai(5, 0.8577),
    _fastai(20, 0.9157, net="resnet50d_maxblur"),
    # fastai's nbs/22_tutorial.imagenette.ipynb: xresnet34, Adam, fit_one_cycle(5, 1e-3).
    _fastai_recipe("fastai-tutorial", "xresnet34", 1e-3, "one_cycle", 0.767,
                   "fastai's Imagenette tutorial (nbs/22_tutorial.imagenette.ipynb), 128 px",
                   **FASTAI_ADAM),
    # The Imagenette leaderboard's recipe: xse_resnext50 (Mish, one self-attention layer),
    # ranger, fit_flat_cos(lr 8e-3, wd 1e-2), label smoothing 0.1; its 128-px 5-epoch record,
    # 87.43%, is its Resize(128), batch-32 form on imagenette2-320.
    _fastai_recipe("fastai-record", "xse_resnext50_mish_sa", 8e-3, "flat_cos", 0.8743,
                   "fastai's Imagenette leaderboard recipe (xse_resnext50, Mish, sa=1, "
                   "ranger, flat-cos), 128 px, 5 epochs", label_smoothing=0.1, **FASTAI_RANGER),
    # He et al. 2019 (Bag of Tricks), Table 6: ResNet-50-D with cosine decay, label smoothing
    # 0.1 and mixup (alpha 0.2, 200 epochs), 79.15% on ImageNet; their "efficient" training:
    # lr 0.1 x batch/256 (0.4 at 1024), 5 warm-up epochs, Nesterov momentum 0.9, weight decay
    # 1e-4 off biases and batch norms, the last batch norm of each residual block at scale 0.
    # Run here on Imagenette at 128 px (no published figure for it).
    Recipe(name="bot-resnet50d-imagenette", net="resnet50d", dataset="imagenette",
           source="He et al. 2019, Bag of Tricks, Table 6 (ResNet-50-D, cosine, label "
                  "smoothing, mixup), on Imagenette at 128 px",
           published_top1=0.0, epochs=200, drops=(), warmup=5 / 200, cosine=True,
           published=dict(_BOT, batch_size=128, learners="2", sync="ssgd", lr=0.1,
                          zero_init_residual=True),
           sma=dict(_BOT, **small_batch(16, published_lr=0.1, published_batch=256)),
           notes="batch 256 (their linear rule's base: lr 0.1) as 2 learners x 128 with S-SGD, "
                 "rather than their 1,024 over 8 GPUs; the SMA version starts the residual "
                 "batch norms at 1, as Goyal's does"),
)}


def _unknown(what, name, known):
    return f"unknown {what} '{name}'{did_you_mean(name, known)} ({what}s: {', '.join(known)})"


def get(name):
    """The recipe called `name`; ValueError with a did-you-mean otherwise."""
    if name not in RECIPES:
        raise ValueError(_unknown("recipe", name, list(RECIPES)))
    return RECIPES[name]
