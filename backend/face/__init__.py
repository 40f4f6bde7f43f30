"""Speech to face: lip-sync, blinks and brows as ARKit-52 shape-key curves.

Pure Python/numpy/torch (no bpy). Entry point: ``generate.generate_face``."""
