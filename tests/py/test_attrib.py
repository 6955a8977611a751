#!/usr/bin/env python3
"""tests/py/test_attrib.py — pass attribution (bench/harness/attrib*.py, the
`shapley` experiment kind), ctest `harness.attrib` (tests/attrib.cmake).

  - the Shapley arithmetic against its definition, computed here the slow
    way (every one of the n! orders, each pass credited its marginal when
    it joins): random games of 1..5 passes; efficiency; sampling over all
    orders is exact, a seeded sample is reproducible and close;
  - prerequisites: a pass whose prerequisite is off does not run, and a
    pass set that is not closed is refused;
  - pairwise interaction on a game with one known complementary pair;
  - the bootstrap interval holds the true credits of a noisy synthetic
    game, and a pass that changes no graph gets exactly 0;
  - the report from synthetic rows with known times: the table's credits
    are the definition's, the product row is the total speed-up, the
    complementary pair reads "complements", plots drawn;
  - end to end with $NCC: a `shapley` sweep of a tiny conv block (the
    coalitions expand to the right distinct ncc configurations, every row
    ok), and the report's credits equal the definition's computed here
    from the rows' medians.

Prints "N passed, M failed"; exit 1 on a failure, 77 without numpy, onnx,
onnxruntime.
"""
import itertools
import json
import math
import os
import random
import shutil
import sys
import tempfile

from nccutil import check, run_cases, run_experiment  # noqa: E402  (exits 77 without numpy...)
import numpy as np  # noqa: E402

from harness import attrib, attrib_report, attrib_spec, report, stats  # noqa: E402
from harness import spec as specmod  # noqa: E402

NCC = os.environ.get("NCC")


def shapley_by_definition(players, v):
    """The textbook definition: the mean over all n! orders of each
    player's marginal contribution when it joins (v: frozenset -> value)."""
    phi = {p: 0.0 for p in players}
    orders = list(itertools.permutations(players))
    for order in orders:
        s = frozenset()
        for p in order:
            phi[p] += v(s | {p}) - v(s)
            s = s | {p}
    return {p: phi[p] / len(orders) for p in players}


def random_game(players, seed):
    rng = random.Random(seed)
    table = {frozenset(): 0.0}
    for r in range(1, len(players) + 1):
        for c in itertools.combinations(players, r):
            table[frozenset(c)] = rng.uniform(-1, 1)
    return table


def test_exact_matches_definition():
    for n in range(1, 6):
        players = ["p%d" % i for i in range(n)]
        for seed in range(3):
            v = random_game(players, seed * 10 + n)
            got = attrib.shapley_exact(players, v)
            want = shapley_by_definition(players, v.__getitem__)
            for p in players:
                check(abs(got[p] - want[p]) < 1e-12, "n=%d %s: %r != %r" % (n, p, got[p], want[p]))
            check(abs(sum(got.values()) - v[frozenset(players)]) < 1e-12, "efficiency")


def test_sampling():
    players = ["a", "b", "c", "d"]
    v = random_game(players, 7)
    exact = attrib.shapley_exact(players, v)
    every = [list(o) for o in itertools.permutations(players)]
    got = attrib.shapley_sampled(players, every, v)
    check(all(abs(got[p] - exact[p]) < 1e-12 for p in players), "all orders: exact")
    o1 = attrib.permutation_orders(players, 50, seed=3)
    check(o1 == attrib.permutation_orders(players, 50, seed=3), "seeded orders repeat")
    check(o1 != attrib.permutation_orders(players, 50, seed=4), "another seed, other orders")
    cs = set(attrib.coalitions_sampled(players, o1))
    check(frozenset() in cs and frozenset(players) in cs, "prefixes hold ∅ and P")
    est = attrib.shapley_sampled(players, o1, v)
    check(abs(sum(est.values()) - v[frozenset(players)]) < 1e-12, "sampled: efficiency exact")
    err = max(abs(est[p] - exact[p]) for p in players)
    check(err < 0.35, "50 orders within 0.35 of exact (values in [-1, 1]): %g" % err)


