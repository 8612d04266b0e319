"""What a machine is and does while a run measures: environment capture, preflight, telemetry sampling."""
