"""bench/harness/nccbin.py — the ncc binary as the harness sees it.

Finds the binary (--ncc, $NCC, build/ncc of the source tree, PATH), runs its
commands with a timeout, and parses what they print: `ncc passes` (name and
-O level of every pass), `ncc bench --json` and the `--time-passes` table
(per-pass milliseconds plus the graph statistics nodes, kernels, MFLOP,
MB moved and peak MB after each pass).  Also reads the CMake cache next to
the binary, so that every row can say whether it was timed on a sanitizer
build.
"""
import json
import os
import re
import shutil
import subprocess

SRC = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

# Exit statuses of the driver (tools/ncc/main.c).
EXIT_USAGE, EXIT_INPUT, EXIT_UNSUPPORTED, EXIT_NOMEM = 1, 2, 3, 4


class NccError(RuntimeError):
    """An ncc command failed; rc and the first error line say how."""

    def __init__(self, rc, line, cmd):
        RuntimeError.__init__(self, "exit %s: %s" % (rc, line))
        self.rc, self.line, self.cmd = rc, line, cmd


def find_ncc(explicit=None):
    """The ncc binary path, or None when there is none to be found."""
    candidates = [explicit, os.environ.get("NCC"),
                  os.path.join(SRC, "build", "ncc"), shutil.which("ncc")]
    for c in candidates:
        if c and os.path.isfile(c) and os.access(c, os.X_OK):
            return os.path.abspath(c)
    return None


def first_error_line(stderr):
    lines = [l for l in stderr.splitlines() if l.strip()]
    errs = [l for l in lines if "error:" in l]
    return (errs or lines or ["(no output)"])[0].strip()


def parse_time_passes(text):
    """Rows of a --time-passes table: [{name, ms, nodes, kernels, mflop,
    mb_moved, peak_mb}], '(input)' first; plus the 'total' ms.  Lines that
    are not part of the table (other stderr) are ignored."""
    rows, total = [], None
    in_table = False
    for line in text.splitlines():
        tok = line.split()
        if not tok:
            continue
        if tok[0] == "pass" and "MFLOP" in line:
            in_table, rows, total = True, [], None
            continue
        if not in_table:
            continue
        if tok[0] == "total" and len(tok) == 2:
            total = _num(tok[1])
            in_table = False
            continue
        nums = [_num(t) for t in tok[1:]]
        if len(nums) < 5 or any(v is None for v in nums):
            continue
        row = {"name": tok[0], "ms": nums[0] if len(nums) >= 7 else None}
        row.update(zip(("nodes", "kernels", "mflop", "mb_moved", "peak_mb"), nums[-5:]))
        rows.append(row)
    return rows, total


def _num(t):
    try:
        return float(t)
    except ValueError:
        return None


class Ncc:
    """One ncc binary: runs commands, caches `ncc passes` and the version."""

    def __init__(self, path, timeout=600.0):
        self.path = path
        self.timeout = timeout
        self._passes = None

    def run(self, args, env=None, timeout=None):
        """(rc, stdout, stderr) of `ncc ARGS`; rc 124 on timeout."""
        cmd = [self.path] + list(args)
        full_env = dict(os.environ)
        # compile times are cold compiles: no compile cache unless the
        # caller's environment asks for one (docs/CODEGEN.md, "Compile cache")
        full_env.setdefault("NCC_CACHE", "0")
        full_env.update(env or {})
        try:
            p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                               env=full_env, timeout=timeout or self.timeout)
        except subprocess.TimeoutExpired:
            return 124, "", "timed out after %gs" % (timeout or self.timeout)
        return (p.returncode, p.stdout.decode("utf-8", "replace"),
                p.stderr.decode("utf-8", "replace"))

    def check(self, args, env=None, timeout=None):
        """stdout and stderr of a command that must succeed (else NccError)."""
        rc, out, err = self.run(args, env, timeout)
        if rc != 0:
            raise NccError(rc, first_error_line(err) if rc != 124 else err,
                           [self.path] + list(args))
        return out, err

    def version(self):
        rc, out, _ = self.run(["--version"], timeout=30)
        return out.strip() if rc == 0 else None

    def passes(self):
        """[(name, level)] from `ncc passes`, in pipeline order."""
        return [(n, lvl) for n, lvl, _ in self.pass_table()]

    def pass_table(self):
        """[(name, level, [passes it needs])] from `ncc passes`."""
        if self._passes is None:
            out, _ = self.check(["passes"], timeout=30)
            res = []
            for line in out.splitlines()[1:]:
                m = re.match(r"^(\S+)\s+-O(\d)\s+(\S+)", line)
                if m:
                    needs = [] if m.group(3) == "-" else m.group(3).split(",")
                    res.append((m.group(1), int(m.group(2)), needs))
            self._passes = res
        return self._passes

    def dependents(self, name, level):
        """Passes run at `level` that need `name`, directly or not: ncc
        refuses to disable a pass that another enabled pass needs."""
        table = [(n, needs) for n, lvl, needs in self.pass_table() if lvl <= level]
        out, todo = [], [name]
        while todo:
            p = todo.pop()
            for n, needs in table:
                if p in needs and n not in out and n != name:
                    out.append(n)
                    todo.append(n)
        return out

    def bench(self, model, flags, input_path, warmup, iters, env=None, timeout=None,
              time_passes=False):
        """The parsed `ncc bench --json` object; with time_passes, adds
        'pass_table' and 'pass_total_ms' from stderr."""
        args = ["bench", model] + list(flags) + ["--input", "x=" + input_path,
                                                  "--warmup", str(warmup),
                                                  "--iters", str(iters), "--json"]
        if time_passes:
            args.append("--time-passes")
        out, err = self.check(args, env, timeout)
        line = [l for l in out.splitlines() if l.strip().startswith("{")]
        if not line:
            raise NccError(0, "ncc bench printed no JSON object", args)
        res = json.loads(line[-1])
        if time_passes:
            res["pass_table"], res["pass_total_ms"] = parse_time_passes(err)
        return res

    def model_stats(self, model):
        """Graph statistics of the unoptimized model at batch 1 (the
        '(input)' row of `ncc opt -O0 --time-passes`)."""
        _, err = self.check(["opt", model, "-O0", "--time-passes", "-o", os.devnull],
                            timeout=self.timeout)
        rows, _ = parse_time_passes(err)
        if not rows:
            raise NccError(0, "ncc opt --time-passes printed no statistics", [model])
        return rows[0]

    def build_info(self):
        """Build type, sanitizer and C compiler from the CMake cache beside
        the binary, when there is one (a timing on an ASan build is noted)."""
        cache = os.path.join(os.path.dirname(self.path), "CMakeCache.txt")
        info = {}
        try:
            text = open(cache, encoding="utf-8", errors="replace").read()
        except OSError:
            return info
        for key, field in (("CMAKE_BUILD_TYPE", "build_type"), ("NCC_SANITIZE", "sanitize"),
                           ("CMAKE_C_COMPILER", "c_compiler")):
            m = re.search(r"^%s:[A-Z]+=(.*)$" % key, text, re.M)
            if m:
                info[field] = m.group(1).strip()
        return info
