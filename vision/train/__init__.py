"""Training recipe (``guandan train ...``); needs the ``train`` extra (torch, ultralytics).

The runtime (``vision.detector``) never imports this package.
"""
