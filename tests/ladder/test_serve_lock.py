"""One ``arena ladder serve`` per directory: a second one (another port) is refused in one line naming the
first's pid, cleans nothing (an upload in flight in DIR/tmp stays) and writes nothing; ``arena ladder show``
reads the directory meanwhile; once the first is killed (-9) the next one serves."""

from __future__ import annotations

from pathlib import Path

from ladder_support import Ladder, cli
from runlock_support import fingerprint, one_line
from tournament_support import free_port


def test_a_second_server_on_the_same_directory_is_refused_and_touches_nothing(tmp_path: Path):
    ladder = Ladder(tmp_path / "lad")
    ladder.start()
    assert ladder.process is not None
    try:
        in_flight = ladder.directory / "tmp" / "upload-in-flight"
        in_flight.parent.mkdir(exist_ok=True)
        in_flight.write_bytes(b"half an archive")
        before = fingerprint(ladder.directory)
        second = cli("ladder", "serve", str(ladder.directory), "--port", str(free_port()))
        assert second.returncode == 2, second.stdout + second.stderr
        line = one_line(second.stderr)
        assert f"lad is in use by arena ladder serve (pid {ladder.process.pid}, since " in line, line
        assert in_flight.read_bytes() == b"half an archive", "the first server's upload in flight is kept"
        assert fingerprint(ladder.directory) == before, "the refused server touched nothing"

        shown = cli("ladder", "show", str(ladder.directory), "--json")
        assert shown.returncode == 0 and '"teams"' in shown.stdout, shown.stderr
        every = cli("ladder", "clean", str(ladder.directory), "--all")  # every image: not under a running server
        assert every.returncode == 2 and "in use by arena ladder serve" in one_line(every.stderr), every.stderr
        assert fingerprint(ladder.directory) == before

        ladder.process.kill()  # kill -9: the lock goes with the process
        ladder.process.wait(60)
        ladder.start()  # the next server takes the directory over (and clears what the dead one left)
        assert not in_flight.exists(), "the new server recovered the dead one's uploads"
    finally:
        if ladder.process is not None and ladder.process.poll() is None:
            ladder.stop()
    assert not (ladder.directory / ".arena-run.lock").exists(), "a server that stops lets go of its directory"
