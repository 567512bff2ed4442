"""The kernel factory's own program: run *inside* the factory's sandbox by the solutions' Python.

Standalone on purpose: it imports only the standard library (ipykernel once it runs), because
it runs in ``sandbox.python``, which need not have Podium installed. ``factory.py`` is its host
side; ``send`` and ``receive`` are the protocol of both (one JSON message per SOCK_SEQPACKET
packet, descriptors alongside), imported there.

Two processes of its own, then two per kernel::

    supervisor   subreaper: reaps every orphan; outlives the factory, so a factory that dies
      |          takes no running kernel with it (its pid namespace lives on)
    factory      ipykernel and the pre-imports loaded once; per request, forks K as the pid 1
      |          of a new pid namespace (unshare, fork, setns back) and sends Podium its pidfd
    init  (K)    joins the kernel's cgroup and rlimits, unshares mount/net/ipc/uts/cgroup
      |          namespaces, binds only its own slot, public data and ipc directory, mounts a
      |          fresh /tmp, /dev/shm and read-only /proc, its own /etc/passwd and group,
      |          drops to the kernel's own uid, given in the request (no capability, the
      |          seccomp filter); forks KK; reaps; reports KK's exit status
    kernel (KK)  pid 2, as in a cold bwrap kernel: the IPython kernel on the slot's
                 connection file

Nothing the factory's address space holds is reachable from a kernel except copy-on-write
pages of its own: every descriptor is closed, the staging mounts are detached, and numpy's
global generator is re-seeded.
"""

from __future__ import annotations

import array
import contextlib
import ctypes
import fcntl
import gc
import importlib
import json
import os
import resource
import select
import signal
import socket
import struct
import sys
import tempfile
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

CLONE_NEWNS, CLONE_NEWCGROUP, CLONE_NEWUTS = 0x00020000, 0x02000000, 0x04000000
CLONE_NEWIPC, CLONE_NEWPID, CLONE_NEWNET = 0x08000000, 0x20000000, 0x40000000
MS_RDONLY, MS_NOSUID, MS_NODEV, MS_NOEXEC, MS_REMOUNT = 1, 2, 4, 8, 32
MS_NOATIME, MS_NODIRATIME, MS_BIND, MS_MOVE, MS_REC = 1024, 2048, 4096, 8192, 16384
MS_PRIVATE, MS_RELATIME = 1 << 18, 1 << 21
MNT_DETACH = 2
SIOCGIFFLAGS, SIOCSIFFLAGS, IFF_UP = 0x8913, 0x8914, 0x1
PR_SET_DUMPABLE = 4
PR_SET_SECCOMP, PR_SET_NO_NEW_PRIVS, PR_SET_CHILD_SUBREAPER = 22, 38, 36
SECCOMP_MODE_FILTER = 2
KEYCTL = {"x86_64": 250, "aarch64": 219}
KEYCTL_JOIN_SESSION_KEYRING = 1
CAPSET_V3 = 0x20080522
STAGING = "/tmp/.podium"  # in the factory's /tmp: every kernel's own /tmp covers it
WORKSPACE = "/workspace"
MAX_PACKET = 1 << 20

libc = ctypes.CDLL(None, use_errno=True)
libc.mount.argtypes = [ctypes.c_char_p] * 3 + [ctypes.c_ulong, ctypes.c_char_p]


def _check(result: int, what: str) -> None:
    if result != 0:
        errno = ctypes.get_errno()
        raise OSError(errno, f"{what}: {os.strerror(errno)}")


def mount(source: str | None, target: str, fstype: str | None, flags: int, data: str = "") -> None:
    enc = [None if s is None else s.encode() for s in (source, target, fstype, data or None)]
    _check(libc.mount(enc[0], enc[1], enc[2], flags, enc[3]), f"mount {target}")


def umount(target: str) -> None:
    _check(libc.umount2(target.encode(), MNT_DETACH), f"umount {target}")


def _kept_flags(path: str) -> int:
    """The flags a bind remount must keep (a user namespace locks them)."""
    have = os.statvfs(path).f_flag
    pairs = ((os.ST_NOSUID, MS_NOSUID), (os.ST_NODEV, MS_NODEV), (os.ST_NOEXEC, MS_NOEXEC),
             (os.ST_NOATIME, MS_NOATIME), (os.ST_NODIRATIME, MS_NODIRATIME),
             (os.ST_RELATIME, MS_RELATIME))  # fmt: skip
    return sum(ms for st, ms in pairs if have & st)


