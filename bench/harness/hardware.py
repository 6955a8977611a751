"""bench/harness/hardware.py — which machine (and target) a row was measured
on, and whether its times are real: env.hardware of every row.

    {"machine": "box-a", "arch": "x86_64", "cpu": "...", "cores": 16,
     "emulated": false, "emulator": null, "how": "detected"}

machine is `--machine LABEL`, by default the hardware itself: "CPU model,
N cores, arch" — not the host name, so the shards of a sweep run on the
identical nodes of a cluster merge as one machine, while rows of different
hardware stay apart.  Rows of one machine label are one point of the
report's hardware axis (report_hw.py).
emulated rows ran under an instruction-set emulator (AArch64 under
qemu-user, or a qemu TCG virtual machine): their outputs are checked like
any row, but their times measure the emulator, so the report labels them
and never ranks them or computes a speed-up from them.  Declared with
`--emulated[=EMULATOR]`; detected when the CPU the kernel describes is not
of the architecture this process runs as (qemu-user passes the host's
/proc/cpuinfo through) or is qemu's own virtual CPU model.
"""
import os
import platform

# /proc/cpuinfo lines that name an x86 or an Arm CPU.
_X86_KEYS = ("vendor_id", "flags")
_ARM_KEYS = ("CPU implementer", "Features")


def _cpuinfo():
    try:
        return open("/proc/cpuinfo", encoding="utf-8", errors="replace").read()
    except OSError:
        return ""


def cpu_model(text):
    for line in text.splitlines():
        if line.startswith("model name") or line.startswith("Model"):
            return line.split(":", 1)[1].strip()
    return None


def detect_emulation(arch=None, cpuinfo=None):
    """(emulated, emulator or None, why) from the process's architecture
    and /proc/cpuinfo."""
    arch = arch or platform.machine()
    text = _cpuinfo() if cpuinfo is None else cpuinfo
    keys = {line.split(":", 1)[0].strip() for line in text.splitlines() if ":" in line}
    x86_cpu = any(k in keys for k in _X86_KEYS) and "CPU implementer" not in keys
    arm_cpu = any(k in keys for k in _ARM_KEYS) and "vendor_id" not in keys
    if arch in ("aarch64", "arm64") and x86_cpu:
        return True, "qemu-aarch64", "an aarch64 process on an x86 CPU (qemu-user)"
    if arch in ("x86_64", "AMD64") and arm_cpu:
        return True, "qemu-x86_64", "an x86_64 process on an Arm CPU (emulated)"
    model = cpu_model(text) or ""
    if "QEMU" in model or "TCG" in model:
        return True, "qemu", "the CPU is qemu's virtual model %r" % model
    return False, None, None


def record(machine=None, emulated=None, arch=None, cpuinfo=None):
    """env.hardware: emulated is None (detect), False, or an emulator name
    (or True) declared by the caller."""
    arch = arch or platform.machine()
    text = _cpuinfo() if cpuinfo is None else cpuinfo
    det, emu, why = detect_emulation(arch, text)
    if emulated is None:
        how = "detected"
    else:
        how = "declared"
        det = bool(emulated)
        emu = emulated if isinstance(emulated, str) else (emu or ("emulator" if det else None))
        why = "declared by --emulated" if det else None
    return {"machine": machine or default_label(cpu_model(text), os.cpu_count(), arch),
            "arch": arch,
            "cpu": cpu_model(text), "cores": os.cpu_count(), "emulated": det,
            "emulator": emu if det else None, "why": why, "how": how}


def emulated_by(compiler):
    """{emulator, target} when this compiler's rows run emulated on any
    machine (an adapter's EMULATED, e.g. ncc_qemu), else None."""
    from . import adapters
    try:
        em = getattr(adapters.adapter_class(compiler), "EMULATED", None)
    except Exception:  # an unknown or broken adapter: not known to emulate
        return None
    return dict(em) if em else None


def default_label(cpu, cores, arch):
    return "%s, %s cores%s" % (cpu or "unknown CPU", cores if cores else "?",
                               ", " + arch if arch else "")


def of_row(row):
    """env.hardware of a row; rows written before it existed get one from
    their environment record (CPU, cores), never marked emulated.  The
    rows of an emulating compiler (ncc_qemu) are a target of their own on
    the machine that ran them: "HOST · aarch64 (qemu-aarch64)", emulated."""
    env = row.get("env") or {}
    hw = env.get("hardware")
    if not (hw and hw.get("machine")):
        hw = {"machine": default_label(env.get("cpu_model"), env.get("cores"), None),
              "arch": None,
              "cpu": env.get("cpu_model"), "cores": env.get("cores"), "emulated": False,
              "emulator": None, "why": None, "how": "from the environment record"}
    em = ((row.get("result") or {}).get("emulated") or
          emulated_by((row.get("config") or {}).get("compiler")))
    if em:
        hw = dict(hw, machine="%s · %s (%s)" % (hw["machine"], em["target"], em["emulator"]),
                  arch=em["target"], emulated=True, emulator=em["emulator"],
                  why="%s code run by %s on %s" % (em["target"], em["emulator"],
                                                   hw.get("arch") or "the host"))
    return hw


def machine_id(row):
    return of_row(row)["machine"]


def is_emulated(row):
    return bool(of_row(row).get("emulated"))
