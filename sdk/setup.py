"""Build of arena-sdk: the metadata is in pyproject.toml; this file adds the compiled core.

``arena_sdk.engine._core`` is compiled from Cython (a build requirement in
pyproject.toml) with the system's C compiler.  It is optional: where it
cannot be built (no compiler, a failing one) the install goes on without it
and the engine runs on its pure-Python core (see arena_sdk/engine/core.py).
``ARENA_SDK_PURE_BUILD=1`` builds without it on purpose (a wheel that any
Python 3.11+ can install).
"""

import os

from setuptools import Extension, setup


def _extensions() -> list[Extension]:
    if os.environ.get("ARENA_SDK_PURE_BUILD", "").strip() in ("1", "true", "yes"):
        return []
    return [
        Extension(
            "arena_sdk.engine._core",
            ["arena_sdk/engine/_core.pyx"],
            depends=["arena_sdk/engine/_core_c.h"],
            include_dirs=["arena_sdk/engine"],
            extra_compile_args=["-O2", "-g0"],
            optional=True,
        )
    ]


setup(ext_modules=_extensions())
