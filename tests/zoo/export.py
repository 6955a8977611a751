#!/usr/bin/env python3
"""tests/zoo/export.py — export the zoo's models to ONNX, once, into a cache.

For every entry of models.py: build it (seeded random weights), run torch
on its inputs, check the outputs are not degenerate, export with the
TorchScript exporter (torch.onnx.export(..., dynamo=False): what most
existing export scripts use; it is still in torch 2.15, deprecated), check
the export with onnxruntime, and write into the cache directory

  <name>-<key>.onnx   the model
  <name>-<key>.npz    "in.<input>" / "out.<output>": torch's inputs and outputs
  <name>-<key>.json   metadata: params, ops, export seconds, degeneracy
                      figures, onnxruntime's error against torch, versions

<key> hashes the entry (its fields, the source of its builders), the inputs
it makes and the torch/torchvision/transformers versions.  A model whose
three files exist is not exported again.  The cache directory is
$NCC_ZOO_CACHE or --cache, else ~/.cache/ncc-zoo/<torch version>/.

Degenerate outputs (the reason random weights are re-initialised in
models.py): a float output fails when std(out) / max|out| < 1e-3 or when the
outputs for two different inputs differ by less than 1e-3 of max|out|;
such a model is recorded "degenerate" and run_zoo.py fails it.

Usage: python3 tests/zoo/export.py [-k REGEX] [--cache DIR] [--force] [--allow-failures]
Exit 0 when every selected model is exported (or cached), 1 otherwise
(0 with --allow-failures), 77 without torch/torchvision/transformers.
A failed export is remembered in <name>-<key>.error and not retried
until --force.
"""
import argparse
import hashlib
import json
import os
import re
import sys
import time
import traceback
import warnings

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

SEED, INPUT_SEED, OTHER_INPUT_SEED = 0, 1, 2
DEGENERATE_FLOOR = 1e-3
EXPORTER = "torchscript"  # torch.onnx.export(dynamo=False)


def versions():
    import torch
    import torchvision
    import transformers
    return {"torch": torch.__version__, "torchvision": torchvision.__version__,
            "transformers": transformers.__version__}


def cache_dir(arg=None):
    import torch
    d = arg or os.environ.get("NCC_ZOO_CACHE") or os.path.join(
        os.path.expanduser("~"), ".cache", "ncc-zoo", torch.__version__)
    os.makedirs(d, exist_ok=True)
    return d


def model_key(m):
    import numpy as np
    h = hashlib.sha256()
    h.update(m.key_text().encode())
    h.update(json.dumps(versions(), sort_keys=True).encode())
    h.update(EXPORTER.encode())
    for seed in (INPUT_SEED, OTHER_INPUT_SEED):
        for k, v in sorted(m.inputs(seed).items()):
            v = np.ascontiguousarray(v)
            h.update(k.encode() + str(v.dtype).encode() + repr(v.shape).encode() + v.tobytes())
    return h.hexdigest()[:12]


def paths(m, cache):
    base = os.path.join(cache, "%s-%s" % (m.name, model_key(m)))
    return {"onnx": base + ".onnx", "npz": base + ".npz", "json": base + ".json"}


def cached(m, cache):
    p = paths(m, cache)
    return all(os.path.exists(f) for f in p.values())


def _as_tuple(out):
    import torch
    if isinstance(out, torch.Tensor):
        return (out,)
    return tuple(out)


def degeneracy(outs, other, names, exact):
    """[] when the outputs look like a working network's, else reasons."""
    import numpy as np
    bad, stats = [], {}
    for name, a, b in zip(names, outs, other):
        if name in exact or a.dtype.kind not in "f":
            continue
        scale = float(np.abs(a).max()) if a.size else 0.0
        spread = float(a.std()) / scale if scale > 0 else 0.0
        diff = (float(np.abs(a - b).max()) / scale
                if a.shape == b.shape and scale > 0 else 1.0)
        stats[name] = {"max_abs": scale, "std_over_max": spread, "input_sensitivity": diff}
        if a.size == 0:
            bad.append("%s is empty" % name)
        elif spread < DEGENERATE_FLOOR and a.size > 1:
            bad.append("%s: std/max|out| = %.2e" % (name, spread))
        elif diff < DEGENERATE_FLOOR:
            bad.append("%s: two inputs give outputs within %.2e" % (name, diff))
    return bad, stats


