"""The hosts of a launch: parsed from ``--hosts`` or from what ``--host-discovery`` prints
(Horovod's convention: one ``host`` or ``host:slots`` a line), and probed before each start:
mpirun starts one process on each, which must see the marker that the supervisor wrote into
the checkpoint folder (a folder every host shares)."""
import os
import subprocess
import sys
import tempfile
import time
import typing


class LaunchError(Exception):
    """A fault that ends the launch, with a message naming the host, rank or flag."""


class Host(typing.NamedTuple):
    name: str
    slots: int  # ranks it runs

    def __str__(self):
        return f"{self.name}:{self.slots}"


def parse(words, where):
    """Hosts from "name" or "name:slots" words (empty ones skipped); LaunchError naming
    `where` and the word for a bad one, or for a host named twice."""
    hosts = []
    for word in (w.strip() for w in words):
        if not word:
            continue
        name, _, slots = word.partition(":")
        if not name or (slots and not (slots.isdigit() and int(slots) > 0)):
            raise LaunchError(f"{where}: '{word}' is not a host (NAME or NAME:SLOTS, SLOTS > 0)")
        if any(h.name == name for h in hosts):
            raise LaunchError(f"{where}: host '{name}' is named twice")
        hosts.append(Host(name, int(slots or 1)))
    return hosts


def parse_list(text):
    """The hosts of --hosts ("a:2,b,c"); LaunchError if it names none."""
    hosts = parse(text.split(","), "--hosts")
    if not hosts:
        raise LaunchError(f"--hosts '{text}' names no host")
    return hosts


def discover(command, timeout_s):
    """The hosts that `command` (a shell command) prints; LaunchError when it fails, times out
    or prints none."""
    try:
        p = subprocess.run(command, shell=True, capture_output=True, text=True, timeout=timeout_s)
    except subprocess.TimeoutExpired:
        raise LaunchError(f"host discovery '{command}' did not finish in {timeout_s:g} s") \
            from None
    if p.returncode != 0:
        said = _first_line(p.stderr) or _first_line(p.stdout)
        raise LaunchError(f"host discovery '{command}' failed (exit {p.returncode})"
                          + (f": {said}" if said else ""))
    hosts = parse(p.stdout.splitlines(), f"host discovery '{command}'")
    if not hosts:
        raise LaunchError(f"host discovery '{command}' printed no hosts")
    return hosts


# Run on each host by its probe: exit 0 where the marker holds the token, 3 where it does not.
_PROBE = ("import sys\n"
          "try:\n"
          "    seen = open(sys.argv[1]).read()\n"
          "except OSError:\n"
          "    seen = None\n"
          "sys.exit(0 if seen == sys.argv[2] else 3)\n")
_NOT_SHARED = 3


def write_marker(path, token):
    temporary = path + ".tmp"
    with open(temporary, "w") as f:
        f.write(token)
    os.replace(temporary, path)


def probe(hosts, mpirun, marker, token, timeout_s, shared):
    """{host name: None where it is usable, else why not} from one process started on each
    host (in parallel). LaunchError where a host sees another checkpoint folder than this
    machine's (`shared`, the folder holding the marker): a run whose ranks do not share it
    cannot restart."""
    # Each mpirun keeps its temporary files (orte_tmpdir_base) in a folder of its own: mpiruns
    # started together on one machine can collide on the default one.
    with tempfile.TemporaryDirectory(prefix="crossbow-probe-") as folders:
        return _probe(hosts, mpirun, marker, token, timeout_s, shared, folders)


def _probe(hosts, mpirun, marker, token, timeout_s, shared, folders):
    started = {}
    try:
        for h in hosts:
            tmpdir = os.path.join(folders, h.name)
            os.makedirs(tmpdir)
            started[h.name] = subprocess.Popen(
                mpirun + ["--mca", "orte_tmpdir_base", tmpdir, "--host", f"{h.name}:1", "-np",
                          "1", sys.executable, "-c", _PROBE, marker, token],
                stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                start_new_session=True)
        deadline = time.monotonic() + timeout_s
        return {name: _answer(name, p, deadline, timeout_s, marker, shared)
                for name, p in started.items()}
    finally:
        for p in started.values():
            if p.poll() is None:
                end_group(p)


def _answer(name, p, deadline, timeout_s, marker, shared):
    """None where host `name`'s probe `p` found the marker, else why it did not."""
    try:
        output, _ = p.communicate(timeout=max(0.1, deadline - time.monotonic()))
    except subprocess.TimeoutExpired:
        end_group(p)
        return f"no process started there in {timeout_s:g} s"
    if p.returncode == _NOT_SHARED:
        raise LaunchError(
            f"host {name} does not see the checkpoint folder '{shared}' as this machine "
            f"does (the marker {os.path.relpath(marker, shared)} is missing or older "
            "there): put the folder on a file system every host shares")
    return None if p.returncode == 0 else (
        f"mpirun could not start a process there (exit {p.returncode}): "
        f"{_first_line(output) or 'no output'}")


def end_group(p, grace_s=5.0):
    """Ends process `p` (started with start_new_session) and everything in its process group:
    SIGTERM, then SIGKILL after `grace_s`; leaves no process of the group behind."""
    import signal
    for sig, wait_s in ((signal.SIGTERM, grace_s), (signal.SIGKILL, 5.0)):
        try:
            os.killpg(p.pid, sig)
        except ProcessLookupError:
            pass
        try:
            p.wait(timeout=wait_s)
            break
        except subprocess.TimeoutExpired:
            continue
    try:
        os.killpg(p.pid, signal.SIGKILL)  # what outlived the leader
    except ProcessLookupError:
        pass


def _first_line(text):
    return next((line.strip() for line in (text or "").splitlines()
                 if line.strip() and not line.startswith("---")), "")
