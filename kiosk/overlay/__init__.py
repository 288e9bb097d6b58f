"""Broadcast overlay: OBS browser-source pages (transparent background) fed by the table kiosk.

``/overlay/table`` (the pairs by name with their levels and fouls, the four players with cards
left or their place, the current trick in large card images, the shot clock, the finishing order,
fouls in words; ``?layout=full`` or ``lower``, ``?lang=zh|en``, sized to the viewport for 1080p
and 720p) and ``/overlay/ticker`` (standings from the central scoreboard), both on the SSE feed
``/overlay/stream?delay=S``: a configurable delay applied to the data (set it to the video's
delay), full state on every (re)connect.
"""
