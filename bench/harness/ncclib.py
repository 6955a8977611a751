"""bench/harness/ncclib.py — libncc in the harness's own process, via ctypes.

Why: the vendors are timed in this process, one Python call per run, with
time.perf_counter around it; `ncc bench` times itself in C, in another
process, writing into preallocated outputs.  Loading libncc here lets ncc
be compiled, checked and timed exactly like a vendor (adapters/ncc.py), and
lets its runs be interleaved with the vendors' in rounds (runner.py).

The library: the build makes libncc.a only, but compiles it position
independent (CMakeLists.txt), so shared_library() links the libncc.a found
beside the ncc binary, whole, into a shared object with the libraries its
ncc.pc lists (LLVM, protobuf-c), once per libncc.a content, under the
sweep's cache directory.  Nothing is compiled: one link, about a second.

It is refused (Unavailable, with the reason; the ncc adapter then falls
back to `ncc bench` in a subprocess) when there is no libncc.a beside the
binary, when the build is a sanitizer build (the ASan or TSan runtime would
have to be loaded first), or when the link or the load fails.

What a compile does mirrors the driver (tools/ncc/cmd_bench.c,
pipeline.c, env.c): ncc_graph_load, the pass pipeline of the flags (-O
level, --passes, --disable-pass) with the target's layout block, then
ncc_module_compile_opts with the thread count, the -O level's compile-speed
tier (NCC_CODEGEN_OPT when set) and NCC_VECTOR_WIDTH / NCC_KERNEL_REUSE when
set, as `ncc` reads them.
"""
import ctypes
import hashlib
import os
import re
import shlex
import subprocess

NCC_MAX_RANK = 8

# ncc_dtype (include/ncc.h) -> numpy dtype name.
DTYPES = {1: "float32", 2: "float16", 3: "float64", 4: "int8", 5: "uint8", 6: "int32",
          7: "int64", 8: "bool", 9: "int16", 10: "uint16", 11: "uint32", 12: "uint64"}
NP_TO_DTYPE = {v: k for k, v in DTYPES.items()}


class Unavailable(Exception):
    """libncc cannot be used in this process; the reason says why."""


class NccLibError(RuntimeError):
    """A libncc call failed: status (the driver's exit code) and message."""

    def __init__(self, status, message):
        RuntimeError.__init__(self, "status %d: %s" % (status, message))
        self.status, self.message = status, message


class Tensor(ctypes.Structure):
    _fields_ = [("dtype", ctypes.c_int), ("rank", ctypes.c_int),
                ("dims", ctypes.c_int64 * NCC_MAX_RANK), ("data", ctypes.c_void_p),
                ("owns_data", ctypes.c_int)]


class ProfileEvent(ctypes.Structure):
    """ncc_profile_event (include/ncc.h)."""
    _fields_ = [("run", ctypes.c_int), ("node", ctypes.c_int), ("thread", ctypes.c_int),
                ("host", ctypes.c_int), ("start_us", ctypes.c_double),
                ("dur_us", ctypes.c_double)]


class NodeInfo(ctypes.Structure):
    """ncc_node_info (include/ncc.h)."""
    _fields_ = [("name", ctypes.c_char_p), ("op", ctypes.c_char_p), ("step", ctypes.c_int),
                ("flops", ctypes.c_double), ("in_bytes", ctypes.c_double),
                ("out_bytes", ctypes.c_double), ("shape", ctypes.c_char * 64)]


def profile_rows(events, infos, kernel_names):
    """The "profile" object of `ncc bench --profile --json` (its contract:
    docs/PROFILING.md) from a module's events, its per-node infos and the
    kernel name of each step (None: a reference kernel); no machine peaks
    here, so peak_* and roofline are None."""
    runs = [e for e in events if e["node"] < 0]
    n_runs = max(1, len(runs))
    acc, order = {}, []
    for e in events:
        if e["node"] < 0 or e["thread"] >= 0:
            continue
        if e["node"] not in acc:
            acc[e["node"]] = {"ms": 0.0, "calls": 0, "host": bool(e["host"])}
            order.append(e["node"])
        acc[e["node"]]["ms"] += e["dur_us"] / 1e3
        acc[e["node"]]["calls"] += 1
    total = sum(a["ms"] for a in acc.values()) / n_runs
    kernels = []
    for step in order:
        a = acc[step]
        members = [i for i, inf in enumerate(infos) if inf["step"] == step]
        ms = a["ms"] / n_runs
        flops = sum(infos[i]["flops"] for i in members)
        nbytes = sum(infos[i]["in_bytes"] + infos[i]["out_bytes"] for i in members)
        name = kernel_names.get(step) or "ref_%d_%s" % (step, infos[step]["op"])
        kernels.append({"name": name, "ops": [infos[i]["op"] for i in members],
                        "nodes": [infos[i]["name"] for i in members],
                        "shapes": [infos[step]["shape"]], "ms": ms,
                        "share": ms / total if total > 0 else 0.0, "calls": a["calls"] / n_runs,
                        "flops": flops, "bytes": nbytes,
                        "gflops": flops / ms / 1e6 if ms > 0 else 0.0,
                        "gbps": nbytes / ms / 1e6 if ms > 0 else 0.0,
                        "roofline": None, "ref": a["host"], "node": step})
    kernels.sort(key=lambda k: -k["ms"])
    return {"runs": len(runs), "total_ms": total,
            "run_ms": sum(e["dur_us"] for e in runs) / 1e3 / n_runs,
            "peak_gflops": None, "peak_gbps": None, "kernels": kernels}


