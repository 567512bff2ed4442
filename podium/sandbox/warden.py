"""The warden: a small process that outlives a killed Podium just long enough to kill every
bwrap (and kernel) Podium left, whenever it was killed.

Each layer before it leaves one instant open, inside bubblewrap, where Podium's death is
missed (``lifeline.py`` says why the parent-death signal misses the sandbox's init): between
bwrap's clone of the sandbox's init and the moment it lets the init go on (an eventfd the
outer bwrap writes), a Podium that dies takes the outer bwrap with it, and the init, orphaned,
then waits on that eventfd for ever; no kernel ever starts in it, so nothing inside the
sandbox can notice. Only a process outside can, and only one that is not tied to Podium's
life by a signal that can be missed.

So the first bwrap a process starts first starts the warden: a child in a session of its own
(a terminal's Ctrl-C is Podium's to handle), with no parent-death signal, holding the read end
of a pipe whose write end only Podium holds (close-on-exec). It blocks reading it; the read
returns once Podium is gone (killed, or simply exited), and the warden then SIGKILLs every
process whose argv holds this Podium's ipc prefix (``ipc.process_prefix``: its pid and a
random token), which every bwrap it started and every cold kernel has (their binds, their
connection files) and nothing else has; it scans again until a few scans in a row find none
(a process killed between its clone and the scan shows up in the next one), and exits. A
Podium that exits normally has killed everything already: the warden finds nothing and exits
within a tenth of a second.

A kernel kept across cells is frozen by its cgroup's freezer while the model takes its turn,
for seconds to minutes, and cgroup v1 holds a frozen process's signals, SIGKILL included,
until it is thawed: killed then, it would stay, frozen, holding its memory. So each scan also
thaws this Podium's kernel groups (``podium-<its pid>-*``, beside the group the warden was
started in, which is Podium's), and the processes killed in them die.
"""

from __future__ import annotations

import os
import subprocess
import sys

from podium.sandbox.cgroups import group_prefix
from podium.sandbox.ipc import ipc_root, process_prefix

# Run by the host's interpreter, isolated (-I -S: nothing of the current directory or of the
# site is imported): argv is the lifeline's descriptor, the marker and Podium's cgroup prefix.
SWEEP = r"""
import os, signal, sys, time
fd, marker, groups = int(sys.argv[1]), sys.argv[2].encode(), sys.argv[3]
for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
    signal.signal(sig, signal.SIG_IGN)
try:
    os.read(fd, 1)
except OSError:
    pass
me = os.getpid()

def sweep():
    found = 0
    for name in os.listdir('/proc'):
        if not name.isdigit() or int(name) == me:
            continue
        try:
            with open('/proc/' + name + '/cmdline', 'rb') as f:
                argv = f.read()
        except OSError:
            continue
        if marker in argv:  # a zombie's argv is empty: only the living count
            found += 1
            try:
                os.kill(int(name), signal.SIGKILL)
            except OSError:
                pass
    return found

def freezers():
    # (the file that thaws it, the value) of each of Podium's kernel groups: beside its own
    try:
        lines = open('/proc/self/cgroup').read().splitlines()
    except OSError:
        return []
    found = []
    for line in lines:
        _, controllers, path = line.split(':', 2)
        if controllers == '':
            base, knob, value = '/sys/fs/cgroup' + path, 'cgroup.freeze', '0'
        elif 'freezer' in controllers.split(','):
            base, knob, value = '/sys/fs/cgroup/freezer' + path, 'freezer.state', 'THAWED'
        else:
            continue
        try:
            names = os.listdir(base)
        except OSError:
            continue
        found += [(os.path.join(base, n, knob), value) for n in names if n.startswith(groups)]
    return found

def thaw():
    for knob, value in freezers():
        try:
            with open(knob, 'w') as f:
                f.write(value)
        except OSError:
            pass

quiet, deadline = 0, time.monotonic() + 60
while quiet < 3 and time.monotonic() < deadline:
    quiet = 0 if sweep() else quiet + 1
    thaw()  # after the kill: a frozen process dies once thawed
    time.sleep(0.02)
"""

_started: dict[int, subprocess.Popen[bytes]] = {}  # by the pid of the process it watches


def marker() -> str:
    """What the argv of each of this process's bwraps and cold kernels holds."""
    return f"{ipc_root()}/{process_prefix()}"


def ensure_warden() -> None:
    """Start this process's warden unless it runs (once per process: a forked child, whose
    ipc prefix is its own, gets one of its own). Call before starting a bwrap."""
    if os.getpid() in _started:
        return
    watched, podium = os.pipe()  # both close-on-exec: the warden gets its end through pass_fds
    try:
        _started[os.getpid()] = subprocess.Popen(
            [sys.executable, "-I", "-S", "-c", SWEEP, str(watched), marker(), group_prefix()],
            pass_fds=(watched,), start_new_session=True, stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
        )  # fmt: skip
    except BaseException:
        os.close(podium)
        raise
    finally:
        os.close(watched)
    # ``podium`` stays open, unreferenced, until this process is gone: that is the signal.


def warden_pid() -> int | None:
    """This process's warden, None until it has started one (a frozen kernel is safe only while
    a warden would thaw it: ``KernelSandbox.pause``)."""
    started = _started.get(os.getpid())
    return started.pid if started is not None else None
