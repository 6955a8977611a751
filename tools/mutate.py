#!/usr/bin/env python3
"""tools/mutate.py — mutation testing for ncc's C sources.

Generates mutants of the chosen files with universalmutator (PyPI; install with
`pip install -r tools/requirements-mutate.txt`), applies ONE mutant at a time to
the working-tree file, rebuilds incrementally in its own build directory
(default build-mutate/, Release, ccache, Ninja when available), runs the ctest
subset that TEST_MAP assigns to the file, and restores the file. A mutant the
subset still passes is a survivor: a bug the tests would let through, unless it
is equivalent (the program cannot behave differently), in which case it goes
into tools/mutate/justifications.txt with a one-line reason.

Safety: the original file is saved under <build>/mutate-state/ and a state file
names the mutated path before the mutant is written; `finally` restores it
(Ctrl-C and SIGTERM included), and every start first restores a mutant a
killed run left behind. The restored file is newer than the mutant's object,
so the next build recompiles it (a ccache hit).

See docs/TESTING.md, "Mutation testing", for how to run it on a change.
"""
import argparse
import contextlib
import fcntl
import fnmatch
import hashlib
import io
import json
import os
import random
import re
import shutil
import signal
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
JUSTIFICATIONS = os.path.join(ROOT, "tools", "mutate", "justifications.txt")
DEFAULT_DIRS = ["ir", "passes", "codegen", "runtime/ref"]

