"""What every part of the ladder stands on: the directory's layout, the Docker engine's health, the scratch space.

:mod:`.paths` says where a ladder directory keeps each thing (the stores, a
version's sources, records, seat logs, validation records, practice tables):
the one place the layout is written down.  :mod:`.engine_watch` tells the
Docker engine's outages (the platform's, never a team's) to the builds and
the pairs alike, so neither starts anything while the engine cannot start a
container.  :mod:`.scratch` gives the server and its tables a temporary
directory of their own, removed at exit and after a kill.  Nothing here
knows a team, a version or a game: every other package of the wing may
import this one, and it imports none of them.
"""
