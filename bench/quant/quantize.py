#!/usr/bin/env python3
"""bench/quant/quantize.py — int8 models for the low-precision benchmarks, made
once into a cache (nothing is downloaded: the weights are initialised here).

Models (batch 1):
  resnet50   torchvision ResNet-50, weights=None (torchvision's own init:
             Kaiming conv weights, BN at mean 0 / var 1), input x [N,3,224,224]
             (N symbolic), output y.
  bert_base  transformers BertModel of the default BertConfig (BERT-base:
             12 layers, hidden 768, 12 heads, vocab 30522) with random
             weights, sequence 128; inputs input_ids, attention_mask,
             token_type_ids [1,128] int64; outputs last_hidden_state,
             pooler_output.
Each is exported to ONNX (opset 17) and quantized with
onnxruntime.quantization.quantize_static: u8 activations, s8 per-channel
weights, MinMax calibration over random data from a fixed seed, in the QDQ
format (the default) and, with --format qop or both, the QOperator format
(QLinearConv, QLinearMatMul and the com.microsoft QLinear* ops). BERT-base
quantizes its MatMuls and Gemm only (see MODELS: the attention mask's Add
does not survive 8 bits).

Files, in the cache directory ($NCC_QUANT_CACHE or --cache, else
~/.cache/ncc-quant/<onnxruntime version>/):
  <model>-f32.onnx, <model>-int8-qdq.onnx, <model>-int8-qop.onnx,
  <model>.json    versions, seeds, op counts, and (with --check) the int8
                  model's agreement with the f32 one under ONNX Runtime.
A file that exists is not made again (--force remakes it).

Usage: python3 bench/quant/quantize.py [-k REGEX] [--format qdq|qop|both]
           [--calib N] [--cache DIR] [--force] [--check]
Prints the paths it wrote or found. Exit 0 when every selected model exists.
"""
import argparse
import json
import os
import re
import sys
import time
import warnings

SEED = 0          # weights
CALIB_SEED = 1    # calibration data
CHECK_SEED = 2    # --check inputs
SEQ = 128
OPSET = 17


def cache_dir(arg=None):
    import onnxruntime
    d = arg or os.environ.get("NCC_QUANT_CACHE") or os.path.join(
        os.path.expanduser("~"), ".cache", "ncc-quant", onnxruntime.__version__)
    os.makedirs(d, exist_ok=True)
    return d


# ---- the models: build (torch module), inputs(rng, n) -> list of feeds ----

def build_resnet50():
    import torchvision
    return torchvision.models.resnet50(weights=None)


def resnet50_inputs(rng, n):
    import numpy as np
    return [{"x": rng.standard_normal((1, 3, 224, 224)).astype(np.float32)} for _ in range(n)]


def build_bert_base():
    from transformers import BertConfig, BertModel

    class Wrap(__import__("torch").nn.Module):
        """The model with positional inputs and a tuple of outputs."""

        def __init__(self):
            super().__init__()
            self.m = BertModel(BertConfig(), add_pooling_layer=True)

        def forward(self, input_ids, attention_mask, token_type_ids):
            o = self.m(input_ids=input_ids, attention_mask=attention_mask,
                       token_type_ids=token_type_ids)
            return o.last_hidden_state, o.pooler_output
    return Wrap()


