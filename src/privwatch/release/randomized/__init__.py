"""A randomized release: the flagged tuples released through the channel that keeps the most of
them as themselves under epsilon-lift privacy (an LP, :func:`privwatch.mechanisms.lift_channel`),
aimed at the held-out verdict; its saved form and ``apply``.

- ``_release.py``: :func:`randomize_release` (records in, :class:`RandomizedRelease` out: the
  channel, the drawn release, the held-out check and the verdict);
- ``_mechanism.py``: :class:`RandomizedMechanism`, the channel saved through the checked file
  format and applied to new records with a seed.
"""

from ._mechanism import RANDOMIZED_KIND, RandomizedMechanism, load_randomized
from ._release import (
    CHANNEL_MARGINS,
    RandomizedRelease,
    channel_weights,
    count_tuples,
    draw_symbols,
    randomize_release,
    symbols_as_frame,
)

__all__ = [
    "CHANNEL_MARGINS",
    "RANDOMIZED_KIND",
    "RandomizedMechanism",
    "RandomizedRelease",
    "channel_weights",
    "count_tuples",
    "draw_symbols",
    "load_randomized",
    "randomize_release",
    "symbols_as_frame",
]
