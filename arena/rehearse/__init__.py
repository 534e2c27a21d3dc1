"""``arena ladder rehearse``: a simulated term played against a real ladder, compressed, and its audit.

One module a job:

- :mod:`~arena.rehearse.plan`: the course from its seed (teams of known strength, their uploads, the faults);
- :mod:`~arena.rehearse.bots`: each upload's archive (honest, broken and hostile bots, hostile archives);
- :mod:`~arena.rehearse.server`: the ladder directory and its ``arena ladder serve`` subprocess;
- :mod:`~arena.rehearse.teams`: uploads over the API and through the site's form;
- :mod:`~arena.rehearse.visitors`: readers of the site at a rate, and one slow client;
- :mod:`~arena.rehearse.faults`: kill -9, SIGTERM, the process group killed, the Docker daemon restarted;
- :mod:`~arena.rehearse.own_faults`, :mod:`~arena.rehearse.docker_host`: a Docker daemon and a small
  filesystem of our own (shared with the platform-fault tests);
- :mod:`~arena.rehearse.monitor`: what is sampled during the term;
- :mod:`~arena.rehearse.audit`, :mod:`~arena.rehearse.tau`: what is checked afterwards;
- :mod:`~arena.rehearse.report`: the console, JSON and HTML report;
- :mod:`~arena.rehearse.course`: one rehearsal, start to end.

See docs/ladder.md, "Rehearsing a term".
"""
