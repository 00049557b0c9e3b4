"""Writes a folder of CIFAR-10 JPEGs (one sub-folder per class, as the data folder's
cifar10-jpg/train and cifar10-jpg/test) in the official CIFAR-10 binary format, decoded by
Pillow: per image a label byte, then its red, green and blue 32x32 planes. Labels and order are
those of `crossbow convert imageset --by_folder`: sorted class names are labels 0.., the files
of a class in sorted order. For a machine without OpenCV's image codecs, whose
`crossbow_convert cifar10` then makes the LMDB that `crossbow reproduce` trains on elsewhere
(scripts/gpu/gpu_reproduce.sh; tests/python/test_train_tool.py compares the two).

    python3 scripts/datagen/cifar_binary.py cifar10-jpg/train train.bin
"""
import argparse
import os
import sys

SIDE = 32


def classes(root):
    return sorted(d for d in os.listdir(root)
                  if not d.startswith(".") and os.path.isdir(os.path.join(root, d)))


def write(root, out):
    """Writes the records of `root` into `out`; returns how many."""
    from PIL import Image
    names = classes(root)
    if not names:
        raise ValueError(f"{root} has no class folders")
    if len(names) > 256:
        raise ValueError(f"{root} has {len(names)} class folders; a label byte holds 256")
    count = 0
    with open(out + ".partial", "wb") as f:
        for label, name in enumerate(names):
            folder = os.path.join(root, name)
            for file in sorted(os.listdir(folder)):
                if file.startswith("."):
                    continue
                path = os.path.join(folder, file)
                with Image.open(path) as image:
                    if image.size != (SIDE, SIDE):
                        raise ValueError(f"{path} is {image.size[0]}x{image.size[1]}, not "
                                         f"{SIDE}x{SIDE}")
                    rgb = image.convert("RGB")
                planes = b"".join(rgb.getchannel(c).tobytes() for c in range(3))
                f.write(bytes([label]) + planes)
                count += 1
    os.replace(out + ".partial", out)
    return count


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("folder", help="one sub-folder of 32x32 JPEGs per class")
    p.add_argument("output", help="the binary file to write")
    args = p.parse_args(argv)
    try:
        count = write(args.folder, args.output)
    except (OSError, ValueError, ImportError) as e:
        print(f"cifar_binary: {e}", file=sys.stderr)
        return 1
    print(f"wrote {count} records of {len(classes(args.folder))} classes to {args.output}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
