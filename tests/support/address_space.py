"""Issue #27's bound: a bad input runs under a 4 GB address-space limit, so a
reader that tries to allocate what a lying header asks for fails the test
(as a MemoryError: an internal error) instead of swapping the machine."""

from __future__ import annotations

import contextlib
import resource

#: The address space a command may take while it refuses a bad input (bytes).
LIMIT_BYTES = 4 * 1024**3


def _capped(limit: int) -> tuple:
    soft, hard = resource.getrlimit(resource.RLIMIT_AS)
    return (limit if hard == resource.RLIM_INFINITY else min(limit, hard)), hard


@contextlib.contextmanager
def address_space_limit(limit: int = LIMIT_BYTES):
    """This process's address space capped at ``limit`` while the body runs."""
    before = resource.getrlimit(resource.RLIMIT_AS)
    resource.setrlimit(resource.RLIMIT_AS, _capped(limit))
    try:
        yield
    finally:
        resource.setrlimit(resource.RLIMIT_AS, before)


def limit_child(limit: int = LIMIT_BYTES) -> None:
    """``preexec_fn`` for a child process: the same cap from its start."""
    resource.setrlimit(resource.RLIMIT_AS, _capped(limit))


def address_space_bytes() -> int:
    """This process's mapped address space now (Linux: VmSize)."""
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmSize:"):
                return int(line.split()[1]) * 1024
    return 0
