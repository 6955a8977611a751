#!/usr/bin/env python3
"""bench/fusion_bench.py — the fusion and kernel-reuse measurements.

  bw       the elementwise chain (blocks.py eltwise --k 8 --depth 4) on the
           cpu target, fused (-O2) vs --disable-pass=fusion, and the
           bandwidth the fused kernel reaches against a STREAM-like triad
           (bench/stream_triad.c) measured in the same run, interleaved;
           best of the rounds on each side (shared machines are noisy).
           The triad runs over arrays of the chain's tensor size (same
           cache behaviour: the ratio that counts) and over >= 64 MB arrays.
  compile  compile_ms of `ncc bench --json` at depth 1, 8, 32 for mlp,
           resblock and transformer, with repeated-block kernel reuse on
           (default) and off (NCC_KERNEL_REUSE=0).

  passes   per generated block at depth 1 and 8: latency at -O2 against
           -O0, -O2 without fusion and -O2 without layout, in interleaved
           rounds (the best round median of each configuration).

Each prints a table (or --json). Usage:
  python3 bench/fusion_bench.py bw --ncc build/ncc [--batch 64] [--threads N]
                                   [--chain eltwise|cheap] [--k 8 --depth 4]
  python3 bench/fusion_bench.py compile --ncc build/ncc
  python3 bench/fusion_bench.py passes --ncc build/ncc [--batch 1] [--threads N]
"""
import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import blocks  # noqa: E402


def ncc_bench(ncc, model, extra, env=None):
    cmd = [ncc, "bench", model, "--target=cpu", "--json"] + extra
    e = dict(os.environ)
    e.setdefault("NCC_CACHE", "0")  # cold compiles (docs/CODEGEN.md, "Compile cache")
    e.update(env or {})
    out = subprocess.run(cmd, check=True, capture_output=True, text=True, env=e).stdout
    return json.loads(out)


def build_triad(tmp):
    exe = os.path.join(tmp, "stream_triad")
    cc = shutil.which("cc") or shutil.which("gcc") or shutil.which("clang-19")
    subprocess.run([cc, "-O3", "-march=native", "-pthread",
                    os.path.join(HERE, "stream_triad.c"), "-o", exe], check=True)
    return exe


def triad(exe, n, threads):
    cmd = [exe, "-n", str(n), "-r", "10"]
    if threads:
        cmd += ["-t", str(threads)]
    out = subprocess.run(cmd, check=True, capture_output=True, text=True).stdout
    return json.loads(out)


def cheap_chain(path, width, h, w, n_ops):
    """A chain of n_ops cheap ops (Mul, Add, Relu, Sub with per-channel
    constants, no transcendentals) as text IR: bandwidth-bound when fused."""
    cycle = ("Mul", "Add", "Relu", "Sub")
    lines = ["graph @cheap(%%x: f32[N,%d,%d,%d]) {" % (width, h, w)]
    for c in range(4):
        vals = ", ".join("%.3f" % (0.5 + 0.01 * ((c * 7 + i) % 50)) for i in range(width))
        if width > 16:
            lines.append("  %%c%d: f32[%d,1,1] = const splat(%.3f)" % (c, width, 0.5 + 0.1 * c))
        else:
            lines.append("  %%c%d: f32[%d,1,1] = const [%s]" % (c, width, vals))
    prev = "%x"
    for i in range(n_ops):
        op = cycle[i % len(cycle)]
        out = "%%v%d" % i
        if op == "Relu":
            lines.append("  %s = Relu(%s)" % (out, prev))
        else:
            lines.append("  %s = %s(%s, %%c%d)" % (out, op, prev, i % 4))
        prev = out
    lines.append("  return %s" % prev)
    lines.append("}")
    with open(path, "w") as f:
        f.write("\n".join(lines) + "\n")


def ms_to_ns(ms, n):
    return ms * 1e6 / n


