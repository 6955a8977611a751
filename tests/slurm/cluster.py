"""tests/slurm/cluster.py — a throw-away one-node Slurm cluster (Debian's
slurm-wlm and munge) in a temporary directory, for tests/slurm.

Everything lives under one directory: the munge key and socket, slurm.conf,
the controller's state, slurmd's spool, the logs.  Nothing under /etc, /run
or /var is read or written, so the machine's own munge or Slurm (if any) is
left alone, and two clusters (two build trees testing at once) do not meet:
each has its own socket and two free TCP ports.

The three daemons run in the foreground as children of the test, each with
PR_SET_PDEATHSIG, so a test killed by ctest's timeout takes them with it.
stop() cancels the jobs, waits for them to leave, stops the daemons and then
ends any process still working in the cluster's directory (a job step that
outlived its slurmd); the caller removes the directory.

Root is needed: slurmd starts job steps as the submitting user and must be
root for that (SlurmdUser=root), and the controller runs as root too here
(SlurmUser=root) so that no service account is needed.
"""
import ctypes
import os
import signal
import shutil
import socket
import subprocess
import sys
import time

DAEMONS = ("munged", "slurmctld", "slurmd")
CLIENTS = ("munge", "sbatch", "squeue", "sinfo", "scontrol", "scancel")
PACKAGES = ("slurm-wlm", "munge")

_PR_SET_PDEATHSIG = 1


def missing_programs():
    """The daemons and commands not found (under /usr/sbin too: not on a
    plain user's PATH)."""
    path = os.environ.get("PATH", "").split(os.pathsep) + ["/usr/sbin", "/sbin"]
    return [p for p in DAEMONS + CLIENTS
            if not any(os.access(os.path.join(d, p), os.X_OK) for d in path if d)]


def which(prog):
    for d in os.environ.get("PATH", "").split(os.pathsep) + ["/usr/sbin", "/sbin"]:
        p = os.path.join(d, prog)
        if d and os.access(p, os.X_OK):
            return p
    raise FileNotFoundError(prog)


def _die_with_parent():
    # runs in the child between fork and exec: SIGTERM when the test dies
    try:
        ctypes.CDLL(None, use_errno=True).prctl(_PR_SET_PDEATHSIG, signal.SIGTERM)
    except Exception:
        pass


def _free_port():
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class ClusterError(RuntimeError):
    pass


