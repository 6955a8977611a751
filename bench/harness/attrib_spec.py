"""bench/harness/attrib_spec.py — the `shapley` experiment kind (E8): which
ncc configurations attribute a model's speed-up to its passes (the game
itself is attrib.py; spec.py calls normalize(), resolve() and configs()).

    [[experiments]]
    id = "E8"
    kind = "shapley"
    blocks = ["conv", "resblock"]
    depth = 2
    batch = 1
    base = "cpu -O2"                  # the full configuration
    passes = ["const-fold", "bn-fold", "layout", "fusion"]   # default: all at base's level
    method = "auto"                   # exact (2^n coalitions) | permutation | auto
    permutations = 16                 # orders sampled (permutation)
    perm_seed = 0                     # their seed: every shard expands the same rows

auto is exact up to attrib.EXACT_MAX passes, else permutation sampling.
Either way the pairwise-ablation coalitions (all on, one off, two off) are
measured too.  resolve() fills in passes, needs ({pass: the players it
needs}) and orders (null for exact) so the expansion is pure.
"""
from . import attrib


def _err(msg):
    from .spec import SpecError
    return SpecError(msg)


def normalize(e, where):
    """Defaults and checks of the keys only this kind has."""
    e.setdefault("base", "cpu -O2")
    e.setdefault("method", "auto")
    if e["method"] not in ("auto", "exact", "permutation"):
        raise _err("%s: method must be auto, exact or permutation" % where)
    e.setdefault("permutations", 16)
    e.setdefault("perm_seed", 0)
    for k in ("permutations", "perm_seed"):
        if not isinstance(e[k], int) or e[k] < (1 if k == "permutations" else 0):
            raise _err("%s: %s must be an integer >= %d" % (where, k, k == "permutations"))
    if "passes" in e:
        p = e["passes"]
        if not isinstance(p, list) or not p or not all(isinstance(x, str) for x in p) \
                or len(set(p)) != len(p):
            raise _err("%s: passes must be a non-empty list of distinct pass names" % where)
    from . import adapters
    msg = adapters.check_config("ncc", e["base"])
    if msg:
        raise _err("%s: base: %s" % (where, msg))


def resolve(e, ncc, level):
    """passes (pipeline order), needs and orders, from `ncc passes`."""
    table = [(n, needs) for n, lvl, needs in ncc.pass_table() if lvl <= level]
    known = [n for n, _ in table]
    players = e.get("passes") or known
    unknown = [p for p in players if p not in known]
    if unknown:
        raise _err("experiment %s: pass(es) %s do not run at -O%d (passes: %s)"
                   % (e["id"], ", ".join(unknown), level, ", ".join(known)))
    players = [n for n in known if n in players]  # pipeline order
    needs_all = dict(table)
    msg = attrib.closure_error(players, needs_all)
    if msg:
        raise _err("experiment %s: %s" % (e["id"], msg))
    e["passes"] = players
    e["needs"] = {p: [q for q in needs_all[p] if q in players]
                  for p in players if any(q in players for q in needs_all[p])}
    method = e["method"]
    if method == "auto":
        method = "exact" if len(players) <= attrib.EXACT_MAX else "permutation"
    e["method"] = method
    e["orders"] = (None if method == "exact" else
                   attrib.permutation_orders(players, e["permutations"], e["perm_seed"]))


def game_shape(e):
    """An attrib.Game without data: what the coalitions are."""
    return attrib.Game(e["passes"], e.get("needs") or {}, e.get("orders"), {})


def config_of(e, coalition):
    """The ncc configuration that runs `coalition` (effective part) of the
    players and the base's other passes: the players off as flags, in
    pipeline order."""
    on = attrib.effective(coalition, e.get("needs") or {})
    return e["base"] + "".join(" --disable-pass=%s" % p for p in e["passes"] if p not in on)


def configs(e):
    """Every configuration the experiment measures, each once, the full
    one (the base) first."""
    if "passes" not in e or "needs" not in e:
        return [e["base"]]  # not resolved: nothing beyond the base
    out = [e["base"]]
    for c in game_shape(e).coalitions():
        cfg = config_of(e, c)
        if cfg not in out:
            out.append(cfg)
    return out
