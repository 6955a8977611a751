"""bench/harness/metrics.py — the formulas of docs/ARCHITECTURE.md (Measurement).

Pure functions on numbers, so that tests can check the arithmetic on known
values and the report cannot drift from the definitions:

  speed-up            S = t_baseline / t_compiled          (median latencies)
  depth gain          G(d) = S(d) / S(d0), d0 = 1 (else the smallest depth)
  batch efficiency    E(b) = thr(b) / ((b / b0) * thr(b0)), b0 = 1 (else the
                      smallest batch); thr = batch / median latency
  friction            Phi(b) = 1 - E(b) ("ideal scaling": close to 1 - 1/b on
                      a CPU that one sample already saturates, for every
                      compiler, so it is reported but not read alone)
  batch gain          B(b) = thr(b) / thr(b0): how much more throughput
                      batching gives (ideal b / b0; 1 = none)
  relative friction   Phi_rel(b) = 1 - E(b) / max over compiled configs E(b):
                      the friction left beyond what the best compiler on
                      this machine leaves (0 = scales as well as the best)
  roof fraction       attained GFLOP/s / the machine's measured peak GFLOP/s
  mitigation          mu(b) = E_compiled(b) / E_baseline(b)
  break-even runs     N* = compile / (t_baseline - t_compiled); infinite when
                      the compiled code is not faster; its interval from the
                      CI of the time ratio t_compiled / t_baseline
  vs another compiler N* = (compile_a - compile_b) / (t_b - t_a): the runs
                      after which a's total cost undercuts b's (or before
                      which, when a compiles faster but runs slower)
  ranking             rank 1 = the fastest block; Kendall's tau between two
                      rankings (1 = same order, -1 = reversed)
  dynamic shapes      reduction = 1 - total_symbolic / total_static;
                      steady slowdown = mean over shapes of
                      steady_symbolic(b) / steady_static(b)
  ablation            delta = value(pass off) - value(all passes); relative
                      delta = value(pass off) / value(all passes) - 1
"""
import math

INF = float("inf")


def speedup(t_base, t):
    if not t_base or not t or t <= 0 or t_base <= 0:
        return None
    return t_base / t


def depth_gain(speedups):
    """{d: S(d)} -> {d: G(d)} relative to depth 1 (or the smallest depth)."""
    ds = sorted(d for d, s in speedups.items() if s)
    if not ds:
        return {}
    d0 = 1 if 1 in ds else ds[0]
    return {d: speedups[d] / speedups[d0] for d in ds}


def batch_efficiency(thr):
    """{b: throughput} -> {b: E(b)} relative to batch 1 (or the smallest)."""
    bs = sorted(b for b, t in thr.items() if t)
    if not bs:
        return {}
    b0 = 1 if 1 in bs else bs[0]
    return {b: thr[b] / ((b / b0) * thr[b0]) for b in bs}


def friction(eff):
    return {b: 1.0 - e for b, e in eff.items()}


def batch_gain(thr):
    """{b: throughput} -> {b: thr(b) / thr(b0)}, b0 = 1 (else the smallest)."""
    bs = sorted(b for b, t in thr.items() if t)
    if not bs:
        return {}
    b0 = 1 if 1 in bs else bs[0]
    return {b: thr[b] / thr[b0] for b in bs}


def relative_friction(eff, best_eff):
    """{b: 1 - E(b) / E_best(b)} where both are known; negative when a
    configuration scales better than the best compiled one (an interpreter
    with per-call overhead to amortise does)."""
    out = {b: 1.0 - eff[b] / best_eff[b] for b in eff if best_eff.get(b)}
    return {b: 0.0 if abs(v) < 1e-12 else v for b, v in out.items()}  # no "1.1e-16"


def roof_fraction(gflop_per_s, peak_gflop_per_s):
    if not gflop_per_s or not peak_gflop_per_s or peak_gflop_per_s <= 0:
        return None
    return gflop_per_s / peak_gflop_per_s