class Options(ctypes.Structure):
    """The leading fields of ncc_options; `_tail` leaves room for fields a
    later libncc appends (ncc_options_init writes its own size)."""
    _fields_ = [("size", ctypes.c_size_t), ("num_threads", ctypes.c_int),
                ("vector_width", ctypes.c_int), ("kernel_reuse", ctypes.c_int),
                ("dump", ctypes.c_uint), ("dump_file", ctypes.c_void_p),
                ("cc", ctypes.c_char_p), ("aarch64_cc", ctypes.c_char_p),
                ("keep_temps", ctypes.c_int), ("max_memory", ctypes.c_size_t),
                ("gpu_test_bad_kernel", ctypes.c_int), ("compile_stats", ctypes.c_void_p),
                ("codegen_level", ctypes.c_int), ("_tail", ctypes.c_char * 1024)]


def _sanitized(build_dir):
    try:
        text = open(os.path.join(build_dir, "CMakeCache.txt"), encoding="utf-8",
                    errors="replace").read()
    except OSError:
        return None
    for key in ("NCC_SANITIZE", "NCC_TSAN"):
        m = re.search(r"^%s:[A-Z]+=(.*)$" % key, text, re.M)
        if m and m.group(1).strip().upper() in ("ON", "1", "TRUE", "YES"):
            return key
    return None


def _link_libs(build_dir):
    """The libraries libncc.a needs, from ncc.pc's Libs.private."""
    try:
        for line in open(os.path.join(build_dir, "ncc.pc"), encoding="utf-8"):
            if line.startswith("Libs.private:"):
                return shlex.split(line.split(":", 1)[1])
    except OSError:
        pass
    return ["-lpthread", "-lm"]


def shared_library(ncc_path, cache_dir):
    """Path of a shared libncc made from the libncc.a beside `ncc_path`
    (linked once per content into cache_dir); raises Unavailable."""
    build_dir = os.path.dirname(os.path.abspath(ncc_path))
    archive = os.path.join(build_dir, "libncc.a")
    if not os.path.isfile(archive):
        raise Unavailable("no libncc.a beside %s" % ncc_path)
    san = _sanitized(build_dir)
    if san:
        raise Unavailable("%s is a sanitizer build (%s)" % (ncc_path, san))
    with open(archive, "rb") as f:
        digest = hashlib.sha1(f.read()).hexdigest()[:16]
    os.makedirs(cache_dir, exist_ok=True)
    out = os.path.join(cache_dir, "libncc-%s.so" % digest)
    if os.path.exists(out):
        return out
    tmp = "%s.%d.tmp" % (out, os.getpid())
    cmd = [os.environ.get("CC") or "cc", "-shared", "-o", tmp, "-Wl,--whole-archive", archive,
           "-Wl,--no-whole-archive"] + _link_libs(build_dir)
    try:
        p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=120)
    except (OSError, subprocess.TimeoutExpired) as e:
        raise Unavailable("linking a shared libncc failed: %s" % e)
    if p.returncode != 0:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        err = p.stderr.decode("utf-8", "replace").strip().splitlines()
        raise Unavailable("linking a shared libncc failed: %s" % (err[0] if err else p.returncode))
    os.replace(tmp, out)
    return out


def _env_int(name, allowed):
    v = os.environ.get(name, "")
    try:
        n = int(v)
    except ValueError:
        return None
    return n if n in allowed else None


