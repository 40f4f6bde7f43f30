"""Match a mesh's shape-key names to the 52 ARKit names, whatever the naming
style: ``jawOpen``, ``JawOpen``, ``jaw_open``, ``Jaw Open``, ``JAW-OPEN``,
prefixed (``ARKit_jawOpen``, ``blendShape1.jawOpen``, ``Face|jawOpen``) and
short side suffixes (``eyeBlink_L``, ``mouthSmile.R``). Pure string logic."""

from __future__ import annotations

import re

from ...presets import arkit52_names

_SIDE = re.compile(r"(?:[_\-. ]|(?<=[a-z]))(l|r)$", re.IGNORECASE)


def _norm(name: str) -> str:
    """Lowercase alphanumerics with a short side suffix spelled out."""
    base = re.split(r"[.:|/]", name)[-1] if re.search(r"[.:|/]", name) else name
    base = base.strip()
    m = re.search(r"[_\-. ](l|r)$", base, re.IGNORECASE) or re.search(r"(?<=[a-z])(L|R)$", base)
    if m:
        base = base[: m.start()] + ("Left" if m.group(1).lower() == "l" else "Right")
    return re.sub(r"[^a-z0-9]", "", base.lower())


def resolve_arkit_names(mesh_keys) -> dict:
    """``{arkit_name: mesh_key_name}`` for every ARKit shape the mesh has.

    Exact names win; then names equal after normalisation; then names that
    end with the ARKit name after a prefix (``arkitjawopen``). Each mesh key
    is used once; the ``Basis`` key is never matched."""
    keys = [k for k in mesh_keys if k and k.lower() not in ("basis",)]
    out, used = {}, set()
    canon = arkit52_names()
    exact = set(keys)
    for c in canon:
        if c in exact:
            out[c], _ = c, used.add(c)
    norm = {}
    for k in keys:
        norm.setdefault(_norm(k), []).append(k)
    for c in canon:
        if c in out:
            continue
        for k in norm.get(c.lower(), []):
            if k not in used:
                out[c] = k
                used.add(k)
                break
    # Prefixed names: the normalised key ends with the canonical name, and the
    # longest canonical match wins (so "mouthsmileleft" is not "left").
    rest = sorted((c for c in canon if c not in out), key=len, reverse=True)
    for c in rest:
        cands = [k for n, ks in norm.items() if n.endswith(c.lower()) and n != c.lower() for k in ks if k not in used]
        cands = [k for k in cands if not any(_norm(k).endswith(o.lower()) and len(o) > len(c) for o in canon)]
        if cands:
            k = min(cands, key=len)
            out[c] = k
            used.add(k)
    return out


def missing_arkit_names(mesh_keys) -> list:
    """ARKit names (canonical order) the mesh lacks."""
    found = resolve_arkit_names(mesh_keys)
    return [c for c in arkit52_names() if c not in found]
