#!/usr/bin/env python3
"""tests/aot/test_aot_safety.py — the generated library's size, stale-output
and thread contracts (label aot): a model whose output is sized from a
symbolic dim an empty input binds is compiled with `ncc compile --emit=lib`
and driven by tests/aot/safety_main.c (`sizes`, then `threads`).

NCC_TSAN_CC (set by the ThreadSanitizer build, tests/tsan.cmake): the glue
and the program are compiled with it and -fsanitize=thread, so a race in
the glue fails the run.

Prints one line per check and "N passed, M failed"; exit 1 on a failure.
"""
import os
import stat
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import aotutil as au  # noqa: E402

MODEL = """graph @sz(%x: f32[N,0], %k: f32[0,4], %z: f32[M,4]) {
  %r: f32[N,4] = MatMul(%x, %k)
  %y: f32[N,4] = Relu(%r)
  %w: f32[M,4] = Relu(%z)
  return %y, %w
}
"""


def build(work):
    model = os.path.join(work, "sz.nir")
    with open(model, "w") as f:
        f.write(MODEL)
    lib = os.path.join(work, "sz.so")
    env, cc, flags = {}, "cc", []
    tsan = os.environ.get("NCC_TSAN_CC")
    if tsan:
        wrapper = os.path.join(work, "tsan-cc")
        with open(wrapper, "w") as f:
            f.write('#!/bin/sh\nexec %s -fsanitize=thread -g "$@"\n' % tsan)
        os.chmod(wrapper, os.stat(wrapper).st_mode | stat.S_IEXEC)
        env["NCC_CC"] = wrapper
        cc, flags = tsan, ["-fsanitize=thread", "-g"]
    au.run([au.NCC, "compile", model, "--emit=lib", "-o", lib], env=env)
    prog = os.path.join(work, "safety")
    au.run([cc, "-std=c11", "-O1", "-Wall", "-Wextra", "-Werror"] + flags +
           ["-DMODEL=sz", "-DMODEL_UPPER=SZ", '-DMODEL_H="sz.h"', "-I", work,
            os.path.join(au.SRC, "tests", "aot", "safety_main.c"), lib,
            "-Wl,-rpath," + work, "-lpthread", "-o", prog])
    return prog


def main():
    r = au.Runner()
    with tempfile.TemporaryDirectory(prefix="ncc_aot_safety_") as work:
        if not r.check("build the library and the program", build, work):
            return r.finish()
        prog = os.path.join(work, "safety")
        # the at-the-limit case asks malloc for 2^63 bytes: NULL, not a report
        env = {"TSAN_OPTIONS": "halt_on_error=1 exitcode=66 allocator_may_return_null=1"}
        r.check("sizes and stale outputs", au.run, [prog, "sizes"], env=env)
        r.check("threads: own models and one shared model", au.run,
                [prog, "threads"], env=env, timeout=300)
    return r.finish()


if __name__ == "__main__":
    sys.exit(main())
