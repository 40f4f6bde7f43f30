"""SHA-256 of the foot clean-up's output on 2 validation paths, to show that
Walk Along Path's swing pitch (``PinConfig.swing_pitch``, issue #12 session 8)
leaves every other caller's clean-up identical.

    .venv/bin/python bench/pin_default_identity.py            (this checkout)
    PYTHONPATH=/tmp/old .venv/bin/python bench/pin_default_identity.py
        (an older tree unpacked as /tmp/old/rigmind: `git archive 7608376 | tar -x -C /tmp/old/rigmind`)

Per path: ``default``: ``pin_feet`` with the default ``PinConfig`` on the
controller's walk (its predicted contacts and feet); ``path``: Walk Along
Path's clean-up as it was before the swing pitch (lift 0.115 m, landing
slope 0.25, knee 400 deg/s; on a newer tree with ``swing_pitch=None``).
Hashes of the rotations rounded to 1e-9 (tests/backend/locomotion/test_locomotion_swing.py
holds the 7608376 values).
"""

import hashlib

import numpy as np

from rigmind.backend.locomotion import path_sets as PS
from rigmind.backend.locomotion.cleanup import PinConfig, pin_feet
from rigmind.operators import locomotion_scene as LS


def digest(motion) -> str:
    return hashlib.sha256(np.round(motion.rotations, 9).astype(np.float64).tobytes()).hexdigest()[:16]


def hashes() -> dict:
    ctl = LS.load_controller("neural")
    default = LS.resolve_speed(None, "normal", "walk", 1.0)[0]
    fields = PinConfig.__dataclass_fields__
    path_cfg = dict(swing_clearance=0.115, swing_landing_slope=0.25, knee_speed=float(np.radians(400.0)))
    if "swing_pitch" in fields:
        path_cfg["swing_pitch"] = None
    out = {}
    for p in PS.validation_paths(2):
        _, res = LS.generate_path(ctl, p.points, style="normal", speed=p.speeds(default))
        kw = dict(predicted=res.contacts, feet=res.feet)
        out[p.name] = {"default": digest(pin_feet(res.motion, **kw)),
                       "path": digest(pin_feet(res.motion, **kw, config=PinConfig(**path_cfg)))}
    return out


if __name__ == "__main__":
    for name, h in hashes().items():
        print(name, h)
