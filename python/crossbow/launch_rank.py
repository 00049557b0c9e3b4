"""One rank of a launched job: ``python -m crossbow.launch_rank DIR -- COMMAND...``, started
by mpirun in the place of the trainer. It runs COMMAND (``crossbow train ...``) as its child and
writes how the child ended into DIR/rank<R>.exit, so that the supervisor tells a rank that
failed by itself from one that the job's end took with it (mpirun's SIGTERM reached it first):
    {"rank": R, "code": exit status or -signal, "ended_by_job": bool}
The child dies with this process (PR_SET_PDEATHSIG), so that a rank killed here leaves no
trainer behind."""
import ctypes
import json
import os
import signal
import subprocess
import sys
import time

# After the job's SIGTERM, how long the trainer may take to stop (it writes a checkpoint if
# every rank gets there) before it is killed.
STOP_GRACE_S = 10.0


def exit_path(folder, rank):
    return os.path.join(folder, f"rank{rank}.exit")


def _die_with_parent():
    try:
        ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG
    except (OSError, AttributeError):
        pass  # not Linux: the supervisor ends the process group instead


def _write(path, record):
    temporary = path + ".tmp"
    with open(temporary, "w") as f:
        f.write(json.dumps(record) + "\n")
    os.replace(temporary, path)


def main(argv):
    folder, separator, command = argv[0], argv[1], argv[2:]
    if separator != "--" or not command:
        print("usage: python -m crossbow.launch_rank DIR -- COMMAND...", file=sys.stderr)
        return 2
    from crossbow import world
    path = exit_path(folder, world.rank())
    child = subprocess.Popen(command, preexec_fn=_die_with_parent)
    stopping = []  # when the job's end came

    def on_stop(signum, _frame):
        if child.poll() is not None or stopping:
            return  # the child had ended by itself: that is how it ended
        stopping.append(time.monotonic())
        _write(path, {"rank": world.rank(), "code": -signum, "ended_by_job": True})
        for sig in (signal.SIGCONT, signum):  # a stopped trainer must run to hear it
            child.send_signal(sig)

    for sig in (signal.SIGTERM, signal.SIGINT):
        signal.signal(sig, on_stop)
    while True:
        try:
            code = child.wait(timeout=0.2)
            break
        except subprocess.TimeoutExpired:
            if stopping and time.monotonic() - stopping[0] > STOP_GRACE_S:
                child.kill()
    _write(path, {"rank": world.rank(), "code": code, "ended_by_job": bool(stopping)})
    return 128 - code if code < 0 else code


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
