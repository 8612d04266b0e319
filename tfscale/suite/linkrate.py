"""Link rates in tc's syntax ("100mbit", "1gbit") → bytes per second, and the tbf bucket size for a rate. Pure."""

from __future__ import annotations

import re

# tc(8): bit rates use SI prefixes (1 kbit = 1000 bit/s); only bit rates are accepted, to avoid bit/byte mix-ups.
_UNITS = {"bit": 1, "kbit": 1e3, "mbit": 1e6, "gbit": 1e9, "tbit": 1e12}
_RATE = re.compile(r"(\d{1,15}(?:\.\d{1,15})?)(bit|kbit|mbit|gbit|tbit)")
MAX_BITS_PER_S = 100e12  # 100 tbit: above any link; beyond it a suite's number is a mistake (300 digits made inf)
MIN_BURST_BYTES = 64 * 1024
BURST_SECONDS = 0.004  # one tick of a 250 Hz kernel: a smaller bucket cannot reach the rate


def parse_rate(text: str) -> float:
    """Bytes per second of a rate such as "100mbit" (case-insensitive). Raises ValueError."""
    match = _RATE.fullmatch(text.strip().lower()) if isinstance(text, str) else None
    bits = float(match.group(1)) * _UNITS[match.group(2)] if match else 0.0
    if not 0 < bits <= MAX_BITS_PER_S:
        raise ValueError(
            f"{text[:40]!r} is not a link rate; write a positive number and bit|kbit|mbit|gbit|tbit up to "
            f"{MAX_BITS_PER_S / 1e12:g}tbit, e.g. 100mbit or 1gbit"
            if isinstance(text, str)
            else f"{type(text).__name__} is not a link rate; write e.g. 100mbit or 1gbit"
        )
    return bits / 8


def tbf_burst_bytes(rate_bytes_per_s: float) -> int:
    """tbf bucket: at least 64 KiB, and one 4 ms tick at the rate (16 KiB reached only 0.74 of 1 gbit here,
    64 KiB 0.95; a large bucket would let short transfers beat the rate)."""
    return max(MIN_BURST_BYTES, int(rate_bytes_per_s * BURST_SECONDS))
