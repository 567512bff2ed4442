"""Keeping secrets out of everything Podium writes or prints.

API keys live in the host process's environment (or a variable the config names). Provider
error messages sometimes echo the key they were sent, and a plugin's message may contain
anything, so every model error, log line and CLI error passes through :func:`redact` on its way
out. It masks the values of environment variables whose names say they hold a secret.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable, Mapping

SECRET_NAME = re.compile(r"KEY|TOKEN|SECRET|PASSWORD|PASSWD|CREDENTIAL", re.IGNORECASE)
MIN_SECRET_CHARS = 8  # shorter values ("1", "true") would mask ordinary words
MASK = "***"


def secret_values(environ: Mapping[str, str] | None = None) -> list[str]:
    """Values of secret-looking variables, longest first (so no secret is masked half-way)."""
    env = os.environ if environ is None else environ
    found = {v for k, v in env.items() if SECRET_NAME.search(k) and len(v) >= MIN_SECRET_CHARS}
    return sorted(found, key=len, reverse=True)


def redact(text: str, secrets: Iterable[str] | None = None) -> str:
    """``text`` with every secret (default: from the environment) replaced by ``***``."""
    for secret in secret_values() if secrets is None else secrets:
        if secret and secret in text:
            text = text.replace(secret, MASK)
    return text
