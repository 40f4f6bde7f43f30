"""Blender side of RigMind: preferences, scene properties, the side panel and
their registration. Importing this folder needs ``bpy`` but nothing heavy;
operators live in ``operators/`` and pull in the neural backend lazily.

The set-up tools that build and install the extension live in ``tools/``
(never shipped).
"""
