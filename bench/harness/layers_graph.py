"""bench/harness/layers_graph.py — the ONNX graph as bench/layers aligns
profiles on it: the nodes in graph order (the unit of every row), which
node produces and which consume each tensor, and how a name that a
compiler's profile prints is traced back to an ONNX node.

Compilers name their kernels after ONNX nodes in different ways:
onnxruntime keeps the node name ("conv1"), names a layout-transformed node
after its output tensor plus "_nchwc" ("/relu/Relu_output_0_nchwc"), or
adds a fusion suffix ("mm/MatMulAddFusion"); OpenVINO keeps the node name,
adds a decomposition suffix ("/conv1/Conv/WithoutBiases") or uses the
output tensor name ("y" for the node writing graph output y); ncc keeps
the node name.  resolve() tries, in order: the node name, the tensor name
(its producer), the same two with a known suffix stripped, then the name
with trailing "/part"s stripped one at a time (ONNX names contain "/"
themselves, so the longest match wins).
"""

import os

# Suffixes compilers append to a node or tensor name (stripped once).
SUFFIXES = ("_nchwc", "_kernel_time")


class LayersError(Exception):
    """A usage or model problem: bench/layers prints one error line, exit 1."""


class Graph:
    """nodes: [{"name", "op", "inputs", "outputs"}] in graph order.  A node
    without a name (or with a name taken already) is keyed "<op>_<index>"
    so every row has a label; lookups by its tensors still work."""

    def __init__(self, nodes, initializers=(), graph_inputs=(), graph_outputs=()):
        self.nodes = []
        self.index = {}
        for i, n in enumerate(nodes):
            name = n.get("name") or ""
            key = name if name and name not in self.index else "%s_%d" % (n["op"], i)
            self.index[key] = i
            if name and name not in self.index:
                self.index[name] = i
            self.nodes.append({"name": key, "op": n["op"], "inputs": list(n.get("inputs", ())),
                               "outputs": list(n.get("outputs", ()))})
        self.initializers = set(initializers)
        self.graph_inputs = list(graph_inputs)
        self.graph_outputs = list(graph_outputs)
        self.producer, self.consumers = {}, {}
        for i, n in enumerate(self.nodes):
            for t in n["outputs"]:
                if t:
                    self.producer[t] = i
            for t in n["inputs"]:
                if t:
                    self.consumers.setdefault(t, [])
                    if i not in self.consumers[t]:
                        self.consumers[t].append(i)
        # nodes that depend on a graph input (the rest compute constants:
        # Identity of a weight, Constant; compilers fold them ahead of time)
        live = {t for t in self.graph_inputs if t not in self.initializers}
        self.dynamic = set()
        for i, n in enumerate(self.nodes):
            if any(t in live for t in n["inputs"]):
                self.dynamic.add(i)
                live.update(t for t in n["outputs"] if t)

    @classmethod
    def from_onnx(cls, path):
        import onnx
        if not os.path.isfile(path):
            raise LayersError("%s: no such model file" % path)
        try:
            m = onnx.load(path, load_external_data=False)
        except Exception as e:
            raise LayersError("%s: not a readable ONNX model (%s)"
                              % (path, (str(e).splitlines() or [type(e).__name__])[0]))
        g = m.graph
        nodes = [{"name": n.name, "op": n.op_type, "inputs": list(n.input),
                  "outputs": list(n.output)} for n in g.node]
        return cls(nodes, [t.name for t in g.initializer], [i.name for i in g.input],
                   [o.name for o in g.output])

    def __len__(self):
        return len(self.nodes)

    def name(self, i):
        return self.nodes[i]["name"]

    def op(self, i):
        return self.nodes[i]["op"]

    def _exact(self, s):
        if s in self.index:
            return self.index[s], "name"
        if s in self.producer:
            return self.producer[s], "output"
        return None

    def resolve(self, name):
        """(node index, how) of a profile's name, or (None, None)."""
        if not name:
            return None, None
        hit = self._exact(name)
        if hit:
            return hit
        for suf in SUFFIXES:
            if name.endswith(suf):
                hit = self._exact(name[: -len(suf)])
                if hit:
                    return hit[0], hit[1] + "+suffix"
        s = name.rstrip("/")
        while "/" in s:
            s = s[: s.rindex("/")]
            hit = self._exact(s)
            if hit:
                return hit[0], hit[1] + "+prefix"
        return None, None

    def data_inputs(self, i):
        """The inputs of node i that some node produces (no weights, no
        graph inputs)."""
        return [t for t in self.nodes[i]["inputs"] if t in self.producer]