def test_prerequisites():
    needs = {"bn-fold": ["const-fold"], "c": ["bn-fold"]}
    check(attrib.effective({"bn-fold"}, needs) == frozenset(), "bn-fold alone does not run")
    check(attrib.effective({"c", "const-fold"}, needs) == {"const-fold"}, "a chain breaks")
    check(attrib.effective({"c", "bn-fold", "const-fold", "x"}, needs) ==
          {"c", "bn-fold", "const-fold", "x"}, "all needs on: all run")
    table = {"const-fold": [], "bn-fold": ["const-fold"], "fusion": []}
    check(attrib.closure_error(["const-fold", "fusion"], table), "bn-fold left outside")
    check(attrib.closure_error(["const-fold", "bn-fold"], table) is None, "closed set")
    check(attrib.closure_error(["bn-fold", "fusion"], table) is None,
          "a need outside the set is always on")


def test_pairwise_interaction():
    players = ["layout", "fusion", "cse"]
    own = {"layout": 0.1, "fusion": 0.2, "cse": 0.05}

    def v(s):  # layout and fusion pay 0.3 more together
        return sum(own[p] for p in s) + (0.3 if {"layout", "fusion"} <= s else 0.0)
    table = {frozenset(c): v(set(c)) for r in range(4) for c in itertools.combinations(players, r)}
    pairs = attrib.pairwise(players, table)
    check(abs(pairs[("layout", "fusion")]["interaction"] - 0.3) < 1e-12, "complement pair")
    check(abs(pairs[("layout", "cse")]["interaction"]) < 1e-12, "additive pair")
    phi = attrib.shapley_exact(players, table)
    check(abs(phi["layout"] - 0.25) < 1e-12 and abs(phi["fusion"] - 0.35) < 1e-12,
          "the pair's 0.3 split evenly: %s" % phi)


def _noisy_game(rounds=30, seed=0):
    """Per-round log times of a game with own effects and one pair; 'dce'
    changes nothing (the same samples: pooled, as identical graphs are)."""
    players = ["const-fold", "bn-fold", "layout", "dce"]
    needs = {"bn-fold": ["const-fold"]}
    own = {"const-fold": 0.05, "bn-fold": 0.2, "layout": 0.1, "dce": 0.0}
    rng = np.random.default_rng(seed)
    drift = rng.normal(0, 0.05, rounds)  # shared by a round: pairing removes it
    log_t = {}
    for c in attrib.coalitions_exact(players):
        eff = attrib.effective(c, needs)
        key = eff - {"dce"}
        if key not in log_t:
            log_t[key] = np.log(2.0) - sum(own[p] for p in key) + drift + \
                rng.normal(0, 0.01, rounds)
        log_t[eff] = log_t[key]
    return players, needs, own, log_t


def test_bootstrap_holds_truth():
    players, needs, own, log_t = _noisy_game()
    g = attrib.Game(players, needs, None, log_t)
    pt, ci = g.point(), g.bootstrap(n=400)
    # the truth: bn-fold's 0.2 only with const-fold on -> split 0.1/0.1
    truth = {"const-fold": 0.05 + 0.1, "bn-fold": 0.1, "layout": 0.1, "dce": 0.0}
    for p in players:
        lo, hi = ci["phi"][p]
        check(lo - 1e-9 <= truth[p] <= hi + 1e-9, "%s: truth %g outside [%g, %g] (point %g)"
              % (p, truth[p], lo, hi, pt["phi"][p]))
    check(pt["phi"]["dce"] == 0.0 and ci["phi"]["dce"] == (0.0, 0.0),
          "a pass that changes nothing: exactly 0, %r %r" % (pt["phi"]["dce"], ci["phi"]["dce"]))
    check(abs(sum(pt["phi"].values()) - pt["total"]) < 1e-12, "efficiency")
    check(ci["phi"]["layout"][1] - ci["phi"]["layout"][0] < 0.05,
          "paired rounds: the shared drift cancels (interval %s)" % (ci["phi"]["layout"],))


# --------------------------------------------------------------------------
# The report, from synthetic rows.

