"""bench/harness/spec.py — sweep specs: load, check, resolve, expand.

A spec (TOML or JSON; presets live in bench/specs/<name>.toml) has global
settings, a default compiler table and a list of experiments:

    name = "quick"          threads = 1        warmup = 3     iters = 20
    baseline = "ncc:ref"    rtol = 1e-3        atol = 1e-3    compile_repeats = 1
    outputs = "fresh"       # or "preallocated": outputs bound once (measure.py)
    [model]                 # block defaults (bench/blocks.py Config)
    width = 32
    [compilers]             # adapter -> configurations
    ncc = ["ref", "cpu -O0", "cpu -O2"]
    onnxruntime = ["DISABLE_ALL", "ALL"]
    [[experiments]]
    id = "E1"  kind = "depth"  blocks = ["resblock"]  depths = [1, 2, 4]

Experiment kinds and their keys (any experiment may also override width,
depth, batch, warmup, iters, model settings under `model`, and compilers):

    depth     blocks, depths, batch                         (E1)
    batch     blocks, batches, depth                        (E2)
    ranking   blocks ("all"), depth, batch, mflop (budget)  (E3)
    fusion    eltwise_k, blocks, depth, batch, compare      (E4)
    amortize  blocks, depth, batch                          (E5)
    dynamic   blocks, depth, sequence, runs_per_shape       (E6)
    ablation  blocks, depth, batch, base (ncc flags)        (E7)
    shapley   blocks, depth, batch, base, passes, method    (E8, attrib_spec.py)

Real models (bench/specs/models.toml; zoo.py): an experiment of kind depth,
batch, ranking, amortize, dynamic or ablation may name `models` instead of
`blocks` — zoo names ("resnet18") or ONNX paths.  For depth they are
families and the model at depth d is FAMILY + d (models = ["resnet"],
depths = [18, 34, 50]).  A ranking over real models groups them by FLOPs:
models whose MFLOP at batch 1 lie within a factor `match` (default 1.6) of
the group's smallest are ranked against each other (resolve() measures
and stores mflops and flop_groups).

Two stages: resolve() fills in what needs ncc (E3's FLOP-matched widths,
E7's pass list) and the result is written to DIR/spec.json; expand() turns a
resolved spec into measurements without running anything, so the report
and `merge` can re-derive which rows belong to which experiment.
"""
import copy
import hashlib
import json
import os

from . import adapters
from . import zoo
from .models import MODEL_KEYS, ModelSpec

SPECS_DIR = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "specs")

KINDS = ("depth", "batch", "ranking", "fusion", "amortize", "dynamic", "ablation", "shapley")
ALL_BLOCKS = ("eltwise", "mlp", "conv", "resblock", "dwsep", "transformer")

DEFAULTS = {
    "name": "unnamed", "description": "", "threads": 1, "pin_cpus": True,
    "warmup": 3, "iters": 20, "seed": 0, "input_seed": 1,
    "rtol": 1e-3, "atol": 1e-3, "baseline": "ncc:ref", "row_timeout_s": 600,
    "compile_repeats": 1, "outputs": "fresh",
    "model": {"width": 32},
    "compilers": {"ncc": ["ref", "cpu -O0", "cpu -O2"], "onnxruntime": ["DISABLE_ALL", "ALL"]},
}

GLOBAL_KEYS = set(DEFAULTS) | {"experiments"}
EXPERIMENT_KEYS = {"id", "kind", "title", "blocks", "depths", "batches", "depth", "batch",
                   "width", "model", "compilers", "warmup", "iters", "mflop", "eltwise_k",
                   "compare", "sequence", "runs_per_shape", "base", "passes", "widths",
                   "also_disable", "method", "permutations", "perm_seed", "needs", "orders",
                   "models", "match", "mflops", "flop_groups"}
REAL_KINDS = ("depth", "batch", "ranking", "amortize", "dynamic", "ablation")
DEFAULT_MATCH = 1.6

# E4 without `compare`: each pair is (faster config, slower config).
DEFAULT_FUSION_COMPARE = [["ncc:cpu -O2", "ncc:cpu -O2 --disable-pass=fusion"],
                          ["ncc:cpu -O2", "ncc:cpu -O0"],
                          ["onnxruntime:ALL", "onnxruntime:DISABLE_ALL"]]


class SpecError(ValueError):
    pass


def preset_names():
    try:
        return sorted(f[:-5] for f in os.listdir(SPECS_DIR) if f.endswith(".toml"))
    except OSError:
        return []


