"""A rehearsal's course, drawn from its seed: teams of known strength, their uploads, the faults.

Everything here is a pure function of ``(seed, teams, faults)``: the same
seed gives the same course, upload for upload and fault for fault (times are
fractions of the term, so a course compressed into 3 minutes or an hour is
the same course).  The true strength of a team is the strength of the honest
version it ends the term with; the standings are scored against that order.
"""

from __future__ import annotations

import dataclasses
import random

from arena.rehearse.bots import BASES, BROKEN_KINDS, HONEST, HOSTILE_KINDS

#: Hostile kinds refused before a version exists (HTTP 4xx): the archive itself is the attack.
REFUSED_KINDS = ("deep-archive", "archive-bomb")
#: Hostile kinds whose build fails (timed out) or is capped.
BUILD_KINDS = ("build-forever", "log-flood")
#: Fault kinds a course may schedule.
FAULT_KINDS = ("kill", "term", "kill-group")
#: With a Docker daemon of the rehearsal's own, its restart joins them.
DOCKER_FAULT = "docker-restart"
#: With the ladder directory on a filesystem of the rehearsal's own, a full disk joins them.
DISK_FAULT = "disk-full"


@dataclasses.dataclass(frozen=True)
class Upload:
    """One upload of a team: when (fraction of the term), what, and through which door."""

    at: float
    kind: str
    base: str = "random"
    p: float = 0.0
    at_hand: int = 1
    via: str = "api"  # "api" (Bearer token) or "form" (the site's sign-in and upload form)

    @property
    def strength(self) -> float:
        """The bot's true strength: its base's rank, less the share it plays at random."""
        return strength(self.base, self.p)

    @property
    def hostile(self) -> bool:
        return self.kind in HOSTILE_KINDS

    @property
    def broken(self) -> bool:
        return self.kind in BROKEN_KINDS


@dataclasses.dataclass(frozen=True)
class TeamPlan:
    """A team and its uploads over the term, in order."""

    name: str
    uploads: tuple[Upload, ...]

    @property
    def final_honest(self) -> Upload:
        """The last honest upload: what the team's standing should reflect at the end."""
        return [u for u in self.uploads if u.kind == HONEST][-1]

    @property
    def strength(self) -> float:
        return self.final_honest.strength


@dataclasses.dataclass(frozen=True)
class Fault:
    """A platform fault at a moment of the term (fraction), followed by the organiser's restart."""

    at: float
    kind: str


@dataclasses.dataclass(frozen=True)
class Plan:
    """The whole course."""

    seed: int
    teams: tuple[TeamPlan, ...]
    faults: tuple[Fault, ...]

    def uploads(self) -> list[tuple[float, str, Upload]]:
        """Every upload as ``(at, team, upload)``, in time order (ties by team name)."""
        return sorted(
            ((u.at, t.name, u) for t in self.teams for u in t.uploads), key=lambda x: (x[0], x[1])
        )

    def true_order(self) -> list[str]:
        """Team names, strongest first (the order the final standings should recover)."""
        return [t.name for t in sorted(self.teams, key=lambda t: (-t.strength, t.name))]


def strength(base: str, p: float) -> float:
    """The strength a rehearsal assigns to a bot: its base's rank (0 = random) times (1 - p)."""
    return round(BASES.index(base) * (1.0 - p), 6)