def float32_error(model, targs, outs, m):
    """How far float32 torch is from float64 torch on this model and input:
    max over float outputs of max|f32 - f64| / max|f64|, or None when the
    model does not run in float64.  No float32 implementation can be
    expected much closer to torch than this; run_zoo.py's bound is
    max(1e-4, 4 x this) (the conditioning of a random-weight net)."""
    import copy
    import numpy as np
    import torch
    try:
        m64 = copy.deepcopy(model).double()
        with torch.no_grad():
            o64 = _as_tuple(m64(*(a.double() if a.is_floating_point() else a for a in targs)))
    except Exception:  # noqa: BLE001  (some models pin float32 somewhere)
        return None
    worst = 0.0
    for name, a, b in zip(m.outputs, outs, o64):
        b = b.detach().numpy()
        if name in m.exact_outputs or a.dtype.kind != "f" or a.shape != b.shape or not a.size:
            continue
        scale = float(np.abs(b).max()) or 1.0
        worst = max(worst, float(np.abs(a.astype(np.float64) - b).max()) / scale)
    return worst


def export_one(m, cache, log=print):
    import numpy as np
    import onnx
    import torch

    p = paths(m, cache)
    t0 = time.time()
    torch.manual_seed(SEED)
    model = m.build(SEED)
    model.eval()
    build_s = time.time() - t0
    inputs = m.inputs(INPUT_SEED)
    other = m.inputs(OTHER_INPUT_SEED)
    in_names = list(inputs)
    targs = tuple(torch.from_numpy(inputs[k]) for k in in_names)
    with torch.no_grad():
        outs = [o.detach().numpy() for o in _as_tuple(model(*targs))]
        outs2 = [o.detach().numpy() for o in
                 _as_tuple(model(*(torch.from_numpy(other[k]) for k in in_names)))]
    if len(outs) != len(m.outputs):
        raise RuntimeError("%d torch outputs, the entry names %d" % (len(outs), len(m.outputs)))
    bad, stats = degeneracy(outs, outs2, m.outputs, m.exact_outputs)
    f32_err = float32_error(model, targs, outs, m)

    tmp = p["onnx"] + ".tmp%d" % os.getpid()
    t1 = time.time()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        dyn = {k: v for k, v in m.dynamic.items() if k in in_names or k in m.outputs}
        torch.onnx.export(model, targs, tmp, dynamo=False, opset_version=m.opset,
                          input_names=in_names, output_names=list(m.outputs),
                          dynamic_axes=dyn or None, do_constant_folding=True)
    export_s = time.time() - t1
    proto = onnx.load(tmp)
    onnx.checker.check_model(proto)
    ops = {}
    for n in proto.graph.node:
        ops[n.op_type] = ops.get(n.op_type, 0) + 1
    params = int(sum(int(np.prod(t.dims)) for t in proto.graph.initializer))
    torch_params = int(sum(q.numel() for q in model.parameters()))

    # onnxruntime against torch: tells a wrong export from an ncc bug
    import onnxruntime as ort
    so = ort.SessionOptions()
    so.log_severity_level = 3
    so.intra_op_num_threads = 1
    sess = ort.InferenceSession(tmp, so, providers=["CPUExecutionProvider"])
    feed = {i.name: inputs[i.name] for i in sess.get_inputs()}
    ort_outs = sess.run(list(m.outputs), feed)
    ort_err = {}
    for name, want, got in zip(m.outputs, outs, ort_outs):
        if want.shape != got.shape:
            ort_err[name] = "shape %s vs torch %s" % (got.shape, want.shape)
            continue
        if want.size == 0 or want.dtype.kind != "f":
            ort_err[name] = 0.0 if np.array_equal(want, got) else "differs"
            continue
        scale = float(np.abs(want).max()) or 1.0
        ort_err[name] = float(np.abs(got.astype(np.float64) - want).max()) / scale

    arrays = {"in." + k: v for k, v in inputs.items()}
    arrays.update({"out." + k: v for k, v in zip(m.outputs, outs)})
    meta = {"name": m.name, "family": m.family, "key": os.path.basename(p["onnx"])[:-5],
            "exporter": EXPORTER, "opset": m.opset, "versions": versions(),
            "inputs": {k: [str(v.dtype), list(v.shape)] for k, v in inputs.items()},
            "outputs": {k: [str(v.dtype), list(v.shape)] for k, v in zip(m.outputs, outs)},
            "dynamic": m.dynamic, "params": params, "torch_params": torch_params,
            "nodes": len(proto.graph.node), "ops": ops,
            "build_s": round(build_s, 2), "export_s": round(export_s, 2),
            "degenerate": bad, "output_stats": stats, "ort_rel_err": ort_err,
            "torch_f32_vs_f64": f32_err,
            "tol": m.tol, "tol_reason": m.tol_reason, "exact_outputs": list(m.exact_outputs),
            "note": m.note}
    npz_tmp = p["npz"] + ".tmp%d.npz" % os.getpid()
    np.savez(npz_tmp, **arrays)
    js_tmp = p["json"] + ".tmp%d" % os.getpid()
    with open(js_tmp, "w") as f:
        json.dump(meta, f, indent=1, sort_keys=True)
    os.replace(tmp, p["onnx"])
    os.replace(npz_tmp, p["npz"])
    os.replace(js_tmp, p["json"])  # last: its presence marks the entry complete
    log("exported %-22s %5d nodes %9d params  build %.1fs export %.1fs  f32-vs-f64 %s%s" % (
        m.name, meta["nodes"], params, build_s, export_s,
        "%.1e" % f32_err if f32_err is not None else "n/a",
        "  DEGENERATE: " + "; ".join(bad) if bad else ""))
    return meta