def load(name_or_path):
    """A spec dict from a preset name or a .toml/.json file, checked."""
    path = name_or_path
    if not os.path.exists(path):
        cand = os.path.join(SPECS_DIR, name_or_path + ".toml")
        if os.path.exists(cand):
            path = cand
        else:
            raise SpecError("no spec file %r and no preset of that name (presets: %s)"
                            % (name_or_path, ", ".join(preset_names()) or "none"))
    with open(path, "rb") as f:
        data = f.read()
    try:
        if path.endswith(".json"):
            spec = json.loads(data.decode("utf-8"))
        else:
            import tomllib
            spec = tomllib.loads(data.decode("utf-8"))
    except (ValueError, UnicodeDecodeError) as e:
        raise SpecError("%s: %s" % (path, e))
    return normalize(spec)


def parse_compiler_id(text):
    """'ncc:cpu -O2' -> ('ncc', 'cpu -O2')."""
    if ":" not in text:
        raise SpecError("compiler id %r is not of the form ADAPTER:CONFIG (e.g. ncc:ref)" % text)
    name, config = text.split(":", 1)
    return name.strip(), config.strip()


def compiler_id(name, config):
    return "%s:%s" % (name, config)


def _check_compilers(table, where):
    if not isinstance(table, dict) or not table:
        raise SpecError("%s: compilers must be a table ADAPTER = [CONFIG, ...]" % where)
    out = {}
    for name, configs in table.items():
        if name not in adapters.names():
            raise SpecError("%s: unknown compiler %r (known: %s)"
                            % (where, name, ", ".join(adapters.names())))
        if isinstance(configs, str):
            configs = [configs]
        if not isinstance(configs, list) or not all(isinstance(c, str) for c in configs):
            raise SpecError("%s: compilers.%s must be a list of strings" % (where, name))
        for c in configs:
            msg = adapters.check_config(name, c)
            if msg:
                raise SpecError("%s: compilers.%s: %s" % (where, name, msg))
        out[name] = list(configs)
    return out


def _int_list(v, key, where):
    if isinstance(v, int):
        v = [v]
    if not isinstance(v, list) or not v or not all(isinstance(i, int) and i >= 1 for i in v):
        raise SpecError("%s: %s must be a non-empty list of positive integers" % (where, key))
    return v


def _blocks(v, where):
    if v in (None, "all"):
        return list(ALL_BLOCKS)
    if isinstance(v, str):
        v = [v]
    bad = [b for b in v if b not in ALL_BLOCKS]
    if bad or not v:
        raise SpecError("%s: unknown block(s) %s (blocks: %s)"
                        % (where, bad, ", ".join(ALL_BLOCKS)))
    return list(v)


def normalize(spec):
    """Defaults filled in, every key checked; raises SpecError."""
    if not isinstance(spec, dict):
        raise SpecError("a spec is a table")
    unknown = set(spec) - GLOBAL_KEYS
    if unknown:
        raise SpecError("unknown spec key(s): %s" % ", ".join(sorted(unknown)))
    s = copy.deepcopy(DEFAULTS)
    for k, v in spec.items():
        if k == "model":
            s["model"].update(v)
        elif k != "experiments":
            s[k] = copy.deepcopy(v)
    s["compilers"] = _check_compilers(s["compilers"], "compilers")
    for k in ("threads", "warmup", "iters", "compile_repeats"):
        if not isinstance(s[k], int) or s[k] < (0 if k == "warmup" else 1):
            raise SpecError("%s must be an integer >= %d" % (k, 0 if k == "warmup" else 1))
    if s["outputs"] not in ("fresh", "preallocated"):
        raise SpecError("outputs must be \"fresh\" or \"preallocated\" (got %r)"
                        % (s["outputs"],))
    _check_model(s["model"], "model")
    bname, bconf = parse_compiler_id(s["baseline"])
    _check_compilers({bname: [bconf]}, "baseline")
    exps = spec.get("experiments", [])
    if not isinstance(exps, list) or not exps:
        raise SpecError("a spec needs at least one [[experiments]] entry")
    s["experiments"] = []
    ids = set()
    for i, e in enumerate(exps):
        e = _normalize_experiment(e, i, s)
        if e["id"] in ids:
            raise SpecError("experiment id %r appears twice" % e["id"])
        ids.add(e["id"])
        s["experiments"].append(e)
    return s


def _check_model(m, where):
    allowed = set(MODEL_KEYS) | {"width"}
    unknown = set(m) - allowed
    if unknown:
        raise SpecError("%s: unknown model setting(s) %s (allowed: %s)"
                        % (where, ", ".join(sorted(unknown)), ", ".join(sorted(allowed))))