def mitigation(eff_compiled, eff_base):
    return {b: eff_compiled[b] / eff_base[b]
            for b in eff_compiled if b in eff_base and eff_base[b]}


def break_even(compile_ms, t_base, t):
    """Runs needed before compiling pays for itself (inf: never)."""
    if compile_ms is None or t_base is None or t is None:
        return None
    gain = t_base - t
    if gain <= 0:
        return INF
    return compile_ms / gain


def break_even_range(compile_ms, t_base, ratio_lo, ratio_hi):
    """(N*_lo, N*_hi) from the CI [ratio_lo, ratio_hi] of t_compiled /
    t_baseline: t_base - t = t_base * (1 - ratio).  N*_hi is infinite when
    the interval reaches 1 (the gain may be nothing)."""
    if None in (compile_ms, t_base, ratio_lo, ratio_hi) or t_base <= 0:
        return None

    def n(r):
        return INF if r >= 1.0 else compile_ms / (t_base * (1.0 - r))
    return n(ratio_lo), n(ratio_hi)


def break_even_vs(compile_a, t_a, compile_b, t_b):
    """When a's total cost compile_a + N t_a undercuts b's: ("always", 0)
    (compiles no slower and runs faster), ("after", N*) (compiles slower,
    runs faster), ("until", N*) (compiles faster, runs no faster: cheaper
    only for fewer runs), ("never", inf); N* = (compile_a - compile_b) /
    (t_b - t_a).  None when a figure is missing."""
    if None in (compile_a, t_a, compile_b, t_b):
        return None
    dc, dt = compile_a - compile_b, t_b - t_a
    if dt > 0:
        return ("always", 0.0) if dc <= 0 else ("after", dc / dt)
    if dc < 0:
        return ("until", INF) if dt == 0 else ("until", dc / dt)
    return ("never", INF)


def ranks(values):
    """{name: latency} -> {name: rank}, 1 = smallest; ties share the lower rank."""
    order = sorted(values, key=lambda k: values[k])
    out = {}
    for i, k in enumerate(order):
        if i and values[k] == values[order[i - 1]]:
            out[k] = out[order[i - 1]]
        else:
            out[k] = i + 1
    return out


def kendall_tau(a, b):
    """Kendall's tau-a between two {name: value} orderings on their common names."""
    names = sorted(set(a) & set(b))
    n = len(names)
    if n < 2:
        return None
    s = 0
    for i in range(n):
        for j in range(i + 1, n):
            x = a[names[i]] - a[names[j]]
            y = b[names[i]] - b[names[j]]
            s += (x * y > 0) - (x * y < 0)
    return s / (n * (n - 1) / 2)


def inverted_pairs(a, b):
    """[(p, q)] ordered one way by a and the other way by b."""
    names = sorted(set(a) & set(b))
    out = []
    for i in range(len(names)):
        for j in range(i + 1, len(names)):
            p, q = names[i], names[j]
            if (a[p] - a[q]) * (b[p] - b[q]) < 0:
                out.append((p, q))
    return out


def cumulative(costs):
    total, out = 0.0, []
    for c in costs:
        total += c
        out.append(total)
    return out


def dynamic_reduction(total_symbolic, total_static):
    if not total_static:
        return None
    return 1.0 - total_symbolic / total_static


def steady_slowdown(steady_symbolic, steady_static):
    """Mean of symbolic/static steady latency over shapes measured by both."""
    pairs = [(s, t) for s, t in zip(steady_symbolic, steady_static) if s and t]
    if not pairs:
        return None
    return sum(s / t for s, t in pairs) / len(pairs)


def delta(base, off):
    if base is None or off is None:
        return None, None
    rel = (off / base - 1.0) if base else None
    return off - base, rel


def geomean(values):
    v = [x for x in values if x and x > 0 and math.isfinite(x)]
    if not v:
        return None
    return math.exp(sum(math.log(x) for x in v) / len(v))
