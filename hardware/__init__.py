"""Camera backends, seat buttons, recorder, Pi service files."""
