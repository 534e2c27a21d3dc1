"""One object per thread (a SQLite connection, a store), closed when its thread ends.

SQLite connections must not be shared by threads that write (one thread's
statements would fall inside the other's transaction), so the stores keep one
per thread.  Thread pools end idle threads (Starlette's and trio's after 10 s)
and start new ones with the next burst of requests: an object kept until the
store closes would leak a file descriptor per thread ever started.  Each is
closed when its thread is gone (``weakref.finalize`` on the thread), or at
:meth:`PerThread.close_all`.
"""

from __future__ import annotations

import threading
import weakref
from collections.abc import Callable
from typing import Generic, TypeVar

T = TypeVar("T")


class PerThread(Generic[T]):
    """One ``T`` per thread, made by ``factory`` on first use, closed by ``close`` when its thread ends."""

    def __init__(self, factory: Callable[[], T], close: Callable[[T], None]) -> None:
        self._factory = factory
        self._close = close
        self._local = threading.local()
        self._open: dict[int, T] = {}
        self._lock = threading.Lock()

    def get(self) -> T:
        """The calling thread's object (made now if it has none)."""
        found: T | None = getattr(self._local, "value", None)
        if found is None:
            found = self._factory()
            self._local.value = found
            key = id(found)
            with self._lock:
                self._open[key] = found
            weakref.finalize(threading.current_thread(), self._release, key)
        return found

    def _release(self, key: int) -> None:
        with self._lock:
            found = self._open.pop(key, None)
        if found is not None:
            self._close(found)

    @property
    def open_count(self) -> int:
        """How many threads' objects are open now."""
        with self._lock:
            return len(self._open)

    def close_all(self) -> None:
        """Close every thread's object (no thread may be using one)."""
        with self._lock:
            found, self._open = list(self._open.values()), {}
        for value in found:
            self._close(value)
        self._local = threading.local()


__all__ = ["PerThread"]
