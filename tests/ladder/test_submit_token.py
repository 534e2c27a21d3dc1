"""`arena submit` with a token as a file or a shell hands it over (issue 46): CRLF line ends, spaces.

Red team 5's rehearsal: a token taken from a line of a file with CRLF line
ends kept its ``\\r`` and the upload failed with "Illegal header value".  Here
a real site (uvicorn on 127.0.0.1, a ladder directory) takes the uploads; the
CLI runs as a process.
"""

from __future__ import annotations

from pathlib import Path

from ladder_support import cli
from site_support import SyntheticLadder, served


def _bot(tmp_path: Path) -> Path:
    bot = tmp_path / "bot"
    bot.mkdir()
    (bot / "bot.py").write_text("print('hi')\n")
    return bot


def test_a_token_with_a_crlf_line_end_is_taken_from_the_option_and_from_a_file(tmp_path: Path) -> None:
    lad = SyntheticLadder(tmp_path / "lad")
    try:
        token = lad.add_team("alpha")
        bot = _bot(tmp_path)
        with served(lad.config, lad.state) as url:
            given = cli("submit", str(bot), "--server", url, "--token", token + "\r")
            assert given.returncode == 0, given.stderr
            assert "submitted alpha@1" in given.stdout and "Illegal header" not in given.stderr
            tokens = tmp_path / "token.txt"
            tokens.write_bytes(f"{token}\r\n".encode())
            filed = cli("submit", str(bot), "--server", url, "--token-file", str(tokens))
            assert filed.returncode == 0, filed.stderr
            assert "submitted alpha@2" in filed.stdout
            broken = cli("submit", str(bot), "--server", url, "--token", token[:10] + "\x1b" + token[10:])
            assert broken.returncode == 2 and "a character a token never has" in broken.stderr, broken.stderr
            assert "Traceback" not in broken.stderr
            assert [v.entry for v in lad.store.versions(team="alpha")] == ["alpha@1", "alpha@2"]
    finally:
        lad.close()
