"""--eval-crop squash and square, fastai's two evaluation transforms (RandomResizedCrop's
validation path, Resize's centre square), read by the loader from PNG records that Crossbow
and Pillow decode alike, compared pixel for pixel: with the rule written out over Pillow here
(everywhere), and with fastai's own transforms (in the peer's venv)."""
import io

import numpy as np
import pytest

from crossbow import _native

from fastai_peer import reference
from test_data import datum, write_db

Image = pytest.importorskip("PIL.Image", reason="Pillow is not installed")
pytestmark = pytest.mark.skipif(not _native.available(), reason="crossbow._C is not built")

from crossbow.data import ImageDB  # noqa: E402

SIZE = 128
# Landscape, portrait, square, larger, smaller than the squash (152), odd sides.
SHAPES = [(160, 213), (213, 160), (160, 160), (375, 500), (90, 120), (161, 240)]


def photos():
    """Noise over smooth gradients: every pixel differs from its neighbours, the hardest case
    for a resampler to match."""
    rng = np.random.default_rng(7)
    out = []
    for h, w in SHAPES:
        y, x = np.mgrid[0:h, 0:w]
        smooth = np.stack([x * 255 // w, y * 255 // h, (x + y) * 127 // (w + h)], axis=-1)
        out.append(np.clip(smooth + rng.integers(-40, 41, (h, w, 3)), 0, 255).astype(np.uint8))
    return out


def png(pixels):
    out = io.BytesIO()
    Image.fromarray(pixels).save(out, format="PNG")
    return out.getvalue()


def crossbow_crops(tmp_path, eval_crop):
    images = photos()
    db = write_db(tmp_path / f"db_{eval_crop}", [datum(png(p), 0, encoded=True) for p in images])
    data = ImageDB(db, batch_size=len(images), train=False, preset="imagenet", input_size=SIZE,
                   mean=[0, 0, 0], std=[1, 1, 1], eval_crop=eval_crop)
    batch, _ = next(iter(data))
    pixels = np.rint(batch * 255)
    assert np.abs(batch * 255 - pixels).max() < 1e-3  # whole levels: out = pixel / 255
    return pixels.astype(np.uint8).transpose(0, 2, 3, 1)  # NHWC, RGB


def fastai_rule(pixels, eval_crop):
    """fastai.vision.augment at split_idx 1, over Pillow. RandomResizedCrop: the whole image
    resized to size + ceil(size * 0.14 / 8) * 8 (152 for 128), then crop_pad's centre crop.
    Resize (ResizeMethod.Crop): the square of side int(m * size), m = min(w, h) / size, at
    int(0.5 * (w - side)), int(0.5 * (h - side)), resized to size."""
    image = Image.fromarray(pixels)
    w, h = image.size
    if eval_crop == "squash":
        side = SIZE + int(np.ceil(SIZE * 0.14 / 8)) * 8
        corner = (side - SIZE) // 2
        image = image.resize((side, side), Image.BILINEAR)
        return np.asarray(image.crop((corner, corner, corner + SIZE, corner + SIZE)))
    side = int(min(w, h) / SIZE * SIZE)
    left, top = int(0.5 * (w - side)), int(0.5 * (h - side))
    return np.asarray(image.crop((left, top, left + side, top + side)).resize((SIZE, SIZE),
                                                                                Image.BILINEAR))


@pytest.mark.parametrize("eval_crop", ["squash", "square"])
def test_the_crop_is_fastais_rule_over_pillow_pixel_for_pixel(tmp_path, eval_crop):
    got = crossbow_crops(tmp_path, eval_crop)
    for i, pixels in enumerate(photos()):
        np.testing.assert_array_equal(got[i], fastai_rule(pixels, eval_crop),
                                      err_msg=f"{eval_crop}: image {SHAPES[i]}")


@pytest.mark.parametrize("eval_crop", ["squash", "square"])
def test_the_crop_is_fastais_own_pixel_for_pixel(tmp_path, eval_crop):
    paths = []
    for i, pixels in enumerate(photos()):
        paths.append(str(tmp_path / f"{i}.png"))
        Image.fromarray(pixels).save(paths[-1])
    fastai = reference("crops", dict(images=paths, size=SIZE), tmp_path)
    got = crossbow_crops(tmp_path, eval_crop)
    for i, want in enumerate(fastai[eval_crop]):
        np.testing.assert_array_equal(got[i], np.array(want, dtype=np.uint8),
                                      err_msg=f"{eval_crop}: image {SHAPES[i]}")


def test_the_presets_own_evaluation_is_another_crop(tmp_path):
    """The default stays torchvision's (shorter side to 128 / 0.875, centre crop)."""
    assert (crossbow_crops(tmp_path, "preset") != crossbow_crops(tmp_path, "squash")).any()


def test_an_unknown_eval_crop_is_refused_naming_the_choices(tmp_path):
    db = write_db(tmp_path / "db", [datum(png(photos()[0]), 0, encoded=True)])
    with pytest.raises(ValueError, match="unknown eval_crop 'squish'; expected preset, squash or "
                                         "square; did you mean 'squash'"):
        ImageDB(db, batch_size=1, train=False, preset="imagenet", input_size=SIZE,
                eval_crop="squish")
