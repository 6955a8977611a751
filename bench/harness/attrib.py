"""bench/harness/attrib.py — crediting a model's speed-up to the passes that
made it: Shapley values and pairwise interactions (pure arithmetic; the
spec side is attrib_spec.py, the report side attrib_report.py).

The game.  Players are a chosen set P of ncc passes; a coalition S ⊆ P is
"these passes of P on, the rest of P off" (passes outside P stay as the
base configuration has them).  Its value is the log speed-up over the
coalition with none of P:

    v(S) = log t(∅) − log t(S),   v(∅) = 0,   v(P) = log(total speed-up)

Log time makes the credit multiplicative: exp(φ_i) are factors whose
product is the total speed-up t(∅)/t(P) (efficiency: Σ φ_i = v(P)).

A pass that needs another (bn-fold needs const-fold) does nothing while its
prerequisite is off — ncc refuses to run it without it — so a coalition
is measured as its effective part (effective(): the passes of S whose
needs are all on).  The Shapley value then splits bn-fold's gain between
bn-fold and const-fold, which is the fair answer to "who earned it".

Exact Shapley needs all 2^|P| coalitions:

    φ_i = Σ_{S ⊆ P∖{i}} |S|! (n−|S|−1)! / n! · (v(S ∪ {i}) − v(S))

For larger P, permutation sampling: `permutations` orders drawn with a
fixed seed, φ_i the mean over them of i's marginal contribution when it
joins the passes before it (an unbiased estimate; the coalitions to
measure are the orders' prefixes).

Pairwise ablation, from the full configuration: the cost of switching off
i, j and both, and their interaction

    I_ij = v(P) − v(P∖{i}) − v(P∖{j}) + v(P∖{i,j})

> 0: the two are complements (each is worth more with the other on: layout
makes fusion's groups possible), < 0: substitutes (either does the job).

Noise.  All coalitions of one model are timed in one interleaved group
(runner.py), so round r of every coalition ran side by side.  values()
takes each coalition's median; bootstrap() resamples whole rounds (the
pairing kept) and recomputes everything, for 95% intervals.  Coalitions
whose optimized graphs hash the same are one program: their samples are
pooled per round (mean log time), so a pass that changes nothing gets
exactly 0.
"""
import itertools
import math
import random

import numpy as np

EXACT_MAX = 6          # exact Shapley up to 2^6 = 64 coalitions per model
BOOTSTRAP_N = 1000
CONFIDENCE = 0.95


def effective(coalition, needs):
    """The passes of `coalition` that actually run: those whose needs
    (needs[p]: the players p requires; needs outside the player set are
    always on) are all in the effective set, repeated to a fixed point."""
    s = set(coalition)
    changed = True
    while changed:
        changed = False
        for p in sorted(s):
            if any(q not in s for q in needs.get(p, ())):
                s.discard(p)
                changed = True
    return frozenset(s)


def closure_error(players, needs_all):
    """A message when a pass outside `players` needs one inside it (then
    switching the player off would switch off a pass that is not in the
    game), else None.  needs_all: {pass: [passes it needs]} of every pass
    run at the base level."""
    for p, req in sorted(needs_all.items()):
        if p in players:
            continue
        inside = [q for q in req if q in players]
        if inside:
            return ("pass %s needs %s: add %s to passes or drop %s"
                    % (p, ", ".join(inside), p, ", ".join(inside)))
    return None


def coalitions_exact(players):
    """Every subset of players, as frozensets (2^n)."""
    n = len(players)
    return [frozenset(p for k, p in enumerate(players) if mask >> k & 1)
            for mask in range(1 << n)]


def permutation_orders(players, count, seed):
    """`count` orders of the players drawn with random.Random(seed)."""
    rng = random.Random(seed)
    out = []
    for _ in range(count):
        order = list(players)
        rng.shuffle(order)
        out.append(order)
    return out


def coalitions_sampled(players, orders):
    """The prefixes of every order (∅ and P included), deduplicated."""
    seen, out = set(), []
    for order in orders:
        for k in range(len(order) + 1):
            c = frozenset(order[:k])
            if c not in seen:
                seen.add(c)
                out.append(c)
    return out


def coalitions_pairwise(players):
    """P, P∖{i} and P∖{i,j}: what the pairwise ablation reads."""
    full = frozenset(players)
    out = [full] + [full - {p} for p in players]
    out += [full - {a, b} for a, b in itertools.combinations(players, 2)]
    return out


