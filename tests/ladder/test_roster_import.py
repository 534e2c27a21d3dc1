"""``arena ladder team import`` and the member commands, through the real CLI on real ladder directories (no Docker).

A roster with a wrong line is refused whole, every wrong line named, nothing
created (no team, no member, no tokens file); the tokens file is mode 0600
and never written over; importing again adds only what is new; one member's
token is revoked or replaced alone; an older ladder.sqlite gains the members
table when it is opened.
"""

from __future__ import annotations

import csv
import sqlite3
import stat
import tomllib
from pathlib import Path

import pytest
from ladder_support import cli

from arena.ladder.teams.roster import RosterError, read_roster_settings, set_join_code
from arena.ladder.store import LadderStore

GOOD = "team,member,email\nred,Ann Lee,ann@uni.example\nred,Bob,bob@uni.example\nblue,Cy <3,cy@uni.example\n"


@pytest.fixture
def ladder(tmp_path: Path) -> Path:
    made = cli("ladder", "init", str(tmp_path / "lad"))
    assert made.returncode == 0, made.stderr
    return tmp_path / "lad"


def counts(directory: Path) -> tuple[int, int]:
    with sqlite3.connect(directory / "ladder.sqlite") as db:
        teams = db.execute("SELECT COUNT(*) FROM teams").fetchone()[0]
        members = db.execute("SELECT COUNT(*) FROM members").fetchone()[0]
    return teams, members


def tokens_in(path: Path) -> list[dict[str, str]]:
    with path.open(newline="", encoding="utf-8") as f:
        return list(csv.DictReader(f))


def write(tmp_path: Path, text: str, name: str = "roster.csv") -> Path:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


def test_a_malformed_roster_is_refused_with_each_wrong_line_and_nothing_is_created(ladder: Path, tmp_path: Path):
    roster = write(tmp_path, (
        "team,member,email\n"
        "red,Ann,ann@uni.example\n"        # 2: fine
        "red,,ann2@uni.example\n"          # 3: no member
        "bad team,Bo,bo@uni.example\n"     # 4: a team name with a space
        "blue,Cy,not-an-address\n"         # 5: no address
        "red,Ann,ann3@uni.example\n"       # 6: Ann twice in red
        "green,Di,ann@uni.example\n"       # 7: Ann's address again
        "green,Ed\n"                       # 8: a field short
        "red,F,f@uni.example\nred,G,g@uni.example\nred,H,h@uni.example\n"  # 9-11: red's 2nd-4th members
        "red,I,i@uni.example\n"            # 12: red's fifth
    ))  # fmt: skip
    result = cli("ladder", "team", "import", str(ladder), str(roster))
    assert result.returncode == 2, result.stdout
    err = " ".join(result.stderr.split())
    assert "7 wrong line(s); nothing was imported" in err, err
    for expected in (
        "line 3: the member is missing",
        "line 4: team name 'bad team'",
        "line 5: e-mail 'not-an-address' is not an address",
        "line 6: duplicate member 'Ann' of team 'red' (also on line 2)",
        "line 7: e-mail 'ann@uni.example' is on line 2 too",
        "line 8: 2 fields, a line has 3",
        "line 12: team 'red' would have 5 members (at most 4",
    ):
        assert expected in err, (expected, err)
    assert "line 2:" not in err and "line 11:" not in err
    assert counts(ladder) == (0, 0), "a refused roster created teams or members"
    assert not (ladder / "member-tokens.csv").exists()


def test_a_wrong_header_is_line_one(ladder: Path, tmp_path: Path):
    result = cli("ladder", "team", "import", str(ladder), str(write(tmp_path, "group,name,mail\nred,Ann,a@b.example\n")))
    assert result.returncode == 2
    assert "line 1: the header must be team,member,email" in result.stderr
    assert counts(ladder) == (0, 0)


