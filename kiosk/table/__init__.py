"""The table kiosk: observation source -> referee -> SQLite event log -> screen and outbox.

See kiosk/table/worker.py (the pipeline), store.py (the log), outbox.py (delivery to the
scoreboard), app.py (the screen and referee mode), sources.py (file, simulation, video,
live camera), footage.py (a live camera's recorded footage).
"""
