"""bench/harness/zoo.py — real models in a sweep: the model zoo (tests/zoo)
and plain ONNX files, as ZooSpecs beside the generated blocks' ModelSpecs.

A spec names a real model by its zoo name ("resnet18") or by an ONNX file
path ("/work/models/resnet50.onnx").  Zoo models are looked up in the zoo's
export cache ($NCC_ZOO_CACHE, else ~/.cache/ncc-zoo/<torch version>/, the
newest export of that name); one that is not there yet is exported locally
by tests/zoo/export.py from its seeded builder (torch, torchvision,
transformers from PyPI: nothing is downloaded, no pretrained weights).
EXTRA adds depth variants the zoo itself does not test (resnet34,
resnet101: the depth knob of E1), exported the same way into the same cache.

What the harness can run: one float input named x (symbolic or fixed
batch in dim 0) and a first output named y — the adapters feed {"x": x} and
ncc's command line writes y.npy.  That is every image classifier of the
zoo; the text models (several int64 inputs) are refused at resolve time
with one line saying so.

The measurement record of a real model (describe()) holds its name and
source only, not the file's hash: the same spec expands to the same keys on
every machine (the hardware axis lines rows up by them); which export was
run goes into the cache (key()) and the row's oracle check.  Inductor gets
the zoo builder's torch module (the same seeded weights as the ONNX
export; a file model goes through onnx2torch); XLA has no JAX port of a
real model and skips it (no_params).
"""
import glob
import hashlib
import importlib.util
import os
import re

import numpy as np

from .adapters.base import Skipped

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
ZOO_DIR = os.path.join(REPO, "tests", "zoo")
EXPORT_SEED = 0  # tests/zoo/export.py builds every model with seed 0

# Depth variants of zoo families (torchvision constructor, keyword args):
# not in the zoo's tests, exported on demand for E1's depth knob.
EXTRA = {"resnet34": ("resnet34", {}), "resnet101": ("resnet101", {}),
         "densenet169": ("densenet169", {})}


class ZooUnsupported(ValueError):
    """The model cannot be part of a sweep (one line: why)."""


class ZooSpec:
    """One real model; printable, and a stable cache key."""

    block_kind = "real"

    def __init__(self, name, source="zoo"):
        if source != "zoo" and not source.startswith("file:"):
            raise ZooUnsupported("model source %r is neither zoo nor file:PATH" % source)
        self.name, self.source = name, source
        self.block, self.depth, self.width, self.seed, self.kw = name, 1, 0, 0, {}

    @classmethod
    def parse(cls, text):
        """"resnet18" (zoo) or "path/to/model.onnx" (a file)."""
        if text.endswith(".onnx"):
            name = os.path.basename(text)[:-5]
            return cls(name, "file:" + text)
        if not re.match(r"^[A-Za-z0-9_.-]+$", text):
            raise ZooUnsupported("%r is not a zoo model name or an .onnx path" % text)
        return cls(text, "zoo")

    @classmethod
    def from_record(cls, md):
        return cls(md["block"], md["source"])

    def describe(self):
        return {"block": self.name, "source": self.source, "depth": 1, "width": 0, "seed": 0}

    def key(self):
        if self.source == "zoo":
            return "zoo-" + self.name
        return "file-%s-%s" % (self.name, hashlib.sha1(self.source.encode()).hexdigest()[:8])

    def config(self):
        raise no_params(self)

    def info(self):
        return info(self)

    def torch_module(self, torch):
        """The model as a torch module with the weights of its ONNX file."""
        if self.source == "zoo":
            entry = _entry(self.name)
            torch.manual_seed(EXPORT_SEED)
            return entry.build(EXPORT_SEED).eval()
        try:
            import onnx2torch
        except ImportError as e:
            raise Skipped("a file model reaches torch through onnx2torch, which does not "
                          "import (%s)" % e, "pip install onnx2torch")
        return onnx2torch.convert(self.info()["path"]).eval()

    def __repr__(self):
        return "ZooSpec(%s, %s)" % (self.name, self.source)


def no_params(ms):
    return Skipped("%s is a real model (%s): no native weights for a hand-written port "
                   "(xla has no JAX version of it)" % (ms.name, ms.source))


# --------------------------------------------------------------------------
# Finding (and exporting) the ONNX file.

