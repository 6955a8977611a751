"""bench/harness/models.py — the models, inputs and reference outputs of a sweep.

A ModelSpec names one block model (block, depth, width, seed and the block
sizes); ModelCache turns it into files under DIR/cache/: the ONNX model
with a symbolic batch (what every compiler gets by default), static-batch
variants (blocks.py --batch-dim INT, for "compile once per shape"), seeded
inputs, the output of an oracle outside ncc (oracle.py: onnxruntime with
ORT_DISABLE_ALL, or torch), and the reference output of `ncc run
--target=ref -O0` — the interpreter on the unoptimized graph.  check()
compares the two once per model, batch and input seed; only when ref
agrees with the outside oracle is ref what the rows are checked against
(runner.py; where it disagrees the oracle's output is, and the model is an
ncc failure).

FLOP matching (E3, archetypes at equal FLOPs) asks ncc for the model's
MFLOP at batch 1 (`ncc opt -O0 --time-passes`) and searches the width that
comes closest to a budget: doubling first (so a conv block never builds a
huge weight tensor), then bisection.

Real models (the models preset) are ZooSpecs (zoo.py): the cache serves
their exported ONNX file as is (symbolic batch), static-batch copies, and
seeded inputs of the file's input shape; spec_from() turns a row's model
record back into either kind.
"""
import json
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
import blocks  # noqa: E402  (bench/blocks.py, the one block generator)

from . import oracle as oraclemod  # noqa: E402
from . import zoo  # noqa: E402

# blocks.Config keywords a spec may set besides block/depth/width/seed.
MODEL_KEYS = ("spatial", "seq", "k", "heads", "opset", "gelu")


class ModelSpec:
    """One block model; hashable, printable, and a stable cache key."""

    def __init__(self, block, depth, width, seed=0, **kw):
        unknown = set(kw) - set(MODEL_KEYS)
        if unknown:
            raise ValueError("unknown model setting(s): %s" % ", ".join(sorted(unknown)))
        self.block, self.depth, self.width, self.seed = block, int(depth), int(width), int(seed)
        self.kw = {k: (tuple(v) if isinstance(v, list) else v) for k, v in kw.items()
                   if v is not None}
        blocks.Config(block, self.depth, self.width, self.seed, **self.kw)  # validates

    def config(self):
        """The blocks.Config with every default filled in."""
        return blocks.Config(self.block, self.depth, self.width, self.seed, **self.kw)

    def describe(self):
        """Every size that determines the model (goes into each row)."""
        c = self.config()
        return {"block": c.block, "depth": c.depth, "width": c.width, "seed": c.seed,
                "spatial": list(c.spatial), "seq": c.seq, "k": c.k, "heads": c.heads,
                "opset": c.opset, "gelu": c.gelu}

    def key(self):
        d = self.describe()
        return "%s-d%d-w%d-s%d-%dx%d-q%d-k%d-h%d-o%d-%s" % (
            d["block"], d["depth"], d["width"], d["seed"], d["spatial"][0], d["spatial"][1],
            d["seq"], d["k"], d["heads"], d["opset"], d["gelu"])

    def with_(self, **changes):
        args = dict(block=self.block, depth=self.depth, width=self.width, seed=self.seed)
        args.update(self.kw)
        args.update(changes)
        return ModelSpec(**args)

    def __repr__(self):
        return "ModelSpec(%s)" % self.key()


