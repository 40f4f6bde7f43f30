"""Co-speech gesture metrics, defined as EMAGE (Liu et al., CVPR 2024) computes
them so that our numbers can be set beside theirs.

Source read: github PantoMatrix/PantoMatrix, ``scripts/EMAGE_2024/utils/metric.py``
(classes ``alignment`` and ``L1div``, used by ``scripts/EMAGE_2024/emage_trainer.py``
to produce the paper's table) and the later packaged copy
``emage_evaltools/mertic.py`` (classes ``BC``, ``L1div``, ``FGD``). Where the
two differ it is said below.

Beat consistency (BC)
    * Audio beats: ``librosa.onset.onset_detect(y, sr=16000, hop_length=512,
      units="time")`` with every other parameter at librosa's default (onset
      strength from a 128-band mel spectrogram, n_fft 2048, no backtracking,
      peak picking pre_max 30 ms, post_max 0 ms, pre/post_avg 100 ms, wait
      30 ms, delta 0.07 on the normalised envelope). Audio at any other rate is
      resampled to 16 kHz first (EMAGE always works at 16 kHz).
    * Motion beats, per joint: joint velocity by finite differences (forward at
      the first frame, central inside, backward at the last: ``np.gradient``),
      speed ``|v|`` in m/s, divided by that joint's *mean speed over reference
      motion* (EMAGE: ``mean_vel_smplxflame_30.npy``, the mean over all BEAT2
      frames of each of the 55 joints' speed, computed with translation);
      a beat is a strict local minimum of the normalised speed over ±7 frames
      (``scipy.signal.argrelextrema(s, np.less, order=7)``) whose normalised
      speed is above ``BC_THRESHOLD`` = 0.3 (the paper's training script; the
      later ``emage_evaltools`` uses 0.10, see ``EMAGE_EVALTOOLS_THRESHOLD``).
    * Joints: the 13 upper-body SMPL-X joints ``[3, 6, 9, 12, 13, 14, 15, 16,
      17, 18, 19, 20, 21]`` = spine1, spine2, spine3, neck, left/right collar,
      head, left/right shoulder, elbow, wrist (``UPPER_BODY``).
    * Score per joint: ``mean over audio beats a of exp(-d(a)² / (2σ²))``, with
      ``d(a)`` the distance (s) from the audio beat to the nearest beat of that
      joint and σ = 0.3 s (``GAHR(pose_bt, audio_bt, sigma)``); a joint with no
      beats scores 0. BC is the mean of the 13 per-joint scores.
    * EMAGE drops the first and last 60 frames (2 s) of every test sequence
      for both audio and motion (``align_mask = 60``) and averages sequences
      weighted by their trimmed length; ``bc_score(..., trim_s=2.0)`` does the
      same for one sequence.
    * Deliberate differences: (1) EMAGE tests the speed threshold at index
      ``j`` of the *untrimmed* sequence for a minimum found at index ``j`` of
      the *trimmed* one (an off-by-60-frames indexing slip); we test it at the
      minimum itself; ``emage_compat=True`` keeps the slip. The slip matters:
      it lets most minima pass, so the ground truth of BEAT2 "scott" scores
      0.61 with it and 0.34 without (threshold 0.3). (2) Without audio beats EMAGE divides by zero; we return
      ``nan``. (3) Without reference mean speeds we use the clip's own per-joint
      mean speed (``emage_evaltools`` falls back to the clip's maximum); pass
      ``mean_speed`` computed from ground-truth motion (``mean_joint_speed``)
      when comparing methods, so every method is thresholded alike.

L1 diversity (L1Div)
    EMAGE runs SMPL-X with the translation zeroed (so positions are relative
    to the pelvis, global orientation kept), takes the first 55 joints in
    metres, ``(T, 165)``, and reports ``sum_t sum_d |x_td - mean_t x_d| / T``:
    the absolute deviation from the sequence's mean pose, *summed* over all 165
    coordinates and averaged over frames. Several sequences: per-sequence means,
    the sums added, divided by the total frame count. We do the same on the
    pelvis-relative positions (``positions - positions[:, :1]``), metres. The
    axis change Y-up → Z-up only permutes/negates coordinates, so the value is
    unchanged. It is comparable to EMAGE's only with all 55 joints; with the
    22 body joints it is smaller (fingers are left out).

Fréchet distance
    ``|μa − μb|² + tr(Σa) + tr(Σb) − 2 tr(sqrtm((Σa + εI)(Σb + εI)))``, with
    ``np.cov`` (unbiased) covariances, ε = 1e-6 and the real part of sqrtm: the
    formula of EMAGE's ``FGD.frechet_distance``. EMAGE's features come from
    their rotation autoencoder (``AESKConv_240_100.bin``); ours from
    :mod:`.motion_encoder`, so FGD values are comparable between our methods,
    not with EMAGE's table.
"""

