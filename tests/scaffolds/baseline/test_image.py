"""The baseline on an image-classification layout (mini/mnist-5k's): PNGs in ``train/`` and
``test/`` named by id, labels in ``train.csv``, no test table (the sample's ids are the test
images). Tiny 8x8 digits; the generated solutions run in this process."""

from __future__ import annotations

import random
import zipfile
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from podium.scaffolds.baseline import image_recipe
from podium.scaffolds.baseline.analysis import analyse
from podium.scaffolds.baseline.image_codegen import render
from podium.scaffolds.baseline.kinds import KINDS
from podium.scaffolds.baseline.specs import ImageSpec, TabularSpec, Unsupported
from tests.scaffolds.baseline import synthetic
from tests.scaffolds.baseline.synthetic import SyntheticTask

read = KINDS["image"].read


@pytest.fixture(scope="module")
def task(tmp_path_factory: pytest.TempPathFactory) -> SyntheticTask:
    return synthetic.digits(tmp_path_factory.mktemp("digits"))


@pytest.fixture(scope="module")
def spec(task: SyntheticTask) -> ImageSpec:
    return synthetic.spec_of(task, ImageSpec)


def test_the_layout_is_read_from_the_folders(spec: ImageSpec) -> None:
    assert (spec.train_dir, spec.test_dir, spec.suffix) == ("train", "test", ".png")
    assert (spec.id_col, spec.target, spec.mode, spec.size) == ("id", "label", "L", (8, 8))
    assert (spec.scoring, spec.prediction, spec.classes, spec.rows) == ("accuracy", "label", 3, 70)


def test_the_drafts_try_every_family_and_each_one_runs(task: SyntheticTask, tmp_path: Path) -> None:
    made = synthetic.drafts(task, 5)
    families = [r.family for r in map(read, (p.code for p in made)) if r]
    assert families == ["logistic", "knn", "random_forest", "svc", "mlp"]
    for i, proposal in enumerate(made):
        assert synthetic.run(proposal.code, task, tmp_path / str(i)) > 0.8  # easy digits
    written = pd.read_csv(tmp_path / "0" / "submission" / "submission.csv")
    assert set(written["label"]) <= {0, 1, 2}


def test_improve_changes_one_choice(task: SyntheticTask, spec: ImageSpec, tmp_path: Path) -> None:
    parent = image_recipe.draft(spec, 1, random.Random(0))
    seen = set()
    for seed in range(6):
        child = synthetic.improve_child(task, render(spec, parent), seed)
        after = read(child.code)
        assert after is not None
        changed = synthetic.changed_fields(parent, after)
        assert synthetic.one_choice(changed), changed
        seen.add(changed[0])
    assert len(seen) >= 2  # tuning, PCA, standardisation or the model
    synthetic.run(child.code, task, tmp_path)


def test_debug_falls_back_to_a_linear_model_on_few_components_then_a_constant(
    task: SyntheticTask, spec: ImageSpec, tmp_path: Path
) -> None:
    fixed = synthetic.debug_child(task)
    simple = read(fixed.code)
    assert simple is not None and (simple.family, simple.pca) == ("logistic", 30)
    synthetic.run(fixed.code, task, tmp_path / "simple")
    constant, why = image_recipe.debug(simple, spec)
    assert constant.family == "dummy" and "constant" in why
    synthetic.run(render(spec, constant), task, tmp_path / "constant")


def test_crossover_takes_the_pixel_handling_from_the_other_parent(
    task: SyntheticTask, spec: ImageSpec, tmp_path: Path
) -> None:
    fitter = image_recipe.ImageRecipe("svc", {"C": 5.0, "gamma": "scale"}, pca=50)
    other = image_recipe.ImageRecipe("knn", {"n_neighbors": 5}, pca=0, standardize=True)
    child, recipe = synthetic.crossover_child(task, render(spec, fitter), render(spec, other), read)
    assert recipe == image_recipe.ImageRecipe("svc", fitter.params, pca=0, standardize=True)
    synthetic.run(child.code, task, tmp_path)
    assert image_recipe.crossover(fitter, fitter, spec) is None


def test_rgb_images_larger_than_the_cap_are_shrunk(tmp_path: Path) -> None:
    from PIL import Image

    public = tmp_path / "public"
    for folder in ("train", "test"):
        (public / folder).mkdir(parents=True)
    rng = np.random.default_rng(0)
    ids = [f"{i}.jpg" for i in range(12)]  # ids that already carry the extension
    for i, name in enumerate(ids):
        red = 200 if i % 2 else 30
        pixels = np.full((64, 48, 3), red, np.uint8) + rng.integers(0, 20, (64, 48, 3), np.uint8)
        Image.fromarray(pixels, mode="RGB").save(public / ("train" if i < 8 else "test") / name)
    pd.DataFrame({"image": ids[:8], "red": [i % 2 for i in range(8)]}).to_csv(
        public / "train.csv", index=False
    )
    sample = pd.DataFrame({"image": ids[8:], "red": 0.5})
    sample.to_csv(public / "sample_submission.csv", index=False)
    task = SyntheticTask("rgb", "rgb", "", public, False, "auc")
    spec = analyse(public, "auc")
    assert isinstance(spec, ImageSpec)
    assert (spec.mode, spec.size, spec.suffix, spec.prediction) == ("RGB", (24, 32), "", "proba")
    recipe = image_recipe.ImageRecipe("logistic", {"C": 1.0}, pca=0)
    assert synthetic.run(render(spec, recipe), task, tmp_path / "run") >= 0.5


