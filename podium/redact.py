"""Keeping secrets out of everything Podium writes or prints.

A secret is known to Podium in one of two ways:

- **By value, registered where it is read.** Every key Podium reads goes through
  :func:`secret_env` (or :func:`register_secret`) the moment it is read: the builtin backends'
  variables, the one named by ``model.api_key_env`` (whatever its name), the variables a plugin
  backend declares (``BackendSpec.secret_env``), credentials written into a base URL
  (:func:`register_url_credentials`). The registry lives as long as the process.
- **By name, as a safety net.** Values of environment variables whose names look secret
  (``*_API_KEY``, ``*_TOKEN``...), for keys third-party code reads by itself (litellm reads
  ``GEMINI_API_KEY`` on its own).

:func:`redact` masks both, always. Text leaves Podium through a few owners, each of which
passes it through :func:`redact`: the :class:`podium.plugins.ModelGateway` for everything a model
call returns or raises (so the journal, ``summary.json`` and the exports built from them hold
masked text), the CLI's log handler and error printer for the terminal.

Values shorter than :data:`MIN_SECRET_CHARS` are never treated as secrets: masking ``none`` or
``1`` would garble ordinary words, and a value that short protects nothing anyway.
"""

from __future__ import annotations

import base64
import os
import re
import threading
from collections.abc import Iterable, Mapping
from typing import Any
from urllib.parse import parse_qsl, quote, unquote, urlsplit

from podium.exec_output import OMITTED

SECRET_NAME = re.compile(r"KEY|TOKEN|SECRET|PASSWORD|PASSWD|CREDENTIAL", re.IGNORECASE)
MIN_SECRET_CHARS = 8  # shorter values ("1", "true") would mask ordinary words
MIN_FRAGMENT_CHARS = 6  # a secret's piece at a cut of an output: masked from this long
MASK = "***"

_registered: frozenset[str] = frozenset()  # replaced whole, so readers never need the lock
_lock = threading.Lock()


def register_secret(value: str | None) -> None:
    """Mask ``value`` in everything :func:`redact` sees from now on, in this process.

    Its percent-encoded form is registered too (a key in a URL's query travels that way).
    Empty and short values (< :data:`MIN_SECRET_CHARS`) are ignored.
    """
    global _registered
    if not value or len(value.strip()) < MIN_SECRET_CHARS:
        return
    forms = {value, value.strip(), quote(value, safe="")}
    with _lock:
        _registered = _registered | forms


def secret_env(name: str | None) -> str | None:
    """The value of the environment variable ``name`` (None when unset or empty), registered
    as a secret before it is returned: the way to read a key, for Podium and for plugins."""
    value = os.environ.get(name) if name else None
    register_secret(value)
    return value or None


def register_url_credentials(url: str | None) -> None:
    """Register the credentials a URL carries: ``user:password@``, the Basic-auth header made
    of them, and query parameters whose names look secret (``?key=...``, ``?api_key=...``)."""
    if not url:
        return
    try:
        parts = urlsplit(url)
        user, password = parts.username, parts.password
    except ValueError:  # not a URL at all: nothing in it is known to be a credential
        return
    for part in (user, password):
        if part:
            register_secret(part)
            register_secret(unquote(part))
    if user and password:
        pair = f"{unquote(user)}:{unquote(password)}"
        register_secret(base64.b64encode(pair.encode()).decode())
    for name, value in parse_qsl(parts.query, keep_blank_values=False):
        if SECRET_NAME.search(name) or name.lower() in ("sig", "signature"):
            register_secret(value)


def registered_secrets() -> frozenset[str]:
    """Every value registered so far (for tests and diagnostics: never print them)."""
    return _registered


def secret_values(environ: Mapping[str, str] | None = None) -> list[str]:
    """Every secret to mask: the registered values and the values of secret-looking variables,
    longest first (so no secret is masked half-way by a shorter one inside it)."""
    env = os.environ if environ is None else environ
    found = {v for k, v in env.items() if SECRET_NAME.search(k) and len(v) >= MIN_SECRET_CHARS}
    return sorted(found | _registered, key=len, reverse=True)


def redact(text: str, secrets: Iterable[str] | None = None) -> str:
    """``text`` with every secret (default: :func:`secret_values`) replaced by ``***``."""
    for secret in secret_values() if secrets is None else secrets:
        if secret and secret in text:
            text = text.replace(secret, MASK)
    return text


def redact_output(text: str, secrets: Iterable[str] | None = None) -> str:
    """:func:`redact` for a solution's recorded output, which is cut: its head and tail are
    kept around a marker (``exec_output.OMITTED``), and while it runs it ends wherever the
    solution has got to. A secret cut there is in two pieces, neither of which is the secret:
    the piece that ends a part before a cut (or the output so far) and begins a secret, and
    the piece that begins a part after a cut and ends a secret, are masked too, when at least
    :data:`MIN_FRAGMENT_CHARS` long (shorter pieces are ordinary text, and protect little)."""
    known = secret_values() if secrets is None else list(secrets)
    text = redact(text, known)
    if not known:
        return text
    parts, last = [], 0
    for match in OMITTED.finditer(text):
        parts.append(_mask_edges(text[last : match.start()], known, head=last > 0, tail=True))
        parts.append(match.group())
        last = match.end()
    parts.append(_mask_edges(text[last:], known, head=last > 0, tail=True))
    return "".join(parts)


def _mask_edges(part: str, secrets: list[str], *, head: bool, tail: bool) -> str:
    """``part`` with a secret's last piece masked at its start (``head``: a cut before it) and
    a secret's first piece masked at its end (``tail``: a cut, or the end, after it)."""
    if head and (k := _longest(secrets, lambda s, n: part.startswith(s[-n:]), len(part))):
        part = MASK + part[k:]
    if tail and (k := _longest(secrets, lambda s, n: part.endswith(s[:n]), len(part))):
        part = part[:-k] + MASK
    return part


def _longest(secrets: list[str], fits: Any, room: int) -> int:
    """The longest length n >= MIN_FRAGMENT_CHARS (and < the secret's) for which ``fits``."""
    best = 0
    for secret in secrets:
        for n in range(min(len(secret) - 1, room), max(best, MIN_FRAGMENT_CHARS - 1), -1):
            if fits(secret, n):
                best = n
                break
    return best


def redact_data(value: Any, secrets: Iterable[str] | None = None) -> Any:
    """``value`` (JSON-like: dicts, lists, strings...) with :func:`redact` applied to every
    string in it, keys included; other values are kept as they are."""
    known = secret_values() if secrets is None else list(secrets)
    if isinstance(value, str):
        return redact(value, known)
    if isinstance(value, Mapping):
        return {redact_data(k, known): redact_data(v, known) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return type(value)(redact_data(v, known) for v in value)
    return value
