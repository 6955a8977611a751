#!/usr/bin/env python3
"""tests/bad_onnx/run_corpus.py — run `ncc import FILE -o OUT` on every model of
the malformed-ONNX corpus (written by make_corpus.py) and check that ncc
fails the way docs/CLI.md promises:

  - the exit status is the one manifest.json expects (2 bad input,
    3 unsupported);
  - stderr is exactly one line, starting "ncc: error: " and naming the file
    (so no sanitizer report, no stack trace, no second message);
  - the line gives the reason manifest.json expects (its "expect" text,
    after the file name), so a model refused by an earlier, unrelated check
    fails;
  - stdout is empty and no output file (nor any temporary) was created.

  run_corpus.py CORPUS_DIR [NCC]     NCC defaults to $NCC

Prints one line per failure and a summary "N passed, M failed"; exits 1 if
anything failed.
"""
import json
import os
import subprocess
import sys
import tempfile

MIN_ENTRIES = 60


def check(ncc, path, want, expect):
    """Problems with running `ncc import` on one file (empty: it passed)."""
    with tempfile.TemporaryDirectory(prefix="ncc-bad-onnx-") as tmp:
        out = os.path.join(tmp, "out.nir")
        try:
            r = subprocess.run([ncc, "import", path, "-o", out],
                               capture_output=True, timeout=120)
        except subprocess.TimeoutExpired:
            return ["timed out after 120 s"]
        problems = []
        err = r.stderr.decode("utf-8", "replace")
        lines = err.splitlines()
        if r.returncode != want:
            problems.append(f"exit status {r.returncode}, expected {want}")
        if len(lines) != 1:
            problems.append(f"stderr has {len(lines)} lines, expected 1")
        elif not lines[0].startswith("ncc: error: "):
            problems.append("stderr does not start with 'ncc: error: '")
        elif path not in lines[0]:
            problems.append("the message does not name the file")
        elif not expect or expect not in lines[0].split(path, 1)[1]:
            problems.append(f"the message does not give the reason {expect!r}")
        if "Sanitizer" in err or "runtime error" in err:
            problems.append("sanitizer report")
        if r.stdout:
            problems.append(f"{len(r.stdout)} bytes on stdout")
        left = os.listdir(tmp)
        if left:
            problems.append(f"left files behind: {', '.join(left)}")
        if problems:
            problems.append("stderr: " + err.strip()[:2000])
        return problems


def main(argv):
    if len(argv) not in (1, 2):
        sys.exit(__doc__)
    corpus = argv[0]
    ncc = argv[1] if len(argv) == 2 else os.environ.get("NCC")
    if not ncc:
        sys.exit("run_corpus: give the ncc binary as argument or in $NCC")
    with open(os.path.join(corpus, "manifest.json")) as f:
        manifest = json.load(f)
    passed = failed = 0
    for e in manifest:
        path = os.path.join(corpus, e["file"])
        problems = check(ncc, path, e["status"], e.get("expect"))
        if problems:
            failed += 1
            print(f"FAIL {e['file']} ({e['why']}):")
            for p in problems:
                print(f"    {p}")
        else:
            passed += 1
    if len(manifest) < MIN_ENTRIES:
        failed += 1
        print(f"FAIL corpus has {len(manifest)} entries, expected >= {MIN_ENTRIES}")
    print(f"{passed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