from __future__ import annotations

import math

import numpy as np
from scipy import linalg
from scipy.signal import argrelextrema

# --- constants (EMAGE's values unless noted) ---------------------------------------

AUDIO_SR = 16000           # Hz, rate onsets are detected at
ONSET_HOP = 512            # samples at 16 kHz = 32 ms per onset frame
BC_SIGMA = 0.3             # s, Gaussian width of the beat match
BC_ORDER = 7               # frames either side a speed minimum must undercut
BC_THRESHOLD = 0.3         # normalised speed (|v| / joint mean speed) a beat must exceed
EMAGE_EVALTOOLS_THRESHOLD = 0.10  # the value in PantoMatrix emage_evaltools/mertic.py (not the paper's)
BC_TRIM_S = 2.0            # s cut from both ends (EMAGE align_mask = 60 frames at 30 fps)
FD_EPS = 1e-6              # added to both covariance diagonals before sqrtm

SMPLX_BODY_JOINTS = (
    "pelvis", "left_hip", "right_hip", "spine1", "left_knee", "right_knee", "spine2",
    "left_ankle", "right_ankle", "spine3", "left_foot", "right_foot", "neck",
    "left_collar", "right_collar", "head", "left_shoulder", "right_shoulder",
    "left_elbow", "right_elbow", "left_wrist", "right_wrist",
)
UPPER_BODY = (3, 6, 9, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21)
UPPER_BODY_NAMES = tuple(SMPLX_BODY_JOINTS[i] for i in UPPER_BODY)


# --- beat consistency ----------------------------------------------------------------