def _normalize_experiment(e, i, s):
    where = "experiments[%d]" % i
    if not isinstance(e, dict):
        raise SpecError("%s must be a table" % where)
    unknown = set(e) - EXPERIMENT_KEYS
    if unknown:
        raise SpecError("%s: unknown key(s) %s" % (where, ", ".join(sorted(unknown))))
    kind = e.get("kind")
    if kind not in KINDS:
        raise SpecError("%s: kind must be one of %s" % (where, ", ".join(KINDS)))
    e = copy.deepcopy(e)
    e.setdefault("id", "%s%d" % (kind, i))
    where = "experiment %s" % e["id"]
    model = dict(s["model"])
    model.update(e.get("model", {}))
    if "width" in e:
        model["width"] = e["width"]
    _check_model(model, where)
    e["model"] = model
    e["compilers"] = _check_compilers(e.get("compilers", s["compilers"]), where)
    e.setdefault("warmup", s["warmup"])
    e.setdefault("iters", s["iters"])
    e["depth"] = _int_list(e.get("depth", 1), "depth", where)[0]
    e["batch"] = _int_list(e.get("batch", 1), "batch", where)[0]
    if "models" in e:
        _real_models(e, kind, where)
    elif kind == "fusion":  # eltwise_k gives the eltwise models; blocks adds others
        e["blocks"] = _blocks(e["blocks"], where) if e.get("blocks") else []
    else:
        e["blocks"] = _blocks(e.get("blocks"), where)
    if kind == "depth":
        e["depths"] = _int_list(e.get("depths", [1, 2, 4, 8]), "depths", where)
    elif kind == "batch":
        e["batches"] = _int_list(e.get("batches", [1, 2, 4, 8]), "batches", where)
    elif kind == "ranking" and e.get("real"):
        if "mflop" in e:
            raise SpecError("%s: real models are matched by grouping (match = FACTOR), not "
                            "by an mflop budget" % where)
        m = e.setdefault("match", DEFAULT_MATCH)
        if not isinstance(m, (int, float)) or m < 1:
            raise SpecError("%s: match must be a number >= 1 (a FLOP ratio)" % where)
    elif kind == "ranking":
        if "mflop" in e and (not isinstance(e["mflop"], (int, float)) or e["mflop"] <= 0):
            raise SpecError("%s: mflop must be a positive number" % where)
    elif kind == "fusion":
        if e.get("eltwise_k") == []:
            # no k axis: the eltwise block, when `blocks` names it, at the
            # model's k (its default, 8), and the other blocks as listed
            e["eltwise_k"] = ([e["model"].get("k", 8)] if "eltwise" in e["blocks"] else [])
            if not e["eltwise_k"] and not e["blocks"]:
                raise SpecError("%s: eltwise_k = [] with no blocks leaves nothing to measure "
                                "(name blocks, or give eltwise_k values)" % where)
        else:
            e["eltwise_k"] = _int_list(e.get("eltwise_k", [8]), "eltwise_k", where)
        compare = e.get("compare", DEFAULT_FUSION_COMPARE)
        if not isinstance(compare, list) or not all(
                isinstance(p, list) and len(p) == 2 for p in compare):
            raise SpecError("%s: compare must be a list of [FAST, SLOW] compiler ids" % where)
        for pair in compare:
            for cid in pair:
                n, c = parse_compiler_id(cid)
                _check_compilers({n: [c]}, where)
        e["compare"] = compare
    elif kind == "dynamic":
        e["sequence"] = _int_list(e.get("sequence", [1, 4, 2, 8]), "sequence", where)
        if len(set(e["sequence"])) != len(e["sequence"]):
            raise SpecError("%s: the batch sizes of sequence must be distinct" % where)
        e["runs_per_shape"] = _int_list(e.get("runs_per_shape", 10), "runs_per_shape", where)[0]
    elif kind == "ablation":
        e.setdefault("base", "cpu -O2")
        msg = adapters.check_config("ncc", e["base"])
        if msg:
            raise SpecError("%s: base: %s" % (where, msg))
    elif kind == "shapley":
        from . import attrib_spec
        attrib_spec.normalize(e, where)
    return e


