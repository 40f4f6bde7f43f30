"""Speech-to-gesture: the representation, data corpus, rhythm/energy controls,
the conditional motion model, its training, generation and evaluation."""
