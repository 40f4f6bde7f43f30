"""Locomotion data and baselines on real mocap (Bandai Namco datasets 1 and 2).

- :mod:`.dataset`: clip listing, labels (gait, content, style, dataset) and
  the committed train/validation split (``presets/locomotion_split.json``).
- :mod:`.features`: per-clip character root, root-space pose features,
  past/future root trajectory, foot contacts, left/right mirroring and the
  on-disk feature cache (``<repo>/.cache/locomotion``).
- :mod:`.motion_matching`: the non-neural baseline (Holden-style motion
  matching with a spring trajectory model and inertialization).

The Bandai Namco data is CC BY-NC 4.0: anything trained on it is
non-commercial. Conventions are the backend's: metres, seconds, radians,
Blender Z-up, characters face -Y, the character's left is +X.
"""
