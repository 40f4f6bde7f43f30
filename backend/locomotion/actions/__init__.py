"""Locomotion actions beyond walking and running: jumps, crouched stretches
and the crouched gait, and getting up from the floor, blended into the
controller's walk (:mod:`.action_plan` says what was asked for,
:mod:`.clip_bank` holds the reference clips they are made from)."""
