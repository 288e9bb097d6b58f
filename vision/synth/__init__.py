"""Synthetic training data: card faces (real deck designs and procedural ones) and table scenes.

Needs the ``train`` extra (cairosvg, Pillow); the runtime detector never imports this package.
"""
