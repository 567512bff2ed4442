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
"""

from podium.testing.fake_anthropic import FakeAnthropic
from podium.testing.fake_openai import FakeOpenAI
from podium.testing.fake_server import FakeServer, Received, Responder
from podium.testing.replies import Reply
from podium.testing.scripted import (
    cell_call,
    code_answer,
    finish_call,
    node_answers,
    review_answer,
    write_script,
)

__all__ = [
    "FakeAnthropic",
    "FakeOpenAI",
    "FakeServer",
    "Received",
    "Reply",
    "Responder",
    "cell_call",
    "code_answer",
    "finish_call",
    "node_answers",
    "review_answer",
    "write_script",
]
