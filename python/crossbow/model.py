"""Model: one learner built from a ModelBuilder, fed and fetched with numpy arrays.

Inputs are checked here, before C++ sees them: images float32, C-contiguous, shaped
(N, C, H, W) as the builder's input; labels integers in [0, classes), one per image.
Nothing is converted silently except integer labels to int32.
"""
import json
import os

import numpy as np

from crossbow import _native, onnx_export, weights
from crossbow.names import did_you_mean


def check_images(images, input_shape, what="images"):
    """Returns ``images`` if it is a float32, C-contiguous (N, *input_shape) array."""
    expected = "(N, " + ", ".join(map(str, input_shape)) + ")"
    if not isinstance(images, np.ndarray):
        raise TypeError(f"{what}: expected a numpy.ndarray of float32 with shape {expected}, "
                        f"got {type(images).__name__}")
    if images.dtype != np.float32:
        raise TypeError(f"{what}: expected dtype float32, got {images.dtype} (shape "
                        f"{images.shape}); convert with images.astype(np.float32)")
    if images.ndim != 4 or tuple(images.shape[1:]) != tuple(input_shape):
        raise ValueError(f"{what}: expected shape {expected}, got {images.shape}")
    if images.shape[0] == 0:
        raise ValueError(f"{what}: the batch is empty (shape {images.shape})")
    if not images.flags.c_contiguous:
        raise ValueError(f"{what}: expected a C-contiguous array, got strides {images.strides} "
                         f"for shape {images.shape}; use np.ascontiguousarray(images)")
    return images


def check_labels(labels, n, num_classes=None):
    """Returns the labels as a contiguous int32 array of length n, or raises."""
    if not isinstance(labels, np.ndarray):
        raise TypeError(f"labels: expected a numpy.ndarray of int32 with shape ({n},), "
                        f"got {type(labels).__name__}")
    if not np.issubdtype(labels.dtype, np.integer):
        raise TypeError(f"labels: expected an integer dtype (int32), got {labels.dtype} "
                        f"(shape {labels.shape})")
    if labels.shape != (n,):
        raise ValueError(f"labels: expected shape ({n},), one per image, got {labels.shape}")
    hi = np.iinfo(np.int32).max if num_classes is None else num_classes - 1
    if n and (labels.min() < 0 or labels.max() > hi):
        bad = labels[(labels < 0) | (labels > hi)][0]
        raise ValueError(f"labels: expected values in [0, {hi}], found {bad}")
    return np.ascontiguousarray(labels, dtype=np.int32)


