"""Thin Blender-side layer: read the scene into backend arrays, write results
back as new actions. Only this package (and blender_addon/) imports bpy."""
