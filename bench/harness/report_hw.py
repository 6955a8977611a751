"""bench/harness/report_hw.py — the hardware axis of a report: results of the
same spec from several machines (and targets) side by side.

`bench/experiment merge` keeps the rows of every machine (hardware.py:
env.hardware.machine; shards of one machine merge as before).  The main
report is then written from the rows of the first machine that was not
emulated (its tables read as a single-machine report), and this section
adds, across machines:

  - the machines: architecture, CPU, cores, emulated or not, rows valid;
  - speed-up over the baseline per machine, for every point measured;
  - per ranking experiment (a real-model FLOP group, or the blocks of a
    block ranking), each compiler's order of the architectures on each
    machine;
  - order reversals between machines: compiler c orders p before q on
    machine A and after it on machine B, each order outside the noise
    (neither time ratio's CI holds 1); "compiling reverses" when the
    uncompiled references keep one order on both machines — the edge-cloud
    study's claim that the best architecture depends on where it is
    compiled for.

Emulated machines (AArch64 under qemu) are listed with how many of their
outputs matched; their times measure the emulator, so they get no
speed-up, no rank and no reversal.
"""
import itertools

from . import hardware
from . import metrics
from . import report_fmt as F
from . import report_rows as rr
from . import spec as specmod
from .report_models import REFERENCES
from .zoo import short


def split(rows):
    """{machine: [rows]} in order of first appearance, the last row of a
    key winning within a machine."""
    out = {}
    for r in rows:
        out.setdefault(hardware.machine_id(r), {})[r["key"]] = r
    return {m: list(by.values()) for m, by in out.items()}


def latest(rows):
    """The rows of a results file, the last per (machine, key): what a
    report of a merged directory is built from."""
    return [r for rs in split(rows).values() for r in rs]


def primary(machines):
    """The machine whose rows the main report shows: the first timed one."""
    for m, rows in machines.items():
        if not any(hardware.is_emulated(r) for r in rows):
            return m
    return next(iter(machines))


def timed(machines):
    return [m for m, rows in machines.items() if not any(hardware.is_emulated(r) for r in rows)]


def _hw(rows):
    return hardware.of_row(rows[0]) if rows else {}


def machines_table(machines):
    hdr = ["machine", "arch", "CPU", "cores", "timings", "rows valid / total"]
    body = []
    for m, rows in machines.items():
        hw = _hw(rows)
        em = any(hardware.is_emulated(r) for r in rows)
        body.append([m, hw.get("arch") or "–", hw.get("cpu") or "–", F.fnum(hw.get("cores")),
                     "EMULATED (%s): not ranked" % (hw.get("emulator") or "emulator")
                     if em else "measured",
                     "%d / %d" % (sum(1 for r in rows if rr.valid(r)), len(rows))])
    return F.table(hdr, body)


def _point_items(spec):
    """(experiment, label, measurement) of every point of the spec."""
    for e in spec["experiments"]:
        for m in specmod.expand_experiment(spec, e):
            if m["kind"] == "point":
                yield e, m


def speedup_table(spec, machines, names):
    """Speed-up over the baseline of each measured point, one column per
    timed machine."""
    base_name, base_cfg = specmod.parse_compiler_id(spec["baseline"])
    Rs = {m: rr.Rows(spec, machines[m]) for m in names}
    body, seen = [], set()
    for e, m in _point_items(spec):
        if (m["compiler"], m["config"]) == (base_name, base_cfg):
            continue
        k = specmod.measurement_key(m)
        if k in seen:
            continue
        seen.add(k)
        b = dict(m, compiler=base_name, config=base_cfg)
        cells, any_valid = [], False
        for mach in names:
            R = Rs[mach]
            r, rb = R.get(m), R.get(b)
            if r is None:
                cells.append("not run")
            elif not rr.valid(r):
                cells.append(rr.status_cell(r))
            elif not rr.valid(rb):
                cells.append("baseline %s" % rr.status_cell(rb))
            else:
                any_valid = True
                cells.append(F.fratio(R.ratio(rb, r)) + F.noisy_mark(r))
        if any_valid:
            label = "%s b%d" % (rr_label(m["model"]), m["batch"])
            body.append([label, "`%s:%s`" % (m["compiler"], m["config"])] + cells)
    if not body:
        return None
    return F.table(["model", "compiler"] + names, body)


def rr_label(md):
    from .models import label
    return label(md)