class Graph:
    """An ncc_graph owned by Python (freed by free())."""

    def __init__(self, lib, ptr):
        self.lib, self.ptr = lib, ptr

    def free(self):
        if self.ptr:
            self.lib.c.ncc_graph_free(self.ptr)
            self.ptr = None


class Module:
    """A compiled model: its graph (which it borrows), the module, and what
    the compile reported."""

    def __init__(self, lib, graph, ptr, passes, pass_report):
        self.lib, self.graph, self.ptr = lib, graph, ptr
        self.passes, self.pass_report = passes, pass_report
        # the optimized graph up to naming (ir/hash.c): equal hashes, same program
        self.graph_hash = "%016x" % lib.c.ncc_graph_hash(graph.ptr)
        c = lib.c
        self.n_in = c.ncc_graph_num_inputs(graph.ptr)
        self.n_out = c.ncc_graph_num_outputs(graph.ptr)
        self.kernels = c.ncc_module_num_kernels(ptr)
        self.host_kernels = c.ncc_module_num_host_kernels(ptr)
        self.threads = c.ncc_module_num_threads(ptr)

    def input_names(self):
        """The graph's input names, in the order inputs() takes them."""
        return [_name(self.lib.c.ncc_graph_input_name(self.graph.ptr, i))
                for i in range(self.n_in)]

    def output_names(self):
        """The graph's output names, in the order of a run's Outputs."""
        return [_name(self.lib.c.ncc_graph_output_name(self.graph.ptr, i))
                for i in range(self.n_out)]

    def inputs(self, arrays):
        """The arrays as an ncc_tensor array (borrowing their memory; keep
        the returned pair alive while it is used)."""
        import numpy as np
        if len(arrays) != self.n_in:
            raise ValueError("the model has %d inputs, %d given" % (self.n_in, len(arrays)))
        keep = [np.ascontiguousarray(a) for a in arrays]
        arr = (Tensor * max(1, self.n_in))()
        for t, a in zip(arr, keep):
            if a.ndim > NCC_MAX_RANK or a.dtype.name not in NP_TO_DTYPE:
                raise ValueError("input of dtype %s rank %d" % (a.dtype, a.ndim))
            t.dtype, t.rank = NP_TO_DTYPE[a.dtype.name], a.ndim
            for d, n in enumerate(a.shape):
                t.dims[d] = n
            t.data, t.owns_data = a.ctypes.data, 0
        return arr, keep

    def run(self, inputs):
        """One run with outputs the library allocates (fresh, as a vendor's
        run returns new arrays); returns the Outputs (freed when dropped)."""
        out = (Tensor * max(1, self.n_out))()
        st = self.lib.c.ncc_module_run(self.ptr, inputs[0], self.n_in, out, self.n_out)
        if st:
            raise self.lib.error(st)
        return Outputs(self.lib, out, self.n_out)

    def run_into(self, inputs, outputs):
        """One run writing into `outputs` (the Outputs of an earlier run at
        this shape) in place: ncc_module_run_into, what ONNX Runtime's
        IOBinding gives a vendor; returns `outputs`."""
        st = self.lib.c.ncc_module_run_into(self.ptr, inputs[0], self.n_in, outputs.arr,
                                            self.n_out)
        if st:
            raise self.lib.error(st)
        return outputs

    def profile(self, inputs, runs=1):
        """`runs` profiled runs (ncc_module_profile_enable; call it after
        the timed runs, so they are not disturbed) and their per-kernel
        breakdown: the "profile" object of `ncc bench --profile --json`."""
        c = self.lib.c
        self.lib._check(c.ncc_module_profile_enable(self.ptr, 1))
        try:
            for _ in range(runs):
                self.run(inputs)
        finally:
            c.ncc_module_profile_enable(self.ptr, 0)
        n = c.ncc_module_profile_get(self.ptr, None, 0)
        arr = (ProfileEvent * max(1, n))()
        n = min(n, c.ncc_module_profile_get(self.ptr, arr, n))
        events = [{"run": e.run, "node": e.node, "thread": e.thread, "host": e.host,
                   "start_us": e.start_us, "dur_us": e.dur_us} for e in arr[:n]]
        t = inputs[0][0]
        batch = t.dims[0] if self.n_in and t.rank > 0 else 1
        infos, names = [], {}
        for i in range(c.ncc_graph_num_nodes(self.graph.ptr)):
            ni = NodeInfo()
            self.lib._check(c.ncc_module_node_info(self.ptr, i, batch, ctypes.byref(ni)))
            infos.append({"name": _name(ni.name), "op": _name(ni.op), "step": ni.step,
                          "flops": ni.flops, "in_bytes": ni.in_bytes,
                          "out_bytes": ni.out_bytes, "shape": _name(ni.shape)})
            if ni.step == i:
                kname = ctypes.c_char_p()
                c.ncc_module_step_of(self.ptr, i, ctypes.byref(kname))
                names[i] = _name(kname.value) if kname.value else None
        return profile_rows(events, infos, names)

    def free(self):
        if self.ptr:
            self.lib.c.ncc_module_free(self.ptr)
            self.ptr = None
        self.graph.free()


