"""bench/harness/compare_model.py — the user's ONNX model as bench/compare
sees it: its declared inputs and outputs, and the input data for a batch.

Shapes come from the model's declared inputs.  A symbolic first dim is the
batch (each --batch value); any other symbolic or unknown dim needs
`--dim NAME=VALUE` (or real data through `--input NAME=file.npy`), and the
error says so.  Data is seeded and realistic: floats standard normal, ints
(token ids, indices) uniform in [0, INT_HIGH), bools fair coins; a file
given with --input is used as it is, its first dim repeated or cut to the
batch when the batch dim is symbolic.  describe() says what was used.
"""
import os

import numpy as np

INT_HIGH = 100


class CompareError(Exception):
    """A usage or model problem: bench/compare prints one error line, exit 1."""


def _np_dtype(elem_type):
    import onnx
    try:
        return np.dtype(onnx.helper.tensor_dtype_to_np_dtype(elem_type))
    except Exception:
        return None


class ModelInfo:
    """Declared inputs [(name, dtype, dims)] (a dim: int, str symbol or
    None) and output names of an ONNX model file."""

    def __init__(self, path):
        import onnx
        if not os.path.isfile(path):
            raise CompareError("%s: no such model file" % path)
        try:
            model = onnx.load(path, load_external_data=False)
        except Exception as e:
            raise CompareError("%s: not a readable ONNX model (%s)" % (path, _first_line(e)))
        g = model.graph
        if not g.output:
            raise CompareError("%s: the model has no graph outputs (is it an ONNX model?)"
                               % path)
        inits = {t.name for t in g.initializer}
        self.path = path
        self.inputs = []
        for vi in g.input:
            if vi.name in inits:
                continue
            tt = vi.type.tensor_type
            if not vi.type.HasField("tensor_type"):
                raise CompareError("%s: input '%s' is not a tensor" % (path, vi.name))
            dt = _np_dtype(tt.elem_type)
            if dt is None:
                raise CompareError("%s: input '%s' has an unsupported element type %d"
                                   % (path, vi.name, tt.elem_type))
            dims = []
            for d in tt.shape.dim:
                if d.HasField("dim_value"):
                    dims.append(int(d.dim_value))
                elif d.HasField("dim_param") and d.dim_param:
                    dims.append(d.dim_param)
                else:
                    dims.append(None)
            self.inputs.append((vi.name, dt, dims))
        self.outputs = [o.name for o in g.output]
        if not self.inputs:
            raise CompareError("%s: the model has no inputs to feed" % path)

    def batch_symbols(self):
        """Symbols used as the first dim of some input: they are the batch."""
        return sorted({d[0] for _, _, d in self.inputs if d and isinstance(d[0], str)})

    def has_batch(self):
        return bool(self.batch_symbols()) or any(d and d[0] is None for _, _, d in self.inputs)

    def shapes(self, batch, dims, given):
        """{input: concrete shape} at `batch`; dims: {symbol: value} from
        --dim; given: {input: array} from --input (their shapes fill in
        what they cover)."""
        bsyms = set(self.batch_symbols())
        out = {}
        for name, _, decl in self.inputs:
            shape = []
            for i, d in enumerate(decl):
                if isinstance(d, int):
                    shape.append(d)
                elif i == 0 and (d in bsyms or d is None) and d not in dims:
                    shape.append(batch)
                elif isinstance(d, str) and d in dims:
                    shape.append(dims[d])
                elif name in given:
                    shape.append(int(given[name].shape[i]) if i < given[name].ndim else 1)
                elif isinstance(d, str):
                    raise CompareError(
                        "input '%s' dim %d is symbolic ('%s'): give its size with "
                        "--dim %s=VALUE (or real data with --input %s=file.npy)"
                        % (name, i, d, d, name))
                else:
                    raise CompareError(
                        "input '%s' dim %d has no declared size: give real data with "
                        "--input %s=file.npy" % (name, i, name))
            out[name] = shape
        return out

    def feeds(self, batch, dims, given, seed):
        """{input: array} at `batch` (seeded; --input files where given)."""
        shapes = self.shapes(batch, dims, given)
        rng = np.random.default_rng(seed)
        feeds = {}
        for name, dt, decl in self.inputs:
            shape = shapes[name]
            if name in given:
                a = np.asarray(given[name])
                if decl and not isinstance(decl[0], int) and a.ndim and a.shape[0] != batch:
                    a = np.take(a, np.arange(batch) % a.shape[0], axis=0)
                if a.dtype != dt:
                    raise CompareError("--input %s: the file holds %s, the model declares %s"
                                       % (name, a.dtype, dt))
                if list(a.shape) != shape:
                    raise CompareError("--input %s: shape %s, the model wants %s at batch %d"
                                       % (name, list(a.shape), shape, batch))
                feeds[name] = np.ascontiguousarray(a)
            elif dt.kind == "f":
                feeds[name] = rng.standard_normal(shape).astype(dt)
            elif dt.kind in "iu":
                feeds[name] = rng.integers(0, INT_HIGH, size=shape).astype(dt)
            elif dt.kind == "b":
                feeds[name] = rng.integers(0, 2, size=shape).astype(bool)
            else:
                raise CompareError("input '%s' has dtype %s: give its data with --input %s=file.npy"
                                   % (name, dt, name))
        return feeds

    def describe(self, given, seed, given_paths):
        """[{name, dtype, declared, data}] saying what data each input got."""
        res = []
        for name, dt, decl in self.inputs:
            if name in given:
                what = "from %s" % given_paths[name]
                if decl and not isinstance(decl[0], int):
                    what += " (first dim repeated or cut to the batch)"
            elif dt.kind == "f":
                what = "random standard normal (seed %d)" % seed
            elif dt.kind in "iu":
                what = "random integers in [0, %d) (seed %d)" % (INT_HIGH, seed)
            else:
                what = "random booleans (seed %d)" % seed
            res.append({"name": name, "dtype": str(dt),
                        "declared": ["?" if d is None else d for d in decl], "data": what})
        return res


def parse_dims(items):
    """{symbol: int} from ['N=4', ...]."""
    dims = {}
    for it in items or []:
        name, eq, val = it.partition("=")
        if not eq or not name:
            raise CompareError("--dim expects NAME=VALUE, got '%s'" % it)
        try:
            v = int(val)
        except ValueError:
            v = -1
        if v < 1:
            raise CompareError("--dim %s: the size must be a positive integer, got '%s'"
                               % (name, val))
        dims[name] = v
    return dims


def load_inputs(items, info):
    """({input: array}, {input: path}) from ['name=file.npy', ...]."""
    names = [n for n, _, _ in info.inputs]
    arrays, paths = {}, {}
    for it in items or []:
        name, eq, path = it.rpartition("=")
        if not eq and len(names) == 1:
            name, path = names[0], it
        if name not in names:
            raise CompareError("--input '%s': the model's inputs are %s"
                               % (it, ", ".join(names)))
        try:
            arrays[name] = np.load(path, allow_pickle=False)
        except Exception as e:
            raise CompareError("--input %s: cannot read %s (%s)" % (name, path, _first_line(e)))
        paths[name] = path
    return arrays, paths


def _first_line(e):
    s = str(e).strip().splitlines()
    return (s[0] if s else type(e).__name__)[:300]