class Cluster:
    """start() -> a cluster with one idle node and one partition 'test';
    env() is the environment for sbatch & co; stop() undoes it all."""

    def __init__(self, root, cpus=None):
        self.root = root
        self.host = socket.gethostname().split(".")[0]
        self.cpus = cpus or len(os.sched_getaffinity(0))
        self.procs = {}
        self.conf = os.path.join(root, "slurm.conf")
        self.sock = os.path.join(root, "munge", "munge.socket")

    def path(self, *parts):
        return os.path.join(self.root, *parts)

    def env(self):
        e = dict(os.environ)
        e["SLURM_CONF"] = self.conf
        e["PATH"] = e.get("PATH", "") + os.pathsep + "/usr/sbin"
        return e

    def cmd(self, args, timeout=30, check=True):
        p = subprocess.run([which(args[0])] + list(args[1:]), env=self.env(),
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=timeout)
        out, err = p.stdout.decode(errors="replace"), p.stderr.decode(errors="replace")
        if check and p.returncode != 0:
            raise ClusterError("%s exited %d: %s" % (" ".join(args), p.returncode,
                                                     err.strip() or out.strip()))
        return out

    def _spawn(self, name, args):
        log = open(self.path("logs", name + ".out"), "wb")
        self.procs[name] = subprocess.Popen(
            [which(args[0])] + list(args[1:]), env=self.env(), stdin=subprocess.DEVNULL,
            stdout=log, stderr=subprocess.STDOUT, preexec_fn=_die_with_parent, cwd=self.root)
        log.close()

    def _write_conf(self):
        ctld_port, slurmd_port = _free_port(), _free_port()
        while slurmd_port == ctld_port:
            slurmd_port = _free_port()
        p = self.path
        lines = [
            "ClusterName=ncctest",
            "SlurmctldHost=%s(127.0.0.1)" % self.host,
            "SlurmctldPort=%d" % ctld_port,
            "SlurmdPort=%d" % slurmd_port,
            "AuthType=auth/munge",
            "CredType=cred/munge",
            "AuthInfo=socket=%s" % self.sock,
            "SlurmUser=root",
            "SlurmdUser=root",
            "StateSaveLocation=%s" % p("state"),
            "SlurmdSpoolDir=%s" % p("spool"),
            "SlurmctldPidFile=%s" % p("slurmctld.pid"),
            "SlurmdPidFile=%s" % p("slurmd.pid"),
            "SlurmctldLogFile=%s" % p("logs", "slurmctld.log"),
            "SlurmdLogFile=%s" % p("logs", "slurmd.log"),
            # no cgroups in a container: track job processes by parentage
            "ProctrackType=proctrack/linuxproc",
            "TaskPlugin=task/none",
            "JobAcctGatherType=jobacct_gather/none",
            "AccountingStorageType=accounting_storage/none",
            "MpiDefault=none",
            "MailProg=/bin/true",
            "SchedulerType=sched/builtin",
            # one core per array task: the tasks of the array run side by side
            "SelectType=select/cons_tres",
            "SelectTypeParameters=CR_Core",
            "ReturnToService=2",
            "NodeName=%s NodeAddr=127.0.0.1 CPUs=%d State=UNKNOWN" % (self.host, self.cpus),
            "PartitionName=test Nodes=ALL Default=YES MaxTime=INFINITE State=UP",
        ]
        with open(self.conf, "w") as f:
            f.write("# a one-node test cluster (tests/slurm/cluster.py)\n")
            f.write("\n".join(lines) + "\n")

    def start(self, timeout=60):
        for d in ("munge", "state", "spool", "logs"):
            os.makedirs(self.path(d), exist_ok=True)
        # munged wants its key private and its socket's directory reachable
        os.chmod(self.root, 0o711)
        os.chmod(self.path("munge"), 0o711)
        key = self.path("munge", "munge.key")
        with open(key, "wb") as f:
            f.write(os.urandom(1024))
        os.chmod(key, 0o400)
        self._write_conf()
        m = self.path("munge")
        self._spawn("munged", ["munged", "--foreground", "--force", "--key-file=" + key,
                               "--socket=" + self.sock, "--pid-file=" + m + "/munged.pid",
                               "--log-file=" + m + "/munged.log",
                               "--seed-file=" + m + "/munged.seed"])
        self._wait(lambda: os.path.exists(self.sock), 10, "munged did not create its socket")
        self._spawn("slurmctld", ["slurmctld", "-D", "-f", self.conf])
        self._spawn("slurmd", ["slurmd", "-D", "-f", self.conf, "-N", self.host])
        self._wait(lambda: "idle" in self.cmd(["sinfo", "-h", "-N", "-o", "%T"], check=False),
                   timeout, "the node did not come up idle")

    def _wait(self, ready, timeout, what):
        t_end = time.time() + timeout
        while time.time() < t_end:
            dead = [n for n, p in self.procs.items() if p.poll() is not None]
            if dead:
                raise ClusterError("%s exited early (%s)\n%s" % (", ".join(dead), what,
                                                                 self.logs()))
            try:
                if ready():
                    return
            except (ClusterError, subprocess.TimeoutExpired):
                pass
            time.sleep(0.3)
        raise ClusterError("%s after %ds\n%s" % (what, timeout, self.logs()))

    def logs(self, tail=15):
        """The last lines of every daemon log, for a failure message."""
        out = []
        for f in sorted(os.listdir(self.path("logs"))):
            try:
                lines = open(self.path("logs", f), errors="replace").read().splitlines()
            except OSError:
                continue
            out.append("--- %s\n%s" % (f, "\n".join(lines[-tail:])))
        return "\n".join(out)

    def wait_job(self, job_id, timeout):
        """Wait until every task of array job `job_id` has finished; returns
        {task id: (state, exit code)}.  The controller keeps finished jobs
        for MinJobAge (300 s by default), long enough to read them back."""
        final = ("COMPLETED", "FAILED", "CANCELLED", "TIMEOUT", "NODE_FAIL", "OUT_OF_MEMORY",
                 "BOOT_FAIL", "DEADLINE", "PREEMPTED")
        t_end = time.time() + timeout
        while True:
            tasks = {}
            for line in self.cmd(["scontrol", "-o", "show", "job", str(job_id)]).splitlines():
                f = dict(kv.split("=", 1) for kv in line.split() if "=" in kv)
                if "ArrayTaskId" in f and f["ArrayTaskId"].isdigit():
                    tasks[int(f["ArrayTaskId"])] = (f.get("JobState"), f.get("ExitCode"))
                elif "ArrayTaskId" in f:  # tasks not started yet: "1-2"
                    tasks[f["ArrayTaskId"]] = ("PENDING", None)
            if tasks and all(s in final for s, _ in tasks.values()):
                return tasks
            if time.time() > t_end:
                raise ClusterError("job %s not done after %ds: %s\n%s"
                                   % (job_id, timeout, tasks, self.logs()))
            time.sleep(0.5)

    def stop(self):
        """Cancel every job, stop the daemons, end any process left working
        in the cluster's directory.  Never raises."""
        if "slurmctld" in self.procs and self.procs["slurmctld"].poll() is None:
            try:
                self.cmd(["scancel", "--full", "--partition=test"], timeout=10, check=False)
                t_end = time.time() + 15
                while time.time() < t_end and self.cmd(["squeue", "-h"], timeout=10,
                                                       check=False).strip():
                    time.sleep(0.3)
            except Exception:
                pass
        for name in reversed(DAEMONS):
            p = self.procs.get(name)
            if p is None or p.poll() is not None:
                continue
            p.terminate()
            try:
                p.wait(10)
            except subprocess.TimeoutExpired:
                p.kill()
                p.wait(5)
        for pid in self.stray_pids():
            try:
                os.kill(pid, signal.SIGKILL)
            except OSError:
                pass

    def stray_pids(self):
        return stray_pids(self.root)