def _name(b):
    return b.decode("utf-8", "replace") if b else ""


class Outputs:
    """The output tensors of one run; their storage is freed with this object."""

    def __init__(self, lib, arr, n):
        self.lib, self.arr, self.n = lib, arr, n

    def numpy(self, i=0):
        import numpy as np
        t = self.arr[i]
        shape = tuple(t.dims[d] for d in range(t.rank))
        dt = np.dtype(DTYPES.get(t.dtype, "float32"))
        count = 1
        for n in shape:
            count *= n
        if count == 0 or not t.data:
            return np.zeros(shape, dt)
        buf = (ctypes.c_char * (count * dt.itemsize)).from_address(t.data)
        return np.frombuffer(buf, dt).reshape(shape).copy()

    def __del__(self):
        for i in range(self.n):
            self.lib.c.ncc_tensor_free(ctypes.byref(self.arr[i]))
        self.n = 0


class NccLib:
    """The loaded library."""

    def __init__(self, path):
        try:
            c = ctypes.CDLL(path)
        except OSError as e:
            raise Unavailable("cannot load %s: %s" % (path, e))
        self.path, self.c = path, c
        vp, i, cp = ctypes.c_void_p, ctypes.c_int, ctypes.c_char_p
        sig = {
            "ncc_error_message": (cp, []),
            "ncc_graph_load": (i, [cp, ctypes.POINTER(vp)]),
            "ncc_graph_free": (None, [vp]),
            "ncc_graph_num_inputs": (i, [vp]),
            "ncc_graph_num_outputs": (i, [vp]),
            "ncc_graph_input_name": (cp, [vp, i]),
            "ncc_graph_output_name": (cp, [vp, i]),
            "ncc_graph_hash": (ctypes.c_uint64, [vp]),
            "ncc_options_init": (None, [ctypes.POINTER(Options)]),
            "ncc_pipeline_new": (i, [i, ctypes.POINTER(vp)]),
            "ncc_pipeline_free": (None, [vp]),
            "ncc_pipeline_set_passes": (i, [vp, cp]),
            "ncc_pipeline_disable": (i, [vp, cp]),
            "ncc_pipeline_check": (i, [vp]),
            "ncc_pipeline_set_precision": (i, [vp, i]),
            "ncc_precision_from_name": (i, [cp]),
            "ncc_pipeline_set_layout_block": (None, [vp, i]),
            "ncc_target_layout_block": (i, [cp]),
            "ncc_pipeline_set_stats_batch": (None, [vp, ctypes.c_int64]),
            "ncc_pipeline_set_time_passes": (None, [vp, i]),
            "ncc_pipeline_run": (i, [vp, vp]),
            "ncc_pipeline_report": (None, [vp, vp]),
            "ncc_pipeline_num_ran": (i, [vp]),
            "ncc_pipeline_ran_name": (cp, [vp, i]),
            "ncc_module_compile_opts": (i, [vp, cp, ctypes.POINTER(Options), ctypes.POINTER(vp)]),
            "ncc_module_run": (i, [vp, ctypes.POINTER(Tensor), i, ctypes.POINTER(Tensor), i]),
            "ncc_module_run_into": (i, [vp, ctypes.POINTER(Tensor), i, ctypes.POINTER(Tensor),
                                        i]),
            "ncc_module_num_kernels": (i, [vp]),
            "ncc_module_num_host_kernels": (i, [vp]),
            "ncc_module_num_threads": (i, [vp]),
            "ncc_module_free": (None, [vp]),
            "ncc_tensor_free": (None, [ctypes.POINTER(Tensor)]),
            "ncc_graph_num_nodes": (i, [vp]),
            "ncc_module_profile_enable": (i, [vp, i]),
            "ncc_module_profile_get": (i, [vp, ctypes.POINTER(ProfileEvent), i]),
            "ncc_module_step_of": (i, [vp, i, ctypes.POINTER(cp)]),
            "ncc_module_node_info": (i, [vp, i, ctypes.c_int64, ctypes.POINTER(NodeInfo)]),
        }
        try:
            for name, (res, args) in sig.items():
                fn = getattr(c, name)
                fn.restype, fn.argtypes = res, args
        except AttributeError as e:
            raise Unavailable("%s lacks %s" % (path, e))
        libc = ctypes.CDLL(None)
        self._tmpfile, self._fclose = libc.tmpfile, libc.fclose
        self._tmpfile.restype, self._tmpfile.argtypes = vp, []
        self._fclose.argtypes = [vp]
        self._fileno = libc.fileno
        self._fileno.argtypes = [vp]
        self._fflush = libc.fflush
        self._fflush.argtypes = [vp]

    def error(self, status):
        msg = self.c.ncc_error_message()
        return NccLibError(status, msg.decode("utf-8", "replace") if msg else "")

    def _check(self, status):
        if status:
            raise self.error(status)

    def load(self, path):
        g = ctypes.c_void_p()
        self._check(self.c.ncc_graph_load(os.fsencode(path), ctypes.byref(g)))
        return Graph(self, g.value)

    def _pipeline(self, target, opt_level, passes, disabled, batch, time_passes,
                  precision=None):
        p = ctypes.c_void_p()
        self._check(self.c.ncc_pipeline_new(opt_level, ctypes.byref(p)))
        try:
            if precision:  # --precision=bf16|fp16: the pass `precision` rounds
                prec = self.c.ncc_precision_from_name(precision.encode())
                if prec < 0:
                    raise NccLibError(1, "unknown precision '%s'" % precision)
                self._check(self.c.ncc_pipeline_set_precision(p, prec))
            if passes is not None:
                self._check(self.c.ncc_pipeline_set_passes(p, passes.encode()))
            for d in disabled:
                self._check(self.c.ncc_pipeline_disable(p, d.encode()))
            self._check(self.c.ncc_pipeline_check(p))
        except NccLibError:
            self.c.ncc_pipeline_free(p)
            raise
        width = _env_int("NCC_VECTOR_WIDTH", (1, 4, 8, 16))
        block = width if width and target in ("cpu", "ref") else \
            self.c.ncc_target_layout_block(target.encode())
        self.c.ncc_pipeline_set_layout_block(p, block)
        self.c.ncc_pipeline_set_stats_batch(p, batch)
        self.c.ncc_pipeline_set_time_passes(p, 1 if time_passes else 0)
        return p

    def compile(self, path, target, opt_level=2, passes=None, disabled=(), threads=1,
                batch=1, time_passes=True, precision=None):
        """Model file -> Module, as `ncc bench` compiles (pipeline, then the
        target's backend); `pass_report` is the --time-passes table text."""
        p = self._pipeline(target, opt_level, passes, disabled, batch, time_passes, precision)
        g = None
        try:
            g = self.load(path)
            self._check(self.c.ncc_pipeline_run(p, g.ptr))
            ran = [self.c.ncc_pipeline_ran_name(p, k).decode()
                   for k in range(self.c.ncc_pipeline_num_ran(p))]
            report = self._report(p) if time_passes else ""
            o = Options()
            self.c.ncc_options_init(ctypes.byref(o))
            o.num_threads = threads
            # the driver's compile-speed tier: NCC_CODEGEN_OPT, else the -O
            # level's (tools/ncc/args.c); the library's own default is 3,
            # which made "cpu-O2" here differ from `ncc bench -O2`
            tier = _env_int("NCC_CODEGEN_OPT", (0, 1, 2, 3))
            o.codegen_level = tier if tier is not None else opt_level
            width = _env_int("NCC_VECTOR_WIDTH", (1, 4, 8, 16))
            if width:
                o.vector_width = width
            if os.environ.get("NCC_KERNEL_REUSE") == "0":
                o.kernel_reuse = 0
            m = ctypes.c_void_p()
            self._check(self.c.ncc_module_compile_opts(g.ptr, target.encode(), ctypes.byref(o),
                                                       ctypes.byref(m)))
        except BaseException:
            if g is not None:
                g.free()
            raise
        finally:
            self.c.ncc_pipeline_free(p)
        return Module(self, g, m.value, ran, report)

    def _report(self, p):
        """ncc_pipeline_report's text (it writes to a FILE *: a tmpfile)."""
        f = self._tmpfile()
        if not f:
            return ""
        try:
            self.c.ncc_pipeline_report(p, f)
            self._fflush(f)
            fd = os.dup(self._fileno(f))
        finally:
            self._fclose(f)
        with os.fdopen(fd, "rb") as r:
            r.seek(0)
            return r.read().decode("utf-8", "replace")
