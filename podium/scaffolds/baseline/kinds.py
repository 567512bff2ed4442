"""One entry per kind of task: its recipe operators and its code writer, behind one shape.

``BaselineOperators`` looks up the kind ``analysis`` found and calls the same functions
whatever the kind; each kind keeps its choices in its own recipe module and writes its scripts
in its own codegen module. For ``ablate`` and ``refine`` a kind names the parts of a recipe
(``parts``), what a script costs (``seconds``, on one core) and the rows it fits on (``rows``:
training rows, images, documents or series, what a recipe's ``sample`` field cuts).
"""

from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

from podium.scaffolds.baseline import (
    image_codegen,
    image_recipe,
    series_codegen,
    series_recipe,
    tabular_codegen,
    tabular_recipe,
    text_codegen,
    text_recipe,
)
from podium.scaffolds.baseline.parts import Part
from podium.scaffolds.baseline.recipe_line import read_line
from podium.scaffolds.baseline.specs import ImageSpec, SeriesSpec, TabularSpec, TextSpec

S = TypeVar("S")
R = TypeVar("R")


@dataclass(frozen=True)
class Kind(Generic[S, R]):
    name: str
    load: Callable[[dict[str, Any]], R]  # a recipe from the fields of its recipe line
    draft: Callable[[S, int, random.Random], R]
    improve: Callable[[R, S, random.Random], tuple[R, str]]
    debug: Callable[[R | None, S], tuple[R, str]]
    crossover: Callable[[R, R, S], tuple[R, str] | None]
    render: Callable[[S, R], str]
    describe: Callable[[S, R], str]
    parts: Callable[[R, S], list[Part[R]]]
    seconds: Callable[[R, S], float]
    rows: Callable[[R, S], int]

    def read(self, code: str) -> R | None:
        """The recipe a solution of this kind carries; None for code written otherwise."""
        found = read_line(code)
        if found is None or found[0] != self.name:
            return None
        try:
            return self.load(found[1])
        except (ValueError, TypeError, KeyError):
            return None


KINDS: dict[str, Kind[Any, Any]] = {
    "tabular": Kind[TabularSpec, tabular_recipe.Recipe](
        "tabular", tabular_recipe.Recipe.from_fields, tabular_recipe.draft, tabular_recipe.improve,
        tabular_recipe.debug, tabular_recipe.crossover, tabular_codegen.render,
        tabular_codegen.describe, tabular_recipe.parts, tabular_recipe.seconds,
        tabular_recipe.fitted_rows,
    ),
    "image": Kind[ImageSpec, image_recipe.ImageRecipe](
        "image", image_recipe.ImageRecipe.from_fields, image_recipe.draft, image_recipe.improve,
        image_recipe.debug, image_recipe.crossover, image_codegen.render, image_codegen.describe,
        image_recipe.parts, image_recipe.seconds, image_recipe.fitted_rows,
    ),
    "text": Kind[TextSpec, text_recipe.TextRecipe](
        "text", text_recipe.TextRecipe.from_fields, text_recipe.draft, text_recipe.improve,
        text_recipe.debug, text_recipe.crossover, text_codegen.render, text_codegen.describe,
        text_recipe.parts, text_recipe.seconds, text_recipe.fitted_rows,
    ),
    "series": Kind[SeriesSpec, series_recipe.SeriesRecipe](
        "series", series_recipe.SeriesRecipe.from_fields, series_recipe.draft,
        series_recipe.improve, series_recipe.debug, series_recipe.crossover,
        series_codegen.render, series_codegen.describe, series_recipe.parts,
        series_recipe.seconds, series_recipe.fitted_series,
    ),
}  # fmt: skip
