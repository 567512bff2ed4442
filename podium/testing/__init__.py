"""Fake OpenAI and Anthropic servers for tests: real HTTP on 127.0.0.1, real wire formats,
schema checks and fault injection, so the real ``openai`` / ``anthropic`` / ``litellm``
clients run end to end and raise their real exceptions.

    with FakeOpenAI() as fake:
        fake.queue(Reply.tool_call("submit", {"path": "a.csv"}), Reply.rate_limited(2))
        client = openai.OpenAI(base_url=fake.url, api_key=fake.api_key, max_retries=0)
        ...
        assert not fake.problems

In pytest, ``pytest_plugins = ["podium.testing.fixtures"]`` offers the fixtures
``fake_openai`` and ``fake_anthropic``. :mod:`podium.testing.scripted` writes files for the
``scripted:`` model. This package imports nothing else from podium.

The names are in ``__init__.pyi`` and load on first use.
"""

import lazy_loader

__getattr__, __dir__, __all__ = lazy_loader.attach_stub(__name__, __file__)
