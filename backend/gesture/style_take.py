"""A generated take moved by its :class:`~.style_layer.BodyStyle`: the one
place generation (:func:`.generate.gesture_from_features`) calls for the
emotion, the style and the speaker's style clip.

Order: the hands are first lifted into the clip's hand places (when there
is a clip; :func:`hand_target` hands :func:`.gesture_space.lift_hands` its
distributions), then :func:`style_take` applies the emotion/style layer
(:mod:`.style_layer`), then the clip's energy, hand spread and hand shapes
(:mod:`.style_clip`), so the clip has the last word on the speaker's own
distributions and the emotion still moves the body.
"""

from __future__ import annotations

from ..motion import Motion


def hand_target(body):
    """The gesture-space target of ``body``'s style clip (None: the training speaker's)."""
    return None if body is None or body.clip is None else body.clip.hand_target


def style_take(motion: Motion, body, finger_basis: dict = None) -> Motion:
    """``motion`` (SMPL-X, 30 fps) with ``body``'s layers; None or neutral: ``motion`` itself."""
    if body is None or body.is_neutral:
        return motion
    from .style_clip import match_energy, match_fingers, match_spread
    from .style_layer import style_motion

    motion = style_motion(motion, body)
    if body.clip is not None:
        motion = match_fingers(match_spread(match_energy(motion, body.clip), body.clip), body.clip, finger_basis)
    return motion


__all__ = ["hand_target", "style_take"]