def shapley_exact(players, v):
    """φ_i by the subset formula; v maps frozenset -> value."""
    n = len(players)
    fact = [math.factorial(k) for k in range(n + 1)]
    phi = {}
    for i in players:
        rest = [p for p in players if p != i]
        total = 0.0
        for r in range(len(rest) + 1):
            w = fact[r] * fact[n - r - 1] / fact[n]
            for s in itertools.combinations(rest, r):
                s = frozenset(s)
                total += w * (v[s | {i}] - v[s])
        phi[i] = total
    return phi


def shapley_sampled(players, orders, v):
    """φ_i as the mean marginal contribution over the given orders."""
    phi = {p: 0.0 for p in players}
    for order in orders:
        for k, p in enumerate(order):
            before = frozenset(order[:k])
            phi[p] += v[before | {p}] - v[before]
    return {p: phi[p] / len(orders) for p in players}


def pairwise(players, v):
    """{(i, j): {"off_i", "off_j", "off_both", "interaction"}} in value
    units: the log speed-up lost by switching off i, j, both; and I_ij =
    off_i + off_j − off_both (each alone already loses what they only
    earn together: complements lose less with both off than the sum)."""
    full = frozenset(players)
    out = {}
    for a, b in itertools.combinations(players, 2):
        oa, ob = v[full] - v[full - {a}], v[full] - v[full - {b}]
        both = v[full] - v[full - {a, b}]
        out[(a, b)] = {"off_i": oa, "off_j": ob, "off_both": both,
                       "interaction": oa + ob - both}
    return out


class Game:
    """The measured game of one model.

    players   the pass set P, in pipeline order
    needs     {pass: [passes it needs]} (from `ncc passes`)
    orders    None for exact Shapley, else the sampled orders
    log_t     {effective coalition: np.array of per-round log times}
              (every array the same length when the rows were timed in
              one group; then rounds are resampled together)
    """

    def __init__(self, players, needs, orders, log_t):
        self.players, self.needs, self.orders = list(players), needs, orders
        self.log_t = log_t
        lens = {len(a) for a in log_t.values()}
        self.paired = len(lens) == 1

    def coalitions(self):
        cs = coalitions_exact(self.players) if self.orders is None else \
            coalitions_sampled(self.players, self.orders)
        return cs + [c for c in coalitions_pairwise(self.players) if c not in set(cs)]

    def _values(self, med):
        """v over every coalition the estimates read, from per-coalition
        (effective) median log times."""
        none = med[effective((), self.needs)]
        return {c: none - med[effective(c, self.needs)] for c in self.coalitions()}

    def estimate(self, med):
        v = self._values(med)
        if self.orders is None:
            phi = shapley_exact(self.players, v)
        else:
            phi = shapley_sampled(self.players, self.orders, v)
        return {"phi": phi, "total": v[frozenset(self.players)], "pairs": pairwise(self.players, v),
                "single": {p: v[frozenset(self.players)] - v[frozenset(self.players) - {p}]
                           for p in self.players}}

    def point(self):
        return self.estimate({c: float(np.median(a)) for c, a in self.log_t.items()})

    def bootstrap(self, n=BOOTSTRAP_N, seed=0):
        """95% percentile intervals of every estimate: {"phi": {p: (lo, hi)},
        "total": (lo, hi), "pairs": {(i, j): {field: (lo, hi)}}, "single"}."""
        rng = np.random.default_rng(seed)
        keys = list(self.log_t)
        draws = []
        if self.paired:
            m = len(self.log_t[keys[0]])
            stack = np.stack([self.log_t[k] for k in keys])
            for _ in range(n):
                idx = rng.integers(0, m, m)
                meds = np.median(stack[:, idx], axis=1)
                draws.append(self.estimate(dict(zip(keys, meds.tolist()))))
        else:
            for _ in range(n):
                draws.append(self.estimate({k: float(np.median(
                    a[rng.integers(0, len(a), len(a))])) for k, a in self.log_t.items()}))
        q = (1 - CONFIDENCE) / 2

        def ci(vals):
            a = np.asarray(vals)
            return float(np.quantile(a, q)), float(np.quantile(a, 1 - q))

        return {"phi": {p: ci([d["phi"][p] for d in draws]) for p in self.players},
                "single": {p: ci([d["single"][p] for d in draws]) for p in self.players},
                "total": ci([d["total"] for d in draws]),
                "pairs": {pr: {f: ci([d["pairs"][pr][f] for d in draws])
                               for f in draws[0]["pairs"][pr]} for pr in draws[0]["pairs"]}}
