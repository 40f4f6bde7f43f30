"""Evaluation drivers that bake takes onto real rigs in Blender and measure
them where the user sees them (``rigmind eval locomotion --rigs``,
``rigmind eval gesture --viewer``).

Part of the pip package (``rigmind.evaluation``), not of the Blender
extension: the add-on never runs them. They import bpy inside the functions
that need it.
"""