PASSES = ["const-fold", "bn-fold", "layout", "fusion"]
OWN = {"const-fold": 0.02, "bn-fold": 0.1, "layout": 0.05, "fusion": 0.05}
PAIR = 0.15  # layout + fusion together


def _true_log_speedup(on):
    v = sum(OWN[p] for p in on) + (PAIR if {"layout", "fusion"} <= on else 0.0)
    return v


def synthetic_spec():
    spec = specmod.normalize({
        "name": "attrib-test", "threads": 1, "pin_cpus": False, "warmup": 1, "iters": 20,
        "model": {"width": 4, "spatial": [4, 4]}, "compilers": {"ncc": ["cpu -O2"]},
        "experiments": [{"id": "E8", "kind": "shapley", "blocks": ["conv"], "passes": PASSES}]})
    e = spec["experiments"][0]
    e.update(needs={"bn-fold": ["const-fold"]}, method="exact", orders=None)
    return spec


def synthetic_rows(spec, rounds=20):
    e = spec["experiments"][0]
    rng = random.Random(1)
    drift = [rng.gauss(0, 0.02) for _ in range(rounds)]
    rows = []
    for key, m, exps in specmod.expand(spec):
        off = {t.split("=", 1)[1] for t in m["config"].split() if t.startswith("--disable")}
        on = frozenset(p for p in PASSES if p not in off)
        t = 2.0 * math.exp(-_true_log_speedup(on))
        s = [t * math.exp(d + rng.gauss(0, 0.003)) for d in drift]
        lat = {"median": stats.median(s), "p90": sorted(s)[int(0.9 * (rounds - 1))],
               "p99": max(s), "min": min(s), "mean": sum(s) / len(s),
               "ci": list(stats.median_ci(s))}
        rows.append({"schema": 1, "key": key, "experiments": exps, "config": m, "status": "ok",
                     "valid": True, "env": {"cpu_model": "test", "cores": 2, "threads": 1,
                                            "compilers": {}, "ncc": {}},
                     "started": "2026-01-01T00:00:00Z", "wall_s": 1.0,
                     "result": {"compile_ms": 1.0, "build_ms": 1.0, "first_run_ms": t,
                                "latency_ms": lat, "cv": stats.cv(s), "samples_ms": s,
                                "throughput_per_s": 1.0, "graph_hash": "h-" + ",".join(
                                    sorted(attrib.effective(on, e["needs"]))),
                                "interleave": {"group": "g", "rounds": rounds,
                                               "timed_at": "t"}}})
    return rows


def _cells(md, first):
    for line in md.splitlines():
        if line.startswith("| " + first + " |"):
            return [c.strip() for c in line.strip().strip("|").split(" | ")]
    raise AssertionError("no table row %s" % first)


def _factor(cell):
    return float(cell.split("×")[0])


def test_report_synthetic():
    spec = synthetic_spec()
    e = spec["experiments"][0]
    cfgs = attrib_spec.configs(e)
    # 16 coalitions; bn-fold without const-fold runs as without bn-fold: 12
    check(len(cfgs) == 12 and len(set(cfgs)) == 12, "distinct configurations: %d" % len(cfgs))
    check(all("--disable-pass=const-fold" not in c or "--disable-pass=bn-fold" in c
              for c in cfgs), "const-fold is never off while bn-fold is on")
    rows = synthetic_rows(spec)
    d = tempfile.mkdtemp(prefix="ncc-attrib-")
    try:
        report.write(d, spec, rows)
        md = open(os.path.join(d, "report.md"), encoding="utf-8").read()
        check("## E8 — " + attrib_report.TITLE in md, "the E8 section")

        def v(s):
            return _true_log_speedup(attrib.effective(s, e["needs"]))
        truth = shapley_by_definition(PASSES, v)
        prod = 1.0
        for p in PASSES:
            c = _cells(md, "`%s`" % p)
            got = _factor(c[1])
            prod *= got
            check(abs(got - math.exp(truth[p])) < 0.01 * math.exp(truth[p]) + 1e-3,
                  "%s credited %s, definition says %.3f" % (p, c[1], math.exp(truth[p])))
        total = _factor(_cells(md, "(product)")[1])
        check(abs(total - math.exp(v(frozenset(PASSES)))) < 0.01,
              "product %g vs total %g" % (total, math.exp(v(frozenset(PASSES)))))
        pair = _cells(md, "`layout` + `fusion`")
        check(pair[-1] == "complements" and abs(_factor(pair[4]) - math.exp(PAIR)) < 0.01,
              "layout+fusion: %s" % pair)
        check(_cells(md, "`const-fold` + `layout`")[-1]
              == "additive (within noise)", "an additive pair reads additive")
        if report.HAVE_MPL:
            check(os.path.exists(os.path.join(d, "E8_shapley.png")) and
                  os.path.exists(os.path.join(d, "E8_pairs.png")), "plots written")
            check("![E8_shapley](E8_shapley.png)" in md, "plot linked")
    finally:
        shutil.rmtree(d, ignore_errors=True)