def cmd_bw(a):
    tmp = tempfile.mkdtemp(prefix="ncc_fusion_bw_")
    try:
        h, w = a.spatial
        if a.chain == "cheap":
            model = os.path.join(tmp, "cheap.nir")
            cheap_chain(model, a.width, h, w, a.k * a.depth)
        else:
            model = os.path.join(tmp, "eltwise.onnx")
            m = blocks.build("eltwise", depth=a.depth, width=a.width, k=a.k, spatial=(h, w))
            import onnx
            onnx.save(m, model)
        exe = build_triad(tmp)
        numel = a.batch * a.width * h * w
        n_ops = a.k * a.depth
        flags = ["--batch", str(a.batch), "--iters", str(a.iters), "--warmup", "3"]
        env = {"NCC_NUM_THREADS": str(a.threads)} if a.threads else {}
        big = max(numel, 1 << 24)  # 64 MB arrays at least: past the caches
        rows = {"fused": [], "unfused": [], "triad": [], "copy": [], "triad_big": []}
        for _ in range(a.rounds):  # interleaved: the machine is noisy
            # the triad over arrays of the chain's tensor size (the same
            # cache behaviour), and over arrays of at least 64 MB
            t = triad(exe, numel, a.threads)
            rows["triad"].append(t["triad_gbps"])
            rows["copy"].append(t["copy_gbps"])
            rows["triad_big"].append(triad(exe, big, a.threads)["triad_gbps"])
            f = ncc_bench(a.ncc, model, flags, env)
            u = ncc_bench(a.ncc, model, flags + ["--disable-pass=fusion"], env)
            # the best run: on a shared machine the median measures the neighbours
            rows["fused"].append((f["latency_ms"]["min"], f["kernels"]))
            rows["unfused"].append((u["latency_ms"]["min"], u["kernels"]))
        bytes_min = 2.0 * numel * 4  # read x once, write y once
        res = {"numel": numel, "ops": n_ops, "batch": a.batch, "threads": a.threads,
               "triad_gbps": max(rows["triad"]), "copy_gbps": max(rows["copy"]),
               "triad_big_elems": big, "triad_big_gbps": max(rows["triad_big"])}
        for k in ("fused", "unfused"):
            ms = min(r[0] for r in rows[k])
            res[k] = {"latency_ms": ms, "kernels": rows[k][0][1],
                      "gbps_min_bytes": bytes_min / (ms * 1e-3) / 1e9}
        res["unfused"]["gbps_moved"] = bytes_min * n_ops / (res["unfused"]["latency_ms"] * 1e-3) / 1e9
        res["speedup"] = res["unfused"]["latency_ms"] / res["fused"]["latency_ms"]
        res["fused_vs_copy"] = res["fused"]["gbps_min_bytes"] / res["copy_gbps"]
        res["fused_vs_triad"] = res["fused"]["gbps_min_bytes"] / res["triad_gbps"]
        res["fused_vs_triad_big"] = res["fused"]["gbps_min_bytes"] / res["triad_big_gbps"]
        # per element and op: how compute-bound the fused kernel is
        res["fused"]["ns_per_elem"] = ms_to_ns(res["fused"]["latency_ms"], numel)
        if a.json:
            print(json.dumps(res))
            return
        print("%s chain: %d ops on %d floats (%.1f MB per tensor), batch %d, threads %s"
              % (a.chain, n_ops, numel, numel * 4 / 1e6, a.batch, a.threads or "default"))
        print("STREAM-like, same size: copy %.2f GB/s, triad %.2f GB/s; triad over %.0f MB "
              "arrays: %.2f GB/s" % (res["copy_gbps"], res["triad_gbps"], big * 4 / 1e6,
                                     res["triad_big_gbps"]))
        for k in ("fused", "unfused"):
            r = res[k]
            print("%-8s %3d kernels  %9.3f ms  %7.2f GB/s (x in, y out)"
                  % (k, r["kernels"], r["latency_ms"], r["gbps_min_bytes"]))
        print("unfused moves %d x the bytes: %.2f GB/s actually moved"
              % (n_ops, res["unfused"]["gbps_moved"]))
        print("fusion speedup %.2fx; fused: %.2f ns per element; bandwidth = %.0f%% of copy, "
              "%.0f%% of triad (same size), %.0f%% of triad (%.0f MB)"
              % (res["speedup"], res["fused"]["ns_per_elem"], 100 * res["fused_vs_copy"],
                 100 * res["fused_vs_triad"], 100 * res["fused_vs_triad_big"], big * 4 / 1e6))
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def block_models(tmp, names, depths):
    """(block, depth, path) of each generated block model, saved under tmp."""
    import onnx
    for b in names:
        for d in depths:
            model = os.path.join(tmp, "%s_d%d.onnx" % (b, d))
            onnx.save(blocks.build(b, depth=d), model)
            yield b, d, model


def cmd_compile(a):
    tmp = tempfile.mkdtemp(prefix="ncc_fusion_compile_")
    res = []
    try:
        for b, d, model in block_models(tmp, a.blocks, a.depths):
            row = {"block": b, "depth": d}
            for reuse in ("1", "0") if a.no_reuse else ("1",):
                ms = []
                for _ in range(a.repeat):
                    r = ncc_bench(a.ncc, model, ["--iters", "1", "--warmup", "0"],
                                  {"NCC_KERNEL_REUSE": reuse})
                    ms.append(r["compile_ms"])
                    row["kernels"] = r["kernels"]
                row["compile_ms" if reuse == "1" else "compile_ms_no_reuse"] = min(ms)
            res.append(row)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    for row in res:
        base = [r for r in res if r["block"] == row["block"] and r["depth"] == a.depths[0]][0]
        row["ratio_to_depth1"] = row["compile_ms"] / base["compile_ms"]
    if a.json:
        print(json.dumps(res))
        return
    hdr = "%-12s %5s %8s %12s %8s" % ("block", "depth", "kernels", "compile_ms", "ratio")
    if a.no_reuse:
        hdr += " %14s" % "no-reuse ms"
    print(hdr)
    for r in res:
        line = "%-12s %5d %8d %12.1f %8.2f" % (r["block"], r["depth"], r["kernels"],
                                               r["compile_ms"], r["ratio_to_depth1"])
        if a.no_reuse:
            line += " %14.1f" % r["compile_ms_no_reuse"]
        print(line)


