"""Blender side of RigMind: preferences, scene properties, the side panel and
their registration. Importing this folder needs ``bpy`` but nothing heavy;
operators live in ``operators/`` and pull in the neural backend lazily.

``build_extension.py`` and ``install_into_blender.py`` are standard-library
tools run outside Blender and are not imported from here.
"""
