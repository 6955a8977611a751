"""bench/harness/layers_cli.py — the command line of bench/layers: parse,
pin the threads before any vendor is imported, profile the model with
every compiler (layers_vendors.py, layers_ncc.py), align the profiles on
the ONNX nodes (layers_align.py), print (layers_report.py)."""
import argparse
import json
import os
import shutil
import sys
import tempfile

USAGE = """bench/layers MODEL.onnx [options]

The same model profiled by ncc (`ncc bench --profile`), onnxruntime (its
profiling JSON) and OpenVINO (its performance counters), aligned on the
model's ONNX nodes: for each layer, which compiler is fastest and by how
much.

  bench/layers model.onnx --against ort,openvino --threads 2 --batch 1
"""

EPILOG = """rows:
  Compilers fuse differently, so a row is the smallest set of ONNX nodes that
  every compiler runs in whole kernels (nodes one compiler fuses are one row
  for all).  A compiler's ms on a row is the sum of its kernels there, mean
  per run; 0 when it ran no kernel for those nodes (folded, eliminated).
  "unattributed" is time in no row: kernels whose names trace to no ONNX
  node (layout reorders the compiler inserted) and ncc's host steps.
  onnxruntime's profile names only the node a fused kernel became; its
  fusions are reconstructed from the graph and the notes say how many
  nodes were placed that way.  Profiled times carry the profilers' own
  overhead: compare rows, and use bench/compare for end-to-end latency.

inputs: as bench/compare (symbolic first dim = --batch, --dim, --input).

exit status:
  0  done
  1  usage error, unusable model, or no compiler could profile it (one
     "bench/layers: error:" line)
"""


class UsageError(Exception):
    pass


class _Parser(argparse.ArgumentParser):
    def error(self, message):
        raise UsageError(message)