def audio_beats(samples: np.ndarray, sr: int = AUDIO_SR) -> np.ndarray:
    """Audio beats (onsets) in seconds from the start of ``samples``.

    ``samples [N]`` (or ``[N, C]``, averaged to mono) float waveform at ``sr`` Hz.
    Resampled to 16 kHz when needed, then
    ``librosa.onset.onset_detect(sr=16000, hop_length=512, units="time")`` with
    librosa's other defaults, as EMAGE does. Returns ``[K]`` float64 seconds,
    sorted; empty for silence.
    """
    import librosa

    y = np.asarray(samples, dtype=np.float32)
    if y.ndim == 2:
        y = y.mean(axis=1) if y.shape[1] <= 8 else y.mean(axis=0)
    if y.size == 0:
        return np.zeros(0)
    if int(sr) != AUDIO_SR:
        from scipy.signal import resample_poly

        g = math.gcd(int(sr), AUDIO_SR)
        y = resample_poly(y, AUDIO_SR // g, int(sr) // g).astype(np.float32)
    # librosa warns and may produce NaNs on all-zero input; silence has no onsets.
    if not np.any(np.abs(y) > 0):
        return np.zeros(0)
    t = librosa.onset.onset_detect(y=y, sr=AUDIO_SR, hop_length=ONSET_HOP, units="time")
    return np.asarray(t, dtype=np.float64)


def joint_speed(positions: np.ndarray, fps: float) -> np.ndarray:
    """Per-joint speed ``[T, J]`` in m/s of ``positions [T, J, 3]`` (metres).

    Finite differences as EMAGE: forward at frame 0, central inside, backward
    at the last frame (``np.gradient`` with ``edge_order=1``).
    """
    p = np.asarray(positions, dtype=np.float64)
    if p.ndim != 3 or p.shape[-1] != 3:
        raise ValueError(f"positions must be [T, J, 3], got {p.shape}")
    if len(p) < 2:
        return np.zeros(p.shape[:2])
    v = np.gradient(p, 1.0 / float(fps), axis=0)
    return np.linalg.norm(v, axis=-1)


def mean_joint_speed(positions_list, fps: float) -> np.ndarray:
    """Mean speed ``[J]`` (m/s) of each joint over all frames of all clips.

    The reference normaliser for :func:`motion_beats` (EMAGE's
    ``mean_vel_smplxflame_30.npy`` is this over the BEAT2 training set). Compute
    it once from ground-truth motion and pass it for every method compared.
    ``positions_list``: one ``[T, J, 3]`` array or a list of them (metres).
    """
    if isinstance(positions_list, np.ndarray) and positions_list.ndim == 3:
        positions_list = [positions_list]
    speeds = [joint_speed(p, fps) for p in positions_list if len(p) >= 2]
    if not speeds:
        raise ValueError("need at least one clip of two or more frames")
    return np.concatenate(speeds, axis=0).mean(axis=0)


def _joint_indices(joints, n_joints: int) -> list:
    if joints is None:
        joints = UPPER_BODY
    out = []
    for j in joints:
        i = SMPLX_BODY_JOINTS.index(j) if isinstance(j, str) else int(j)
        if not 0 <= i < n_joints:
            raise ValueError(f"joint {j!r} not in a {n_joints}-joint skeleton")
        out.append(i)
    return out


def motion_beats(positions: np.ndarray, fps: float, joints=None, threshold: float = BC_THRESHOLD, *,
                 mean_speed: np.ndarray | None = None, order: int = BC_ORDER,
                 per_joint: bool = False, frames: tuple | None = None, emage_compat: bool = False):
    """Motion beats in seconds: local minima of normalised joint speed.

    ``positions [T, J, 3]`` metres in SMPL-X joint order (J = 55, or the first
    22 body joints; J ≥ 22 for the default joints). ``joints``: indices or
    SMPL-X names, default ``UPPER_BODY`` (spine1, spine2, spine3, neck,
    collars, head, shoulders, elbows, wrists).

    Speed of each joint (m/s, see :func:`joint_speed`, computed on the whole
    clip) is divided by ``mean_speed[j]`` (m/s; ``[J]`` or ``[len(joints)]``,
    default the clip's own per-joint mean speed — pass a reference, see
    :func:`mean_joint_speed`). A beat is frame ``t`` whose normalised speed is
    strictly below every frame within ``order`` (7) frames on each side
    (``argrelextrema``, clipped at the ends) and above ``threshold`` (0.3).
    ``frames=(start, end)`` searches only that frame span (EMAGE's trim) and
    returns times relative to ``start``; with ``emage_compat`` the threshold
    is then tested at frame ``m`` instead of ``start + m`` for a minimum at
    ``start + m``, reproducing EMAGE's code exactly (see the module notes).

    Returns, in seconds (frame / fps), a list of ``[K_j]`` arrays, one per
    joint, if ``per_joint``; else the sorted union of all joints' beats
    ``[K]``. :func:`beat_consistency` scores the per-joint list as EMAGE does.
    """
    p = np.asarray(positions, dtype=np.float64)
    idx = _joint_indices(joints, p.shape[1] if p.ndim == 3 else 0)
    speed = joint_speed(p, fps)[:, idx]                       # [T, len(idx)] m/s
    if mean_speed is None:
        ref = speed.mean(axis=0) if len(speed) else np.ones(len(idx))
    else:
        ref = np.asarray(mean_speed, dtype=np.float64).reshape(-1)
        if len(ref) == p.shape[1]:
            ref = ref[idx]
        elif len(ref) != len(idx):
            raise ValueError(f"mean_speed has {len(ref)} values; need {p.shape[1]} or {len(idx)}")
    s_full = speed / np.maximum(ref, 1e-8)                     # unitless
    start = 0 if frames is None else int(frames[0])
    s = s_full if frames is None else s_full[start:int(frames[1])]
    # EMAGE compares the threshold mask of the untrimmed sequence with minimum
    # indices of the trimmed one; emage_compat keeps that slip
    gate = s_full if emage_compat else s
    beats = []
    for k in range(s.shape[1]):
        if len(s) < 3:
            beats.append(np.zeros(0))
            continue
        m = argrelextrema(s[:, k], np.less, order=order)[0]
        m = m[gate[m, k] > threshold]
        beats.append(m.astype(np.float64) / float(fps))
    if per_joint:
        return beats
    return np.unique(np.concatenate(beats)) if beats else np.zeros(0)


def _gahr(motion_t: np.ndarray, audio_t: np.ndarray, sigma: float) -> float:
    """EMAGE ``GAHR(pose_bt, audio_bt, sigma)``: for each audio beat, the
    Gaussian of its distance to the nearest motion beat; mean over audio beats."""
    if len(motion_t) == 0:
        return 0.0
    m = np.sort(np.asarray(motion_t, dtype=np.float64))
    a = np.asarray(audio_t, dtype=np.float64)
    # nearest motion beat by binary search (EMAGE loops over all pairs; same result)
    i = np.clip(np.searchsorted(m, a), 1, max(len(m) - 1, 1))
    d = np.abs(a - m[i - 1])
    if len(m) > 1:
        d = np.minimum(d, np.abs(m[i] - a))
    return float(np.mean(np.exp(-(d ** 2) / (2.0 * sigma ** 2))))


def beat_consistency(audio_beat_times, motion_beat_times, sigma: float = BC_SIGMA) -> float:
    """Beat consistency in [0, 1]: ``mean_a exp(-min_m (a - m)² / (2σ²))``.

    ``audio_beat_times [K]`` seconds; ``motion_beat_times``: ``[M]`` seconds, or
    a list of per-joint ``[M_j]`` arrays (as ``motion_beats(per_joint=True)``
    gives), whose per-joint scores are averaged, a joint without beats scoring 0
    (EMAGE). ``sigma`` seconds (0.3). 1.0 when every audio beat has a motion
    beat at the same instant. ``nan`` when there are no audio beats.
    """
    a = np.asarray(audio_beat_times, dtype=np.float64).reshape(-1)
    if len(a) == 0:
        return float("nan")
    if isinstance(motion_beat_times, (list, tuple)) and (
            len(motion_beat_times) == 0 or np.ndim(motion_beat_times[0]) == 1):
        if len(motion_beat_times) == 0:
            return 0.0
        return float(np.mean([_gahr(np.asarray(m).reshape(-1), a, sigma) for m in motion_beat_times]))
    return _gahr(np.asarray(motion_beat_times, dtype=np.float64).reshape(-1), a, sigma)


def trimmed_onsets(samples: np.ndarray, sr: int, n_frames: int, fps: float, trim_s: float = BC_TRIM_S) -> tuple:
    """``(onsets [K] s, (f0, f1))``: the span BC scores of a take of
    ``n_frames`` at ``fps`` with its speech ``samples [N]`` (or ``[N, C]``) at
    ``sr`` Hz, both from t = 0 — ``trim_s`` seconds dropped at both ends,
    shortened to a quarter of (duration − 1 s) for clips under ``4 trim_s + 1``
    s — as frames ``f0 .. f1`` (exclusive), and the onsets of the audio cut to
    that span (seconds from its start)."""
    y = np.asarray(samples, dtype=np.float32)
    if y.ndim == 2:
        y = y.mean(axis=1) if y.shape[1] <= 8 else y.mean(axis=0)
    dur = n_frames / float(fps)
    if dur < 4.0 * trim_s + 1.0:
        trim_s = max(0.0, (dur - 1.0) / 4.0)
    f0 = int(round(trim_s * fps))
    f1 = max(n_frames - f0, f0)
    y = y[: int(round(dur * sr))]
    return audio_beats(y[int(round(f0 / float(fps) * sr)):int(round(f1 / float(fps) * sr))], sr), (f0, f1)


def bc_score(samples: np.ndarray, sr: int, positions: np.ndarray, fps: float, *,
             mean_speed: np.ndarray | None = None, trim_s: float = BC_TRIM_S,
             threshold: float = BC_THRESHOLD, sigma: float = BC_SIGMA,
             emage_compat: bool = False) -> float:
    """BC of one take as EMAGE computes it: audio ``samples [N]`` at ``sr`` Hz
    and ``positions [T, J, 3]`` metres at ``fps``, aligned at t = 0.

    The audio is cut to the motion's length, then ``trim_s`` seconds (2 s, EMAGE's
    60 frames) are dropped at both ends of both; onsets and per-joint upper-body
    beats are found on what remains and scored by :func:`beat_consistency`.
    Use ``trim_s=0`` for short clips (it is reduced automatically when the clip
    is shorter than ``4 * trim_s + 1`` s). To pool several takes as EMAGE does,
    weight each take's BC by its trimmed frame count. ``emage_compat=True``
    reproduces EMAGE's code including its threshold-index slip (their published
    numbers); the default tests the threshold at each minimum, as the metric is
    described. On BEAT2 "scott" (2_scott_0_1_1, 64 s, its own mean speeds) the
    ground truth scores 0.344 by default and 0.611 with ``emage_compat``.
    """
    p = np.asarray(positions, dtype=np.float64)
    onsets, (f0, f1) = trimmed_onsets(samples, sr, len(p), fps, trim_s)
    # velocities on the whole take, minima searched within the trimmed span
    # (times relative to its start, like the trimmed audio's onsets), as EMAGE
    beats = motion_beats(p, fps, threshold=threshold, mean_speed=mean_speed, per_joint=True,
                         frames=(f0, f1), emage_compat=emage_compat)
    return beat_consistency(onsets, beats, sigma=sigma)


# --- diversity -----------------------------------------------------------------------


def l1_diversity(positions, root_relative: bool = True) -> float:
    """EMAGE L1Div, in metres: ``sum_t sum_{j,c} |x_tjc − mean_t x_jc| / T``.

    ``positions``: ``[T, J, 3]`` metres, or a list of such takes (each its own
    mean; sums added, divided by the total frame count, as EMAGE accumulates).
    Positions are made pelvis-relative (joint 0 subtracted per frame) when
    ``root_relative``, matching EMAGE's zeroed translation. Summed, not
    averaged, over the J×3 coordinates: it scales with J (use J = 55 to compare
    with EMAGE) and linearly with motion amplitude; 0 for a static pose.
    """
    clips = [positions] if isinstance(positions, np.ndarray) and np.ndim(positions) == 3 else list(positions)
    total, frames = 0.0, 0
    for c in clips:
        p = np.asarray(c, dtype=np.float64)
        if len(p) == 0:
            continue
        if root_relative:
            p = p - p[:, :1]
        total += float(np.abs(p - p.mean(axis=0, keepdims=True)).sum())
        frames += len(p)
    return total / frames if frames else 0.0


# --- Fréchet distance ----------------------------------------------------------------


def frechet_distance(feats_a: np.ndarray, feats_b: np.ndarray, eps: float = FD_EPS) -> float:
    """Fréchet distance between Gaussians fitted to ``feats_a [N, D]`` and
    ``feats_b [M, D]`` (N, M ≥ 2), in squared feature units.

    ``|μa − μb|² + tr Σa + tr Σb − 2 tr sqrtm((Σa + εI)(Σb + εI))``, unbiased
    covariances, ε = 1e-6 (EMAGE's ``FGD.frechet_distance``); the real part of
    sqrtm is used. Clamped at 0 (round-off can make identical sets slightly
    negative).
    """
    a = np.asarray(feats_a, dtype=np.float64)
    b = np.asarray(feats_b, dtype=np.float64)
    if a.ndim == 1:
        a = a[:, None]
    if b.ndim == 1:
        b = b[:, None]
    if a.ndim != 2 or b.ndim != 2 or a.shape[1] != b.shape[1]:
        raise ValueError(f"need [N, D] and [M, D] with equal D, got {a.shape} and {b.shape}")
    if len(a) < 2 or len(b) < 2:
        raise ValueError("need at least two feature vectors in each set")
    mu1, mu2 = a.mean(axis=0), b.mean(axis=0)
    s1 = np.atleast_2d(np.cov(a, rowvar=False))
    s2 = np.atleast_2d(np.cov(b, rowvar=False))
    off = np.eye(s1.shape[0]) * eps
    covmean = linalg.sqrtm((s1 + off) @ (s2 + off))
    if isinstance(covmean, tuple):  # old SciPy returned (sqrtm, errest) with disp=False
        covmean = covmean[0]
    covmean = np.real(covmean)
    diff = mu1 - mu2
    fd = float(diff @ diff + np.trace(s1) + np.trace(s2) - 2.0 * np.trace(covmean))
    return max(fd, 0.0)
