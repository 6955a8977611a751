"""bench/harness/adapters — one adapter per compiler, loaded on demand.

The registry maps a compiler name to "module:Class".  Nothing here imports a
vendor package: an adapter module imports its framework inside load(), so a
missing package turns into Skipped (with the install hint) for that
compiler's rows and never into a failed sweep.  register() adds an adapter
(tests use it to simulate a vendor whose import fails).
"""
import importlib

from .base import Adapter, Skipped  # noqa: F401  (re-exported)

_REGISTRY = {
    "ncc": "harness.adapters.ncc:NccAdapter",
    "onnxruntime": "harness.adapters.ort:OrtAdapter",
    "openvino": "harness.adapters.openvino:OpenVinoAdapter",
    "tvm": "harness.adapters.tvm:TvmAdapter",
    "inductor": "harness.adapters.inductor:InductorAdapter",
    "xla": "harness.adapters.xla:XlaAdapter",
    "iree": "harness.adapters.iree:IreeAdapter",
    "ncc_qemu": "harness.adapters.ncc_qemu:NccQemuAdapter",  # emulated AArch64 (report_hw)
}


def names():
    return list(_REGISTRY)


def register(name, target):
    """Add or replace an adapter: target is "module:Class" or a class."""
    _REGISTRY[name] = target


def adapter_class(name):
    """The adapter class (importing only the adapter's own module)."""
    target = _REGISTRY[name]
    if not isinstance(target, str):
        return target
    mod, cls = target.split(":")
    return getattr(importlib.import_module(mod), cls)


def check_config(name, config):
    """None when `config` is a valid configuration of compiler `name`,
    else a one-line reason.  Needs no vendor package."""
    try:
        return adapter_class(name).check_config(config)
    except ImportError as e:  # the adapter module itself is broken
        return "adapter %s cannot be loaded: %s" % (name, e)
