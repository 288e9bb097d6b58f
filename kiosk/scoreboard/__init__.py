"""Central scoreboard: ingests table events, derives results, standings, pairing and live push.

FastAPI at the edge (pydantic schemas), SQLAlchemy 2 inside, Alembic migrations shipped in
``kiosk/scoreboard/migrations``. The event log is the truth: deal and match results are a fold
over the ingested events (``fold.py``); standings are computed from those results
(``standings.py``). ``create_app(settings)`` builds the ASGI app; ``guandan scoreboard serve``
runs it under uvicorn.
"""

from kiosk.scoreboard.settings import Settings

__all__ = ["Settings"]