def _real_models(e, kind, where):
    """e["blocks"] from e["models"] (real models), checked for form only
    (resolve() finds the files)."""
    if kind not in REAL_KINDS:
        raise SpecError("%s: kind %s takes blocks, not models (real models: %s)"
                        % (where, kind, ", ".join(REAL_KINDS)))
    if "blocks" in e:
        raise SpecError("%s: give blocks or models, not both" % where)
    names = e["models"]
    if isinstance(names, str):
        names = [names]
    if not isinstance(names, list) or not names or not all(isinstance(n, str) for n in names):
        raise SpecError("%s: models must be a non-empty list of zoo names or .onnx paths"
                        % where)
    if len(set(names)) != len(names):
        raise SpecError("%s: a model is listed twice in models" % where)
    try:
        for n in names:
            if kind == "depth" and n.endswith(".onnx"):
                raise zoo.ZooUnsupported("depth takes zoo families (resnet + depths), not "
                                         "files: %s" % n)
            zoo.ZooSpec.parse(n)
    except zoo.ZooUnsupported as err:
        raise SpecError("%s: %s" % (where, err))
    e["models"] = list(names)
    e["blocks"] = list(names)
    e["real"] = True


def flop_groups(mflops, match):
    """Models of similar FLOPs: sorted by MFLOP, a group takes the next model
    while it is within `match` times the group's smallest.  Returns
    (groups of two or more, models left alone), names in MFLOP order."""
    order = sorted(mflops, key=lambda n: (mflops[n], n))
    groups, cur = [], []
    for n in order:
        if cur and mflops[n] > match * max(mflops[cur[0]], 1e-9):
            groups.append(cur)
            cur = []
        cur.append(n)
    if cur:
        groups.append(cur)
    return [g for g in groups if len(g) > 1], [g[0] for g in groups if len(g) == 1]


# --------------------------------------------------------------------------
# Resolution: what needs ncc.

def resolve(spec, cache, ncc):
    """A copy of `spec` with E3 widths (per block) and E7 pass lists filled."""
    s = copy.deepcopy(spec)
    for e in s["experiments"]:
        if e.get("real"):
            _resolve_real(e, cache)
        if e["kind"] == "ranking" and "mflop" in e and "widths" not in e:
            e["widths"] = {}
            for b in e["blocks"]:
                ms = _model(b, e, e["depth"])
                e["widths"][b] = cache.match_width(ms, float(e["mflop"]))
        if e["kind"] == "ablation" and "passes" not in e:
            level = _opt_level(e["base"])
            e["passes"] = [n for n, lvl in ncc.passes() if lvl <= level]
            # A pass others need goes off together with them.
            e["also_disable"] = {p: ncc.dependents(p, level) for p in e["passes"]
                                 if ncc.dependents(p, level)}
        if e["kind"] == "shapley" and "needs" not in e:
            from . import attrib_spec
            attrib_spec.resolve(e, ncc, _opt_level(e["base"]))
    s["resolved"] = True
    return s


def _resolve_real(e, cache):
    """Find (or export) every real model of e, refuse what cannot run, and
    for a ranking measure the FLOPs and group the models."""
    depths = e["depths"] if e["kind"] == "depth" else [e["depth"]]
    mflops = {}
    for b in e["blocks"]:
        for d in depths:
            ms = _model(b, e, d)
            try:
                ms.info()
            except zoo.ZooUnsupported as err:
                raise SpecError("experiment %s: %s" % (e["id"], err))
            if e["kind"] == "ranking":
                mflops[b] = cache.mflop(ms)
    if e["kind"] == "ranking":
        e["mflops"] = mflops
        groups, alone = flop_groups(mflops, float(e["match"]))
        e["flop_groups"] = {"groups": groups, "alone": alone}


def _opt_level(flags):
    level = 2
    for tok in flags.split():
        if len(tok) == 3 and tok.startswith("-O") and tok[2].isdigit():
            level = int(tok[2])
    return level


def spec_hash(spec):
    return hashlib.sha1(json.dumps(spec, sort_keys=True).encode()).hexdigest()[:12]


# --------------------------------------------------------------------------
# Expansion: measurements (pure).

def _model(block, e, depth, width=None):
    if e.get("real"):
        if e["kind"] == "depth":
            return zoo.ZooSpec.parse(zoo.family_name(block, depth))
        return zoo.ZooSpec.parse(block)
    m = dict(e["model"])
    w = width if width is not None else m.pop("width")
    m.pop("width", None)
    if block != "eltwise":
        m.pop("k", None)  # k only shapes eltwise; keep other keys canonical
    return ModelSpec(block, depth, w, **m)


def _with_baseline(compilers, spec):
    out = {k: list(v) for k, v in compilers.items()}
    name, config = parse_compiler_id(spec["baseline"])
    if config not in out.setdefault(name, []):
        out[name].insert(0, config)
    return out


