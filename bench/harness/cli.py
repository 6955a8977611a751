"""bench/harness/cli.py — the `bench/experiment` command line.

  bench/experiment PRESET_OR_SPEC --out DIR [options]   run (or resume) a sweep
  bench/experiment merge DIR... --out DIR                merge shards, one report
  bench/experiment report DIR                            rewrite DIR/report.md
  bench/experiment list                                  presets and compilers

The point measurements of one model and batch are timed together, in
interleaved rounds (runner.py); every row records its thread count and the
CPUs the sweep was pinned to.

Exit status: 0 done (rows may still be skipped or flagged: they are data);
1 bad command line or spec; 2 the sweep could not start (no ncc); 3 with
--strict, when any row is mismatch, error or timeout.
"""
import argparse
import json
import os
import sys
import time

from . import adapters, report, report_hw, results, runner, zoo
from . import spec as specmod
from .nccbin import find_ncc

EPILOG = """examples:
  bench/experiment quick --out out/quick
  bench/experiment full --out out/full --shard 3/16      # one shard of 16
  bench/experiment models --out out/m --models squeezenet1_1,mobilenet_v2 --only E3
  bench/experiment merge out/full/shard-* --out out/full/all
docs/EXPERIMENTS-HOWTO.md has the spec format and a Slurm recipe."""


def _run_parser():
    ap = argparse.ArgumentParser(
        prog="bench/experiment", formatter_class=argparse.RawDescriptionHelpFormatter,
        description="Run a block-level compiler experiment sweep (preset: %s)."
        % ", ".join(specmod.preset_names()), epilog=EPILOG)
    ap.add_argument("spec", help="preset name (bench/specs/NAME.toml) or a .toml/.json spec")
    ap.add_argument("--out", required=True, help="result directory (created; resumed if it "
                    "holds results.jsonl)")
    ap.add_argument("--ncc", help="ncc binary (default: $NCC, build/ncc, PATH)")
    ap.add_argument("--shard", default="0/1", help="run shard I of N (0-based), e.g. 2/8")
    ap.add_argument("--only", help="comma-separated experiment ids to run (e.g. E1,E5)")
    ap.add_argument("--compilers", help="comma-separated compilers to keep (e.g. ncc,xla)")
    ap.add_argument("--models", help="comma-separated real models to keep (e.g. "
                    "resnet18,squeezenet1_1; a depth family by name or by model: resnet, "
                    "resnet34); experiments left without a model are dropped")
    ap.add_argument("--threads", type=int, help="override the spec's thread count")
    ap.add_argument("--iters", type=int, help="override timed runs per row (spec and "
                    "experiments): the rounds of a group of rows timed together")
    ap.add_argument("--warmup", type=int, help="override warm-up runs")
    ap.add_argument("--no-resume", action="store_true",
                    help="start over (an existing results.jsonl is moved to .old)")
    ap.add_argument("--retry-errors", action="store_true",
                    help="re-run rows whose status is error or timeout")
    ap.add_argument("--isolate", action="store_true",
                    help="run each group of measurements (one model and batch) in a child "
                    "process (hard timeout: row_timeout_s per row)")
    ap.add_argument("--no-plots", action="store_true", help="report without plots")
    ap.add_argument("--machine", help="name of this machine in a report merged across "
                    "machines (default: CPU model, cores and architecture)")
    ap.add_argument("--emulated", nargs="?", const=True, default=None, metavar="EMULATOR",
                    help="declare this run emulated (e.g. qemu-aarch64): rows are checked, "
                    "their times never ranked (detected for qemu-user without it)")
    ap.add_argument("--dry-run", action="store_true",
                    help="list the measurements of this shard and exit")
    ap.add_argument("--quiet", action="store_true", help="no progress output")
    ap.add_argument("--strict", action="store_true",
                    help="exit 3 when a row is mismatch, error or timeout")
    return ap


def _apply_overrides(spec, a):
    if a.threads is not None:
        spec["threads"] = a.threads
    for k in ("iters", "warmup"):
        v = getattr(a, k)
        if v is not None:
            spec[k] = v
            for e in spec["experiments"]:
                e[k] = v
    if a.only:
        keep = [x.strip() for x in a.only.split(",") if x.strip()]
        unknown = set(keep) - {e["id"] for e in spec["experiments"]}
        if unknown:
            raise specmod.SpecError("--only: no experiment %s" % ", ".join(sorted(unknown)))
        spec["experiments"] = [e for e in spec["experiments"] if e["id"] in keep]
    if getattr(a, "models", None):
        spec = filter_models(spec, [x.strip() for x in a.models.split(",") if x.strip()])
    if a.compilers:
        keep = {x.strip() for x in a.compilers.split(",") if x.strip()}
        unknown = keep - set(adapters.names())
        if unknown:
            raise specmod.SpecError("--compilers: unknown %s" % ", ".join(sorted(unknown)))
        for e in spec["experiments"]:
            e["compilers"] = {k: v for k, v in e["compilers"].items() if k in keep}
            if "compare" in e:
                e["compare"] = [p for p in e["compare"]
                                if all(c.split(":")[0] in keep for c in p)]
    return spec


