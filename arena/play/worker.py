"""Run a CPU-bound job of the table (a comparison, a hint) in a process of its own.

A process, not a thread: the bots' search is CPU-bound and would hold up the
table's event loop (the person's clicks, the referee); not a multiprocessing
pool: that would run the CLI's main module again in the worker.  The worker is
``python -m MODULE``: one job as JSON on stdin, its result as JSON on stdout
(:func:`worker_main`), at a lower priority than the table.
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
from collections.abc import Callable
from typing import Any


async def run_job(module: str, job: dict[str, Any], timeout: float) -> dict[str, Any]:
    """Run ``python -m MODULE`` with ``job`` on stdin; its JSON answer.

    Raises ``RuntimeError`` with the worker's last line of errors when it fails,
    ``TimeoutError`` past ``timeout`` seconds (the process is killed).
    """
    process = await asyncio.create_subprocess_exec(
        sys.executable, "-m", module,
        stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE,
    )  # fmt: skip
    try:
        out, err = await asyncio.wait_for(process.communicate(json.dumps(job).encode()), timeout)
    except BaseException:
        if process.returncode is None:
            process.kill()
            await process.wait()
        raise
    if process.returncode != 0:
        last = (err.decode(errors="replace").strip().splitlines() or ["no output"])[-1]
        raise RuntimeError(f"the worker failed: {last[:200]}")
    answer = json.loads(out)
    if not isinstance(answer, dict):
        raise RuntimeError("the worker's answer is not an object")
    return answer


def worker_main(work: Callable[[dict[str, Any]], dict[str, Any]]) -> int:
    """A worker's ``main``: one job (JSON on stdin) in, ``work(job)`` out (JSON on stdout)."""
    with_nice = getattr(os, "nice", None)
    if with_nice is not None:
        with_nice(5)  # behind the table's own processes: the person's game stays quick
    job = json.loads(sys.stdin.read())
    sys.stdout.write(json.dumps(work(job)))
    return 0


__all__ = ["run_job", "worker_main"]