# File -> (ctest subset as a -R regex, build targets that subset runs). First
# matching glob wins; keep specific rows above the directory catch-alls. A
# subset holds the tests that exercise the file against an oracle outside ncc
# (numpy/onnxruntime data, hand-derived expectations, FileCheck on pass
# structure) and runs in well under a minute at -j1: a mutant costs one
# targeted relink plus its subset. The slow suites (node_conformance,
# unit.test_fusion, real_nets) are left to the normal ctest run.
CLI = "ncc_cli"
TEST_MAP = [
    ("passes/fusion.c",
     r"^(unit\.test_passes|filecheck\.fuse_.*|filecheck\.pass_manager|python\.mutation_cases\.cpu)$",
     [CLI, "test_passes"]),
    ("passes/qdq_fold.c", r"^(filecheck\.pass_qdq_fold.*|python\.qdq_fold_ort)$", [CLI]),
    ("passes/memplan*.c",
     r"^(unit\.test_(memory|memplan_oom)|memory\.test_memory|filecheck\.fuse_memplan)$",
     [CLI, "test_memory", "test_memplan_oom"]),
    ("passes/patchify.c", r"^(filecheck\.pass_patchify|python\.patchify_ort)$", [CLI]),
    ("passes/conv1d.c", r"^(filecheck\.pass_conv1d|python\.conv1d_ort)$", [CLI]),
    ("passes/winograd.c", r"^(filecheck\.pass_winograd|python\.winograd_ort)$", [CLI]),
    ("passes/*.c",
     r"^(unit\.test_passes|filecheck\.pass_.*|filecheck\.logic\..*)$", [CLI, "test_passes"]),
    ("ir/shape*.c",
     r"^(unit\.test_shape|ops\.rest|filecheck\.(rt_.*|bad_infer|bad_rank)|python\.mutation_cases)$",
     [CLI, "test_shape", "test_backend_ops"]),
    ("ir/text_*.c", r"^(unit\.test_text|filecheck\.(bad_.*|rt_.*))$", [CLI, "test_text"]),
    # the signal handler's cleanup is exercised by the driver's file tests
    ("ir/atomic_file.c", r"^(unit\.test_atomic_file|files\.test_files)$",
     [CLI, "test_atomic_file"]),
    # the ONNX importer: its unit test (fixtures from the onnx package, the
    # allocation-failure walk) and the malformed-model corpus
    ("frontend/*.c", r"^(unit\.test_onnx|onnx\..*|files\.test_files)$", [CLI, "test_onnx"]),
    ("ir/*.c",
     r"^(unit\.test_(ir|shape|text|attrs|window|passes)|ops\.rest|filecheck\.rt_.*)$",
     [CLI, "test_ir", "test_shape", "test_text", "test_attrs", "test_window", "test_passes",
      "test_backend_ops"]),
    # the AMX tile code (KIR_E_TILE_*, KIR_S_TILE_STORE) is reached only by
    # the int8 and bf16 matrix products
    # the int8 and bf16 matrix products; on a host without AMX the tile code
    # is reached through NCC_AMX=emulate (amx_emu.c: the .tiles suite and
    # the precision tests' tile cases)
    ("codegen/llvm/*.c",
     r"^(ops\.cpu\.w8|ops\.cpu\.w1|python\.qkernels_ort(\.tiles)?|python\.precision\.cpu|"
     r"filecheck\.codegen\.(amx_.*|blocked_conv_unroll))$",
     [CLI, "test_backend_ops"]),
    ("codegen/lower_amx.c",
     r"^(python\.qkernels_ort(\.tiles)?|python\.precision\.cpu|filecheck\.codegen\.amx_.*)$",
     [CLI]),
    # the blocked kernels; their bf16 Conv dispatch to the tiles is reached
    # only by the precision tests' conv tile cases
    ("codegen/lower_blocked.c",
     r"^(ops\.cpu\.w8|unit\.test_lower_rules|unit\.test_fusion\.w8|python\.mutation_cases\.cpu|"
     r"python\.precision\.cpu|filecheck\.codegen\.amx_bf16_conv|python\.blocked_conv_ort|"
     r"python\.conv_pads_ort|filecheck\.codegen\.blocked_conv_unroll)$",
     [CLI, "test_backend_ops", "test_lower_rules", "test_fusion"]),
    # the Winograd Conv: its own suite (both tile sizes, every width)
    ("codegen/lower_wino.c", r"^(python\.winograd_ort)$", [CLI]),
    # the bf16 blocked Conv on tiles: the precision tests' conv tile cases
    ("codegen/lower_bconv_amx.c",
     r"^(python\.precision\.cpu|filecheck\.codegen\.amx_bf16_conv)$", [CLI]),
    ("codegen/lower_matmul.c",
     r"^(ops\.cpu\.w8|unit\.test_lower_rules|unit\.test_fusion\.w8|python\.precision\.cpu|"
     r"python\.mutation_cases\.cpu|filecheck\.codegen\.amx_bf16)$",
     [CLI, "test_backend_ops", "test_lower_rules", "test_fusion"]),
    # the direct convolution's integer mode (QLinearConv without tiles) is
    # reached only by the integer kernel tests
    ("codegen/lower_conv.c",
     r"^(ops\.cpu\.w8|unit\.test_lower_rules|unit\.test_fusion\.w8|python\.mutation_cases\.cpu|"
     r"python\.qkernels_ort)$",
     [CLI, "test_backend_ops", "test_lower_rules", "test_fusion"]),
    # the integer kernels: the op tables have no QLinear cases
    ("codegen/lower_q*.c",
     r"^(python\.qkernels_ort(\.tiles)?|unit\.test_lower_rules|"
     r"filecheck\.codegen\.amx_(int8|qconv).*)$",
     [CLI, "test_lower_rules"]),
    # the shared helpers, the blocked Conv's weight packing among their users
    ("codegen/lower_util.c",
     r"^(ops\.cpu\.w8|unit\.test_lower_rules|unit\.test_fusion\.w8|python\.mutation_cases\.cpu|"
     r"python\.blocked_conv_ort)$",
     [CLI, "test_backend_ops", "test_lower_rules", "test_fusion"]),
    # fused epilogues (lower_gx.c, lower_util.c's operand strides) are
    # reached only through the fusion tests
    ("codegen/*.c",
     r"^(ops\.cpu\.w8|unit\.test_lower_rules|unit\.test_fusion\.w8|python\.mutation_cases\.cpu)$",
     [CLI, "test_backend_ops", "test_lower_rules", "test_fusion"]),
    # the cpu backend around the kernels: what it compiles, counts, installs
    ("targets/cpu/*.c",
     r"^(unit\.test_cpu_module|ops\.cpu\.w8|python\.views_ort|python\.blocked_conv_ort)$",
     [CLI, "test_cpu_module", "test_backend_ops"]),
    # the host executor: views and the shape memo have their own suites
    ("runtime/exec.c",
     r"^(unit\.test_cpu_module|ops\.cpu\.w8|python\.views_ort|python\.shape_memo_ort|"
     r"memory\.test_memory)$",
     [CLI, "test_cpu_module", "test_backend_ops"]),
    ("runtime/ref/*.c", r"^(unit\.test_ref_(core|nn)|ops\.rest|python\.mutation_cases)$",
     [CLI, "test_ref_core", "test_ref_nn", "test_backend_ops"]),
]

