"""A bot that kills the Dask worker playing its table, once: the red team's way to strand a table.

Its first run (no marker file yet) creates the marker and SIGKILLs its parent
process (the worker whose table started it; a nanny restarts that worker on a
new port); every later run plays like the random example bot.
"""

from __future__ import annotations

import os
import signal
import sys
from pathlib import Path

from arena_sdk import run
from arena_sdk.testing import RandomBot

marker = Path(sys.argv[1])
try:
    fd = os.open(marker, os.O_CREAT | os.O_EXCL | os.O_WRONLY)
except FileExistsError:
    run(RandomBot())
else:
    os.close(fd)
    os.kill(os.getppid(), signal.SIGKILL)
