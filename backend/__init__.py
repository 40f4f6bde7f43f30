"""Pure Python + NumPy (+ PyTorch for models) backend. Never imports bpy.

Conventions used throughout the backend:
- lengths in metres, time in seconds, angles in radians;
- Blender's frame: right-handed, Z up, characters face -Y;
- quaternions are ``(w, x, y, z)`` like ``mathutils`` (scipy uses x, y, z, w);
- a clip is an array ``[frames, joints, ...]``.
"""