def build_parser():
    p = _Parser(prog="bench/layers", usage=USAGE, epilog=EPILOG,
                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("model", help="the ONNX model file")
    p.add_argument("--against", default="ort,openvino",
                   help="vendor compilers, comma-separated: ort, openvino (default both); "
                        "'none' for ncc alone")
    p.add_argument("--ncc", help="the ncc binary (default $NCC, build/ncc, PATH)")
    p.add_argument("--ncc-json", metavar="FILE",
                   help="ncc's profile from a saved `ncc bench --profile --json` output "
                        "instead of running ncc")
    p.add_argument("--no-ncc", action="store_true", help="vendors only")
    p.add_argument("--threads", type=int,
                   help="threads for every compiler (default: all CPUs this process may use)")
    p.add_argument("--no-pin", action="store_true",
                   help="do not pin the process to --threads CPUs")
    p.add_argument("--batch", type=int, default=1,
                   help="batch size for the symbolic first dim (default 1)")
    p.add_argument("--dim", action="append", default=[], metavar="NAME=VALUE",
                   help="size of another symbolic dim (repeatable)")
    p.add_argument("--input", action="append", default=[], metavar="NAME=FILE.npy",
                   help="real data for an input (repeatable)")
    p.add_argument("--runs", type=int, default=20,
                   help="profiled runs per compiler, averaged (default 20)")
    p.add_argument("--warmup", type=int, default=3,
                   help="runs before the profiled ones (default 3)")
    p.add_argument("--sort", choices=("graph", "time"), default="graph",
                   help="row order: graph order (default) or largest time first")
    p.add_argument("--top", type=int, default=0,
                   help="print only the first N rows (the totals cover all)")
    p.add_argument("--seed", type=int, default=0, help="random input seed (default 0)")
    p.add_argument("--timeout", type=float, default=600.0,
                   help="seconds for the ncc command (default 600)")
    p.add_argument("--json", action="store_true", help="print one JSON object instead")
    p.add_argument("--out", metavar="DIR", help="also write DIR/layers.md and DIR/layers.json")
    p.add_argument("--quiet", action="store_true", help="no progress lines on stderr")
    return p


def _fail(msg):
    sys.stderr.write("bench/layers: error: %s\n" % " ".join(str(msg).split()))
    return 1


def main(argv=None):
    try:
        return _run(build_parser().parse_args(argv))
    except UsageError as e:
        return _fail(e)
    except KeyboardInterrupt:
        sys.stderr.write("bench/layers: interrupted\n")
        return 130
    except Exception as e:
        from .compare_model import CompareError
        from .layers_graph import LayersError
        if isinstance(e, (CompareError, LayersError)):
            return _fail(e)
        if os.environ.get("NCC_LAYERS_DEBUG"):
            raise
        return _fail("internal error: %s: %s (NCC_LAYERS_DEBUG=1 shows the traceback)"
                     % (type(e).__name__, _line(e)))


def _line(e):
    s = [l.strip() for l in str(e).strip().splitlines() if l.strip()]
    s = [l for l in s if not (l.startswith("Exception from") and l.endswith(":"))] or s
    return (s[0] if s else type(e).__name__)[:300]


def _run(args):
    from .layers_graph import Graph, LayersError
    from .layers_vendors import ALIASES
    for flag, v, lo in (("--runs", args.runs, 1), ("--warmup", args.warmup, 0),
                        ("--batch", args.batch, 1), ("--top", args.top, 0)):
        if v < lo:
            raise LayersError("%s must be at least %d, got %d" % (flag, lo, v))
    against = []
    if args.against.strip() != "none":
        for a in [t.strip() for t in args.against.split(",") if t.strip()]:
            k = ALIASES.get(a.lower())
            if k is None:
                raise LayersError("--against: unknown compiler '%s' (known: ort, openvino)" % a)
            if k not in against:
                against.append(k)
    allowed = (len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity")
               else os.cpu_count() or 1)
    threads = args.threads if args.threads is not None else allowed
    if threads < 1:
        raise LayersError("--threads must be at least 1, got %d" % threads)
    if args.ncc_json and not os.path.isfile(args.ncc_json):
        raise LayersError("--ncc-json %s: no such file" % args.ncc_json)

    from .compare_model import ModelInfo, load_inputs, parse_dims
    info = ModelInfo(args.model)
    graph = Graph.from_onnx(args.model)
    dims = parse_dims(args.dim)
    given, _ = load_inputs(args.input, info)
    feeds = info.feeds(args.batch, dims, given, args.seed)
    notes = []
    if not info.has_batch() and args.batch != 1:
        notes.append("the model's inputs have no symbolic first dim: --batch %d ignored"
                     % args.batch)

    from . import envinfo
    pinned = envinfo.apply_threads(threads, not args.no_pin)
    log = (lambda s: None) if args.quiet else (lambda s: sys.stderr.write(s + "\n"))

    from .adapters.base import Skipped
    from .layers_attr import named
    from .layers_vendors import PROFILERS, profile_vendors
    from .layers_ncc import NoProfile, parse_ncc_profile, run_ncc_profile
    from .nccbin import Ncc, find_ncc

    tmp = tempfile.mkdtemp(prefix="ncc-layers-")
    compilers, profiles = {}, {}
    columns = ([] if args.no_ncc else ["ncc"]) + against
    try:
        if not args.no_ncc:
            compilers["ncc"] = _profile_ncc(args, graph, feeds, threads, tmp, log,
                                            Ncc, find_ncc, NoProfile, parse_ncc_profile,
                                            run_ncc_profile)
        profilers = []
        for v in against:
            try:
                profilers.append(PROFILERS[v](args.model, threads, tmp))
            except Skipped as e:
                compilers[v] = {"status": "skipped", "reason": e.reason}
            except Exception as e:
                compilers[v] = {"status": "failed", "reason": "%s failed: %s" % (v, _line(e))}
        if profilers:
            log("bench/layers: %s: %d warm-up + %d profiled runs, interleaved"
                % (", ".join(p.key for p in profilers), args.warmup, args.runs))
            try:
                for v, rec in profile_vendors(profilers, feeds, args.warmup, args.runs).items():
                    rec["status"] = "ok"
                    compilers[v] = rec
            except Exception as e:
                for p in profilers:
                    compilers[p.key] = {"status": "failed", "reason": "profiling failed: %s"
                                        % _line(e)}
        compilers = {c: compilers[c] for c in columns if c in compilers}
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    for c, rec in compilers.items():
        if rec["status"] == "ok":
            profiles[c] = rec
    if not profiles:
        raise LayersError("no compiler could profile %s (%s)" % (args.model, "; ".join(
            "%s: %s" % (c, r.get("reason")) for c, r in compilers.items()) or "none asked"))

    from .layers_align import align
    res = align(graph, profiles, [v for v in against if v in profiles], args.sort)
    env = envinfo.collect(None, threads, pinned)
    doc = {"tool": "bench/layers", "model": args.model, "created": envinfo.now_utc(),
           "settings": {"batch": args.batch, "threads": threads, "runs": args.runs,
                        "warmup": args.warmup, "sort": args.sort, "top": args.top,
                        "seed": args.seed, "pinned_cpus": pinned},
           "inputs": {n: list(v.shape) for n, v in feeds.items()},
           "columns": columns, "nodes": len(graph), "notes": notes,
           "compilers": {c: named(r, graph) for c, r in compilers.items()},
           "rows": [{k: v for k, v in r.items() if k != "first"} for r in res["rows"]],
           "totals": res["totals"], "winner": res["winner"], "ratio": res["ratio"],
           "wins": res["wins"], "idle_nodes": res["idle"], "env": env}
    from . import layers_report
    if args.json:
        sys.stdout.write(json.dumps(doc, indent=1, default=str) + "\n")
    else:
        sys.stdout.write(layers_report.text(doc))
    if args.out:
        os.makedirs(args.out, exist_ok=True)
        with open(os.path.join(args.out, "layers.json"), "w") as f:
            f.write(json.dumps(doc, indent=1, default=str) + "\n")
        with open(os.path.join(args.out, "layers.md"), "w") as f:
            f.write(layers_report.markdown(doc))
    return 0


def _profile_ncc(args, graph, feeds, threads, tmp, log, Ncc, find_ncc, NoProfile,
                 parse_ncc_profile, run_ncc_profile):
    """ncc's record: from --ncc-json, else a `ncc bench --profile` run."""
    import numpy as np
    try:
        if args.ncc_json:
            with open(args.ncc_json) as f:
                doc = json.load(f)
            rec = parse_ncc_profile(doc, graph)
            rec["source"] = args.ncc_json
        else:
            path = find_ncc(args.ncc)
            if path is None:
                return {"status": "skipped", "reason": "no ncc binary (--ncc PATH, $NCC, "
                        "build/ncc)"}
            inputs = []
            for i, (name, v) in enumerate(feeds.items()):
                p = os.path.join(tmp, "in%d.npy" % i)
                np.save(p, v)
                inputs.append("%s=%s" % (name, p))
            log("bench/layers: ncc: %d warm-up + %d profiled runs" % (args.warmup, args.runs))
            rec, _ = run_ncc_profile(Ncc(path, timeout=args.timeout), args.model, graph,
                                     args.batch, threads, args.warmup, args.runs, inputs,
                                     args.timeout)
            rec["binary"] = path
        rec["status"] = "ok"
        return rec
    except NoProfile as e:
        return {"status": "skipped", "reason": str(e)}
    except ValueError as e:
        return {"status": "failed", "reason": "unreadable ncc profile: %s" % _line(e)}
    except RuntimeError as e:
        return {"status": "failed", "reason": "ncc failed: %s" % _line(e)}
