"""bench/harness/layers_attr.py — from one compiler's kernel list to ONNX
nodes: which nodes each kernel covers, and what cannot be traced.

A kernel is {"name", "op", "ms"} plus, where the compiler says so itself,
"originals" (names of the ONNX nodes fused into it: OpenVINO's runtime
model lists them, ncc's profile lists them).  attribute() turns a list of
kernels into the profile record every other step reads:

  kernels   [{"name", "op", "ms", "nodes": [node index], "how", ...}]
  unmapped  [{"name", "op", "ms", "why"}]  (time that maps to no node:
            layout reorders a compiler inserted, nodes it created)

Without "originals" (onnxruntime: its profile names only the fused node)
the fusion is reconstructed from the graph, and every node found that way
is listed under the kernel's "inferred":
  1. anchor: the node the kernel's name resolves to (layers_graph.resolve);
  2. walk back: when the anchor's op differs from the kernel's op (ORT's
     NCHWc Conv+Relu kernel is named after the Relu's output but runs
     "Conv"), up to WALK nodes up the first data input, through nodes no
     other kernel is anchored on, to a node of the kernel's op;
  3. absorb: until nothing changes, a node no kernel covers (and that
     depends on a graph input: constants are folded, not fused) joins the
     kernel of its producer when it is that producer's only consumer
     (Conv -> Add -> Relu epilogues; of several such producers the one
     whose kernel runs last, the profile's order being execution order),
     else the kernel of its consumers
     when they are all in one kernel (Sigmoid of a QuickGelu, shape
     arithmetic folded into a Reshape).
Nodes still uncovered ran no kernel in that compiler (constant-folded or
eliminated) and are listed in the record's "no_kernel".
"""

WALK = 4


def attribute(graph, kernels, infer=True):
    """The profile record (kernels, unmapped, no_kernel) of a kernel list;
    infer: reconstruct fusions the names do not tell (onnxruntime)."""
    out, unmapped = [], []
    for k in kernels:
        rec = {"name": k["name"], "op": k.get("op"), "ms": float(k["ms"]), "nodes": []}
        for key in ("calls", "provider", "exec_type", "ref"):
            if k.get(key) is not None:
                rec[key] = k[key]
        given = k.get("originals")
        originals = [o for o in given or [] if o]  # "" for a node a pass created
        if originals:
            miss = []
            for o in originals:
                i, _ = graph.resolve(o)
                if i is None:
                    miss.append(o)
                elif i not in rec["nodes"]:
                    rec["nodes"].append(i)
            rec["how"] = "listed"
            if miss:
                rec["unresolved"] = miss
        else:
            i, how = graph.resolve(k["name"])
            if i is not None:
                rec["nodes"], rec["how"] = [i], how
        if rec["nodes"]:
            out.append(rec)
        else:
            why = "its name traces to no ONNX node"
            if given is not None and not originals:
                why = "the compiler created it (no ONNX node)"
            if "reorder" in (k.get("op") or k["name"]).lower():
                why = "layout reorder"
            elif originals:
                why = "none of its nodes (%s) is in the model" % ", ".join(originals[:3])
            unmapped.append({"name": k["name"], "op": k.get("op"), "ms": rec["ms"], "why": why})
    owner = [None] * len(graph)
    for ki, rec in enumerate(out):
        for i in rec["nodes"]:
            if owner[i] is None:
                owner[i] = ki
    if infer:
        _walk_back(graph, out, owner)
        _absorb(graph, out, owner)
    return {"kernels": out, "unmapped": unmapped,
            "no_kernel": [i for i in range(len(graph)) if owner[i] is None]}


def _walk_back(graph, out, owner):
    for ki, rec in enumerate(out):
        if rec["how"] == "listed" or len(rec["nodes"]) != 1:
            continue
        a = rec["nodes"][0]
        if not rec.get("op") or graph.op(a) == rec["op"]:
            continue
        path, cur = [], a
        for _ in range(WALK):
            ins = graph.data_inputs(cur)
            if not ins:
                break
            p = graph.producer[ins[0]]
            if owner[p] is not None:
                break
            path.append(p)
            if graph.op(p) == rec["op"]:
                for i in path:
                    owner[i] = ki
                rec["nodes"] = sorted(rec["nodes"] + path)
                rec.setdefault("inferred", []).extend(sorted(path))
                break
            cur = p


def _absorb(graph, out, owner):
    changed = True
    while changed:
        changed = False
        for u in range(len(graph)):
            if owner[u] is not None or u not in graph.dynamic:
                continue
            # of several producers, the kernel that runs last: a kernel that
            # fuses u needs u's other inputs ready (ORT's NCHWc Conv+Sum of
            # a ResNet shortcut is the conv that runs after the downsample)
            cands = [owner[graph.producer[t]] for t in graph.data_inputs(u)
                     if owner[graph.producer[t]] is not None and graph.consumers.get(t) == [u]]
            cand = max(cands) if cands else None
            if cand is None:
                ks = set()
                for t in graph.nodes[u]["outputs"]:
                    if t in graph.graph_outputs:
                        ks.add(None)
                    for c in graph.consumers.get(t, []):
                        ks.add(owner[c])
                if len(ks) == 1 and None not in ks:
                    cand = ks.pop()
            if cand is not None:
                owner[u] = cand
                out[cand]["nodes"] = sorted(out[cand]["nodes"] + [u])
                out[cand].setdefault("inferred", []).append(u)
                changed = True


def finish(rec, graph, total_ms=None):
    """Totals of a profile record: total_ms (the compiler's own total when
    it gives one, else the sum of its kernels), attributed_ms, and
    unattributed_ms = total - attributed (unmapped kernels, host steps)."""
    attributed = sum(k["ms"] for k in rec["kernels"])
    kernel_sum = attributed + sum(k["ms"] for k in rec["unmapped"])
    rec["kernel_sum_ms"] = kernel_sum
    rec["total_ms"] = float(total_ms) if total_ms is not None else kernel_sum
    rec["attributed_ms"] = attributed
    rec["unattributed_ms"] = rec["total_ms"] - attributed
    return rec


def named(rec, graph):
    """The record with node indices replaced by names (for JSON)."""
    r = dict(rec)
    if "kernels" not in rec:
        return r
    r["kernels"] = []
    for k in rec["kernels"]:
        k = dict(k)
        k["nodes"] = [graph.name(i) for i in k["nodes"]]
        if "inferred" in k:
            k["inferred"] = [graph.name(i) for i in sorted(k["inferred"])]
        r["kernels"].append(k)
    if "no_kernel" in rec:
        r["no_kernel"] = [graph.name(i) for i in rec["no_kernel"]]
    return r