# --- where the images are: MLE-bench's public folders (issue 39) ---------------------------


@pytest.fixture(scope="module")
def laid_out(tmp_path_factory: pytest.TempPathFactory) -> dict[str, SyntheticTask]:
    return {
        name: make(tmp_path_factory.mktemp(name))
        for name, make in synthetic.IMAGE_LAYOUT_MAKERS.items()
    }


def test_images_are_found_by_their_ids_wherever_they_lie(
    laid_out: dict[str, SyntheticTask],
) -> None:
    """siim-isic's JPEGs in jpeg/train and jpeg/test (its train/ and test/ hold DICOMs),
    plant-pathology's one images/ folder for both sets; the sample zipped or not."""
    melanoma = synthetic.spec_of(laid_out["melanoma"], ImageSpec)
    assert (melanoma.train_dir, melanoma.test_dir, melanoma.suffix) == (
        "jpeg/train", "jpeg/test", ".jpg",
    )  # fmt: skip
    assert (melanoma.id_col, melanoma.target, melanoma.prediction) == (
        "image_name", "target", "proba",
    )  # fmt: skip
    for name in ("plant_images", "zipped_sample"):
        plant = synthetic.spec_of(laid_out[name], ImageSpec)
        assert (plant.train_dir, plant.test_dir, plant.suffix, plant.zipped) == (
            "images", "images", ".jpg", False,
        )  # fmt: skip
        assert (plant.id_col, plant.target, plant.rows, plant.mode) == (
            "image_id", "healthy", 60, "RGB",
        )  # fmt: skip
    assert synthetic.spec_of(laid_out["zipped_sample"], ImageSpec).sample_file == (
        "sample_submission.csv.zip"
    )


@pytest.mark.parametrize("name", tuple(synthetic.IMAGE_LAYOUT_MAKERS))
def test_the_first_draft_of_each_layout_runs_and_submits_the_samples_rows(
    name: str, laid_out: dict[str, SyntheticTask], tmp_path: Path
) -> None:
    task = laid_out[name]
    metric, submission, sample = synthetic.first_draft(task, tmp_path)
    assert metric > 0.65, metric  # a dark blob is easy to see
    assert submission.iloc[:, 0].tolist() == sample.iloc[:, 0].tolist()
    assert submission.iloc[:, 1].between(0, 1).all() and submission.iloc[:, 1].nunique() > 1


def test_an_archive_extracted_beside_itself_is_read_from_the_folder(tmp_path: Path) -> None:
    """aerial-cactus' zips, unzipped next to themselves: each image lies twice, the folder's
    copy is read (the zips alone: the archives, as before)."""
    task = synthetic.cactus(tmp_path)
    for part in ("train", "test"):
        with zipfile.ZipFile(task.public_dir / f"{part}.zip") as archive:
            archive.extractall(task.public_dir)
    spec = synthetic.spec_of(task, ImageSpec)
    assert (spec.train_dir, spec.test_dir, spec.zipped, spec.suffix) == ("train", "test", False, "")


def test_images_beside_a_wide_test_table_are_extras_of_a_table_task(tmp_path: Path) -> None:
    """leaf-classification's images/ holds every leaf, named by id, but its tables hold 192
    features measured on them: a table task."""
    task = synthetic.leaf(tmp_path, per_class=5, classes=10)
    (task.public_dir / "images").mkdir()
    ids = pd.concat([pd.read_csv(task.public_dir / t)["id"] for t in ("train.csv", "test.csv")])
    pixels = np.zeros((8, 8, 3), np.uint8)
    for i in ids:
        (task.public_dir / "images" / f"{i}.jpg").write_bytes(synthetic._jpeg(pixels))
    assert isinstance(analyse(task.public_dir, task.metric_name), TabularSpec)


def _refusal(task: SyntheticTask) -> str:
    with pytest.raises(Unsupported) as caught:
        analyse(task.public_dir, task.metric_name)
    said = str(caught.value)
    assert "\n" not in said
    return said


def test_missing_ambiguous_or_scattered_images_are_refused_naming_them(tmp_path: Path) -> None:
    missing = synthetic.melanoma(tmp_path / "missing")
    gone = sorted((missing.public_dir / "jpeg" / "train").iterdir())[:2]
    for path in gone:
        path.unlink()
    said = _refusal(missing)
    assert said.startswith("2 of 60 training ids (train.csv's 'image_name') name no image file")
    assert repr(gone[0].stem) in said and "named <id> or <id>.<extension>" in said

    twice = synthetic.plant_images(tmp_path / "twice")
    (twice.public_dir / "more").mkdir()
    (twice.public_dir / "more" / "Test_3.png").write_bytes(
        synthetic._jpeg(np.zeros((4, 4, 3), np.uint8))
    )
    assert _refusal(twice) == (
        "the test id 'Test_3' (the sample submission's 'image_id') names 2 image files "
        "(images/Test_3.jpg, more/Test_3.png): the baseline needs one image file per id"
    )

    scattered = synthetic.plant_images(tmp_path / "scattered")
    (scattered.public_dir / "other").mkdir()
    for i in range(5):
        moved = f"Train_{i}.jpg"
        (scattered.public_dir / "images" / moved).rename(scattered.public_dir / "other" / moved)
    assert _refusal(scattered).startswith(
        "the training images (train.csv's 'image_id') lie in 2 places (images/*.jpg (55), "
        "other/*.jpg (5))"
    )
