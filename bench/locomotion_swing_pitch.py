"""The swing foot's pitch profile of each style, from its own training clips.

    .venv/bin/python bench/locomotion_swing_pitch.py [--data ../shared/data]

For every Bandai Namco d2 training clip of a style (walks, turns and runs;
the validation split is left out), on the controller's skeleton: the feet's
contacts as the clean-up detects them (``cleanup.stance_contacts``), each
flight from toe-off to heel strike (``swing_pitch.flights``), the foot's
pitch (ankle -> toe below the horizontal) minus its stance pitch, resampled
at 21 uniform phases, and the phases where the ankle is highest (its apex)
and back down (``swing_pitch.anchor_phases``). A flight is a run flight when some frame in it has no
foot joint planted. The median anchor phases, and the median by phase
(each flight's anchors moved onto the median ones) over the style's walk flights and
over its run flights is written to presets/locomotion_swing_pitch.json (degrees),
which Walk Along Path's clean-up reads (``PinConfig.swing_pitch``).
"""

import argparse
import json
from pathlib import Path

import numpy as np

from rigmind.backend.locomotion import cleanup
from rigmind.backend.locomotion import dataset
from rigmind.backend.locomotion import features
from rigmind.backend.locomotion import swing_pitch
from rigmind.backend.foot_lock import segments

REPO = Path(__file__).resolve().parents[1]
OUT = REPO / "presets" / "locomotion_swing_pitch.json"


def clip_rows(motion):
    """``(walk rows, run rows)`` (rad) of both feet of one clip."""
    names = list(motion.skeleton.names)
    _, wp = motion.world()
    contacts = cleanup.stance_contacts(wp, names, motion.fps)
    air = swing_pitch.airborne(contacts)
    walk, run = [], []
    for s, side in enumerate("LR"):
        ankle, toe = wp[:, names.index(f"Foot_{side}")], wp[:, names.index(f"Toes_{side}")]
        pitch = swing_pitch.foot_pitch(ankle, toe)
        ca, ct = contacts[:, 2 * s] > 0.5, contacts[:, 2 * s + 1] > 0.5
        w, r = swing_pitch.flight_rows(pitch, ankle[:, 2], segments(ca), segments(ct), swing_pitch.stance_pitch(pitch, ca, ct), air)
        walk.append(w)
        run.append(r)
    return np.concatenate(walk), np.concatenate(run)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--data", default=None, help="data folder (default ../shared/data)")
    ap.add_argument("--out", default=str(OUT))
    args = ap.parse_args()
    split = dataset.split_of(dataset.load_split())
    clips = [c for c in dataset.list_clips(args.data, datasets=("d2",)) if split.get(c.file) == "train"]
    out = {"phases": np.linspace(0, 1, swing_pitch.PROFILE_SAMPLES).round(3).tolist(), "units": "degrees, + = toe down",
           "source": "bench/locomotion_swing_pitch.py: Bandai Namco d2 training clips", "styles": {}}
    for style in sorted({c.style_key for c in clips}):
        walk, run = [], []
        for c in clips:
            if c.style_key == style:
                w, r = clip_rows(features.load_clip(c))
                walk.append(w)
                run.append(r)
        walk, run = np.concatenate(walk), np.concatenate(run)
        prof = swing_pitch.flight_profiles(walk, run)
        out["styles"][style] = {g: {"flights": int(len(rows)),
                                    "apex": None if prof[g] is None else round(prof[g].apex, 3),
                                    "low": None if prof[g] is None else round(prof[g].low, 3),
                                    "pitch": None if prof[g] is None else np.degrees(prof[g].pitch).round(2).tolist()}
                                for g, rows in (("walk", walk), ("run", run))}
        for g in ("walk", "run"):
            e = out["styles"][style][g]
            shown = None if e["pitch"] is None else " ".join(f"{v:6.1f}" for v in e["pitch"][::2])
            print(f"{style:10s} {g:4s} {e['flights']:5d} flights, apex {e['apex']} low {e['low']}:", shown)
    Path(args.out).write_text(json.dumps(out, indent=1) + "\n", encoding="utf-8")
    print("wrote", args.out)


if __name__ == "__main__":
    main()
