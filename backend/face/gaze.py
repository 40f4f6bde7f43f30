"""Eyes that look: fixations and saccades timed like natural gaze.

Gaze is a sequence of fixations joined by saccades, generated in seconds
(so it is the same motion at any frame rate) and sampled per frame:

- **Fixation durations**: log-normal, median 280 ms, clipped to 120-900 ms.
  Rayner (1998, "Eye movements in reading and information processing: 20
  years of research", Psychological Bulletin 124(3), Table 1) gives mean
  fixation durations of 225-250 ms in silent reading and 260-330 ms in
  scene perception; the mean here is ~300 ms.
- **Saccade durations**: the main sequence, ``21 ms + 2.2 ms/deg`` x the
  amplitude (Bahill, Clark & Stark 1975, "The main sequence, a tool for
  studying human eye movements", Mathematical Biosciences 24): 25-60 ms for
  the 2-15 deg used here, i.e. within one or two frames at 30 fps.
- **Where**: alternating spells of looking at the listener (the camera:
  around straight ahead, the fixations scanning the face within ~1.5 deg)
  and looking away (a side/down target 6-18 deg off, with the same small
  scatter), the gaze always returning to the listener. Speakers look at
  their listener for roughly 40 % of the time, listeners ~75 % (Argyle &
  Cook 1976, "Gaze and Mutual Gaze"); a character talking *to the camera*
  is closer to the listener's share: spells of ~1.8 s at the listener and
  ~0.9 s away give ~65 %.

Angles are radians: yaw > 0 turns the eyes to the character's left, pitch
> 0 up. ARKit weights: a full ``eyeLook*`` weight is :data:`ARKIT_FULL_DEG`.
"""

from __future__ import annotations

import numpy as np

FIXATION_MEDIAN_S = 0.28
FIXATION_SIGMA = 0.35            # of log duration
FIXATION_RANGE_S = (0.12, 0.9)
SCAN_DEG = 1.5                   # scatter of fixations within a target (deg)
AT_LISTENER_S = 1.8              # median spell at the listener
AWAY_S = 0.9                     # median spell looking away
AWAY_DEG = (6.0, 18.0)           # eccentricity of look-away targets
ARKIT_FULL_DEG = 35.0            # eye-look shape weight 1.0 ↔ this many degrees


def _saccade_s(amplitude_deg):
    return (21.0 + 2.2 * np.asarray(amplitude_deg)) / 1000.0


def fixations(seconds: float, seed: int = 0):
    """``(starts [N] s, targets [N, 2] rad)``: fixation onsets (the end of the
    saccade that leads to each) and where each looks."""
    rng = np.random.default_rng([seed, 0x9A2E])
    t, at_listener = 0.0, True
    spell_end = rng.lognormal(np.log(AT_LISTENER_S), 0.4)
    away = np.zeros(2)
    starts, targets = [], []
    prev = np.zeros(2)
    while t < seconds + 1.0:
        if t >= spell_end:
            at_listener = not at_listener
            spell_end = t + rng.lognormal(np.log(AT_LISTENER_S if at_listener else AWAY_S), 0.4)
            if not at_listener:
                ang = rng.uniform(*AWAY_DEG)
                side = rng.choice([-1.0, 1.0])
                # look-aways are mostly sideways and down (thinking), rarely up
                tilt = rng.uniform(-0.9, 0.35)
                away = np.radians(ang) * np.array([side * np.cos(tilt), np.sin(tilt)])
        centre = np.zeros(2) if at_listener else away
        target = centre + np.radians(SCAN_DEG) * rng.standard_normal(2)
        t += float(_saccade_s(np.degrees(np.linalg.norm(target - prev))))
        starts.append(t)
        targets.append(target)
        prev = target
        t += float(np.clip(rng.lognormal(np.log(FIXATION_MEDIAN_S), FIXATION_SIGMA), *FIXATION_RANGE_S))
    return np.array(starts), np.array(targets)


def gaze_angles(n_frames: int, fps: float, seed: int = 0) -> np.ndarray:
    """Gaze ``[F, 2]`` (yaw, pitch; radians) for ``n_frames`` at ``fps``:
    still during fixations, a smoothstep over each saccade's duration."""
    starts, targets = fixations(n_frames / fps, seed)
    t = np.arange(n_frames) / fps
    i = np.clip(np.searchsorted(starts, t, side="right") - 1, 0, len(starts) - 1)
    out = targets[i].copy()
    # frames inside the saccade towards fixation i+1
    nxt = np.minimum(i + 1, len(starts) - 1)
    dur = _saccade_s(np.degrees(np.linalg.norm(targets[nxt] - targets[i], axis=1)))
    u = 1.0 - (starts[nxt] - t) / np.maximum(dur, 1e-6)
    moving = (nxt > i) & (u > 0) & (u < 1)
    s = np.clip(u, 0, 1)
    s = s * s * (3 - 2 * s)
    out[moving] = targets[i][moving] + s[moving, None] * (targets[nxt] - targets[i])[moving]
    # before the first fixation: looking at the listener
    out[t < starts[0]] = 0.0
    return out


def arkit_eye_look(gaze: np.ndarray) -> dict:
    """Gaze ``[F, 2]`` → the eight ``eyeLook*`` weights ``{name: [F]}`` (0..1).
    Follows the face model's convention: yaw > 0 is ``eyeLookOutLeft`` and
    ``eyeLookInRight``."""
    h = np.degrees(gaze[:, 0]) / ARKIT_FULL_DEG
    v = np.degrees(gaze[:, 1]) / ARKIT_FULL_DEG
    pos = lambda x: np.clip(x, 0, 1).astype(np.float32)  # noqa: E731
    return {"eyeLookOutLeft": pos(h), "eyeLookInRight": pos(h), "eyeLookInLeft": pos(-h), "eyeLookOutRight": pos(-h),
            "eyeLookUpLeft": pos(v), "eyeLookUpRight": pos(v), "eyeLookDownLeft": pos(-v), "eyeLookDownRight": pos(-v)}
