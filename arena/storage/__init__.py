"""One way to keep SQLite for every store of the arena: the results, the ladder's, the final evaluation's, the practice tables'.

:mod:`.sqlite` is the helper: per-thread connections (a connection shared by
two threads lets one thread's statements fall inside the other's transaction),
one write transaction (``BEGIN IMMEDIATE``, rolled back on any error), one
error for a write the disk refused (:class:`~arena.storage.sqlite.DiskFull`,
a :class:`~arena.storage.sqlite.StoreError`: a run stops with one line, the
site answers 503), and the schema with its migrations in one place (each
store declares its tables and the columns added since, the helper applies
them).  :mod:`.threads` closes a thread's connection when the thread ends.
The standard library only: every layer that keeps a store may import it.
"""
