"""The game loop against abstract seats: time control, strikes, forfeits, voids, records.

Nothing here knows about gRPC, processes or containers: a :class:`Seat` is
anything that can be told about a game and asked for a decision.
"""

from arena.match.clock import Clock, ManualClock, MonotonicClock, oversubscribed_warning
from arena.match.loop import GameOutcome, MatchOutcome, play_game, run_match_loop
from arena.match.seat import (
    DecisionPrompt,
    DecisionTimeout,
    PlatformFault,
    Seat,
    SeatEvent,
    SeatLost,
    SeatReply,
)
from arena.match.spec import MatchSpec, TimeControl, bot_seed, game_seeds

__all__ = [
    "Clock", "DecisionPrompt", "DecisionTimeout", "GameOutcome", "ManualClock", "MatchOutcome", "MatchSpec",
    "MonotonicClock", "PlatformFault", "Seat", "SeatEvent", "SeatLost", "SeatReply", "TimeControl",
    "bot_seed", "game_seeds", "oversubscribed_warning", "play_game", "run_match_loop",
]  # fmt: skip
