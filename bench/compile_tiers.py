#!/usr/bin/env python3
"""bench/compile_tiers.py — the compile-speed tiers' trade-off curve.

For each ONNX model and each codegen tier (ncc --codegen-opt=0..3, the tier
-O0..-O3 choose: docs/CODEGEN.md "Compile-speed tiers") runs

  ncc bench MODEL --codegen-opt=N --json [--iters K]

`--rounds` times, the tiers interleaved within a round (model by model,
tier by tier, round after round) so drifting machine load spreads over all
of them. Per (model, tier) it prints the median compile ms (ncc's own
compile_ms: import to a runnable module) and the median of the rounds'
steady-state median latencies with a 95% interval of that median (order
statistics of the rounds, as `ncc bench` does for its runs; with fewer than
6 rounds the interval is the min..max). Run by hand; nothing here asserts a
time. On a shared machine, say so next to the figures.

Usage: python3 bench/compile_tiers.py [MODEL.onnx ...] [--ncc build/ncc]
         [--tiers 0,1,2,3] [--rounds 5] [--iters 30] [--threads N]
         [--csv OUT.csv] [--plot OUT.png]
Default models: examples/resblock.onnx.
"""
import argparse
import json
import math
import os
import statistics
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def median_ci(xs):
    """Median and an approximate 95% interval of it (binomial order stats)."""
    xs = sorted(xs)
    n = len(xs)
    med = statistics.median(xs)
    if n < 6:
        return med, xs[0], xs[-1]
    half = 1.96 * math.sqrt(n) / 2
    lo = max(0, int(math.floor(n / 2 - half)))
    hi = min(n - 1, int(math.ceil(n / 2 + half)) - 1)
    return med, xs[lo], xs[hi]


def bench_once(ncc, model, tier, iters, threads):
    # --no-cache: a cold compile every time (a warm cache would time reads)
    cmd = [ncc, "bench", model, f"--codegen-opt={tier}", "--json", f"--iters={iters}", "--no-cache"]
    if threads:
        cmd.append(f"--threads={threads}")
    p = subprocess.run(cmd, capture_output=True, text=True)
    if p.returncode:
        sys.exit(f"compile_tiers: {' '.join(cmd)}: exit {p.returncode}: "
                 f"{p.stderr.strip()[-300:]}")
    out = p.stdout
    j = json.loads(out[out.index("{"):])
    return j["compile_ms"], j["latency_ms"]["median"]


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("models", nargs="*")
    ap.add_argument("--ncc", default=os.path.join(ROOT, "build", "ncc"))
    ap.add_argument("--tiers", default="0,1,2,3")
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--iters", type=int, default=30)
    ap.add_argument("--threads", type=int, default=0)
    ap.add_argument("--csv")
    ap.add_argument("--plot")
    a = ap.parse_args()
    models = [os.path.join(ROOT, "examples", "resblock.onnx")] + a.models
    tiers = [int(t) for t in a.tiers.split(",")]
    res = {}
    for r in range(a.rounds):
        for m in models:
            for t in tiers:
                res.setdefault((m, t), []).append(bench_once(a.ncc, m, t, a.iters, a.threads))
        print(f"round {r + 1}/{a.rounds} done", file=sys.stderr)
    rows = []
    for (m, t), v in res.items():
        c = statistics.median(x[0] for x in v)
        lat, lo, hi = median_ci([x[1] for x in v])
        rows.append((os.path.basename(m), t, c, lat, lo, hi))
    print(f"{'model':28s} {'tier':>4s} {'compile ms':>11s} {'latency ms':>11s}  95% CI")
    for name, t, c, lat, lo, hi in rows:
        print(f"{name:28s} {t:4d} {c:11.1f} {lat:11.4f}  [{lo:.4f}, {hi:.4f}]")
    if a.csv:
        with open(a.csv, "w") as f:
            f.write("model,tier,compile_ms,latency_ms,latency_lo,latency_hi\n")
            for row in rows:
                f.write("%s,%d,%.3f,%.6f,%.6f,%.6f\n" % row)
    if a.plot:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
        fig, ax = plt.subplots(figsize=(7, 4.5))
        for name in dict.fromkeys(r[0] for r in rows):
            pts = sorted((r for r in rows if r[0] == name), key=lambda r: r[1])
            # latency relative to the model's tier-3 latency, so models of
            # very different sizes share one axis
            base = next((r[3] for r in pts if r[1] == 3), pts[-1][3])
            ax.plot([r[2] for r in pts], [r[3] / base for r in pts], marker="o", label=name)
            for r in pts:
                ax.annotate(f"{r[1]}", (r[2], r[3] / base), textcoords="offset points",
                            xytext=(4, 4), fontsize=8)
        ax.set_xscale("log")
        ax.set_xlabel("compile ms (median)")
        ax.set_ylabel("steady-state latency / tier 3's")
        ax.set_title("ncc compile-speed tiers (point label: --codegen-opt)")
        ax.legend()
        fig.tight_layout()
        fig.savefig(a.plot, dpi=120)


if __name__ == "__main__":
    main()
