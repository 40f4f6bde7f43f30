"""A batch take's random seed, from its name.

The batch driver (``batch.py``) records it in the report and each worker
(``operators/batch_worker.py``) seeds its take with it; both take it from
here, so neither imports the other to agree on a seed.
"""

from __future__ import annotations

import hashlib


def derive_seed(name: str, base_seed: int = 0) -> int:
    """A take's seed from its name: the first 31 bits of SHA-256 of
    ``"base_seed:name"``, so it does not depend on order or worker."""
    digest = hashlib.sha256(f"{int(base_seed)}:{name}".encode("utf-8")).digest()
    return int.from_bytes(digest[:4], "little") & 0x7FFFFFFF