def bind(fd: int, target: str, readonly: bool) -> None:
    """Bind the directory ``fd`` names at ``target``, nosuid and nodev as bwrap does."""
    mount(f"/proc/self/fd/{fd}", target, None, MS_BIND | MS_REC)
    extra = MS_RDONLY if readonly else 0
    flags = MS_REMOUNT | MS_BIND | MS_NOSUID | MS_NODEV | extra | _kept_flags(target)
    mount(None, target, None, flags)


def send(sock: socket.socket, message: dict[str, Any], fds: list[int] | None = None) -> None:
    data = json.dumps(message).encode()
    rights = [(socket.SOL_SOCKET, socket.SCM_RIGHTS, array.array("i", fds))] if fds else []
    sock.sendmsg([data], rights)


def receive(sock: socket.socket) -> tuple[dict[str, Any] | None, list[int]]:
    fds = array.array("i")
    data, ancdata, _, _ = sock.recvmsg(MAX_PACKET, socket.CMSG_SPACE(16 * fds.itemsize))
    for level, kind, payload in ancdata:
        if level == socket.SOL_SOCKET and kind == socket.SCM_RIGHTS:
            fds.frombytes(payload[: len(payload) - len(payload) % fds.itemsize])
    return (json.loads(data) if data else None), list(fds)


# --- the factory -----------------------------------------------------------------------------


def learn_kernel_imports() -> list[str]:
    """The modules an IPython kernel imports while it starts, found by starting one in a
    throwaway child: whatever this ipykernel version needs is then loaded before the fork.
    The child inherits what is loaded already, so it is forked after the pre-imports and
    ipykernel's own modules (see ``load``): only what starting a kernel adds is imported
    twice, once by the child and once by the factory."""
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:
        try:
            os.close(read)
            from ipykernel.kernelapp import IPKernelApp
            from jupyter_client.connect import write_connection_file

            where = Path(tempfile.mkdtemp(dir="/tmp"))
            connection, _ = write_connection_file(
                str(where / "k.json"), transport="ipc", ip=str(where / "k")
            )
            IPKernelApp.instance().initialize(["-f", connection, "--IPKernelApp.quiet=True"])  # type: ignore[no-untyped-call]
            os.write(write, json.dumps(sorted(sys.modules)).encode())
        finally:
            os._exit(0)
    os.close(write)
    chunks = []
    while chunk := os.read(read, 1 << 16):
        chunks.append(chunk)
    os.close(read)
    os.waitpid(pid, 0)
    return list(json.loads(b"".join(chunks) or b"[]"))


def load(preimports: list[str]) -> None:
    """Everything a kernel needs, loaded once: the pre-imports and ipykernel's application
    first, then what starting a kernel imports beyond them (learned in a child that shares
    these, so the heavy imports are done once, not once in the child and again here)."""
    preload([*preimports, "ipykernel.kernelapp"])
    preload(learn_kernel_imports())


def preload(modules: list[str]) -> None:
    for name in modules:
        try:
            importlib.import_module(name)
        except BaseException:  # a module that cannot load here is imported by the kernel
            pass


def serve(control: socket.socket, config: dict[str, Any]) -> None:
    """Fork one kernel's init per request, each the pid 1 of a new pid namespace."""
    own_pid_ns = os.open("/proc/self/ns/pid", os.O_RDONLY | os.O_CLOEXEC)
    signal.signal(signal.SIGCHLD, lambda *_: reap_children())
    gc.freeze()  # what is loaded now is never traversed again: no copy-on-write by the GC
    while True:
        try:
            request, fds = receive(control)
        except OSError:
            return
        if request is None:
            return  # the host closed the socket
        reply = fds[0]
        signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGCHLD})  # no reaping before pidfd
        try:
            _check(libc.unshare(CLONE_NEWPID), "unshare")  # for the next child only
            pid = os.fork()
            if pid == 0:
                control.close()
                os.close(own_pid_ns)
                init(request, fds, config)
            _check(libc.setns(own_pid_ns, CLONE_NEWPID), "setns")
            with socket.socket(fileno=reply) as sock:
                send(sock, {"started": True}, [os.pidfd_open(pid)])
        except OSError as exc:
            with contextlib.suppress(OSError), socket.socket(fileno=reply) as sock:
                send(sock, {"error": f"{type(exc).__name__}: {exc}"})
        finally:
            signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGCHLD})
            for fd in fds[1:]:
                os.close(fd)


