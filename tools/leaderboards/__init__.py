"""The bundled tasks' leaderboards: one script per task, run as
``.venv/bin/python -m tools.leaderboards.<task>`` (see ``builder``)."""
