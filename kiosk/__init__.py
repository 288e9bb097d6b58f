"""The apps: table kiosk, scoreboard, broadcast overlay, review desk, and the ``guandan`` CLI."""
