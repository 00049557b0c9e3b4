"""The machine a run ran on, for its result row (crossbow.reproduce): the CPU model and core
count, the GPU models where nvidia-smi answers, and the start time. Standard library only, so
that a GPU machine without our module (or numpy) runs it as a script on a settings file that
`crossbow reproduce --export` wrote (scripts/gpu/gpu_reproduce.sh):

    python3 python/crossbow/machine.py SETTINGS.json TRAIN_IMAGES > reproduce.json
"""
import json
import os
import platform
import subprocess
import sys
import time


def describe():
    """{"cpu": "MODEL (family F model M), N cores", "gpu": "MODEL[, MODEL]" or None}. The family
    and model tell CPU generations apart where the model name does not (a virtual machine's
    "AMD EPYC" is Zen 3, 4 or 5)."""
    cpu = platform.processor() or "unknown CPU"
    try:
        with open("/proc/cpuinfo") as f:
            fields = dict(line.split(":", 1) for line in f.read().split("\n\n")[0].splitlines()
                          if ":" in line)
        fields = {k.strip(): v.strip() for k, v in fields.items()}
        cpu = fields["model name"]
        if "cpu family" in fields and "model" in fields:
            cpu += f" (family {fields['cpu family']} model {fields['model']})"
    except (OSError, KeyError):
        pass
    gpus = ""
    try:
        out = subprocess.run(["nvidia-smi", "--query-gpu=name", "--format=csv,noheader"],
                             capture_output=True, text=True, timeout=20)
        gpus = ", ".join(sorted(set(out.stdout.split("\n")) - {""})) if out.returncode == 0 \
            else ""
    except (OSError, subprocess.SubprocessError):
        pass
    return {"cpu": f"{cpu}, {len(os.sched_getaffinity(0))} cores", "gpu": gpus or None}


def fill(settings, train_images):
    """`settings` (crossbow.reproduce.run_settings) with this machine, the training set's size
    and the time now as the start."""
    return dict(settings, train_images=int(train_images), machine=describe(),
                started=time.strftime("%Y-%m-%d %H:%M"))


def main(argv):
    if len(argv) != 2:
        print(__doc__.split("\n\n")[-1].strip(), file=sys.stderr)
        return 2
    with open(argv[0]) as f:
        settings = json.load(f)
    print(json.dumps(fill(settings, argv[1]), indent=1, sort_keys=True))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
