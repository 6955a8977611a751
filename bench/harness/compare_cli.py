"""bench/harness/compare_cli.py — the command line of bench/compare: parse,
pin the threads before any vendor is imported, load the compilers, measure
every batch size (compare.py), print (compare_report.py)."""
import argparse
import json
import os
import sys

USAGE = """bench/compare MODEL.onnx [options]

Your own ONNX model against the vendor compilers, in one command: outputs
checked first against onnxruntime with graph optimisations off (an oracle
outside ncc), then latency timed in interleaved rounds
with a 95%% confidence interval on every median and every ratio, compile time
split into build and first run, and a ratio table that says which
differences are real ("within noise" when the interval holds 1).  Every
compiler, ncc included (libncc in this process), is timed the same way: one
call per timed run, interleaved call by call.

  bench/compare model.onnx --against ort,openvino --threads 2 --batch 1,8
"""

EPILOG = """inputs:
  Shapes come from the model's declared inputs; a symbolic first dim is the
  batch (each --batch value).  Other symbolic dims need --dim NAME=VALUE.
  Data: seeded random, floats standard normal, integer inputs (token ids)
  in [0, 100), unless --input NAME=file.npy gives real data.

compilers (--against): ort (onnxruntime, all graph optimisations),
  ort-noopt (onnxruntime without graph optimisations, ORT_DISABLE_ALL: the
  uncompiled baseline; always run, timed only when listed: it is the
  reference every output is checked against), openvino, tvm, iree, inductor (needs the
  onnx2torch package), xla (no ONNX frontend: skipped).  One not installed
  is reported as "skipped: why".  ncc runs as each --ncc-configs entry
  (TARGET-OLEVEL such as cpu-O2, or TARGET: ref), in this process through
  libncc (the libncc.a beside the ncc binary, linked once into a shared
  library); where that cannot load (a sanitizer build, NCC_HARNESS_INPROCESS=0)
  it runs as one `ncc bench` process per round, and the report says so.

timing:
  --warmup untimed calls of each compiler, then --rounds rounds; in each
  round every compiler takes one turn (one untimed re-warm call, then one
  timed call), the first turn rotating from round to round.  While a row's
  median CI is wider than 2% of it or its robust cv (1.4826 * MAD /
  median) is above 0.10, the batch gets half as many rounds again, up to
  five times --rounds in all (--fixed-rounds: never).
  --outputs fresh (default): every call returns new outputs, for every
  compiler, ncc included (ncc_module_run through libncc, not ncc's C
  timer).  --outputs preallocated: outputs bound once and written in place
  where the API allows (onnxruntime IOBinding, OpenVINO request tensors, ncc
  ncc_module_run_into); the others stay fresh.  The report's timing line and
  each row's timing record say which, per compiler.

exit status:
  0  done (mismatches are reported but do not fail without --strict)
  1  usage error or unusable model (one "bench/compare: error:" line)
  3  --strict and some compiler's output did not match the reference (or
     could not be checked: nothing outside ncc ran), or a compiler failed
     on the model
"""


class UsageError(Exception):
    pass


class _Parser(argparse.ArgumentParser):
    def error(self, message):
        raise UsageError(message)