def bert_inputs(rng, n):
    import numpy as np
    feeds = []
    for _ in range(n):
        ids = rng.integers(1000, 30522, (1, SEQ)).astype(np.int64)
        ids[0, 0] = 101  # [CLS]
        mask = np.ones((1, SEQ), np.int64)
        cut = int(rng.integers(SEQ // 2, SEQ + 1))  # some padding at the end
        mask[0, cut:] = 0
        types = np.zeros((1, SEQ), np.int64)
        types[0, cut // 2:cut] = 1
        feeds.append({"input_ids": ids, "attention_mask": mask, "token_type_ids": types})
    return feeds


MODELS = {
    "resnet50": dict(build=build_resnet50, inputs=resnet50_inputs, in_names=["x"],
                     out_names=["y"], dynamic={"x": {0: "N"}, "y": {0: "N"}}),
    "bert_base": dict(build=build_bert_base, inputs=bert_inputs,
                      in_names=["input_ids", "attention_mask", "token_type_ids"],
                      out_names=["last_hidden_state", "pooler_output"], dynamic={},
                      # the MatMuls and the pooler's Gemm only: quantizing the
                      # extended attention mask's Add (-3.4e38 where masked)
                      # gives the attention scores a scale that rounds them
                      # all away (cosine 0.82 against f32 with every op)
                      op_types=["MatMul", "Gemm"]),
}


def export_f32(name, spec, path, log):
    import numpy as np
    import torch
    torch.manual_seed(SEED)
    model = spec["build"]().eval()
    feed = spec["inputs"](np.random.default_rng(SEED), 1)[0]
    args = tuple(torch.from_numpy(feed[k]) for k in spec["in_names"])
    tmp = path + ".tmp%d" % os.getpid()
    t0 = time.time()
    with warnings.catch_warnings(), torch.no_grad():
        warnings.simplefilter("ignore")
        torch.onnx.export(model, args, tmp, dynamo=False, opset_version=OPSET,
                          input_names=spec["in_names"], output_names=spec["out_names"],
                          dynamic_axes=spec["dynamic"] or None, do_constant_folding=True)
    inline_identities(tmp)
    os.replace(tmp, path)
    log("exported %s (%.0fs)" % (path, time.time() - t0))


def inline_identities(path):
    """torch's constant folding shares equal tensors (ResNet's folded
    biases) through Identity nodes; the quantizer wants every Conv bias to be
    an initializer, so each such Identity becomes an initializer copy."""
    import onnx
    m = onnx.load(path)
    inits = {t.name: t for t in m.graph.initializer}
    keep = []
    for n in m.graph.node:
        if n.op_type == "Identity" and n.input[0] in inits:
            t = onnx.TensorProto()
            t.CopyFrom(inits[n.input[0]])
            t.name = n.output[0]
            m.graph.initializer.append(t)
        else:
            keep.append(n)
    del m.graph.node[:]
    m.graph.node.extend(keep)
    onnx.save(m, path)


class Reader:
    """onnxruntime.quantization's CalibrationDataReader over a list of feeds."""

    def __init__(self, feeds):
        self.it = iter(feeds)

    def get_next(self):
        return next(self.it, None)

    def rewind(self):
        pass


def quantize(name, spec, f32, path, fmt, n_calib, log):
    import numpy as np
    from onnxruntime.quantization import QuantFormat, QuantType, quantize_static
    feeds = spec["inputs"](np.random.default_rng(CALIB_SEED), n_calib)
    tmp = path + ".tmp%d.onnx" % os.getpid()
    t0 = time.time()
    quantize_static(f32, tmp, Reader(feeds),
                    quant_format=QuantFormat.QDQ if fmt == "qdq" else QuantFormat.QOperator,
                    per_channel=True, activation_type=QuantType.QUInt8,
                    weight_type=QuantType.QInt8, op_types_to_quantize=spec.get("op_types"),
                    use_external_data_format=False)
    os.replace(tmp, path)
    log("quantized %s (%s, %d calibration inputs, %.0fs)" % (path, fmt, n_calib,
                                                            time.time() - t0))


def op_counts(path):
    import onnx
    m = onnx.load(path, load_external_data=False)
    ops = {}
    for n in m.graph.node:
        k = n.op_type if n.domain in ("", "ai.onnx") else "%s:%s" % (n.domain, n.op_type)
        ops[k] = ops.get(k, 0) + 1
    return ops


def check(spec, f32, int8, n=4):
    """Cosine and max relative error of the int8 model's first output against
    the f32 model's under ONNX Runtime, and (for a classifier) top-1
    agreement, over n inputs."""
    import numpy as np
    import onnxruntime as ort
    so = ort.SessionOptions()
    so.log_severity_level = 3
    a = ort.InferenceSession(f32, so, providers=["CPUExecutionProvider"])
    b = ort.InferenceSession(int8, so, providers=["CPUExecutionProvider"])
    cos, top1 = [], 0
    for feed in spec["inputs"](np.random.default_rng(CHECK_SEED), n):
        x = a.run(None, feed)[0].astype(np.float64).ravel()
        y = b.run(None, feed)[0].astype(np.float64).ravel()
        cos.append(float(x @ y / (np.linalg.norm(x) * np.linalg.norm(y) + 1e-30)))
        top1 += int(np.argmax(x) == np.argmax(y))
    r = {"inputs": n, "cosine_min": round(min(cos), 5)}
    if "x" in spec["in_names"]:  # a classifier: arg-max agreement
        r["top1_agree"] = top1 / n
    return r


def versions():
    import numpy
    import onnx
    import onnxruntime
    import torch
    v = {"torch": torch.__version__, "onnx": onnx.__version__,
         "onnxruntime": onnxruntime.__version__, "numpy": numpy.__version__}
    for mod in ("torchvision", "transformers"):
        try:
            v[mod] = __import__(mod).__version__
        except ImportError:
            pass
    return v


def make(name, cache, formats, n_calib, force, do_check, log=print):
    spec = MODELS[name]
    base = os.path.join(cache, name)
    f32 = base + "-f32.onnx"
    if force or not os.path.exists(f32):
        export_f32(name, spec, f32, log)
    meta_path = base + ".json"
    meta = {}
    if os.path.exists(meta_path):
        with open(meta_path) as f:
            meta = json.load(f)
    meta.update({"model": name, "versions": versions(), "seed": SEED,
                 "calib_seed": CALIB_SEED, "opset": OPSET,
                 "activations": "uint8", "weights": "int8 per-channel",
                 "f32": os.path.basename(f32)})
    for fmt in formats:
        out = "%s-int8-%s.onnx" % (base, fmt)
        if force or not os.path.exists(out):
            quantize(name, spec, f32, out, fmt, n_calib, log)
            meta.setdefault("calibration_inputs", {})[fmt] = n_calib
        entry = {"file": os.path.basename(out), "ops": op_counts(out)}
        if do_check:
            entry["vs_f32_ort"] = check(spec, f32, out)
        meta.setdefault("int8", {})[fmt] = entry
        log(out)
    with open(meta_path + ".tmp", "w") as f:
        json.dump(meta, f, indent=1, sort_keys=True)
    os.replace(meta_path + ".tmp", meta_path)
    log(f32)
    return meta


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("-k", dest="pattern", help="models whose name matches this regex")
    ap.add_argument("--format", choices=("qdq", "qop", "both"), default="qdq",
                    help="quantization format: QDQ (default), QOperator, or both")
    ap.add_argument("--calib", type=int, default=8, help="calibration inputs (default 8)")
    ap.add_argument("--cache", help="cache directory (default $NCC_QUANT_CACHE, "
                                    "else ~/.cache/ncc-quant/<onnxruntime version>)")
    ap.add_argument("--force", action="store_true", help="make the files again")
    ap.add_argument("--check", action="store_true",
                    help="record the int8 models' agreement with f32 under ONNX Runtime")
    a = ap.parse_args()
    names = [n for n in MODELS if not a.pattern or re.search(a.pattern, n)]
    if not names:
        print("quantize.py: error: no model matches %r (models: %s)" % (
            a.pattern, ", ".join(MODELS)), file=sys.stderr)
        return 2
    formats = ["qdq", "qop"] if a.format == "both" else [a.format]
    cache = cache_dir(a.cache)
    for name in names:
        meta = make(name, cache, formats, a.calib, a.force, a.check)
        for fmt, e in meta.get("int8", {}).items():
            if "vs_f32_ort" in e:
                print("%s %s vs f32 (onnxruntime): %s" % (name, fmt, e["vs_f32_ort"]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
