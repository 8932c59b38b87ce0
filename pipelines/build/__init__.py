"""``incoherent build``: ``command`` (the command), ``config`` (read and check the config), ``plan`` (the stages and
the output layout), ``execute`` (run them, resume an earlier build), ``resume`` / ``remote_resume``, ``processes``
(one process per stage), ``dry_run``."""
