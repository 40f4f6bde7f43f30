"""Three-point tracking: a full body from a head and two hand trackers (issue #30).

- :mod:`.trackers`: the tracker take (head, left hand, right hand over time).
- :mod:`.canonical`: the skeleton the model works on (the Bandai-Namco one).
- :mod:`.mocap_trackers`: mocap files -> canonical motions and tracker takes.
- :mod:`.body_from_trackers`: ``track_body`` (model or baseline), ``LiveTracker``.

Never imports bpy.
"""
