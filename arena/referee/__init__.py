"""The gRPC edge: the referee server, seat sessions, tokens, deadlines, proto conversion."""

from arena.referee.server import RefereeServer, server_options
from arena.referee.session import RemoteSeat

__all__ = ["RefereeServer", "RemoteSeat", "server_options"]