class Model:
    """A builder's net compiled into one C++ learner (created on first use)."""

    def __init__(self, builder, **options):
        """``options``: ModelBuilder.to_spec's (lr, momentum, weight_decay, nesterov, seed,
        threads, device, precision, label_smoothing, bias_decay and the optimiser's), with its
        defaults: where None, the option table's library default, which leaves out weight decay
        unless asked."""
        self.builder = builder
        self.spec = builder.to_spec(**options)
        self.input_shape = tuple(builder.input_shape)
        self.num_classes = builder.num_classes
        self._learner = None

    @property
    def learner(self):
        """The ``_C.Learner``; compiled and initialised on first access."""
        if self._learner is None:
            self._learner = _native.load().Learner(json.dumps(self.spec))
        return self._learner

    def _labels(self, labels, n):
        return check_labels(labels, n, self.num_classes)

    def step(self, images, labels):
        """One forward, backward and update on a batch; returns the loss."""
        images = check_images(images, self.input_shape)
        labels = self._labels(labels, images.shape[0])
        return float(self.learner.step(images, labels))

    def predict(self, images, batch_size=None):
        """The output blob (class probabilities) in inference mode, [N, classes]."""
        images = check_images(images, self.input_shape)
        if batch_size is None or batch_size >= images.shape[0]:
            return self.learner.predict(images)
        return np.concatenate([self.learner.predict(b) for b in _batches(images, batch_size)])

    def forward(self, images, outputs=None, labels=None):
        """Runs the net forward in inference mode and returns {name: numpy array} of ``outputs``
        (default: the output blob): any blob of the net, e.g. an intermediate activation, which
        the run keeps out of shared buffers and unfused. With ``labels`` the loss layer runs
        too (its loss blob can be fetched). Model.fetch reads them until the next forward."""
        images = check_images(images, self.input_shape)
        if outputs is None:
            outputs = [self.builder.output]
        if isinstance(outputs, str) or not all(isinstance(o, str) for o in outputs):
            raise TypeError(f"outputs: expected a list of blob names, got {outputs!r}")
        if labels is not None:
            labels = self._labels(labels, images.shape[0])
        fetched = self.learner.forward(images, set(outputs), labels)
        return {name: fetched[name] for name in outputs}

    def fetch(self, name):
        """A blob's value now as a numpy array: a parameter or state blob, an output of the
        last forward, or a gradient (gradient_name) after a step. A ValueError names the blob
        and lists those that can be fetched."""
        if not isinstance(name, str):
            raise TypeError(f"fetch: expected a blob name, got {type(name).__name__}")
        return self.learner.fetch(name)

    def gradient_name(self, param):
        """The blob that holds ``param``'s gradient after a step (Model.fetch reads it)."""
        names = self.learner.gradient_names()
        if param not in names:
            raise KeyError(f"'{param}' is not a parameter of model '{self.builder.name}'"
                           f"{did_you_mean(param, names)}")
        return names[param]

    def evaluate(self, images, labels, batch_size=100):
        """Loss, top-1 and top-5 accuracy over whole arrays, in batches, inference mode."""
        images = check_images(images, self.input_shape)
        labels = self._labels(labels, images.shape[0])
        totals, n = np.zeros(3), 0
        for x, y in zip(_batches(images, batch_size), _batches(labels, batch_size)):
            totals += len(x) * np.asarray(self.learner.evaluate(x, y), dtype=np.float64)
            n += len(x)
        loss, top1, top5 = totals / n
        return {"loss": float(loss), "top1": float(top1), "top5": float(top5)}

    def set_learning_rate(self, lr):
        lr = float(lr)
        if not lr >= 0:
            raise ValueError(f"learning rate must be >= 0, got {lr}")
        self.spec["solver"]["lr"] = lr
        if self._learner is not None:
            self._learner.set_learning_rate(lr)

    def _blob(self, name):
        known = self.builder.params + self.builder.state
        if name not in known:
            raise KeyError(f"'{name}' is not a parameter or state blob of model "
                           f"'{self.builder.name}'{did_you_mean(name, known)}")
        return self.builder.shapes[name]

    def param_names(self):
        return list(self.builder.params)

    def get_param(self, name):
        self._blob(name)
        return self.learner.get(name)

    def set_param(self, name, value):
        shape = self._blob(name)
        if not isinstance(value, np.ndarray) or value.dtype != np.float32:
            given = getattr(value, "dtype", type(value).__name__)
            raise TypeError(f"{name}: expected a float32 numpy array, got {given}")
        if tuple(value.shape) != tuple(shape):
            raise ValueError(f"{name}: expected shape {tuple(shape)}, got {value.shape}")
        self.learner.set(name, np.ascontiguousarray(value))

    def save(self, path):
        """Writes all parameters and state to one binary file (atomically)."""
        self.learner.save(os.fspath(path))

    def load(self, path):
        path = os.fspath(path)
        if not os.path.isfile(path):
            raise FileNotFoundError(f"no checkpoint at '{path}'")
        self.learner.load(path)

    def load_weights(self, path):
        """Sets every parameter and state blob from a training checkpoint's average model z
        (a file or a checkpoint folder) or a Model.save file, each blob checked against the
        net; returns the Model. ``crossbow.nets.build("resnet20").load_weights("ckpt")``."""
        return weights.into_model(self, weights.read(path, self.builder))

    def export_onnx(self, path, input_size=None):
        """Writes this model's inference graph and weights as ONNX (opset 17, batch dynamic);
        ``input_size`` sets the image height and width (default: the net's). Returns path."""
        return onnx_export.export(self.builder, weights.of_model(self), os.fspath(path),
                                  input_size)

    def memory_stats(self):
        return dict(self.learner.memory_stats())

    def num_params(self):
        return self.builder.num_params()

    def summary(self):
        return self.builder.summary()

    def __repr__(self):
        s = self.spec["solver"]
        return (f"Model({self.builder.name!r}, params={self.num_params():,}, lr={s['lr']}, "
                f"momentum={s['momentum']}, weight_decay={s['weight_decay']})")


def _batches(array, batch_size):
    if batch_size < 1:
        raise ValueError(f"batch_size must be >= 1, got {batch_size}")
    return [array[i:i + batch_size] for i in range(0, len(array), batch_size)]
