"""The parent side of a run: a suite's configs through the launchers, progress, collection (no TF)."""