def ranking_groups(spec):
    """(experiment, title, [model names]) of every set of architectures a
    ranking experiment ranks together."""
    for e in spec["experiments"]:
        if e["kind"] != "ranking":
            continue
        if e.get("real"):
            for i, g in enumerate((e.get("flop_groups") or {}).get("groups") or []):
                yield e, "%s group %d" % (e["id"], i + 1), g
        else:
            yield e, e["id"], list(e["blocks"])


def _lat(e, R, names, cid):
    widths = e.get("widths") or {}
    rows, lat = {}, {}
    for n in names:
        r = R.point(e, rr.model(e, n, e["depth"], widths.get(n)), e["batch"], cid)
        rows[n] = r
        if rr.rankable(r):
            lat[n] = rr.med(r)
    return rows, lat


def reversals(spec, machines, names):
    """The ranking table per machine and the cross-machine reversals:
    (order lines, reversal lines)."""
    Rs = {m: rr.Rows(spec, machines[m]) for m in names}
    orders, revs = [], []
    for e, title, group in ranking_groups(spec):
        ids = rr.compiler_ids(e, spec)
        data = {(m, c): _lat(e, Rs[m], group, c) for m in names for c in ids}
        for c in ids:
            if not any(data[(m, c)][1] for m in names):
                continue  # nothing ranked (e.g. an emulated target's compiler)
            parts = []
            for m in names:
                lat = data[(m, c)][1]
                parts.append("%s: %s" % (m, " < ".join(short(n) for n in sorted(lat, key=lat.get))
                                         or "–"))
            orders.append("- %s, `%s`: %s" % (title, c, "; ".join(parts)))
        refs = [c for c in REFERENCES if c in ids]
        for a, b in itertools.combinations(names, 2):
            for c in ids:
                (ra, la), (rb_, lb) = data[(a, c)], data[(b, c)]
                for p, q in metrics.inverted_pairs(la, lb):
                    qa = Rs[a].ratio(ra[p], ra[q])
                    qb = Rs[b].ratio(rb_[p], rb_[q])
                    real = not any(x is None or x.within_noise() for x in (qa, qb))
                    kept = [ref for ref in refs if ref != c and _same_order(
                        data[(a, ref)][1], data[(b, ref)][1], p, q)]
                    why = ""
                    if c not in refs and kept:
                        why = " — compiling reverses: %s keep%s one order on both" % (
                            ", ".join("`%s`" % k for k in kept), "s" if len(kept) == 1 else "")
                    revs.append("- %s, `%s`: %s/%s is %s on %s, %s on %s%s%s" % (
                        title, c, short(p), short(q), F.fratio(qa, verdict=False), a,
                        F.fratio(qb, verdict=False), b, why,
                        "" if real else " (within noise: not a real reversal)"))
    return orders, revs


def _same_order(la, lb, p, q):
    if not all(n in d for d in (la, lb) for n in (p, q)):
        return False
    return (la[p] - la[q]) * (lb[p] - lb[q]) > 0


def section(spec, machines):
    """The markdown parts of the hardware-axis section."""
    names = timed(machines)
    out = ["Rows of %d machines. The sections above show `%s` alone; here every machine "
           "side by side. Emulated machines are checked for correctness only: their times "
           "measure the emulator and are never ranked.\n\n%s"
           % (len(machines), primary(machines), machines_table(machines))]
    emulated = [m for m in machines if m not in names]
    for m in emulated:
        rows = machines[m]
        out.append("**%s** is emulated (%s): %d of %d rows produced the right output; no "
                   "times are reported for it." % (
                       m, _hw(rows).get("why") or _hw(rows).get("emulator") or "emulated",
                       sum(1 for r in rows if rr.valid(r)), len(rows)))
    t = speedup_table(spec, machines, names)
    out.append("Speed-up over `%s` on each timed machine (95%% CI):\n\n%s"
               % (spec["baseline"], t or "no point was measured with its baseline"))
    orders, revs = reversals(spec, machines, names)
    if orders:
        out.append("Order of the architectures (fastest first) per machine:\n\n" +
                   "\n".join(orders))
    out.append("Order reversals between machines (a compiler puts two architectures in one "
               "order on one machine and the other on another):\n\n" +
               ("\n".join(revs) or ("- none" if len(names) > 1 else
                                    "- fewer than two timed machines: nothing to compare")))
    return out
