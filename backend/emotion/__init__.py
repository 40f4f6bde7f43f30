"""Emotion over a take: which emotions, how strong, when (``timeline``)."""