PASS_CONFIGS = (("O2", ["-O2"]), ("O0", ["-O0"]),
                ("no_fusion", ["-O2", "--disable-pass=fusion"]),
                ("no_layout", ["-O2", "--disable-pass=layout"]))


def cmd_passes(a):
    tmp = tempfile.mkdtemp(prefix="ncc_pass_blocks_")
    env = {"NCC_NUM_THREADS": str(a.threads)} if a.threads else {}
    res = []
    try:
        for b, d, model in block_models(tmp, a.blocks, a.depths):
            row = {"block": b, "depth": d, "batch": a.batch}
            best = {}
            for rnd in range(a.rounds):
                order = PASS_CONFIGS if rnd % 2 == 0 else PASS_CONFIGS[::-1]
                for name, flags in order:
                    r = ncc_bench(a.ncc, model, flags + ["--batch", str(a.batch),
                                                         "--iters", str(a.iters)], env)
                    ms = r["latency_ms"]["median"]
                    best[name] = min(best.get(name, ms), ms)
                    row["kernels_" + name] = r["kernels"]
            for name, _ in PASS_CONFIGS:
                row[name + "_ms"] = best[name]
            res.append(row)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    if a.json:
        print(json.dumps(res))
        return
    print("%-12s %5s %9s %9s %9s %9s   %s" % ("block", "depth", "-O2 ms", "-O0 ms",
                                             "nofuse ms", "nolayout", "speedup of -O2 over: "
                                             "-O0, fusion off, layout off"))
    for r in res:
        o2 = r["O2_ms"]
        print("%-12s %5d %9.3f %9.3f %9.3f %9.3f   %5.2fx %5.2fx %5.2fx"
              % (r["block"], r["depth"], o2, r["O0_ms"], r["no_fusion_ms"], r["no_layout_ms"],
                 r["O0_ms"] / o2, r["no_fusion_ms"] / o2, r["no_layout_ms"] / o2))


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    bw = sub.add_parser("bw", help="fused vs unfused eltwise chain vs STREAM triad")
    bw.add_argument("--ncc", default="build/ncc")
    bw.add_argument("--batch", type=int, default=64)
    bw.add_argument("--width", type=int, default=64)
    bw.add_argument("--spatial", type=lambda s: tuple(int(v) for v in s.split("x")),
                    default=(32, 32))
    bw.add_argument("--k", type=int, default=8)
    bw.add_argument("--depth", type=int, default=4)
    bw.add_argument("--iters", type=int, default=20)
    bw.add_argument("--rounds", type=int, default=3)
    bw.add_argument("--threads", type=int, default=0,
                    help="NCC_NUM_THREADS for ncc and the triad's threads "
                         "(default: the environment's, else the online cores)")
    bw.add_argument("--chain", choices=("eltwise", "cheap"), default="eltwise",
                    help="eltwise: blocks.py's chain (Tanh, Sigmoid: compute-heavy); "
                         "cheap: Mul/Add/Relu/Sub only")
    bw.add_argument("--json", action="store_true")
    co = sub.add_parser("compile", help="compile time vs depth, kernel reuse")
    co.add_argument("--ncc", default="build/ncc")
    co.add_argument("--blocks", nargs="+", default=["mlp", "resblock", "transformer"])
    co.add_argument("--depths", nargs="+", type=int, default=[1, 8, 32])
    co.add_argument("--repeat", type=int, default=2)
    co.add_argument("--no-reuse", action="store_true",
                    help="also measure with NCC_KERNEL_REUSE=0")
    co.add_argument("--json", action="store_true")
    pa = sub.add_parser("passes", help="-O2 vs -O0 / fusion off / layout off per block")
    pa.add_argument("--ncc", default="build/ncc")
    pa.add_argument("--blocks", nargs="+",
                    default=["eltwise", "mlp", "conv", "resblock", "dwsep", "transformer"])
    pa.add_argument("--depths", nargs="+", type=int, default=[1, 8])
    pa.add_argument("--batch", type=int, default=1)
    pa.add_argument("--iters", type=int, default=50)
    pa.add_argument("--rounds", type=int, default=3)
    pa.add_argument("--threads", type=int, default=0)
    pa.add_argument("--json", action="store_true")
    a = ap.parse_args(argv)
    {"bw": cmd_bw, "compile": cmd_compile, "passes": cmd_passes}[a.cmd](a)
    return 0


if __name__ == "__main__":
    sys.exit(main())
