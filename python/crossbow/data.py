"""Training data from LMDBs of Caffe Datum records.

``ImageDB`` wraps the C++ loader (``crossbow._C.ImageLoader``): reader, decode and augmentation
workers and the batch ring all run in C++. Iterating gives numpy copies, for inspection and
tests; the trainer hands ``ImageDB.source`` to the engine, which takes batches in C++.
"""
import numpy as np

from crossbow import _native


def _floats(values, what):
    if values is None:
        return []
    out = np.asarray(values, dtype=np.float32).ravel()
    if not np.all(np.isfinite(out)):
        raise ValueError(f"{what} must be finite numbers, got {values!r}")
    return out.tolist()


def _jitter(color_jitter):
    """(brightness, contrast, saturation) from None, one number or three."""
    if color_jitter is None:
        return 0.0, 0.0, 0.0
    if np.isscalar(color_jitter):
        return (float(color_jitter),) * 3
    values = tuple(float(v) for v in color_jitter)
    if len(values) != 3:
        raise ValueError("color_jitter is one strength or (brightness, contrast, saturation), "
                         f"got {color_jitter!r}")
    return values


class ImageDB:
    """One LMDB as batches of (images float32 [N, C, H, W], labels int32 [N]).

    Training (``train=True``) shuffles each epoch and augments: random crop of ``crop`` pixels
    after ``pad`` zeros on each side, or with ``random_resized_crop`` torchvision's
    RandomResizedCrop to ``crop``; ``mirror`` (default: on when training), ``color_jitter``.
    Testing takes the centre crop after resizing the shorter side to ``resize``. Pixels are
    ``(value * scale - mean[c]) / std[c]`` (scale 1/255 by default, so mean and std are in
    [0, 1] units as in torchvision), or ``mean_image`` (C x H x W) minus, per pixel.
    Encoded colour images decode to BGR, Caffe's order and that of the raw records
    ``crossbow convert imageset`` writes (``rgb=True`` for torchvision's); ``channels`` 1 or 3
    converts.

    ``reduced_decode`` (default on) decodes a JPEG at 1/2, 1/4 or 1/8 of its size where the
    resize or random-resized crop after it still only shrinks (docs/design/data.md).

    ``preset`` names an input pipeline instead (``cifar``, ``imagenet``, ``mnist``, ``none``:
    a training and an evaluation transform each, owned by the C++ data layer and documented in
    docs/design/data.md) for a net of ``input_size`` pixels a side; ``mean`` and ``std`` may
    override its statistics, the other transform arguments do not go with it.
    ``min_crop_area`` overrides the smallest area fraction of a random-resized crop (0.08, as
    torchvision's ``scale[0]``); a transform without that crop refuses it. ``eval_crop``
    (``squash`` or ``square``, fastai's two evaluation transforms; ``preset``: the transform's
    own) replaces an evaluation transform's resize and centre crop (``crossbow train
    --eval-crop``).

    ``read_order`` (when shuffling): ``random``, ``block`` (contiguous blocks of
    ``block_records`` records, by default about 8 MiB of the DB, shuffled, and the records of 16
    blocks at a time mixed: near-sequential reads for a DB larger than memory) or ``auto``
    (block when the DB is larger than half of memory and its metadata shows its labels
    interleaved: blocks of a DB in label order would fill each batch with a few classes).
    ``block_records`` says what was chosen (0: random).

    Iterating runs through the next epoch. Corrupt records are skipped, logged and counted:
    ``corrupt_records`` is the count of the epoch iterated last. Batches depend on ``seed``
    alone (not on ``workers``).
    """

    def __init__(self, path, batch_size, train=True, crop=None, pad=0, mirror=None, mean=None,
                 std=None, seed=0, workers=1, resize=None, random_resized_crop=False,
                 mean_image=None, scale=1.0 / 255.0, channels=None, rgb=False,
                 color_jitter=None, shuffle=None, num_classes=0, drop_last=False, slots=0,
                 preset=None, input_size=None, min_crop_area=None, reduced_decode=True,
                 read_order="auto", block_records=0, eval_crop="preset"):
        if preset is not None:
            given = [name for name, value in (("crop", crop), ("pad", pad), ("resize", resize),
                                              ("random_resized_crop", random_resized_crop),
                                              ("mirror", mirror), ("channels", channels),
                                              ("rgb", rgb), ("mean_image", mean_image),
                                              ("color_jitter", color_jitter)) if value]
            if given:
                raise ValueError(f"preset '{preset}' sets the transform; {', '.join(given)} "
                                 "cannot go with it (only mean and std can)")
            if not input_size:
                raise ValueError(f"preset '{preset}' needs the net's input_size")
        brightness, contrast, saturation = _jitter(color_jitter)
        self.path = str(path)
        self.source = _native.load().ImageLoader(
            self.path, int(batch_size), train=bool(train), channels=int(channels or 0),
            rgb=bool(rgb), resize=int(resize or 0), crop=int(crop or 0), pad=int(pad),
            random_resized_crop=bool(random_resized_crop),
            mirror=bool(train if mirror is None else mirror), mean=_floats(mean, "mean"),
            std=_floats(std, "std"), mean_image=_floats(mean_image, "mean_image"),
            scale=float(scale), brightness=brightness, contrast=contrast, saturation=saturation,
            shuffle=bool(train if shuffle is None else shuffle), seed=int(seed),
            workers=int(workers), slots=int(slots), num_classes=int(num_classes),
            drop_last=bool(drop_last), preset=preset or "", input_size=int(input_size or 0),
            min_crop_area=float(min_crop_area or 0), reduced_decode=bool(reduced_decode),
            read_order=str(read_order), block_records=int(block_records),
            eval_crop=str(eval_crop))
        self._epoch = None

    def __len__(self):
        """Batches per epoch."""
        return self.source.batches_per_epoch

    def __iter__(self):
        while True:
            images, labels, epoch, _, last = self.source.next_batch()
            self._epoch = epoch
            if len(labels):
                yield images, labels
            if last:
                return

    @property
    def block_records(self):
        """Records per block of the read order; 0 where it is uniformly random."""
        return self.source.block_records

    @property
    def shape(self):
        """(C, H, W) of one example."""
        return tuple(self.source.example_shape)

    @property
    def corrupt_records(self):
        """Records skipped as corrupt in the epoch iterated last (0 before any)."""
        return 0 if self._epoch is None else self.source.corrupt_records(self._epoch)

    def __repr__(self):
        return (f"ImageDB({self.path!r}, batch_size={self.source.batch_size}, "
                f"records={self.source.epoch_size}, shape={self.shape})")
