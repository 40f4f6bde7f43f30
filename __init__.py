"""RigMind: speech-to-gesture, neural locomotion and retargeting for Blender.

This folder is ONE package. It ships to Blender as the extension ``rigmind``
(module ``bl_ext.<repo>.rigmind``) and installs into a virtual environment as
``rigmind`` for the CLI and Python API. Every import inside it is relative, so
no generic top-level name (``backend``, ``operators``) ever lands in
``sys.modules``.

Importing this package is cheap: no bpy, no torch. Blender calls
``register()``/``unregister()``; everything heavy is imported lazily.
"""

__version__ = "0.1.0"


def register():
    from .blender_addon import registration

    registration.register()


def unregister():
    from .blender_addon import registration

    registration.unregister()