def filter_models(spec, keep):
    """--models: the real-model experiments cut down to the models in `keep`
    (a depth family stays whole when named, else keeps the depths whose
    model is named); block experiments are left as they are, and a
    real-model experiment left empty is dropped."""
    keep = set(keep)
    known = set()
    exps = []
    for e in spec["experiments"]:
        if not e.get("real"):
            exps.append(e)
            continue
        if e["kind"] == "depth":
            known.update(e["blocks"])
            known.update(zoo.family_name(f, d) for f in e["blocks"] for d in e["depths"])
            fams = [f for f in e["blocks"] if f in keep or
                    any(zoo.family_name(f, d) in keep for d in e["depths"])]
            depths = [d for d in e["depths"] if any(
                f in keep or zoo.family_name(f, d) in keep for f in fams)]
            if fams and depths:
                exps.append(dict(e, blocks=fams, models=fams, depths=depths))
            continue
        known.update(e["blocks"])
        names = [b for b in e["blocks"] if b in keep]
        if names:
            exps.append(dict(e, blocks=names, models=names))
    unknown = keep - known
    if unknown:
        raise specmod.SpecError("--models: no experiment of this spec has %s (models: %s)"
                                % (", ".join(sorted(unknown)), ", ".join(sorted(known)) or
                                   "none: the spec has no real-model experiment"))
    if not exps:
        raise specmod.SpecError("--models leaves no experiment to run")
    spec["experiments"] = exps
    return spec


def cmd_run(argv):
    ap = _run_parser()
    a = ap.parse_args(argv)
    try:
        spec = _apply_overrides(specmod.load(a.spec), a)
        shard = runner.parse_shard(a.shard)
    except (specmod.SpecError, ValueError) as e:
        print("bench/experiment: error: %s" % e, file=sys.stderr)
        return 1
    ncc = find_ncc(a.ncc)
    if ncc is None:
        print("bench/experiment: error: no ncc binary: build it (cmake -S . -B build && "
              "make -C build) or pass --ncc PATH / set NCC", file=sys.stderr)
        return 2
    t0 = time.time()
    sweep = runner.Sweep(spec, a.out, ncc, shard=shard, resume=not a.no_resume,
                         retry_errors=a.retry_errors, isolate=a.isolate,
                         progress=not a.quiet, log=None if a.quiet else sys.stderr,
                         plots=not a.no_plots, machine=a.machine, emulated=a.emulated)
    try:
        todo = sweep.prepare()
    except Exception as e:
        print("bench/experiment: error: %s" % e, file=sys.stderr)
        return 2
    if a.dry_run:
        for key, m, exps in todo:
            print("%s  %-12s %s" % (key, ",".join(exps), runner.label(m)))
        return 0
    counts = sweep.run(todo)
    path = sweep.report()
    took = time.time() - t0
    print("%s: %s in %.0fs; report: %s" % (
        spec["name"], ", ".join("%d %s" % (n, s) for s, n in sorted(counts.items())) or
        "nothing to run", took, path), file=sys.stderr)
    if a.strict and any(counts.get(s) for s in ("mismatch", "error", "timeout")):
        return 3
    return 0


def cmd_merge(argv):
    ap = argparse.ArgumentParser(prog="bench/experiment merge",
                                 description="Merge result directories (shards) into one.")
    ap.add_argument("dirs", nargs="+")
    ap.add_argument("--out", required=True)
    ap.add_argument("--no-plots", action="store_true")
    a = ap.parse_args(argv)
    try:
        runner.merge(a.dirs, a.out, plots=not a.no_plots)
    except (RuntimeError, OSError, ValueError) as e:
        print("bench/experiment merge: error: %s" % e, file=sys.stderr)
        return 1
    return 0


def cmd_report(argv):
    ap = argparse.ArgumentParser(prog="bench/experiment report",
                                 description="Rewrite DIR/report.md from DIR/results.jsonl.")
    ap.add_argument("dir")
    ap.add_argument("--no-plots", action="store_true")
    a = ap.parse_args(argv)
    sp = os.path.join(a.dir, "spec.json")
    if not os.path.exists(sp):
        print("bench/experiment report: error: %s has no spec.json" % a.dir, file=sys.stderr)
        return 1
    rows = report_hw.latest(results.read_rows(os.path.join(a.dir, "results.jsonl")))
    print(report.write(a.dir, json.load(open(sp)), rows, plots=not a.no_plots))
    return 0


def cmd_list(argv):
    print("presets: %s" % ", ".join(specmod.preset_names()))
    print("compilers:")
    for name in adapters.names():
        try:
            cls = adapters.adapter_class(name)
        except Exception as e:
            print("  %-12s adapter broken: %s" % (name, e))
            continue
        if name == "ncc":
            path = find_ncc()
            print("  %-12s %s" % (name, path or "not found (set NCC or build build/ncc)"))
            continue
        try:
            a = cls(1)
            a.load()
            state = "installed %s" % (a.version() or "")
        except adapters.Skipped as e:
            state = "missing (%s)" % (e.hint or e.reason)
        print("  %-12s %-30s configs: %s" % (name, state, ", ".join(cls.CONFIGS)))
    return 0


def main(argv=None):
    argv = sys.argv[1:] if argv is None else argv
    if argv and argv[0] == "_row":
        return runner.row_child()
    cmds = {"merge": cmd_merge, "report": cmd_report, "list": cmd_list}
    if argv and argv[0] in cmds:
        return cmds[argv[0]](argv[1:])
    return cmd_run(argv)
