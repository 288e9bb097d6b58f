"""The dispute review desk: every event next to the footage that caused it, rulings as events.

* :mod:`kiosk.review.log` - the event log as the desk shows it: deals, their events in order,
  what was voided or re-read, the open disputes, the rulings (a fold over the log and its notes).
* :mod:`kiosk.review.routes` - the API and page on the table kiosk (behind the referee PIN):
  ``/review``, ``/api/review/...``; the same page served offline from an appeal bundle.
* :mod:`kiosk.review.vision` - a frame with the detected corners and seat zones drawn.
* :mod:`kiosk.review.bundle` - the appeal bundle (``guandan review bundle`` / ``open``).
* :mod:`kiosk.review.rerun` - the recorded footage of a deal read again through the pipeline.

Footage itself is read by :class:`kiosk.table.footage.FootageIndex`.
"""