def load(m, cache):
    """(onnx path, meta dict, npz arrays) of a cached model, or None."""
    import numpy as np
    p = paths(m, cache)
    if not cached(m, cache):
        return None
    with open(p["json"]) as f:
        meta = json.load(f)
    return p["onnx"], meta, dict(np.load(p["npz"], allow_pickle=False))


def ensure(models, cache, force=False, log=print):
    """Export what is not cached. Returns {name: error string} of failures
    (written to <cache>/<name>-<key>.error so a broken export is not
    retried on every run; --force retries)."""
    errors = {}
    for m in models:
        p = paths(m, cache)
        err_path = p["json"][:-5] + ".error"
        if cached(m, cache) and not force:
            continue
        if os.path.exists(err_path) and not force:
            errors[m.name] = open(err_path).read().strip().splitlines()[-1]
            continue
        try:
            export_one(m, cache, log)
            if os.path.exists(err_path):
                os.remove(err_path)
        except Exception as e:  # noqa: BLE001  (recorded, reported, run goes on)
            msg = "%s: %s" % (type(e).__name__, str(e).strip().splitlines()[0] if str(e).strip() else "")
            with open(err_path, "w") as f:
                f.write(traceback.format_exc() + "\n" + msg + "\n")
            log("export FAILED %s: %s" % (m.name, msg))
            errors[m.name] = msg
    return errors


def select(pattern):
    import models
    return [m for m in models.MODELS if not pattern or re.search(pattern, m.name)]


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("-k", dest="pattern", help="only models whose name matches this regex")
    ap.add_argument("--cache", help="cache directory (default $NCC_ZOO_CACHE, else ~/.cache/ncc-zoo/<torch>)")
    ap.add_argument("--force", action="store_true", help="export again even when cached")
    ap.add_argument("--allow-failures", action="store_true",
                    help="exit 0 even when some models fail to export (run_zoo.py reports them "
                    "as export-failed, a regression where EXPECTED says pass)")
    a = ap.parse_args()
    try:
        import torch  # noqa: F401
        import torchvision  # noqa: F401
        import transformers  # noqa: F401
    except ImportError as e:
        print("skipped: %s (tools/setup.sh installs tools/requirements-zoo.txt)" % e)
        return 77
    import torch
    torch.set_num_threads(max(1, min(4, os.cpu_count() or 1)))
    cache = cache_dir(a.cache)
    t0 = time.time()
    ms = select(a.pattern)
    errors = ensure(ms, cache, a.force)
    print("%d models, %d failed to export, %.0fs; cache %s" % (
        len(ms), len(errors), time.time() - t0, cache))
    return 1 if errors and not a.allow_failures else 0


if __name__ == "__main__":
    sys.exit(main())
