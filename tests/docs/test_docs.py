#!/usr/bin/env python3
"""tests/docs/test_docs.py -- the documentation stays inside the repository
and true to the command it describes.

- No file in the repository points at design pages outside it (the old
  `../shared/design/` or an absolute /work/ path): docs/ is the source.
- Every relative Markdown link in README.md, bench/README.md and docs/*.md
  names a file that exists (and a heading that exists, for `#anchors`).
- The help texts quoted in docs/CLI.md are exactly what `ncc <cmd> --help`
  prints, so the CLI contract cannot drift from the binary.

Run with NCC=/path/to/ncc (ctest sets it). Prints "N passed, M failed".
"""
import glob
import os
import re
import subprocess
import sys

ROOT = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
NCC = os.environ.get("NCC", "ncc")
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "py"))
from checks import check, finish  # noqa: E402
SKIP_DIRS = {".git", "build", "out"}
TEXT_EXT = (".c", ".h", ".inc", ".py", ".md", ".cmake", ".txt", ".toml", ".sh", ".in", ".def")


def repo_files():
    for d, dirs, files in os.walk(ROOT):
        dirs[:] = [x for x in dirs if x not in SKIP_DIRS and not x.startswith("build")]
        for f in files:
            if f.endswith(TEXT_EXT) or f in ("CMakeLists.txt", "experiment"):
                yield os.path.join(d, f)


def test_no_outside_references():
    me = os.path.abspath(__file__)
    bad = []
    pat = re.compile(r"shared/design|/work/shared|/work/wt/|/work/main")
    for p in repo_files():
        if os.path.abspath(p) == me:
            continue
        with open(p, errors="replace") as f:
            for i, line in enumerate(f, 1):
                if pat.search(line):
                    bad.append(f"{os.path.relpath(p, ROOT)}:{i}: {line.strip()}")
    check("no reference to design pages outside the repository", not bad, "\n".join(bad))


def anchors(path):
    out = set()
    in_code = False
    for line in open(path, errors="replace"):
        if line.startswith("```"):
            in_code = not in_code
        if not in_code and line.startswith("#"):
            t = line.lstrip("#").strip().lower()
            out.add(re.sub(r"[^\w\- ]", "", t).replace(" ", "-"))
    return out


def test_links():
    pages = ["README.md", "bench/README.md"] + sorted(
        os.path.relpath(p, ROOT) for p in glob.glob(os.path.join(ROOT, "docs", "*.md")))
    for page in ("docs/ARCHITECTURE.md", "docs/CLI.md", "docs/CODEGEN.md", "docs/EXPERIMENTS.md"):
        check(f"{page} exists", page in pages)
    readme = open(os.path.join(ROOT, "README.md")).read()
    for page in pages:
        if page.startswith("docs/"):
            check(f"README's docs index links {page}", f"]({page})" in readme)
    for page in pages:
        path = os.path.join(ROOT, page)
        text = open(path, errors="replace").read()
        for m in re.finditer(r"\]\(([^)\s]+)\)", text):
            link = m.group(1)
            if re.match(r"[a-z]+:", link):
                check(f"{page}: {link} stays inside the repository", False, link)
                continue
            target, _, anc = link.partition("#")
            full = os.path.normpath(os.path.join(os.path.dirname(path), target)) if target else path
            ok = os.path.exists(full) and full.startswith(ROOT)
            if ok and anc and full.endswith(".md"):
                ok = anc in anchors(full)
            check(f"{page}: link {link}", ok, "no such file or heading")


def test_cli_help_texts():
    path = os.path.join(ROOT, "docs", "CLI.md")
    doc = open(path).read() if os.path.exists(path) else ""
    blocks = re.findall(r"^\$ ncc ((?:\w+ )?--help)\n(.*?)(?=^\$ ncc |^```)", doc, re.M | re.S)
    names = [b[0] for b in blocks]
    for cmd in ["--help", "import --help", "opt --help", "compile --help", "run --help",
                "bench --help", "passes --help", "targets --help"]:
        check(f"docs/CLI.md quotes `ncc {cmd}`", cmd in names, names)
    for cmd, text in blocks:
        p = subprocess.run([NCC, *cmd.split()], capture_output=True, text=True)
        check(f"docs/CLI.md `ncc {cmd}` is what ncc prints",
              p.returncode == 0 and p.stdout.rstrip() == text.rstrip(),
              f"rc={p.returncode}; run tools/update-cli-doc.py")


def main():
    test_no_outside_references()
    test_links()
    test_cli_help_texts()
    sys.exit(finish())


if __name__ == "__main__":
    main()