def test_spec_errors():
    base = {"name": "x", "compilers": {"ncc": ["cpu -O2"]}}
    for bad, why in (({"method": "greedy"}, "method"), ({"permutations": 0}, "permutations"),
                     ({"passes": []}, "passes"), ({"passes": ["a", "a"]}, "passes")):
        e = dict({"id": "E8", "kind": "shapley", "blocks": ["conv"]}, **bad)
        try:
            specmod.normalize(dict(base, experiments=[e]))
        except specmod.SpecError as err:
            check(why in str(err), "%s: %s" % (bad, err))
        else:
            raise AssertionError("%s accepted" % bad)


class FakeNcc:
    """`ncc passes` as the harness reads it (nccbin.Ncc.pass_table)."""
    TABLE = [("const-fold", 1, []), ("simplify", 1, []), ("bn-fold", 2, ["const-fold"]),
             ("cse", 1, []), ("dce", 1, []), ("layout", 2, []), ("fusion", 2, []),
             ("memplan", 2, [])]

    def pass_table(self):
        return self.TABLE


def _resolved(**kw):
    e = dict({"id": "E8", "kind": "shapley", "blocks": ["conv"]}, **kw)
    spec = specmod.normalize({"name": "x", "compilers": {"ncc": ["cpu -O2"]},
                              "experiments": [e]})
    e = spec["experiments"][0]
    attrib_spec.resolve(e, FakeNcc(), 2)
    return e


def test_spec_resolve():
    e = _resolved()  # every -O2 pass: 8 > EXACT_MAX -> sampled
    check(e["method"] == "permutation" and len(e["orders"]) == 16, "auto -> permutation")
    check(e["passes"] == [n for n, _, _ in FakeNcc.TABLE], "pipeline order")
    check(e["needs"] == {"bn-fold": ["const-fold"]}, "needs %s" % e["needs"])
    cfgs = attrib_spec.configs(e)
    check(cfgs == attrib_spec.configs(_resolved()), "the same expansion every time (seeded)")
    check(all("--disable-pass=const-fold" not in c or "--disable-pass=bn-fold" in c
              for c in cfgs), "never const-fold off with bn-fold on")
    full = len(attrib.coalitions_pairwise(e["passes"]))
    check(full <= len(cfgs) <= full + 16 * 9, "pairwise set plus the orders' prefixes: %d"
          % len(cfgs))
    e3 = _resolved(passes=["fusion", "layout", "cse"])
    check(e3["method"] == "exact" and e3["orders"] is None and e3["passes"] ==
          ["cse", "layout", "fusion"], "3 passes: exact, pipeline order")
    check(len(attrib_spec.configs(e3)) == 8, "2^3 configurations")
    for bad, word in ((["const-fold"], "bn-fold needs const-fold"), (["vectorize"], "vectorize")):
        try:
            _resolved(passes=bad)
        except specmod.SpecError as err:
            check(word in str(err), "%s: %s" % (bad, err))
        else:
            raise AssertionError("passes %s accepted" % bad)


# --------------------------------------------------------------------------
# End to end with ncc.