# Rules universalmutator applies to C (its own `mutate FILE c` set).
RULES = ["universal.rules", "c.rules", "c_like.rules"]

STATUSES = ("killed", "timeout", "survived", "justified", "build_failure")


def rel(path):
    return os.path.relpath(os.path.abspath(path), ROOT)


def sha(data):
    return hashlib.sha256(data).hexdigest()


def show(line):
    """One-line form of a source line (a mutant may add a line: `x;⏎break;`)."""
    return line.strip().replace("\n", "⏎ ")


def die(msg, code=2):
    print("mutate: error: " + msg, file=sys.stderr)
    sys.exit(code)


def tests_for(path):
    for pattern, regex, targets in TEST_MAP:
        if fnmatch.fnmatch(path, pattern):
            return regex, targets
    return None, None


# ---------------------------------------------------------------- mutants ---

def load_mutator():
    try:
        from universalmutator import mutator  # noqa: WPS433
    except ImportError:
        die("universalmutator is not installed: "
            "pip install -r tools/requirements-mutate.txt")
    return mutator


def generate(path, lines=None):
    """All mutants of one file: dicts with a stable id (file, original line,
    mutated line, occurrence), so ids survive edits elsewhere in the file."""
    mutator = load_mutator()
    with open(os.path.join(ROOT, path), encoding="utf-8") as f:
        source = f.readlines()
    with contextlib.redirect_stdout(io.StringIO()):
        raw = mutator.mutants_regexp(source, ruleFiles=RULES,
                                     ignorePatterns=[], ignoreStringOnly=True)
    seen = {}
    out = []
    for m in raw:
        lineno, new = m[0], m[1]
        orig = source[lineno - 1]
        if orig.lstrip().startswith("#"):
            continue  # preprocessor lines: mostly build failures, little signal
        if lines is not None and lineno not in lines:
            continue
        key = (orig.strip(), new.strip())
        k = seen.get(key, 0)
        seen[key] = k + 1
        mid = hashlib.sha1("\0".join([path, key[0], key[1], str(k)])
                           .encode()).hexdigest()[:12]
        out.append({"id": mid, "file": path, "line": lineno,
                    "orig": orig.rstrip("\n"), "new": new.rstrip("\n"),
                    "rule": m[2][1] if isinstance(m[2], tuple) else str(m[2])})
    return out


def spread(mutants, rng):
    """Deterministic order that visits every line once before any line twice."""
    by_line = {}
    for m in mutants:
        by_line.setdefault(m["line"], []).append(m)
    groups = [by_line[k] for k in sorted(by_line)]
    for g in groups:
        rng.shuffle(g)
    rng.shuffle(groups)
    out = []
    depth = 0
    while len(out) < len(mutants):
        for g in groups:
            if depth < len(g):
                out.append(g[depth])
        depth += 1
    return out


def changed_lines(rev, path):
    """Line numbers of `path` (working tree) that differ from `rev`."""
    diff = subprocess.run(["git", "diff", "-U0", rev, "--", path], cwd=ROOT,
                          capture_output=True, text=True)
    if diff.returncode != 0:
        die("git diff %s failed: %s" % (rev, diff.stderr.strip()))
    lines = set()
    for m in re.finditer(r"^@@ -\S+ \+(\d+)(?:,(\d+))? @@", diff.stdout, re.M):
        start, count = int(m.group(1)), int(m.group(2) or 1)
        lines.update(range(start, start + count))
    return lines