def test_the_tokens_file_is_private_and_each_token_signs_its_member_in(ladder: Path, tmp_path: Path):
    result = cli("ladder", "team", "import", str(ladder), str(write(tmp_path, "\ufeff" + GOOD)))  # a spreadsheet's BOM
    assert result.returncode == 0, result.stderr
    assert "added 3 member(s) in 2 team(s)" in result.stdout
    path = ladder / "member-tokens.csv"
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    rows = tokens_in(path)
    assert [(r["team"], r["member"], r["email"]) for r in rows] == [
        ("red", "Ann Lee", "ann@uni.example"), ("red", "Bob", "bob@uni.example"), ("blue", "Cy <3", "cy@uni.example"),
    ]  # fmt: skip
    store = LadderStore(ladder / "ladder.sqlite")
    try:
        for row in rows:
            found = store.identify(row["token"])
            assert found is not None and found.member is not None
            assert (found.team.name, found.member.name) == (row["team"], row["member"])
        assert [m.name for m in store.members("red")] == ["Ann Lee", "Bob"]
    finally:
        store.close()


def test_an_existing_tokens_file_is_refused_and_nothing_is_created(ladder: Path, tmp_path: Path):
    kept = ladder / "member-tokens.csv"
    kept.write_text("team,member,email,token\nold,One,one@x.example,SECRET\n")
    result = cli("ladder", "team", "import", str(ladder), str(write(tmp_path, GOOD)))
    assert result.returncode == 2
    assert "member-tokens.csv exists" in " ".join(result.stderr.split())
    assert kept.read_text().endswith("SECRET\n"), "the earlier tokens were overwritten"
    assert counts(ladder) == (0, 0)
    other = tmp_path / "elsewhere.csv"
    done = cli("ladder", "team", "import", str(ladder), str(write(tmp_path, GOOD)), "--tokens", str(other))
    assert done.returncode == 0, done.stderr
    assert stat.S_IMODE(other.stat().st_mode) == 0o600 and len(tokens_in(other)) == 3


def test_importing_again_adds_only_the_new_members(ladder: Path, tmp_path: Path):
    first = cli("ladder", "team", "import", str(ladder), str(write(tmp_path, GOOD)), "--tokens", str(tmp_path / "t1.csv"))
    assert first.returncode == 0, first.stderr
    again = cli("ladder", "team", "import", str(ladder), str(write(tmp_path, GOOD)), "--tokens", str(tmp_path / "t2.csv"))
    assert again.returncode == 0 and "nothing to add" in again.stdout
    assert not (tmp_path / "t2.csv").exists()
    more = GOOD + "blue,Dee,dee@uni.example\ngreen,Eve,eve@uni.example\n"
    third = cli("ladder", "team", "import", str(ladder), str(write(tmp_path, more)), "--tokens", str(tmp_path / "t3.csv"),
                "--json")  # fmt: skip
    assert third.returncode == 0, third.stderr
    assert '"added_teams": [\n    "green"\n  ]' in third.stdout
    assert [(r["team"], r["member"]) for r in tokens_in(tmp_path / "t3.csv")] == [("blue", "Dee"), ("green", "Eve")]
    assert counts(ladder) == (3, 5)
    changed = cli("ladder", "team", "import", str(ladder), str(write(tmp_path, "team,member,email\nred,Bob,bob@other.example\n")),
                  "--tokens", str(tmp_path / "t4.csv"))  # fmt: skip
    assert changed.returncode == 2 and "line 2: 'Bob' of team 'red' is in the ladder with another e-mail" in changed.stderr