def build_parser():
    p = _Parser(prog="bench/compare", usage=USAGE, epilog=EPILOG,
                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("model", help="the ONNX model file")
    p.add_argument("--against", default="ort,openvino",
                   help="vendor compilers, comma-separated (default ort,openvino)")
    p.add_argument("--ncc-configs", default="cpu-O2",
                   help="ncc configurations, comma-separated (default cpu-O2; e.g. "
                        "cpu-O2,cpu-O0,ref); 'none' for no ncc")
    p.add_argument("--ncc", help="the ncc binary (default $NCC, build/ncc, PATH)")
    p.add_argument("--threads", type=int,
                   help="threads for every compiler (default: all CPUs this process may use)")
    p.add_argument("--no-pin", action="store_true",
                   help="do not pin the process to --threads CPUs")
    p.add_argument("--batch", default="1",
                   help="batch sizes for the symbolic first dim, comma-separated (default 1)")
    p.add_argument("--dim", action="append", default=[], metavar="NAME=VALUE",
                   help="size of another symbolic dim (repeatable)")
    p.add_argument("--input", action="append", default=[], metavar="NAME=FILE.npy",
                   help="real data for an input (repeatable)")
    p.add_argument("--rounds", type=int, default=20,
                   help="interleaved rounds = timed calls per compiler (default 20)")
    p.add_argument("--warmup", type=int, default=3,
                   help="untimed calls of each compiler before the rounds (default 3)")
    p.add_argument("--outputs", choices=("fresh", "preallocated"), default="fresh",
                   help="fresh outputs on every call (default), or outputs bound once "
                        "where the API allows")
    p.add_argument("--fixed-rounds", action="store_true",
                   help="no extra rounds when a row is noisy")
    p.add_argument("--rtol", type=float, default=1e-3, help="output check (default 1e-3)")
    p.add_argument("--atol", type=float, default=1e-4, help="output check (default 1e-4)")
    p.add_argument("--seed", type=int, default=0, help="random input seed (default 0)")
    p.add_argument("--timeout", type=float, default=600.0,
                   help="seconds per ncc command (default 600)")
    p.add_argument("--json", action="store_true", help="print one JSON object instead")
    p.add_argument("--out", metavar="DIR", help="also write DIR/report.md and DIR/results.json")
    p.add_argument("--strict", action="store_true",
                   help="exit 3 when an output mismatches or a compiler fails")
    p.add_argument("--quiet", action="store_true", help="no progress lines on stderr")
    return p


def _csv(s):
    return [t.strip() for t in s.split(",") if t.strip()]


def _fail(msg):
    sys.stderr.write("bench/compare: error: %s\n" % " ".join(str(msg).split()))
    return 1


def main(argv=None):
    try:
        return _main(argv)
    except UsageError as e:
        return _fail(e)
    except KeyboardInterrupt:
        sys.stderr.write("bench/compare: interrupted\n")
        return 130
    except Exception as e:  # a bug here must still be one line, not a traceback
        if os.environ.get("NCC_COMPARE_DEBUG"):
            raise
        return _fail("internal error: %s: %s (NCC_COMPARE_DEBUG=1 shows the traceback)"
                     % (type(e).__name__, str(e).splitlines()[0] if str(e) else ""))


def _main(argv):
    args = build_parser().parse_args(argv)
    from .compare_model import CompareError
    try:
        return _run(args)
    except CompareError as e:
        return _fail(e)


def _run(args):
    from .compare_model import CompareError
    try:
        batches = [int(b) for b in _csv(args.batch)]
    except ValueError:
        raise CompareError("--batch expects positive integers separated by commas, got '%s'"
                           % args.batch)
    if not batches or min(batches) < 1:
        raise CompareError("--batch expects positive integers, got '%s'" % args.batch)
    batches = list(dict.fromkeys(batches))  # each size once, in the order given
    for flag, v, lo in (("--rounds", args.rounds, 1), ("--warmup", args.warmup, 0)):
        if v < lo:
            raise CompareError("%s must be at least %d, got %d" % (flag, lo, v))
    if args.rtol < 0 or args.atol < 0:
        raise CompareError("--rtol and --atol must not be negative")
    allowed = (len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity")
               else os.cpu_count() or 1)
    threads = args.threads if args.threads is not None else allowed
    if threads < 1:
        raise CompareError("--threads must be at least 1, got %d" % threads)
    from .compare_engines import ALIASES
    against = []
    for a in _csv(args.against):
        k = ALIASES.get(a.lower())
        if k is None:
            raise CompareError("--against: unknown compiler '%s' (known: %s)"
                               % (a, ", ".join(sorted(ALIASES))))
        if k not in against:
            against.append(k)
    ncc_configs = [] if args.ncc_configs.strip() == "none" else _csv(args.ncc_configs)

    # The model and its inputs: every usage error before anything is imported.
    from .compare_model import ModelInfo, load_inputs, parse_dims
    info = ModelInfo(args.model)
    dims = parse_dims(args.dim)
    given, given_paths = load_inputs(args.input, info)
    notes = []
    if not info.has_batch():
        # static shapes: one run at the model's own batch, whatever --batch says
        feeds = info.feeds(1, dims, given, args.seed)
        first = next(iter(feeds.values()))
        real = int(first.shape[0]) if first.ndim else 1
        if batches != [real]:
            notes.append("the model's inputs have no symbolic first dim: --batch %s ignored, "
                         "batch %d as declared" % (args.batch, real))
        batches, feeds_by_batch = [real], {real: feeds}
    else:
        feeds_by_batch = {b: info.feeds(b, dims, given, args.seed) for b in batches}

    if threads > allowed:
        notes.append("--threads %d is more than the %d CPUs this process may use"
                     % (threads, allowed))
    # Threads and pinning before any vendor is imported.
    from . import envinfo
    pinned = envinfo.apply_threads(threads, not args.no_pin)

    from .adapters.base import Skipped
    from .compare_engines import VENDORS, load_ncc_engine
    from .nccbin import Ncc, find_ncc
    from . import compare, compare_report, measure
    log = (lambda s: None) if args.quiet else (lambda s: sys.stderr.write(s + "\n"))
    ncc_path = find_ncc(args.ncc)
    ncc = Ncc(ncc_path, timeout=args.timeout) if ncc_path else None

    compilers, engines, kinds = [], [], {}
    timed = set()
    order = ["onnxruntime-noopt"] + [a for a in against if a != "onnxruntime-noopt"]
    for v in order:
        eng = VENDORS[v](threads)
        rec = {"key": v, "name": v, "kind": eng.kind,
               "config": getattr(eng, "onnx_config", None),
               "reference_only": v not in against}
        compilers.append(rec)
        try:
            eng.load()
            rec["version"] = eng.version()
            rec["status"] = "ok"
            engines.append((v, eng))
            kinds[v] = eng.kind
            if v in against:
                timed.add(v)
        except Skipped as e:
            rec.update(status="skipped", reason=e.reason, hint=e.hint)
        except Exception as e:  # a broken install: Core() failing, say
            rec.update(status="skipped", reason="%s does not load (%s: %s)" % (
                v, type(e).__name__, str(e).splitlines()[0] if str(e) else ""))
    for c in ncc_configs:
        key = "ncc:" + c.replace(" ", "")
        rec = {"key": key, "name": "ncc", "kind": "ncc", "config": c}
        compilers.append(rec)
        try:
            eng = load_ncc_engine(threads, ncc, c, info.outputs, args.timeout)
        except ValueError as e:
            raise CompareError("--ncc-configs: %s" % e)
        except Skipped as e:
            rec.update(status="skipped", reason=e.reason, hint=e.hint)
            continue
        rec["version"] = eng.version()
        rec["status"] = "ok"
        rec["timing"] = dict(eng.timing)
        if eng.timing.get("why") and not any("ncc bench` process" in n for n in notes):
            notes.append("ncc is timed through its command line, one `ncc bench` process per "
                         "round with ncc's own clock (not in-process like the vendors): %s"
                         % eng.timing["why"])
        engines.append((key, eng))
        kinds[key] = "ncc"
        timed.add(key)

    opts = {"reference": "onnxruntime-noopt", "timed": timed, "rounds": args.rounds,
            "warmup": args.warmup, "adaptive": not args.fixed_rounds, "rtol": args.rtol,
            "atol": args.atol, "kinds": kinds, "outputs": args.outputs}
    results = []
    for b in batches:
        log("bench/compare: batch %d" % b)
        results.append(compare.measure_batch(engines, info, b, feeds_by_batch[b], opts, log))

    ran = [r for res in results for r in res["rows"] if r.get("check")]
    if not ran:
        why = "; ".join("%s: %s" % (r["compiler"], r.get("reason", r["status"]))
                        for r in results[0]["rows"]) if results else "no compiler loaded"
        raise CompareError("no compiler could run %s (%s)" % (args.model, why or
                                                              "no compiler loaded"))
    env = envinfo.collect(ncc, threads, pinned)
    build = env["ncc"].get("build") or {}
    san = build.get("sanitize") not in (None, "", "OFF", "0", "FALSE", "NO")
    slow_type = build.get("build_type") not in (None, "", "Release", "RelWithDebInfo")
    if (san or slow_type) and any(k.startswith("ncc:") for k in kinds):
        notes.append("ncc at %s is a %s%s build: its timings measure that (build with "
                     "-DCMAKE_BUILD_TYPE=Release for numbers)"
                     % (ncc_path, build.get("build_type") or "default",
                        " sanitizer (NCC_SANITIZE=%s)" % build["sanitize"] if san else ""))
    env["threads"] = threads
    env["timing"] = {"outputs_policy": args.outputs, "compilers": {}}
    for res in results:
        for r in res["rows"]:
            t = r.get("timing")
            if t and r["compiler"] in timed:
                env["timing"]["compilers"].setdefault(r["compiler"], timing_note(t))
    env["allowed_cpus"] = allowed
    doc = {
        "tool": "bench/compare", "model": args.model, "created": envinfo.now_utc(),
        "settings": {"batches": batches, "rounds": args.rounds,
                     "adaptive_rounds": not args.fixed_rounds, "warmup": args.warmup,
                     "rewarm_per_turn": measure.REWARM, "rtol": args.rtol, "atol": args.atol,
                     "seed": args.seed, "dims": dims, "threads": threads,
                     "pinned_cpus": pinned, "reference": "onnxruntime-noopt",
                     "oracle": "onnxruntime, ORT_DISABLE_ALL (graph optimisations off)",
                     "outputs": args.outputs},
        "inputs": info.describe(given, args.seed, given_paths),
        "outputs": info.outputs,
        "notes": notes,
        "compilers": compilers,
        "batches": results,
        "env": env,
    }
    bad = [r for res in results for r in res["rows"]
           if r["status"] in ("mismatch", "failed", "unchecked")]
    doc["exit_status"] = 3 if (args.strict and bad) else 0
    doc = _finite(doc)
    if args.json:
        sys.stdout.write(json.dumps(doc, indent=1, default=_jsonable, allow_nan=False) + "\n")
    else:
        sys.stdout.write(compare_report.text(doc))
    if args.out:
        os.makedirs(args.out, exist_ok=True)
        with open(os.path.join(args.out, "results.json"), "w") as f:
            f.write(json.dumps(doc, indent=1, default=_jsonable, allow_nan=False) + "\n")
        with open(os.path.join(args.out, "report.md"), "w") as f:
            f.write(compare_report.markdown(doc))
    return doc["exit_status"]


def timing_note(t):
    """One line from a row's timing record: where, clock, outputs."""
    note = "%s, %s; outputs %s" % (t.get("where"), t.get("clock"), t.get("outputs"))
    if t.get("outputs_why"):
        note += " (%s)" % t["outputs_why"]
    if t.get("why"):
        note += "; NOT symmetric with the in-process rows: %s" % t["why"]
    return note


def _finite(v):
    """The document with NaN and infinities as null: strict JSON."""
    if isinstance(v, float):
        return v if v == v and v not in (float("inf"), float("-inf")) else None
    if isinstance(v, dict):
        return {k: _finite(x) for k, x in v.items()}
    if isinstance(v, (list, tuple)):
        return [_finite(x) for x in v]
    return v


def _jsonable(v):
    try:
        return float(v)
    except (TypeError, ValueError):
        return str(v)