def make_plan(
    seed: int,
    teams: int,
    *,
    faults: bool = True,
    hostile: int | None = None,
    fault_count: int | None = None,
    docker_faults: bool = False,
    disk_faults: bool = False,
) -> Plan:
    """The course of ``teams`` teams drawn from ``seed``.

    Each team uploads a first honest version early in the term (first a few
    through the site's form, the rest over the API); about a third upload a
    better version later, a few upload a broken one between; ``hostile``
    teams (default: one in five, at least two) also send a hostile upload,
    the kinds taken in turn so a short course still meets several.  With
    ``faults`` the course has ``fault_count`` platform faults (default: one
    per 10 teams, at least two), kill -9, SIGTERM and kill -9 of the whole
    process group in turn (and a restart of the rehearsal's own Docker
    daemon with ``docker_faults``, the ladder's disk full with
    ``disk_faults``), spread over the middle of the term.  With either of
    those the default count is at least three more than the kinds, so every
    kind strikes and the kills reach a pair, a validation and a build.
    """
    if teams < 2:
        raise ValueError("a rehearsal needs at least 2 teams")
    rng = random.Random(seed)
    hostile = max(2, teams // 5) if hostile is None else hostile
    hostile_kinds = list(HOSTILE_KINDS)
    rng.shuffle(hostile_kinds)
    # (One generator, drawn from in this order: the same seed gives the same course.)
    plans = [_team_plan(rng, index, teams, hostile, hostile_kinds) for index in range(teams)]
    scheduled: list[Fault] = []
    if faults:
        scheduled = _faults(rng, teams, fault_count, docker_faults=docker_faults, disk_faults=disk_faults)
    return Plan(seed=seed, teams=tuple(plans), faults=tuple(scheduled))


def _team_plan(rng: random.Random, index: int, teams: int, hostile: int, hostile_kinds: list[str]) -> TeamPlan:
    """Team ``index``'s uploads (see :func:`make_plan`)."""
    name = f"team-{index + 1:02d}"
    base = (
        BASES[1 + index % (len(BASES) - 1)] if index else "random"
    )  # one pure random team, the rest graded
    p = rng.choice((0.0, 0.25, 0.5, 0.75))
    first = Upload(
        at=round(rng.uniform(0.0, 0.1), 4),
        kind=HONEST,
        base=base,
        p=p,
        via="form" if index % 4 == 1 else "api",
    )
    uploads = [first]
    if rng.random() < 0.25:  # a broken version: it passes validation, then breaks in play
        uploads.append(
            Upload(
                at=round(rng.uniform(0.15, 0.45), 4),
                kind=rng.choice(BROKEN_KINDS),
                base=base,
                p=p,
                at_hand=1,
            )
        )
    if rng.random() < 0.35 and p > 0:  # a better version later in the term
        uploads.append(
            Upload(
                at=round(rng.uniform(0.3, 0.6), 4), kind=HONEST, base=base, p=round(p - 0.25, 2)
            )
        )
    if index >= teams - hostile:
        kind = hostile_kinds[(teams - 1 - index) % len(hostile_kinds)]
        # It plays as the team's first version does (a hostile seat that is contained changes no strength).
        uploads.append(Upload(at=round(rng.uniform(0.12, 0.5), 4), kind=kind, base=base, p=p))
    return TeamPlan(name, tuple(sorted(uploads, key=lambda u: u.at)))


def _faults(
    rng: random.Random, teams: int, fault_count: int | None, *, docker_faults: bool, disk_faults: bool
) -> list[Fault]:
    """The platform faults of a course of ``teams`` teams (see :func:`make_plan`)."""
    kinds = (
        *FAULT_KINDS,
        *((DOCKER_FAULT,) if docker_faults else ()),
        *((DISK_FAULT,) if disk_faults else ()),
    )
    count = max(2, teams // 10) if fault_count is None else fault_count
    if fault_count is None and len(kinds) > len(FAULT_KINDS):
        count = max(count, len(kinds) + 3)
    moments = sorted(rng.uniform(0.2, 0.8) for _ in range(count))
    return [Fault(at=round(at, 4), kind=kinds[i % len(kinds)]) for i, at in enumerate(moments)]


__all__ = [
    "BUILD_KINDS",
    "DISK_FAULT",
    "DOCKER_FAULT",
    "FAULT_KINDS",
    "REFUSED_KINDS",
    "Fault",
    "Plan",
    "TeamPlan",
    "Upload",
    "make_plan",
    "strength",
]