def expand(paths, rev):
    files = []
    for p in paths:
        full = os.path.join(ROOT, p)
        if os.path.isdir(full):
            for dirpath, _, names in os.walk(full):
                files += [rel(os.path.join(dirpath, n)) for n in names if n.endswith(".c")]
        elif os.path.isfile(full):
            files.append(rel(full))
        else:
            die("no such file or directory: " + p)
    if rev:
        out = subprocess.run(["git", "diff", "--name-only", rev, "--"] + (paths or DEFAULT_DIRS),
                             cwd=ROOT, capture_output=True, text=True)
        if out.returncode != 0:
            die("git diff %s failed: %s" % (rev, out.stderr.strip()))
        changed = {l for l in out.stdout.split() if l.endswith(".c")}
        files = [f for f in files if f in changed]
    return sorted(set(files))


def read_justifications(path):
    """`<id> <file> <reason...>` per line; '#' lines are comments."""
    just = {}
    if not os.path.exists(path):
        return just
    with open(path, encoding="utf-8") as f:
        for n, line in enumerate(f, 1):
            line = line.strip()
            if not line or line.startswith("#"):
                continue
            parts = line.split(None, 2)
            if len(parts) < 3:
                die("%s:%d: expected `<id> <file> <reason>`" % (path, n))
            just[parts[0]] = {"file": parts[1], "reason": parts[2]}
    return just


# --------------------------------------------------------- tree handling ---

class Tree:
    """Applies and restores mutants; never leaves one behind."""

    def __init__(self, build):
        self.dir = os.path.join(build, "mutate-state")
        self.state = os.path.join(self.dir, "state.json")
        os.makedirs(self.dir, exist_ok=True)

    def recover(self):
        if not os.path.exists(self.state):
            return
        with open(self.state) as f:
            st = json.load(f)
        target = os.path.join(ROOT, st["file"])
        with open(target, "rb") as f:
            now = sha(f.read())
        if now == st["mutant_sha"]:
            shutil.copyfile(st["backup"], target)
            print("mutate: restored %s (a previous run was interrupted)" % st["file"])
        elif now != st["orig_sha"]:
            die("%s is neither the original nor the mutant a previous run wrote; "
                "compare it with %s and delete %s" % (st["file"], st["backup"], self.state))
        os.remove(self.state)

    @contextlib.contextmanager
    def mutated(self, path, lineno, new):
        target = os.path.join(ROOT, path)
        with open(target, "rb") as f:
            orig = f.read()
        lines = orig.decode("utf-8").splitlines(keepends=True)
        lines[lineno - 1] = new + "\n"
        mutant = "".join(lines).encode("utf-8")
        backup = os.path.join(self.dir, path.replace("/", "__"))
        with open(backup, "wb") as f:
            f.write(orig)
        with open(self.state + ".tmp", "w") as f:
            json.dump({"file": path, "backup": backup, "orig_sha": sha(orig),
                       "mutant_sha": sha(mutant)}, f)
        os.replace(self.state + ".tmp", self.state)
        try:
            with open(target, "wb") as f:
                f.write(mutant)
            yield
        finally:
            with open(target, "wb") as f:
                f.write(orig)
            os.remove(self.state)


def on_term(signum, frame):
    raise KeyboardInterrupt()


def run(cmd, timeout, log=None):
    """Run in its own process group so a timeout or Ctrl-C kills all of it."""
    p = subprocess.Popen(cmd, cwd=ROOT, stdout=subprocess.PIPE,
                         stderr=subprocess.STDOUT, text=True, start_new_session=True)
    try:
        out, _ = p.communicate(timeout=timeout)
        return p.returncode, out, False
    except subprocess.TimeoutExpired:
        os.killpg(p.pid, signal.SIGKILL)
        out, _ = p.communicate()
        return None, out, True
    except BaseException:
        os.killpg(p.pid, signal.SIGKILL)
        p.wait()
        raise


def configure(build, jobs):
    if os.path.exists(os.path.join(build, "CMakeCache.txt")):
        return
    cmd = ["cmake", "-S", ROOT, "-B", build, "-DCMAKE_BUILD_TYPE=Release"]
    if shutil.which("ninja"):
        cmd += ["-G", "Ninja"]
    if shutil.which("ccache"):
        cmd += ["-DCMAKE_C_COMPILER_LAUNCHER=ccache"]
    rc, out, _ = run(cmd, 600)
    if rc != 0:
        sys.stdout.write(out)
        die("configuring %s failed" % build)