def reap_children() -> None:
    with contextlib.suppress(ChildProcessError):
        while os.waitpid(-1, os.WNOHANG)[0] > 0:
            pass


# --- one kernel: K (its namespace's init), then KK (the kernel) --------------------------------


def init(request: dict[str, Any], fds: list[int], config: dict[str, Any]) -> None:
    """K: pid 1 of the kernel's pid namespace: isolates itself, forks the kernel, reaps, and
    reports the kernel's exit status as bwrap would. Never returns."""
    code = 127
    reply = socket.socket(fileno=fds[0])
    try:
        signal.signal(signal.SIGCHLD, signal.SIG_DFL)
        signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGCHLD})
        os.setsid()  # a session of its own, which the kernel shares (bwrap --new-session)
        isolate(request, fds[1:], config)
        drop_privileges(request, config)
        kernel = os.fork()
        if kernel == 0:
            reply.close()
            run_kernel(request["connection"], config["kernel_args"])
        status = reap_until(kernel)
        code = os.waitstatus_to_exitcode(status)
        code = 128 - code if code < 0 else code  # killed by a signal: as bwrap reports it
        send(reply, {"exit": code})
    except BaseException as exc:  # said to the host; then the namespace ends
        with contextlib.suppress(OSError):
            send(reply, {"error": f"{type(exc).__name__}: {exc}"})
    finally:
        os._exit(code if 0 <= code < 256 else 1)


def isolate(request: dict[str, Any], cgroup_procs: list[int], config: dict[str, Any]) -> None:
    """The kernel's cgroup and rlimits, then its own namespaces and mounts."""
    for procs in cgroup_procs:  # opened by the host: joined before anything else runs
        os.write(procs, b"0")
        os.close(procs)
    for which, soft, hard in request["rlimits"]:
        resource.setrlimit(which, (soft, hard))
    flags = CLONE_NEWNS | CLONE_NEWNET | CLONE_NEWIPC | CLONE_NEWUTS | CLONE_NEWCGROUP
    _check(libc.unshare(flags), "unshare")
    loopback_up()
    mount(None, "/", None, MS_REC | MS_PRIVATE)
    lay_out(request, config)


def loopback_up() -> None:
    """The new network namespace's ``lo`` up, as bwrap brings it up: nothing else exists."""
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as sock:
        request = struct.pack("16sH14x", b"lo", 0)
        flags = struct.unpack("16sH14x", fcntl.ioctl(sock, SIOCGIFFLAGS, request))[1]
        fcntl.ioctl(sock, SIOCSIFFLAGS, struct.pack("16sH14x", b"lo", flags | IFF_UP))


def lay_out(request: dict[str, Any], config: dict[str, Any]) -> None:
    """Only this kernel's slot, public data and ipc directory; fresh /tmp, /dev/shm, /proc."""
    path = os.O_PATH | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
    staging = Path(STAGING)
    slot = os.open(staging / "slots" / request["slot"], path)
    public = os.open(staging / "input", path)
    ipc = os.open(request["ipc"], path)
    staged = [os.open(staging / name, path) for name in ("slots", "input")]
    staged.append(os.open(staging / Path(__file__).name, os.O_PATH | os.O_NOFOLLOW | os.O_CLOEXEC))
    staged.append(os.open(config["ipc_base"], path))
    old_proc = os.open("/proc", path)
    # The solutions' environment may live in /tmp (a checkout there): bound again over the
    # kernel's own /tmp, read-only, as bwrap binds it over a cold kernel's.
    beneath = [(p, os.open(p, path)) for p in config["python_paths"] if _in_tmpfs(p)]
    bind(slot, WORKSPACE, readonly=False)
    bind(public, f"{WORKSPACE}/input", readonly=True)
    for target, size in (("/tmp", config["tmp_bytes"]), ("/dev/shm", config["shm_bytes"])):
        mount("tmpfs", target, "tmpfs", MS_NOSUID | MS_NODEV, f"size={size},mode=1777")
    own_accounts(request)
    for where, fd in beneath:
        Path(where).mkdir(mode=0o755, parents=True, exist_ok=True)
        bind(fd, where, readonly=True)
        os.close(fd)
    Path(request["ipc"]).mkdir(mode=0o755, parents=True)
    bind(ipc, request["ipc"], readonly=False)
    for fd in staged:  # covered by the new /tmp already; detached, they leave mountinfo too
        umount(f"/proc/self/fd/{fd}")
    for fd in (slot, public, ipc, *staged):
        os.close(fd)
    fresh_proc(old_proc)


