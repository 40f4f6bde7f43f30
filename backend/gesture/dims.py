"""The gesture model's tensor sizes, without torch: generation with ONNX
Runtime reads them here, the torch model (:mod:`.model`) too.

Frames are at 30 fps; a window is ``WINDOW`` frames, the first ``CONTEXT``
of which come from the previous window; one latent code of ``LATENT`` dims
covers ``LATENT_STRIDE`` frames."""

AUDIO_DIM = 69
N_DOMAINS = 3
# pulse, energy, audio flag, speech, audio features, domain one-hot, beat timing (since, until)
COND_DIM = 4 + AUDIO_DIM + N_DOMAINS + 2
LATENT = 16
LATENT_STRIDE = 8
WINDOW = 64
CONTEXT = 16