def _load_module(name, path):
    spec = importlib.util.spec_from_file_location(name, path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


_ZOO = {}


def _zoo_modules():
    """tests/zoo/models.py and export.py (they import torch)."""
    if not _ZOO:
        try:
            _ZOO["models"] = _load_module("ncc_zoo_models", os.path.join(ZOO_DIR, "models.py"))
            _ZOO["export"] = _load_module("ncc_zoo_export", os.path.join(ZOO_DIR, "export.py"))
        except ImportError as e:
            raise ZooUnsupported("exporting a zoo model needs torch, torchvision and "
                                 "transformers (tools/setup.sh): %s" % e)
    return _ZOO["models"], _ZOO["export"]


def _entry(name):
    zm, _ = _zoo_modules()
    if name in zm.BY_NAME:
        return zm.BY_NAME[name]
    if name in EXTRA:
        arch, kw = EXTRA[name]
        return zm._tv(name, arch, **kw)
    raise ZooUnsupported("no zoo model %r (tests/zoo/models.py: %s; extra depth variants: %s)"
                         % (name, ", ".join(sorted(zm.BY_NAME)), ", ".join(sorted(EXTRA))))


def cache_dirs():
    """Where exports are looked for: $NCC_ZOO_CACHE, else every torch
    version's directory under ~/.cache/ncc-zoo (newest first)."""
    env = os.environ.get("NCC_ZOO_CACHE")
    if env:
        return [env]
    root = os.path.join(os.path.expanduser("~"), ".cache", "ncc-zoo")
    dirs = [d for d in glob.glob(os.path.join(root, "*")) if os.path.isdir(d)]
    return sorted(dirs, key=os.path.getmtime, reverse=True)


def find_export(name):
    """The newest complete export (.onnx with its .json) of zoo model
    `name`, or None."""
    best = None
    for d in cache_dirs():
        for js in glob.glob(os.path.join(d, glob.escape(name) + "-*.json")):
            onnx_path = js[:-5] + ".onnx"
            # name-<12 hex>: "resnet18" must not find "resnet18_x-..."
            if not re.match(r"^%s-[0-9a-f]{12}$" % re.escape(name), os.path.basename(js)[:-5]):
                continue
            if os.path.exists(onnx_path) and (best is None or
                                              os.path.getmtime(js) > os.path.getmtime(best)):
                best = js
    return best[:-5] + ".onnx" if best else None


def export(name, log=None):
    """Export zoo model `name` into the zoo cache (locally, seeded)."""
    entry = _entry(name)
    _, ex = _zoo_modules()
    cache = ex.cache_dir(os.environ.get("NCC_ZOO_CACHE"))
    errors = ex.ensure([entry], cache, log=log or (lambda *a: None))
    if errors:
        raise ZooUnsupported("export of zoo model %s failed: %s" % (name, errors[name]))
    return ex.paths(entry, cache)["onnx"]


_INFO = {}


def info(ms):
    """{path, input, shape, outputs, file}: the ONNX file of a real model and
    its interface; raises ZooUnsupported when the harness cannot run it."""
    k = (ms.name, ms.source)
    if k in _INFO:
        return _INFO[k]
    if ms.source == "zoo":
        path = find_export(ms.name) or export(ms.name)
    else:
        path = ms.source[len("file:"):]
        if not os.path.exists(path):
            raise ZooUnsupported("model file %s does not exist" % path)
    import onnx
    try:
        proto = onnx.load(path, load_external_data=False)
    except Exception as e:
        raise ZooUnsupported("%s: not a readable ONNX model (%s)" % (path, e))
    inits = {t.name for t in proto.graph.initializer}
    ins = [i for i in proto.graph.input if i.name not in inits]
    outs = [o.name for o in proto.graph.output]
    if len(ins) != 1 or ins[0].name != "x" or not outs or outs[0] != "y":
        raise ZooUnsupported(
            "%s has inputs (%s) and outputs (%s): the harness runs models with one input x "
            "and a first output y (the image classifiers of the zoo)"
            % (ms.name, ", ".join(i.name for i in ins), ", ".join(outs)))
    t = ins[0].type.tensor_type
    if t.elem_type != onnx.TensorProto.FLOAT:
        raise ZooUnsupported("%s: input x is not float32" % ms.name)
    shape = [d.dim_param or (d.dim_value if d.HasField("dim_value") else "?")
             for d in t.shape.dim]
    if not shape or any(not isinstance(v, int) for v in shape[1:]):
        raise ZooUnsupported("%s: input x has shape %s; only dim 0 (the batch) may be symbolic"
                             % (ms.name, shape))
    rec = {"path": path, "input": "x", "shape": shape, "outputs": outs,
           "file": os.path.basename(path), "symbolic_batch": isinstance(shape[0], str)}
    _INFO[k] = rec
    return rec


def model_path(ms, cache_dir, batch=None):
    """The model file: the export itself (batch None), or a copy with the
    batch fixed (dim 0 of x, of the outputs and of every value_info that
    shares x's batch symbol) under cache_dir."""
    rec = info(ms)
    if batch is None:
        return rec["path"]
    if not rec["symbolic_batch"]:
        if rec["shape"][0] != batch:
            raise Skipped("%s has a fixed batch %d; it cannot run at batch %d"
                          % (ms.name, rec["shape"][0], batch))
        return rec["path"]
    path = os.path.join(cache_dir, "model_b%d.onnx" % batch)
    if os.path.exists(path):
        return path
    import onnx
    proto = onnx.load(rec["path"])
    sym = rec["shape"][0]
    for vi in list(proto.graph.input) + list(proto.graph.output) + list(proto.graph.value_info):
        dims = vi.type.tensor_type.shape.dim
        if len(dims) and dims[0].dim_param == sym:
            dims[0].dim_value = batch  # clears dim_param (a oneof)
    tmp = "%s.tmp%d" % (path, os.getpid())
    onnx.save(proto, tmp)
    os.replace(tmp, path)
    return path


def make_input(ms, batch, seed):
    """Seeded N(0, 1) input of the model's shape at `batch`."""
    shape = [batch] + list(info(ms)["shape"][1:])
    return np.random.RandomState(seed).standard_normal(shape).astype(np.float32)


def short(text):
    """How a report names a model given as a zoo name or a path."""
    return os.path.basename(text)[:-5] if text.endswith(".onnx") else text


def family_name(family, depth):
    """The model of `family` at `depth` (E1 with models): resnet + 18."""
    return "%s%d" % (family, depth)