def stray_pids(root):
    """Processes whose working directory is inside `root` (job scripts and
    their children run there)."""
    out = []
    root = os.path.realpath(root)
    for d in os.listdir("/proc"):
        if not d.isdigit() or int(d) == os.getpid():
            continue
        try:
            cwd = os.readlink("/proc/%s/cwd" % d)
        except OSError:
            continue
        if cwd == root or cwd.startswith(root + os.sep):
            out.append(int(d))
    return out


def start_watchdog(root):
    """A process in its own session that outlives a test killed with
    SIGKILL (ctest's timeout, Ctrl-\\): when the test's pid is gone it ends
    what still runs in `root` and removes `root`.  The daemons themselves
    die with the test (PR_SET_PDEATHSIG); this catches job steps and the
    directory.  The test stops it (SIGTERM) after its own clean-up."""
    return subprocess.Popen([sys.executable, os.path.abspath(__file__), "--watch",
                             str(os.getpid()), root], stdin=subprocess.DEVNULL,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                            start_new_session=True)


def _watch(pid, root):
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
    while True:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            break
        except PermissionError:
            pass
        time.sleep(0.5)
    for p in stray_pids(root):
        try:
            os.kill(p, signal.SIGKILL)
        except OSError:
            pass
    shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__" and len(sys.argv) == 4 and sys.argv[1] == "--watch":
    _watch(int(sys.argv[2]), sys.argv[3])

