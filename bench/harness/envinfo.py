"""bench/harness/envinfo.py — the environment record every row carries, so
rows measured on different machines can be merged and still told apart:
CPU model, core counts, the CPUs the sweep was pinned to, OS, Python and
package versions, every compiler's version and every vendor package's
(bench/requirements-vendors.txt; read from package metadata, so no vendor
is imported just to ask), and ncc's version, binary, build type
(an ASan build is slow and says so) and the git commit of the source tree.
Also applies the thread count: one number for every compiler.
"""
import datetime
import importlib.metadata
import os
import platform
import re
import socket
import subprocess

from . import adapters
from .nccbin import SRC

# Thread-count variables every runtime in the sweep might read.
THREAD_ENV = ("NCC_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS",
              "OPENBLAS_NUM_THREADS", "TVM_NUM_THREADS", "NUMEXPR_NUM_THREADS",
              "VECLIB_MAXIMUM_THREADS")


def apply_threads(threads, pin):
    """Set the thread variables (before any vendor is imported) and, with
    pin, restrict this process and its children to `threads` CPUs, which
    caps every runtime alike whatever its own knobs do.  Returns the CPUs
    pinned to, or None."""
    for v in THREAD_ENV:
        os.environ[v] = str(threads)
    flags = os.environ.get("XLA_FLAGS", "")
    if threads == 1 and "xla_cpu_multi_thread_eigen" not in flags:
        os.environ["XLA_FLAGS"] = (flags + " --xla_cpu_multi_thread_eigen=false").strip()
    if not pin or not hasattr(os, "sched_setaffinity"):
        return None
    cpus = sorted(os.sched_getaffinity(0))
    chosen = cpus[:threads] if threads <= len(cpus) else cpus
    os.sched_setaffinity(0, chosen)
    return chosen


def cpu_model():
    try:
        for line in open("/proc/cpuinfo", encoding="utf-8", errors="replace"):
            if line.startswith("model name") or line.startswith("Model"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def physical_cores():
    seen = set()
    try:
        phys = core = None
        for line in open("/proc/cpuinfo", encoding="utf-8", errors="replace"):
            if line.startswith("physical id"):
                phys = line.split(":", 1)[1].strip()
            elif line.startswith("core id"):
                core = line.split(":", 1)[1].strip()
            elif not line.strip():
                if core is not None:
                    seen.add((phys, core))
                phys = core = None
    except OSError:
        return None
    return len(seen) or None


def git_commit(root=SRC):
    def git(*args):
        try:
            p = subprocess.run(["git", "-C", root] + list(args), stdout=subprocess.PIPE,
                               stderr=subprocess.DEVNULL, timeout=20)
            return p.stdout.decode().strip() if p.returncode == 0 else None
        except (OSError, subprocess.TimeoutExpired):
            return None
    commit = git("rev-parse", "HEAD")
    dirty = git("status", "--porcelain", "--untracked-files=no")
    return commit, (bool(dirty) if dirty is not None else None)


def _dist_version(dist):
    try:
        return importlib.metadata.version(dist)
    except importlib.metadata.PackageNotFoundError:
        return None


def compiler_versions():
    """{compiler: version} of every vendor adapter, as the adapter spells it
    (xla: "jax V (jaxlib V)", iree: "V (runtime V)"), None when not
    installed.  Read from package metadata: nothing is imported."""
    out = {}
    for name in adapters.names():
        if name == "ncc":
            continue
        try:
            cls = adapters.adapter_class(name)
            v = cls.version(cls.__new__(cls)) if cls.dist else None
            out[name] = v if v and _dist_version(cls.dist) else None
        except Exception:
            out[name] = None
    return out


def _vendor_dists():
    """The distributions of bench/requirements-vendors.txt, in file order."""
    path = os.path.join(SRC, "bench", "requirements-vendors.txt")
    names = []
    try:
        for line in open(path, encoding="utf-8"):
            m = re.match(r"\s*([A-Za-z0-9][A-Za-z0-9._-]*)", line.split("#", 1)[0])
            if m and m.group(1) not in names:
                names.append(m.group(1))
    except OSError:
        pass
    return names or list(VENDOR_DISTS)


# The vendor packages when bench/requirements-vendors.txt cannot be read.
VENDOR_DISTS = ("onnxruntime", "openvino", "jax", "jaxlib", "apache-tvm", "iree-base-compiler",
                "iree-base-runtime", "torch", "onnx2torch")


def vendor_packages():
    """{distribution: version or None} of every vendor package the set-up
    installs (bench/requirements-vendors.txt): what a row was measured with,
    including the packages no adapter names (jaxlib, iree's runtime)."""
    return {d: _dist_version(d) for d in _vendor_dists()}


def collect(ncc, threads, pinned):
    commit, dirty = git_commit()
    ncc_rec = {"path": None, "version": None, "commit": commit, "dirty": dirty, "build": {}}
    if ncc is not None:
        ncc_rec.update(path=ncc.path, version=ncc.version(), build=ncc.build_info())
    return {
        "hostname": socket.gethostname(),
        "cpu_model": cpu_model(),
        "cores": os.cpu_count(),
        "physical_cores": physical_cores(),
        "pinned_cpus": pinned,
        "threads": threads,
        "os": platform.platform(),
        "python": platform.python_version(),
        "numpy": _dist_version("numpy"),
        "onnx": _dist_version("onnx"),
        "compilers": compiler_versions(),
        "vendor_packages": vendor_packages(),
        "ncc": ncc_rec,
        "thread_env": {v: os.environ.get(v) for v in THREAD_ENV + ("XLA_FLAGS",)},
    }


def now_utc():
    return datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")
