"""The suite on parallel workers (tests/parallel.py): modules dealt whole and longest first, alone tests alone.

A real pytest with workers in a subprocess, on a folder of small tests that
log when each began and ended and on which worker; only that log is looked
at.  And images built once per run (``docker_support.build_once``) on the
real engine.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent

LOGGED = '''
import json
import os
import time
from pathlib import Path

import pytest

LOG = Path(__file__).with_name("log.jsonl")


@pytest.fixture(autouse=True)
def logged(request):
    began = time.time()
    time.sleep(0.3)
    yield
    line = {"test": request.node.nodeid, "worker": os.environ.get("PYTEST_XDIST_WORKER"), "began": began,
            "ended": time.time()}
    with LOG.open("a") as log:
        log.write(json.dumps(line) + "\\n")
'''

#: Written (and collected) in an order other than the longest-first one the scheduler must deal them in.
MODULES = {
    "test_light.py": LOGGED + "\n\ndef test_one():\n    pass\n\n\ndef test_two():\n    pass\n",
    "test_middle.py": LOGGED + (
        "\n\ndef test_one():\n    pass\n\n\n@pytest.mark.alone('measures the machine')\ndef test_measures():\n    pass\n"
        "\n\ndef test_two():\n    pass\n"
    ),
    "test_loads.py": LOGGED.replace("import pytest\n", "import pytest\n\npytestmark = pytest.mark.alone('loads the machine')\n")
    + "\n\ndef test_one():\n    pass\n\n\ndef test_two():\n    pass\n",
    "test_heavy.py": LOGGED + "\n\ndef test_one():\n    pass\n\n\ndef test_two():\n    pass\n\n\ndef test_three():\n    pass\n",
}
SECONDS = {"test_light.py": 1.0, "test_heavy.py": 100.0, "test_middle.py": 50.0, "test_loads.py": 500.0}


def _run(folder: Path, workers: str) -> list[dict]:
    (folder / "conftest.py").write_text('pytest_plugins = ["parallel"]\n')
    for name, text in MODULES.items():
        (folder / name).write_text(text)
    (folder / "seconds.json").write_text(json.dumps(SECONDS))
    env = {**os.environ, "PYTHONPATH": str(HERE), "ARENA_TEST_MODULE_SECONDS": str(folder / "seconds.json")}
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-n", workers, str(folder)],
        cwd=folder, capture_output=True, text=True, timeout=600, env=env, check=False,
    )  # fmt: skip
    assert done.returncode == 0 and "10 passed" in done.stdout, done.stdout + done.stderr
    return [json.loads(line) for line in (folder / "log.jsonl").read_text().splitlines()]


ALONE = {"test_middle.py::test_measures", "test_loads.py::test_one", "test_loads.py::test_two"}


def test_one_worker_takes_the_modules_longest_first_and_the_alone_tests_last(tmp_path: Path):
    log = sorted(_run(tmp_path, "1"), key=lambda line: line["began"])
    order = [line["test"] for line in log]
    shared = [t for t in order if t not in ALONE]
    assert [t.split("::")[0] for t in shared] == ["test_heavy.py"] * 3 + ["test_middle.py"] * 2 + ["test_light.py"] * 2
    assert set(order[-3:]) == ALONE, order


def test_on_two_workers_modules_stay_whole_and_an_alone_test_has_the_machine_to_itself(tmp_path: Path):
    log = _run(tmp_path, "2")
    assert len(log) == 10 and len({line["worker"] for line in log}) == 2, log
    for module in ("test_light.py", "test_heavy.py"):
        assert len({line["worker"] for line in log if line["test"].startswith(module)}) == 1, "a module on one worker"
    for alone in (line for line in log if line["test"] in ALONE):
        beside = [o["test"] for o in log if o is not alone and o["began"] < alone["ended"] and alone["began"] < o["ended"]]
        assert beside == [], f"{alone['test']} ran beside {beside}"
    last_shared = max(line["ended"] for line in log if line["test"] not in ALONE)
    assert all(line["began"] >= last_shared for line in log if line["test"] in ALONE)


@pytest.mark.docker
def test_an_image_is_built_once_per_run_and_again_when_its_tag_moved():
    import io

    from docker_support import BASE_IMAGE, TEST_RUN, build_once, engine_or_skip

    client = engine_or_skip("build_once")
    tag = f"arena-build-once:{TEST_RUN}"
    builds: list[str] = []

    def build(label: str = "first") -> None:
        dockerfile = f"FROM {BASE_IMAGE}\nLABEL arena.build-once={label}-{TEST_RUN}\n"
        client.images.build(fileobj=io.BytesIO(dockerfile.encode()), tag=tag, rm=True, network_mode="none")
        builds.append(label)

    try:
        assert build_once(client, tag, build) == tag and build_once(client, tag, build) == tag
        assert builds == ["first"], "the second caller found it built"
        build("moved")  # a test rebuilt the tag as something else: the next caller builds it again
        build_once(client, tag, build)
        assert builds == ["first", "moved", "first"]
        client.images.remove(tag, force=True)
        build_once(client, tag, build)
        assert builds[-1] == "first" and client.images.get(tag).labels["arena.build-once"] == f"first-{TEST_RUN}"
    finally:
        for image in client.images.list(name=tag.split(":")[0]):
            client.images.remove(image.id, force=True)
        client.close()
