"""bench/harness/progress.py — a plain-text progress bar for sweeps.

On a terminal it redraws one line (bar, count, elapsed, ETA from the mean
row time so far, the current row); otherwise (a log file, a Slurm job) it
prints one line per finished row, which stays readable in a log.  No
dependency.
"""
import sys
import time


def _fmt(s):
    s = int(round(s))
    if s >= 3600:
        return "%dh%02dm" % (s // 3600, s % 3600 // 60)
    if s >= 60:
        return "%dm%02ds" % (s // 60, s % 60)
    return "%ds" % s


class Progress:
    def __init__(self, total, stream=sys.stderr, enabled=True, width=24):
        self.total, self.stream, self.enabled, self.width = total, stream, enabled, width
        self.done = 0
        self.t0 = time.time()
        self.tty = enabled and hasattr(stream, "isatty") and stream.isatty()

    def _bar(self):
        filled = int(self.width * self.done / self.total) if self.total else self.width
        return "[" + "#" * filled + "." * (self.width - filled) + "]"

    def _eta(self):
        el = time.time() - self.t0
        if not self.done:
            return "elapsed %s" % _fmt(el)
        left = el / self.done * (self.total - self.done)
        return "elapsed %s eta %s" % (_fmt(el), _fmt(left))

    def start(self, label):
        if self.tty:
            line = "%s %d/%d %s  %s" % (self._bar(), self.done, self.total, self._eta(), label)
            self.stream.write("\r\033[K" + line[:200])
            self.stream.flush()

    def finish(self, label, status, seconds):
        self.done += 1
        if not self.enabled:
            return
        if self.tty:
            self.start("")
            if status not in ("ok", "skipped"):
                self.stream.write("\r\033[K%s: %s\n" % (status, label))
        else:
            self.stream.write("[%d/%d] %-8s %5.1fs  %s\n" % (self.done, self.total, status,
                                                            seconds, label))
        self.stream.flush()

    def close(self):
        if self.enabled and self.tty:
            self.stream.write("\r\033[K%s %d/%d done in %s\n" % (
                self._bar(), self.done, self.total, _fmt(time.time() - self.t0)))
            self.stream.flush()
