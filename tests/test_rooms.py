"""Each room's public interface (its ``__init__.pyi``, loaded lazily) names only what is there:
a name the stub promises but the module lacks would fail only when first used."""

from __future__ import annotations

import importlib

import pytest

from tests.test_layers import PACKAGE

LAZY_ROOMS = sorted(
    ".".join(stub.parent.relative_to(PACKAGE.parent).parts)
    for stub in PACKAGE.rglob("__init__.pyi")
)


def test_the_rooms_load_lazily() -> None:
    assert {"podium.formats", "podium.scaffolds", "podium.sandbox", "podium.viewer"} <= set(
        LAZY_ROOMS
    )


@pytest.mark.parametrize("room", LAZY_ROOMS)
def test_every_name_a_room_offers_is_there(room: str) -> None:
    module = importlib.import_module(room)
    assert module.__all__
    for name in module.__all__:
        assert getattr(module, name) is not None, f"{room}.{name}"
