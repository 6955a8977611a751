#!/usr/bin/env python3
"""tests/filecheck/run.py — a small lit-style runner for one FileCheck test.

Usage: run.py TEST.nir

Every `// RUN: cmd` line of the test (a trailing backslash continues it on
the next RUN line) is one shell command, run with `bash -o pipefail -c`
after these substitutions:

  %ncc        the ncc driver ($NCC, else $NCC_BUILD/ncc)
  %FileCheck  FileCheck ($FILECHECK, else FileCheck-19 / FileCheck on PATH
              or in /usr/lib/llvm-19/bin)
  %s          the test file      %S  its directory
  %t          a scratch path unique to the test   %T  its directory
  %%          a literal %

`// REQUIRES: target=T` skips the test (exit 77) where `ncc targets` says
target T neither runs nor compiles (the cpu target in a build without LLVM);
`// REQUIRES: host-feature=F` where the host CPU lacks flag F of
/proc/cpuinfo (amx_int8: the cpu target's tile kernels).

`not CMD` succeeds when CMD fails with an ordinary exit status (1..127) and
fails when CMD succeeds or dies from a signal, as in lit, or when a
sanitizer reported an error: ASan, UBSan and LeakSanitizer exit 1 by default
(the test environment sets abort_on_error=0), which would pass as an
expected failure, so the runner gives them exit status SAN_EXIT
(`exitcode=` in ASAN_OPTIONS, UBSAN_OPTIONS and LSAN_OPTIONS), which `not`
refuses. The test passes
when every RUN line exits 0; the first failing line is printed with its
output. Exit status: 0 pass, 1 fail, 2 the test or environment is broken,
77 skipped (REQUIRES).
"""
import os
import re
import shutil
import subprocess
import sys

RUN_RE = re.compile(r"^\s*//\s*RUN:\s?(.*?)\s*$")
REQ_RE = re.compile(r"^\s*//\s*REQUIRES:\s*target=(\S+)\s*$")
REQ_FEATURE_RE = re.compile(r"^\s*//\s*REQUIRES:\s*host-feature=(\w+)\s*$")
SUBST_RE = re.compile(r"%(FileCheck|ncc|%|s|S|t|T)")

# The exit status of a sanitizer report in RUN lines: no ncc command,
# FileCheck or shell builtin uses it (ncc's are 0-6, docs/CLI.md).
SAN_EXIT = 86

PRELUDE = r"""
not() {
  "$@"
  local s=$?
  if [ "$s" -eq %d ]; then echo "not: $1 failed with a sanitizer report" >&2; return 1; fi
  if [ "$s" -eq 0 ] || [ "$s" -ge 128 ]; then return 1; fi
  return 0
}
""" % SAN_EXIT


def run_env():
    """The environment of RUN lines: sanitizer reports exit SAN_EXIT."""
    env = dict(os.environ)
    for var in ("ASAN_OPTIONS", "UBSAN_OPTIONS", "LSAN_OPTIONS"):
        old = env.get(var, "")
        env[var] = (old + ":" if old else "") + "exitcode=%d" % SAN_EXIT
    return env


def run_lines(path):
    """The RUN commands of a test, continuations joined."""
    lines, cur = [], None
    with open(path, encoding="utf-8", errors="replace") as f:
        for raw in f:
            m = RUN_RE.match(raw)
            if not m:
                continue
            part = m.group(1)
            cur = part if cur is None else cur + " " + part
            if cur.endswith("\\"):
                cur = cur[:-1].rstrip()
                continue
            lines.append(cur)
            cur = None
    if cur is not None:
        lines.append(cur)
    return lines


def required_targets(path):
    with open(path, encoding="utf-8", errors="replace") as f:
        return [m.group(1) for m in map(REQ_RE.match, f) if m]


def required_features(path):
    with open(path, encoding="utf-8", errors="replace") as f:
        return [m.group(1) for m in map(REQ_FEATURE_RE.match, f) if m]


def host_flags():
    """The CPU flags of /proc/cpuinfo (empty where there is none)."""
    try:
        with open("/proc/cpuinfo", encoding="utf-8", errors="replace") as f:
            for line in f:
                if line.startswith("flags"):
                    return set(line.split(":", 1)[1].split())
    except OSError:
        pass
    return set()


def target_usable(ncc, target):
    """Whether `ncc targets` says `target` runs or compiles here (a cross
    target compiles without running; FileCheck tests read its output)."""
    r = subprocess.run([ncc, "targets"], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    for line in r.stdout.decode("utf-8", "replace").splitlines():
        cols = line.split(None, 3)
        if len(cols) >= 3 and cols[0] == target:
            return "yes" in cols[1:3]
    return False


def find_filecheck():
    fc = os.environ.get("FILECHECK")
    if fc:
        return fc
    for name in ("FileCheck-19", "FileCheck"):
        p = shutil.which(name)
        if p:
            return p
    p = "/usr/lib/llvm-19/bin/FileCheck"
    return p if os.path.exists(p) else None


def find_ncc():
    ncc = os.environ.get("NCC")
    if ncc:
        return ncc
    build = os.environ.get("NCC_BUILD")
    if build and os.path.exists(os.path.join(build, "ncc")):
        return os.path.join(build, "ncc")
    return None


def scratch_dir():
    build = os.environ.get("NCC_BUILD")
    base = os.path.join(build, "tests", "filecheck-output") if build else None
    if not base:
        import tempfile
        base = os.path.join(tempfile.gettempdir(), "ncc-filecheck")
    os.makedirs(base, exist_ok=True)
    return base


def main(argv):
    if len(argv) != 2:
        print("usage: run.py TEST.nir", file=sys.stderr)
        return 2
    test = os.path.abspath(argv[1])
    cmds = run_lines(test)
    if not cmds:
        print(f"{test}: no RUN lines", file=sys.stderr)
        return 2
    ncc, fc = find_ncc(), find_filecheck()
    for target in required_targets(test):
        if not ncc or not target_usable(ncc, target):
            print(f"{test}: skipped, target {target} is not usable here")
            return 77
    for feature in required_features(test):
        if feature not in host_flags():
            print(f"{test}: skipped, the host CPU has no {feature}")
            return 77
    tdir = scratch_dir()
    env = run_env()
    name = test.strip("/").replace("/", "_")  # unique per test path
    values = {
        "ncc": ncc, "FileCheck": fc, "%": "%",
        "s": test, "S": os.path.dirname(test),
        "t": os.path.join(tdir, name + ".tmp"), "T": tdir,
    }
    for i, cmd in enumerate(cmds, 1):
        missing = [k for k in ("ncc", "FileCheck")
                   if "%" + k in cmd and not values[k]]
        if missing:
            print(f"{test}: cannot find {missing[0]} (set $NCC / $FILECHECK)",
                  file=sys.stderr)
            return 2
        line = SUBST_RE.sub(lambda m: values[m.group(1)], cmd)
        r = subprocess.run(["bash", "-o", "pipefail", "-c", PRELUDE + line],
                           cwd=tdir, env=env, stdout=subprocess.PIPE,
                           stderr=subprocess.STDOUT)
        if r.returncode != 0:
            print(f"FAIL: {test}\nRUN line {i}: {cmd}\n$ {line}\n"
                  f"exit status {r.returncode}")
            sys.stdout.write(r.stdout.decode("utf-8", "replace"))
            return 1
    print(f"PASS: {test} ({len(cmds)} RUN lines)")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