def build_tree(build, jobs, timeout, targets=None):
    cmd = ["cmake", "--build", build, "-j", str(jobs)]
    if targets:
        cmd += ["--target"] + list(targets)
    return run(cmd, timeout)


def run_tests(build, regex, jobs, timeout):
    cmd = ["ctest", "--test-dir", build, "-R", regex, "-j", str(jobs),
           "--timeout", str(timeout), "--stop-on-failure", "--output-on-failure"]
    rc, out, timed_out = run(cmd, timeout + 30)
    failed = re.findall(r"^\s*\d+ - (\S+) \((\w[\w ]*)\)", out, re.M)
    return rc, out, timed_out, failed


# ----------------------------------------------------------------- report ---

def summarize(results, key):
    table = {}
    for r in results:
        row = table.setdefault(key(r), dict.fromkeys(STATUSES, 0))
        row[r["status"]] += 1
    for row in table.values():
        row["mutants"] = sum(row[s] for s in STATUSES if s != "build_failure")
        detected = row["killed"] + row["timeout"]
        scored = detected + row["survived"]
        row["score"] = round(detected / scored, 3) if scored else None
    return dict(sorted(table.items()))


def md_table(table, head):
    lines = ["| %s | mutants | killed | timeouts | survived | justified | score | build failures (excluded) |" % head,
             "|---|---:|---:|---:|---:|---:|---:|---:|"]
    for k, r in table.items():
        score = "-" if r["score"] is None else "%.0f%%" % (100 * r["score"])
        lines.append("| %s | %d | %d | %d | %d | %d | %s | %d |" % (
            k, r["mutants"], r["killed"], r["timeout"], r["survived"],
            r["justified"], score, r["build_failure"]))
    return "\n".join(lines)


def write_report(prefix, config, results, unfinished):
    os.makedirs(os.path.dirname(os.path.abspath(prefix)) or ".", exist_ok=True)
    per_dir = summarize(results, lambda r: os.path.dirname(r["file"]))
    per_file = summarize(results, lambda r: r["file"])
    total = summarize(results, lambda r: "all")
    data = {"config": config, "unfinished": unfinished, "total": total.get("all"),
            "per_directory": per_dir, "per_file": per_file, "mutants": results}
    with open(prefix + ".json", "w") as f:
        json.dump(data, f, indent=1)
        f.write("\n")
    md = ["# Mutation testing report", "",
          "Command: `%s`" % config["command"], "",
          "Score = (killed + timeouts) / (killed + timeouts + survived); justified "
          "(equivalent) mutants and mutants that do not build are not scored.", ""]
    if unfinished:
        md += ["%d sampled mutants were not run (budget or interrupt)." % unfinished, ""]
    md += ["## Per directory", "", md_table(per_dir, "directory"), "",
           "## Per file", "", md_table(per_file, "file"), ""]
    surv = [r for r in results if r["status"] == "survived"]
    md += ["## Survivors (%d)" % len(surv), "",
           "Kill each with a test whose oracle is outside ncc, or, if it is equivalent, "
           "add `<id> <file> <reason>` to tools/mutate/justifications.txt.", ""]
    for r in surv:
        md += ["- `%s` %s:%d (tests `%s`)" % (r["id"], r["file"], r["line"], r["tests"]),
               "  - before: `%s`" % show(r["orig"]), "  - after: `%s`" % show(r["new"])]
    just = [r for r in results if r["status"] == "justified"]
    if just:
        md += ["", "## Justified (%d)" % len(just), ""]
        md += ["- `%s` %s:%d `%s` -> `%s`: %s" % (r["id"], r["file"], r["line"], show(r["orig"]),
                                                  show(r["new"]), r["reason"]) for r in just]
    with open(prefix + ".md", "w") as f:
        f.write("\n".join(md) + "\n")
    return total.get("all")


# ------------------------------------------------------------------- main ---