class ModelCache:
    """Files of the models of a sweep under `root` (DIR/cache)."""

    def __init__(self, root, ncc=None, timeout=600.0):
        self.root, self.ncc, self.timeout = root, ncc, timeout
        os.makedirs(root, exist_ok=True)
        self._params = {}
        self._verdicts = {}
        self._oracle = None  # the oracle record, or the OracleUnavailable
        self._flops_path = os.path.join(root, "mflop.json")
        try:
            self._mflop = json.load(open(self._flops_path))
        except (OSError, ValueError):
            self._mflop = {}

    def _dir(self, ms):
        d = os.path.join(self.root, ms.key())
        os.makedirs(d, exist_ok=True)
        return d

    def model_path(self, ms, batch=None):
        """The ONNX file: symbolic batch when batch is None, else static."""
        if isinstance(ms, zoo.ZooSpec):
            return zoo.model_path(ms, self._dir(ms), batch)
        name = "model.onnx" if batch is None else "model_b%d.onnx" % batch
        path = os.path.join(self._dir(ms), name)
        if not os.path.exists(path):
            kw = dict(ms.kw)
            if batch is not None:
                kw["batch_dim"] = int(batch)
            model = blocks.build(ms.block, ms.depth, ms.width, ms.seed, **kw)
            _atomic_write(path, model.SerializeToString())
        return path

    def model_bytes(self, ms, batch=None):
        with open(self.model_path(ms, batch), "rb") as f:
            return f.read()

    def params(self, ms):
        """Weights by initializer name (blocks.params), for native builders."""
        if isinstance(ms, zoo.ZooSpec):
            raise zoo.no_params(ms)
        k = ms.key()
        if k not in self._params:
            self._params = {k: blocks.params(ms.block, ms.depth, ms.width, ms.seed, **ms.kw)}
        return self._params[k]

    def input(self, ms, batch, seed):
        """(array, path) of the seeded input at `batch`."""
        path = os.path.join(self._dir(ms), "x_b%d_s%d.npy" % (batch, seed))
        if isinstance(ms, zoo.ZooSpec):
            x = zoo.make_input(ms, batch, seed)
        else:
            shape_kw = {k: v for k, v in ms.kw.items() if k in ("spatial", "seq")}
            x = blocks.make_input(ms.block, batch, ms.width, seed=seed, **shape_kw)
        if not os.path.exists(path):
            _atomic_save(path, x)
        return x, path

    def reference(self, ms, batch, seed):
        """ncc's reference output (--target=ref -O0) for the seeded input."""
        path = os.path.join(self._dir(ms), "ref_b%d_s%d.npy" % (batch, seed))
        if os.path.exists(path):
            return np.load(path, allow_pickle=False)
        _, xpath = self.input(ms, batch, seed)
        outdir = os.path.join(self._dir(ms), "ref_out_b%d_s%d" % (batch, seed))
        os.makedirs(outdir, exist_ok=True)
        self.ncc.check(["run", self.model_path(ms), "--target=ref", "-O0",
                        "--input", "x=" + xpath, "--output-dir", outdir],
                       timeout=self.timeout)
        y = np.load(os.path.join(outdir, "y.npy"), allow_pickle=False)
        _atomic_save(path, y)
        return y

    def oracle_record(self):
        """Which outside oracle this environment has (raises
        oracle.OracleUnavailable, remembered, when none)."""
        if self._oracle is None:
            try:
                self._oracle = oraclemod.which()
            except oraclemod.OracleUnavailable as e:
                self._oracle = e
        if isinstance(self._oracle, Exception):
            raise self._oracle
        return self._oracle

    def oracle_output(self, ms, batch, seed):
        """The outside oracle's output for the seeded input (cached on disk
        with the record of the oracle that made it)."""
        rec = self.oracle_record()
        tag = "ort" if rec["name"] == "onnxruntime" else rec["name"]
        path = os.path.join(self._dir(ms), "oracle_%s_b%d_s%d.npy" % (tag, batch, seed))
        if os.path.exists(path):
            return np.load(path, allow_pickle=False)
        x, _ = self.input(ms, batch, seed)
        y = oraclemod.run(rec, self.model_path(ms), ms, lambda: self.params(ms), x)
        _atomic_save(path, y)
        return y

    def check(self, ms, batch, seed, rtol, atol):
        """ncc ref against the outside oracle for this model, batch and input
        (once per sweep process): oracle.verdict's record.  Raises
        OracleUnavailable or OracleFailed when there is no oracle's answer."""
        k = (ms.key(), batch, seed, rtol, atol)
        if k not in self._verdicts:
            try:
                y = self.oracle_output(ms, batch, seed)
                self._verdicts[k] = oraclemod.verdict(self.oracle_record(), y,
                                                      self.reference(ms, batch, seed),
                                                      rtol, atol)
            except (oraclemod.OracleUnavailable, oraclemod.OracleFailed) as e:
                self._verdicts[k] = e
        v = self._verdicts[k]
        if isinstance(v, Exception):
            raise v
        return v

    def mflop(self, ms):
        """MFLOP of the model at batch 1 as ncc counts them (cached)."""
        k = ms.key()
        if k not in self._mflop:
            self._mflop[k] = self.ncc.model_stats(self.model_path(ms))["mflop"]
            _atomic_write(self._flops_path, json.dumps(self._mflop, indent=1).encode())
        return self._mflop[k]

    def match_width(self, ms, target_mflop, step=None, max_width=1 << 15):
        """The width (a multiple of `step`) whose MFLOP at batch 1 is closest
        to target_mflop, other sizes as in `ms`."""
        if step is None:
            step = 16 if ms.block == "transformer" else 8

        def flops(n):
            return self.mflop(ms.with_(width=n * step))

        lo, hi = 1, 1
        while flops(hi) < target_mflop and hi * step * 2 <= max_width:
            lo, hi = hi, hi * 2
        while hi - lo > 1:  # flops(lo) < target <= flops(hi), or hi at the cap
            mid = (lo + hi) // 2
            if flops(mid) < target_mflop:
                lo = mid
            else:
                hi = mid
        best = min((lo, hi), key=lambda n: abs(flops(n) - target_mflop))
        return best * step


def spec_from(md):
    """The ModelSpec or ZooSpec of a row's model record (describe())."""
    if md.get("source"):
        return zoo.ZooSpec.from_record(md)
    md = dict(md)
    return ModelSpec(md.pop("block"), md.pop("depth"), md.pop("width"), md.pop("seed"), **md)


def label(md):
    """A short name of a model record: "resnet18" or "mlp d2 w32"."""
    if md.get("source"):
        return md["block"]
    return "%s d%d w%d" % (md["block"], md["depth"], md["width"])


def _atomic_write(path, data):
    tmp = "%s.tmp%d" % (path, os.getpid())
    with open(tmp, "wb") as f:
        f.write(data)
    os.replace(tmp, path)


def _atomic_save(path, array):
    tmp = "%s.tmp%d.npy" % (path[:-4], os.getpid())
    np.save(tmp, np.asarray(array), allow_pickle=False)
    os.replace(tmp, path)