def own_accounts(request: dict[str, Any]) -> None:
    """This kernel's /etc/passwd and /etc/group (root and its own user, as bwrap writes a cold
    kernel's), read-only, in place of the factory's: written to a tmpfs of their own, bound,
    and the tmpfs detached (so mount points are as in a cold kernel, and nothing in /tmp)."""
    staging = Path("/tmp/.etc")
    staging.mkdir(0o700)
    mount("tmpfs", str(staging), "tmpfs", MS_NOSUID | MS_NODEV | MS_NOEXEC, "size=64k,mode=755")
    for name in ("passwd", "group"):
        written = staging / name
        written.write_text(request[name])
        written.chmod(0o644)
        umount(f"/etc/{name}")  # the factory's
        fd = os.open(written, os.O_PATH | os.O_NOFOLLOW | os.O_CLOEXEC)
        bind(fd, f"/etc/{name}", readonly=True)
        os.close(fd)
    umount(str(staging))
    staging.rmdir()


def _in_tmpfs(where: str) -> bool:
    return any(where == top or where.startswith(top + "/") for top in ("/tmp", "/dev/shm"))


def fresh_proc(old: int) -> None:
    """A read-only /proc of the new pid namespace in place of the factory's, which is
    detached (a new proc may only be mounted while one is visible, so: mount, detach, move)."""
    staging = Path("/tmp/.proc")
    staging.mkdir(0o700)
    mount("proc", str(staging), "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC)
    umount(f"{staging}/self/fd/{old}")
    os.close(old)
    mount(str(staging), "/proc", None, MS_MOVE)
    mount(None, "/proc", None, MS_REMOUNT | MS_BIND | MS_RDONLY | _kept_flags("/proc"))
    staging.rmdir()
    for sub in ("/proc/bus", "/proc/irq"):  # bwrap covers these read-only: so does the fork
        if Path(sub).is_dir():
            sub_fd = os.open(sub, os.O_PATH | os.O_DIRECTORY | os.O_CLOEXEC)
            bind(sub_fd, sub, readonly=True)
            os.close(sub_fd)


def drop_privileges(request: dict[str, Any], config: dict[str, Any]) -> None:
    """For good: the kernel's uid and gid (its own, from its request), no capability in any
    set, no new privileges, a session keyring of its own, then the seccomp filter (which
    denies what came before)."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)  # pid 1: ignored from inside, like bwrap's
    uid, gid = request["uid"], request["gid"]
    if config["switch"]:
        os.setgroups([])
        os.setresgid(gid, gid, gid)
        os.setresuid(uid, uid, uid)
    header = (ctypes.c_uint32 * 2)(CAPSET_V3, 0)
    _check(libc.capset(header, (ctypes.c_uint32 * 6)()), "capset")
    number = KEYCTL.get(os.uname().machine)
    if number is not None:
        libc.syscall(number, KEYCTL_JOIN_SESSION_KEYRING, None)
    _check(libc.prctl(PR_SET_DUMPABLE, 0, 0, 0, 0), "not dumpable")
    _check(libc.prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0), "no new privileges")
    program = bytes.fromhex(config["seccomp"])
    if program:
        buffer = ctypes.create_string_buffer(program, len(program))

        class Program(ctypes.Structure):
            _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.c_void_p)]

        prog = Program(len(program) // 8, ctypes.addressof(buffer))
        _check(libc.prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, ctypes.byref(prog), 0, 0),
               "seccomp")  # fmt: skip


def reap_until(kernel: int) -> int:
    while True:
        try:
            pid, status = os.wait()
        except InterruptedError:
            continue
        if pid == kernel:
            return status


def run_kernel(connection: str, kernel_args: list[str]) -> None:
    """KK: as a cold kernel would start, from here on. Never returns."""
    try:
        os.closerange(3, 1 << 16)
        libc.prctl(PR_SET_DUMPABLE, 1, 0, 0, 0)  # as after an exec: its own /proc is its own
        signal.signal(signal.SIGCHLD, signal.SIG_DFL)
        signal.signal(signal.SIGINT, signal.default_int_handler)
        os.chdir(WORKSPACE)
        reseed()
        launcher = str(ipykernel_dir().parent / "ipykernel_launcher.py")
        folder = Path(connection).parent
        sys.argv = [launcher, "-f", connection, *(a.format(dir=folder) for a in kernel_args)]
        del sys.path[0]  # the factory's directory; ipykernel_launcher drops its own the same way
        sys.path_importer_cache.clear()
        from ipykernel import kernelapp

        kernelapp.launch_new_instance()
    finally:
        os._exit(1)


def ipykernel_dir() -> Path:
    import ipykernel

    return Path(ipykernel.__file__).parent


def reseed() -> None:
    """Siblings forked from one process share its per-process secrets and generators'
    state: fresh ones each, as a cold kernel draws at start. ``random`` re-seeds itself after
    a fork; numpy's global generator does not; ``multiprocessing``'s authkey (which its
    connections and managers authenticate with) is drawn once, at its import, so a kernel
    could have answered another's challenge. ``secrets``, ``uuid4`` and ``os.urandom`` hold
    no state; the str hash seed is ``PYTHONHASHSEED=0`` in every kernel, cold or forked."""
    numpy = sys.modules.get("numpy.random")
    if numpy is not None:
        numpy.seed()
    tempfile._name_sequence = None  # type: ignore[attr-defined]
    process = sys.modules.get("multiprocessing.process")
    if process is not None:
        process.current_process().authkey = os.urandom(32)


# --- start-up ----------------------------------------------------------------------------------


def supervise() -> None:
    """pid 2: reap everything until nothing is left (the factory and every orphaned K)."""
    while True:
        try:
            os.wait()
        except ChildProcessError:
            os._exit(0)
        except InterruptedError:
            continue


def exit_if_host_goes(bootstrap: socket.socket) -> Callable[[], None]:
    """While the factory loads (seconds), it exits at once if the host closes ``bootstrap``
    (the host sends nothing more on it before ``ready``): a host killed while bwrap laid out
    the sandbox may have left its init orphaned before it armed its parent-death signal, and
    the init ends once the factory has. The returned function ends the watch (before
    ``ready``, after which the host closes its end); a host gone from then on fails the send."""
    stop_read, stop_write = os.pipe()

    def watch() -> None:
        poller = select.poll()
        poller.register(bootstrap.fileno(), select.POLLIN)  # POLLHUP: always reported
        poller.register(stop_read, select.POLLIN)
        if stop_read not in dict(poller.poll()):
            os._exit(1)

    watcher = threading.Thread(target=watch, name="podium-host-watch", daemon=True)
    watcher.start()

    def stop() -> None:
        os.write(stop_write, b"x")
        watcher.join()
        os.close(stop_read)
        os.close(stop_write)

    return stop


def main() -> None:
    """The host's socket reaches every process bwrap starts; the factory's working channel is
    a fresh pair whose one end only the factory holds, so the host sees it go at once."""
    bootstrap = socket.socket(fileno=int(sys.argv[1]))
    config, _ = receive(bootstrap)
    assert config is not None
    _check(libc.prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0), "subreaper")
    factory = os.fork()
    if factory != 0:
        bootstrap.close()
        supervise()
    try:
        loaded = exit_if_host_goes(bootstrap)
        load(config["preimports"])
        loaded()
        control, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        me = os.pidfd_open(os.getpid())
        send(bootstrap, {"ready": True}, [theirs.fileno(), me])
        theirs.close()
        os.close(me)
    except BaseException as exc:
        send(bootstrap, {"error": f"{type(exc).__name__}: {exc}"})
        raise
    bootstrap.close()
    serve(control, config)
    os._exit(0)


if __name__ == "__main__":
    main()