def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("paths", nargs="*", help="files or directories (default: %s)" % " ".join(DEFAULT_DIRS))
    ap.add_argument("--build", default=os.path.join(ROOT, "build-mutate"), help="build directory (default build-mutate)")
    ap.add_argument("--changed-since", metavar="REV", help="mutate only lines changed since REV (git diff REV)")
    ap.add_argument("--per-file", type=int, default=10, help="mutants sampled per file (default 10; 0 = all)")
    ap.add_argument("--max-mutants", type=int, default=0, help="total mutant cap (0 = none)")
    ap.add_argument("--time-budget", type=float, default=0, help="stop starting mutants after this many seconds")
    ap.add_argument("--seed", type=int, default=1, help="sampling seed (default 1)")
    ap.add_argument("--timeout", type=int, default=300, help="seconds for one mutant's tests (default 300)")
    ap.add_argument("--build-timeout", type=int, default=600)
    ap.add_argument("--jobs", type=int, default=2, help="build jobs (default 2)")
    ap.add_argument("--test-jobs", type=int, default=1, help="ctest -j (default 1)")
    ap.add_argument("--tests", help="ctest -R regex for every file (overrides TEST_MAP)")
    ap.add_argument("--justifications", default=JUSTIFICATIONS)
    ap.add_argument("--rerun", metavar="REPORT.json", help="run again the mutants of a previous report")
    ap.add_argument("--rerun-status", default="survived", help="which of --rerun's mutants (default survived)")
    ap.add_argument("--merge", action="store_true",
                    help="with --rerun: report the previous results with the rerun ones replaced")
    ap.add_argument("--report", default=None, help="report prefix (default <build>/mutate-report)")
    ap.add_argument("--list", action="store_true", help="print the sampled mutants and exit")
    ap.add_argument("--restore", action="store_true", help="only restore a mutant an interrupted run left")
    a = ap.parse_args()

    build = os.path.abspath(a.build)
    tree = Tree(build)
    # one run per build dir: a second one would "recover" the first's mutant
    # (--list touches nothing, so it neither locks nor recovers)
    if not a.list:
        lock = open(os.path.join(tree.dir, "lock"), "w")
        try:
            fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            die("another tools/mutate.py run is using %s" % build)
        tree.recover()
    if a.restore:
        return 0
    just = read_justifications(a.justifications)

    # ---- choose mutants
    if a.rerun:
        with open(a.rerun) as f:
            prev = json.load(f)
        want = {m["id"] for m in prev["mutants"] if m["status"] in a.rerun_status.split(",")}
        if a.merge:
            kept = [m for m in prev["mutants"] if m["id"] not in want]
        files = sorted({m["file"] for m in prev["mutants"] if m["id"] in want})
        queues = [[m for m in generate(f) if m["id"] in want] for f in files]
        lost = len(want) - sum(len(q) for q in queues)
        if lost:
            print("mutate: %d mutants of %s no longer apply (their line changed)" % (lost, a.rerun))
    else:
        files = expand(a.paths or DEFAULT_DIRS, a.changed_since)
        queues = []
        for f in files:
            lines = changed_lines(a.changed_since, f) if a.changed_since else None
            ms = generate(f, lines)
            ms = spread(ms, random.Random("%d:%s" % (a.seed, f)))
            queues.append(ms[:a.per_file] if a.per_file else ms)
    # interleave the files of different directories, then round-robin over
    # files, so a total cap or a time budget samples every directory and file
    by_dir = {}
    for q in queues:
        if q:
            by_dir.setdefault(os.path.dirname(q[0]["file"]), []).append(q)
    queues = []
    for i in range(max((len(v) for v in by_dir.values()), default=0)):
        queues += [v[i] for _, v in sorted(by_dir.items()) if i < len(v)]
    chosen = []
    depth = 0
    while any(depth < len(q) for q in queues):
        chosen += [q[depth] for q in queues if depth < len(q)]
        depth += 1
    if a.max_mutants:
        chosen = chosen[:a.max_mutants]
    for m in chosen:
        m["tests"], m["targets"] = tests_for(m["file"])
        if a.tests:
            m["tests"], m["targets"] = a.tests, None  # None: build everything
    missing = sorted({m["file"] for m in chosen if not m["tests"]})
    if missing:
        die("no ctest subset for %s: add a TEST_MAP row or pass --tests" % ", ".join(missing))
    if a.list:
        for m in chosen:
            print("%s %s:%d  %s  ->  %s" % (m["id"], m["file"], m["line"], show(m["orig"]), show(m["new"])))
        print("%d mutants in %d files" % (len(chosen), len({m["file"] for m in chosen})))
        return 0
    if not chosen:
        print("mutate: nothing to mutate")
        return 0

    prefix = a.report or os.path.join(build, "mutate-report")
    config = {"command": " ".join(["tools/mutate.py"] + sys.argv[1:]), "seed": a.seed,
              "per_file": a.per_file, "max_mutants": a.max_mutants, "timeout": a.timeout,
              "changed_since": a.changed_since, "rerun": a.rerun,
              "files": sorted({m["file"] for m in chosen})}
    signal.signal(signal.SIGTERM, on_term)
    signal.signal(signal.SIGHUP, on_term)

    # ---- baseline: the unmutated tree must build and pass every subset
    configure(build, a.jobs)
    rc, out, _ = build_tree(build, a.jobs, a.build_timeout * 3)
    if rc != 0:
        sys.stdout.write(out[-4000:])
        die("the unmutated tree does not build in %s" % build)
    for regex in sorted({m["tests"] for m in chosen if m["id"] not in just}):
        t0 = time.time()
        rc, out, timed_out, failed = run_tests(build, regex, a.test_jobs, a.timeout)
        if rc != 0:
            sys.stdout.write(out[-4000:])
            die("baseline fails for -R '%s' (%s): fix the tree or the TEST_MAP row"
                % (regex, "timeout" if timed_out else ", ".join(n for n, _ in failed)))
        print("baseline -R '%s' passes (%.0f s)" % (regex, time.time() - t0), flush=True)

    results = list(kept) if a.rerun and a.merge else []
    n_kept = len(results)
    start = time.time()
    unfinished = 0
    try:
        for i, m in enumerate(chosen):
            if a.time_budget and time.time() - start > a.time_budget:
                unfinished = len(chosen) - i
                print("mutate: time budget spent, %d mutants not run" % unfinished)
                break
            r = dict(m)
            t0 = time.time()
            if m["id"] in just:
                r.update(status="justified", reason=just[m["id"]]["reason"])
            else:
                with tree.mutated(m["file"], m["line"], m["new"]):
                    brc, bout, _ = build_tree(build, a.jobs, a.build_timeout, m["targets"])
                    if brc != 0:
                        r["status"] = "build_failure"
                    else:
                        trc, tout, timed_out, failed = run_tests(build, m["tests"], a.test_jobs, a.timeout)
                        if timed_out or (failed and all("Timeout" in why for _, why in failed)):
                            r["status"] = "timeout"
                        elif trc != 0:
                            r["status"] = "killed"
                            r["killed_by"] = [n for n, _ in failed]
                        else:
                            r["status"] = "survived"
            r["seconds"] = round(time.time() - t0, 1)
            results.append(r)
            print("[%d/%d] %-13s %s %s:%d  %s  ->  %s  (%.0f s)" % (
                i + 1, len(chosen), r["status"], m["id"], m["file"], m["line"],
                show(m["orig"]), show(m["new"]), r["seconds"]), flush=True)
            write_report(prefix, config, results, len(chosen) - i - 1)
    except KeyboardInterrupt:
        unfinished = len(chosen) - (len(results) - n_kept)
        print("\nmutate: interrupted; the tree is restored", file=sys.stderr)
        write_report(prefix, config, results, unfinished)
        return 130
    total = write_report(prefix, config, results, unfinished)
    # leave the build dir matching the restored tree
    build_tree(build, a.jobs, a.build_timeout)
    print("report: %s.md, %s.json" % (prefix, prefix))
    if total:
        print("mutants %d, killed %d, timeouts %d, survived %d, justified %d, build failures %d" % (
            total["mutants"], total["killed"], total["timeout"], total["survived"],
            total["justified"], total["build_failure"]))
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main())
    except KeyboardInterrupt:
        print("\nmutate: interrupted", file=sys.stderr)
        sys.exit(130)
