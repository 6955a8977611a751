"""bench/harness/layers_align.py — the rows of bench/layers: every
compiler's kernel time on the same sets of ONNX nodes.

A kernel covers one or more ONNX nodes, and compilers fuse differently
(OpenVINO runs Conv+Add+Relu as one kernel where onnxruntime may run Conv
and Add+Relu apart).  The rows are the coarsest common partition: a
union-find over the nodes joins the nodes of every kernel of every
compiler, so each group is covered by whole kernels of each compiler and
a compiler's time on a row is the exact sum of its kernels inside it (no
kernel is split between rows, every attributed millisecond lands in
exactly one row).  Rows are in graph order (by the group's first node) or
by time (the largest time of any compiler, descending).

Nodes no compiler ran a kernel for (constants folded by all) are no row;
they are listed as "idle".  Per row: the nodes, their ops, each compiler's ms and kernel count (0
kernels: that compiler ran nothing for these nodes — folded or
eliminated —, its time 0), which compilers ran a reference (unoptimised)
kernel there (ncc's profile says so), the winner (least time; none on a tie or when
nobody spent time), and ncc / best vendor (None when no vendor spent
time there or ncc has no profile).
"""


class _UF:
    def __init__(self, n):
        self.p = list(range(n))

    def find(self, a):
        while self.p[a] != a:
            self.p[a] = self.p[self.p[a]]
            a = self.p[a]
        return a

    def union(self, a, b):
        a, b = self.find(a), self.find(b)
        if a != b:
            self.p[max(a, b)] = min(a, b)


def partition(n_nodes, profiles):
    """[[node index]] groups in graph order: the coarsest partition in
    which every kernel of every profile lies within one group."""
    uf = _UF(n_nodes)
    for rec in profiles.values():
        for k in rec["kernels"]:
            for i in k["nodes"][1:]:
                uf.union(k["nodes"][0], i)
    groups = {}
    for i in range(n_nodes):
        groups.setdefault(uf.find(i), []).append(i)
    return sorted(groups.values(), key=lambda g: g[0])


def _ops(graph, nodes):
    ops = []
    for i in nodes:
        if not ops or ops[-1] != graph.op(i):
            ops.append(graph.op(i))
    return "+".join(ops)


def align(graph, profiles, vendors, sort="graph"):
    """Rows and totals.  profiles: {compiler: record} of the compilers that
    profiled (status ok); vendors: the vendor keys among them (ncc is the
    key "ncc")."""
    groups = partition(len(graph), profiles)
    where = {}
    for gi, g in enumerate(groups):
        for i in g:
            where[i] = gi
    ms = [{c: 0.0 for c in profiles} for _ in groups]
    count = [{c: 0 for c in profiles} for _ in groups]
    ref = [set() for _ in groups]
    for c, rec in profiles.items():
        for k in rec["kernels"]:
            gi = where[k["nodes"][0]]
            ms[gi][c] += k["ms"]
            count[gi][c] += 1
            if k.get("ref"):
                ref[gi].add(c)
    rows, idle = [], []
    for gi, g in enumerate(groups):
        t = ms[gi]
        if not any(count[gi].values()):
            idle.extend(g)  # no compiler ran a kernel for them: no row
            continue
        row = {"layer": graph.name(g[0]) + (" +%d" % (len(g) - 1) if len(g) > 1 else ""),
               "nodes": [graph.name(i) for i in g], "ops": _ops(graph, g),
               "first": g[0], "ms": t, "kernels": count[gi],
               "reference_kernel": sorted(ref[gi])}
        spent = {c: v for c, v in t.items()}
        row["winner"], row["ratio"] = _verdict(spent, vendors)
        rows.append(row)
    if sort == "time":
        rows.sort(key=lambda r: -max(r["ms"].values() or [0.0]))
    totals = {}
    for c, rec in profiles.items():
        totals[c] = {"attributed_ms": sum(r["ms"][c] for r in rows),
                     "unattributed_ms": rec["unattributed_ms"], "total_ms": rec["total_ms"]}
    tot = {c: v["attributed_ms"] for c, v in totals.items()}
    winner, ratio = _verdict(tot, vendors)
    wins = {c: sum(1 for r in rows if r["winner"] == c) for c in profiles}
    return {"rows": rows, "totals": totals, "winner": winner, "ratio": ratio, "wins": wins,
            "idle": [graph.name(i) for i in sorted(idle)]}


def _verdict(t, vendors):
    """(winner, ncc / best vendor) of {compiler: ms}."""
    if not t or max(t.values()) <= 0:
        return None, None
    best = min(t.values())
    at_best = [c for c, v in t.items() if v == best]
    winner = at_best[0] if len(at_best) == 1 else None
    vs = [t[v] for v in vendors if v in t]
    ratio = None
    if "ncc" in t and vs and min(vs) > 0:
        ratio = t["ncc"] / min(vs)
    return winner, ratio