def test_sweep_end_to_end():
    check(NCC, "set NCC to the ncc binary")
    cpu = os.environ.get("NCC_WITH_LLVM") != "0"
    base = "cpu -O2" if cpu else "ref -O2"
    d = tempfile.mkdtemp(prefix="ncc-attrib-e2e-")
    try:
        spec = {"name": "attrib-e2e", "threads": 1, "pin_cpus": False, "warmup": 1, "iters": 5,
                "model": {"width": 4, "spatial": [6, 6]}, "compilers": {"ncc": [base]},
                "experiments": [{"id": "E8", "kind": "shapley", "blocks": ["conv"],
                                 "base": base, "passes": ["const-fold", "bn-fold", "fusion"]}]}
        sp = os.path.join(d, "spec.json")
        with open(sp, "w") as f:
            json.dump(spec, f)
        # a pass set that leaves a dependent outside is refused
        bad = dict(spec, experiments=[dict(spec["experiments"][0], passes=["const-fold"])])
        with open(os.path.join(d, "bad.json"), "w") as f:
            json.dump(bad, f)
        rc, _, err = run_experiment([os.path.join(d, "bad.json"), "--out", os.path.join(d, "b"),
                                     "--ncc", NCC, "--quiet"], timeout=120)
        check(rc == 2 and "bn-fold needs const-fold" in err, "open pass set: %d %s" % (rc, err))
        out = os.path.join(d, "out")
        rc, _, err = run_experiment([sp, "--out", out, "--ncc", NCC, "--quiet", "--strict"],
                                    timeout=400)
        check(rc == 0, "sweep exited %d: %s" % (rc, err[-1500:]))
        rows = [json.loads(l) for l in open(os.path.join(out, "results.jsonl"))]
        # {∅, cf, bf, fu, cf+bf, cf+fu, bf+fu, all}: bf alone runs as ∅, bf+fu as fu
        check(len(rows) == 6, "6 distinct configurations, got %d: %s"
              % (len(rows), [r["config"]["config"] for r in rows]))
        check(all(r["status"] == "ok" for r in rows), "statuses %s"
              % [(r["config"]["config"], r["status"], r.get("reason")) for r in rows])
        # in-process (libncc loads: the release build) they are timed in one
        # group of interleaved rounds; the sanitizer build times each alone
        groups = {(r["result"].get("interleave") or {}).get("group") for r in rows}
        check(len(groups) == 1, "all coalitions of the model timed in one group: %s" % groups)
        # the definition, from the rows' medians (identical graphs pooled)
        resolved = json.load(open(os.path.join(out, "spec.json")))
        e = resolved["experiments"][0]
        by_cfg = {r["config"]["config"]: r for r in rows}
        players = e["passes"]
        pooled = {}
        for r in rows:  # the per-round mean log time of each distinct graph
            h = r["result"].get("graph_hash") or r["key"]  # (no hash: no pooling)
            pooled.setdefault(h, []).append(np.log(r["result"].get("samples_ms") or
                                                   [r["result"]["latency_ms"]["median"]]))

        def v_med(s):
            r = by_cfg[attrib_spec.config_of(e, s)]
            logs = pooled[r["result"].get("graph_hash") or r["key"]]
            if len({len(x) for x in logs}) == 1:
                return float(np.median(np.mean(logs, axis=0)))
            return float(np.median(np.concatenate(logs)))
        none = v_med(frozenset())
        truth = shapley_by_definition(players, lambda s: none - v_med(s))
        md = open(os.path.join(out, "report.md"), encoding="utf-8").read()
        for p in players:
            got = _factor(_cells(md, "`%s`" % p)[1])
            check(abs(got - math.exp(truth[p])) <= 0.0051 * max(1.0, got),
                  "%s: report %g, definition %g" % (p, got, math.exp(truth[p])))
    finally:
        if not os.environ.get("NCC_PY_KEEP"):
            shutil.rmtree(d, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(run_cases([test_exact_matches_definition, test_sampling, test_prerequisites,
                        test_pairwise_interaction, test_bootstrap_holds_truth,
                        test_report_synthetic, test_spec_errors, test_spec_resolve,
                        test_sweep_end_to_end]))
