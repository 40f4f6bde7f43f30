"""Helpers shared by the tests (not tests themselves): the Blender test rigs
(``rig_factory``), generated humanoid skeletons (``humanoid_generator``),
the fuzzers' input generators (``fuzz_inputs``) and the Blender 5.0 / 5.2
environments (``blender_envs``). ``tests/`` is on ``sys.path`` while pytest
runs (``tests/conftest.py``), so tests write ``from support import rig_factory``;
bench scripts put ``tests/`` on ``sys.path`` first."""
