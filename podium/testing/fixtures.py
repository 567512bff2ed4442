"""A pytest plugin with a started fake per test: ``fake_openai`` and ``fake_anthropic``.

Enable it with ``pytest_plugins = ["podium.testing.fixtures"]`` in a conftest.py. Each fixture
takes constructor options through indirect parametrization::

    @pytest.mark.parametrize("fake_openai", [{"models": ["gpt-4.1"]}], indirect=True)
    def test_unknown_model(fake_openai: FakeOpenAI) -> None: ...

The only module of ``podium.testing`` that imports pytest.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from podium.testing.fake_anthropic import FakeAnthropic
from podium.testing.fake_openai import FakeOpenAI


def _options(request: pytest.FixtureRequest) -> dict[str, Any]:
    return dict(getattr(request, "param", None) or {})


@pytest.fixture
def fake_openai(request: pytest.FixtureRequest) -> Iterator[FakeOpenAI]:
    """A running :class:`FakeOpenAI`, stopped after the test."""
    with FakeOpenAI(**_options(request)) as fake:
        yield fake


@pytest.fixture
def fake_anthropic(request: pytest.FixtureRequest) -> Iterator[FakeAnthropic]:
    """A running :class:`FakeAnthropic`, stopped after the test."""
    with FakeAnthropic(**_options(request)) as fake:
        yield fake
