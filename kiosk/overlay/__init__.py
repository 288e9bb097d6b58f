"""Broadcast overlay: OBS browser-source pages (transparent background) fed by the table kiosk.

``/overlay/table`` (levels, cards left, last plays as card images, finishing order, fouls) and
``/overlay/ticker`` (standings from the central scoreboard), both on the SSE feed
``/overlay/stream?delay=S``: a configurable delay applied to the data, full state on every
(re)connect.
"""