def test_one_member_is_revoked_or_given_a_new_token_alone(ladder: Path, tmp_path: Path):
    assert cli("ladder", "team", "import", str(ladder), str(write(tmp_path, GOOD))).returncode == 0
    tokens = {r["member"]: r["token"] for r in tokens_in(ladder / "member-tokens.csv")}
    revoked = cli("ladder", "team", "member-revoke", str(ladder), "red", "Bob")
    assert revoked.returncode == 0 and "token revoked" in revoked.stdout
    store = LadderStore(ladder / "ladder.sqlite")
    try:
        assert store.identify(tokens["Bob"]) is None
        assert store.identify(tokens["Ann Lee"]) is not None, "revoking Bob stopped Ann's token"
        assert [m.revoked for m in store.members("red")] == [False, True]
    finally:
        store.close()
    listed = cli("ladder", "team", "members", str(ladder), "red")
    assert "red: Bob <bob@uni.example> (revoked)" in listed.stdout
    rotated = cli("ladder", "team", "member-token", str(ladder), "red", "Ann Lee", "--json")
    assert rotated.returncode == 0, rotated.stderr
    import json

    new = json.loads(rotated.stdout)["token"]
    store = LadderStore(ladder / "ladder.sqlite")
    try:
        assert store.identify(tokens["Ann Lee"]) is None and store.identify(new).member.name == "Ann Lee"  # type: ignore[union-attr]
    finally:
        store.close()
    missing = cli("ladder", "team", "member-revoke", str(ladder), "red", "Nobody")
    assert missing.returncode == 2 and "team 'red' has no member 'Nobody'" in missing.stderr


def test_the_join_code_command_rotates_the_code_in_ladder_toml(ladder: Path):
    assert not read_roster_settings(ladder).open, "init leaves self-registration off"
    opened = cli("ladder", "team", "join-code", str(ladder), "--rotate", "--json")
    assert opened.returncode == 0, opened.stderr
    toml = tomllib.loads((ladder / "ladder.toml").read_text())
    code = toml["roster"]["join_code"]
    assert len(code) >= 12 and f'"join_code": "{code}"' in opened.stdout
    again = cli("ladder", "team", "join-code", str(ladder), "--rotate")
    assert again.returncode == 0 and read_roster_settings(ladder).join_code not in ("", code)
    assert "# members a team may have at most" in (ladder / "ladder.toml").read_text(), "the comments were lost"
    assert cli("ladder", "team", "join-code", str(ladder), "--off").returncode == 0
    assert not read_roster_settings(ladder).open
    shown = cli("ladder", "show", str(ladder))
    assert shown.returncode == 0, "the rewritten ladder.toml no longer loads"


def test_an_older_ladder_toml_gains_a_roster_section(tmp_path: Path, ladder: Path):
    toml = ladder / "ladder.toml"
    text = toml.read_text()
    toml.write_text(text[: text.index("[roster]")])
    assert read_roster_settings(ladder).join_code == ""
    set_join_code(ladder, "a-code-of-12")
    assert read_roster_settings(ladder).join_code == "a-code-of-12"
    with pytest.raises(RosterError, match="at least 8"):
        toml.write_text(toml.read_text().replace("a-code-of-12", "short"))
        read_roster_settings(ladder)


def test_an_older_ladder_sqlite_gains_the_members_table(tmp_path: Path):
    """A store made before members: its team's shared token still works, and members can be added."""
    path = tmp_path / "ladder.sqlite"
    with sqlite3.connect(path) as db:
        db.executescript(
            "CREATE TABLE teams (name TEXT PRIMARY KEY, token_hash TEXT NOT NULL UNIQUE, disabled INTEGER NOT NULL "
            "DEFAULT 0, created TEXT NOT NULL);"
            "CREATE TABLE sessions (token_hash TEXT PRIMARY KEY, team TEXT, admin INTEGER NOT NULL DEFAULT 0, "
            "expires TEXT NOT NULL);"
        )
        from arena.ladder.teams.store import token_hash

        db.execute("INSERT INTO teams VALUES ('old', ?, 0, '2026-01-01T00:00:00+00:00')", (token_hash("shared-token"),))
    store = LadderStore(path)
    try:
        found = store.identify("shared-token")
        assert found is not None and found.team.name == "old" and found.member is None and not found.team.pending
        token = store.add_member("old", "Newcomer", "new@uni.example")
        assert store.identify(token).member.name == "Newcomer"  # type: ignore[union-attr]
        assert store.team_of_token("shared-token") is not None, "the shared token stopped working"
        session = store.new_session("old", False, store.member("old", "Newcomer").id)  # type: ignore[union-attr]
        assert store.session(session) == ("old", False, "Newcomer")
        store.revoke_member("old", "Newcomer")
        assert store.session(session) is None, "a revoked member's session lived on"
    finally:
        store.close()