def _point(spec, e, ms, batch, name, config, mode="default"):
    return {"kind": "point", "model": ms.describe(), "batch": batch,
            "compiler": name, "config": config, "shape_mode": mode,
            "threads": spec["threads"], "warmup": e["warmup"], "iters": e["iters"],
            "compile_repeats": spec.get("compile_repeats", 1),
            "input_seed": spec["input_seed"], "rtol": spec["rtol"], "atol": spec["atol"],
            **_outputs(spec)}


def _outputs(spec):
    """The output policy of point measurements (measure.py); the default
    "fresh" is left out, so the keys of earlier sweeps still resume."""
    o = spec.get("outputs", "fresh")
    return {} if o == "fresh" else {"outputs": o}


def _sequence(spec, e, ms, name, config, mode):
    return {"kind": "sequence", "model": ms.describe(), "sequence": list(e["sequence"]),
            "runs_per_shape": e["runs_per_shape"], "compiler": name, "config": config,
            "shape_mode": mode, "threads": spec["threads"], "warmup": e["warmup"],
            "iters": e["iters"], "compile_repeats": spec.get("compile_repeats", 1),
            "input_seed": spec["input_seed"], "rtol": spec["rtol"], "atol": spec["atol"]}


def _each_compiler(compilers):
    for name, configs in compilers.items():
        for c in configs:
            yield name, c


def expand_experiment(spec, e):
    """The measurements of one experiment, in run order."""
    out = []
    kind = e["kind"]
    if kind == "depth":
        comps = _with_baseline(e["compilers"], spec)
        for b in e["blocks"]:
            for d in e["depths"]:
                ms = _model(b, e, d)
                out += [_point(spec, e, ms, e["batch"], n, c) for n, c in _each_compiler(comps)]
    elif kind == "batch":
        comps = _with_baseline(e["compilers"], spec)
        for b in e["blocks"]:
            ms = _model(b, e, e["depth"])
            for bs in e["batches"]:
                out += [_point(spec, e, ms, bs, n, c) for n, c in _each_compiler(comps)]
    elif kind in ("ranking", "amortize"):
        comps = _with_baseline(e["compilers"], spec)
        for b in e["blocks"]:
            ms = _model(b, e, e["depth"], (e.get("widths") or {}).get(b))
            out += [_point(spec, e, ms, e["batch"], n, c) for n, c in _each_compiler(comps)]
    elif kind == "fusion":
        ids = []
        for pair in e["compare"]:
            ids += [i for i in pair if i not in ids]
        models = [_model("eltwise", e, e["depth"]).with_(k=k) for k in e["eltwise_k"]]
        models += [_model(b, e, e["depth"]) for b in e["blocks"] if b != "eltwise"]
        for ms in models:
            out += [_point(spec, e, ms, e["batch"], *parse_compiler_id(i)) for i in ids]
    elif kind == "dynamic":
        for b in e["blocks"]:
            ms = _model(b, e, e["depth"])
            for n, c in _each_compiler(e["compilers"]):
                out += [_sequence(spec, e, ms, n, c, mode) for mode in ("symbolic", "static")]
    elif kind == "ablation":
        configs = [e["base"]] + [ablation_config(e, p) for p in e.get("passes", [])]
        for b in e["blocks"]:
            ms = _model(b, e, e["depth"])
            out += [_point(spec, e, ms, e["batch"], "ncc", c) for c in configs]
    elif kind == "shapley":
        from . import attrib_spec
        for b in e["blocks"]:
            ms = _model(b, e, e["depth"])
            out += [_point(spec, e, ms, e["batch"], "ncc", c) for c in attrib_spec.configs(e)]
    return out


def ablation_config(e, p):
    """The base configuration with pass p off (and the passes that need it)."""
    off = [p] + (e.get("also_disable") or {}).get(p, [])
    return e["base"] + "".join(" --disable-pass=%s" % q for q in off)


def measurement_key(m):
    """The identity of a measurement: every field that changes what is run."""
    return hashlib.sha1(json.dumps(m, sort_keys=True).encode()).hexdigest()[:16]


def expand(spec):
    """[(key, measurement, [experiment ids])], duplicates merged, in order."""
    order, exps, meas = [], {}, {}
    for e in spec["experiments"]:
        for m in expand_experiment(spec, e):
            k = measurement_key(m)
            if k not in meas:
                meas[k] = m
                exps[k] = []
                order.append(k)
            if e["id"] not in exps[k]:
                exps[k].append(e["id"])
    return [(k, meas[k], exps[k]) for k in order]
