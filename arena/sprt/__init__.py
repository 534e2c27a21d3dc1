"""``arena sprt``: is NEW stronger than OLD? Duplicate pairs until a sequential test decides.

The statistics live in :mod:`arena.ratings.sprt` and :mod:`arena.ratings.pairs`
(standard library only); this package plays the pairs, stores them and shows
the test. See ``docs/sprt.md``.
"""

from arena.sprt.config import DEFAULT_PAIRS_PER_TABLE, SprtConfig, SprtConfigError
from arena.sprt.runner import (
    FAILED,
    INCONCLUSIVE,
    INTERRUPTED,
    Progress,
    Snapshot,
    SprtReport,
    run_sprt,
)

__all__ = [
    "DEFAULT_PAIRS_PER_TABLE", "FAILED", "INCONCLUSIVE", "INTERRUPTED", "Progress", "Snapshot",
    "SprtConfig", "SprtConfigError", "SprtReport", "run_sprt",
]  # fmt: skip
