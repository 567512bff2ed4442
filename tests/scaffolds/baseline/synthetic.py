"""Tiny tasks in the layouts of the bundled mini suite, written into a temporary folder, and
helpers to run the baseline operators on them.

Each maker writes ``public/`` (train, test or image folders, sample submission) with a few
dozen rows, so every generated solution runs in well under a second in this process. The data
carry signal (the target depends on the features), so metrics are meaningful, not just
parseable.
"""

from __future__ import annotations

import asyncio
import dataclasses
import io
import json
import random
import re
import zipfile
from collections.abc import Callable
from dataclasses import dataclass, fields
from pathlib import Path
from typing import TypeVar

import numpy as np
import pandas as pd
from threadpoolctl import threadpool_limits

from podium.interfaces import BudgetView, OperatorContext, Proposal, Task
from podium.records import (
    Action,
    EnvironmentInfo,
    ExecResult,
    ExecStatus,
    Metric,
    Node,
    NodeState,
)
from podium.scaffolds.baseline import BaselineOperators
from podium.scaffolds.baseline.analysis import analyse
from podium.submission_check import Invalid, check, find_sample
from podium.tree import SearchTree
from tests.support import exec_solution

S = TypeVar("S")


@dataclass
class SyntheticTask(Task):
    id: str
    name: str
    description: str
    public_dir: Path
    lower_is_better: bool
    metric_name: str

    def check_submission(self, path: Path) -> str | None:
        """The structural check against the sample; without one (a forecast of a lone table)
        only that the file exists, as a data folder without a sample does."""
        try:
            sample = find_sample(self.public_dir)
        except Invalid:
            return None if path.is_file() else f"no submission at {path}"
        return check(path, sample)


def spec_of(task: Task, kind: type[S]) -> S:
    """The task's spec, which must be of the given kind."""
    found = analyse(task.public_dir, task.metric_name)
    assert isinstance(found, kind), found
    return found


def _task(root: Path, name: str, metric: str, lower_is_better: bool) -> SyntheticTask:
    return SyntheticTask(name, name, f"# {name}", root / "public", lower_is_better, metric)


def _split(frame: pd.DataFrame, root: Path, id_col: str, targets: list[str],
           sample: pd.DataFrame | None = None, n_test: int = 20) -> None:  # fmt: skip
    public = root / "public"
    public.mkdir(parents=True)
    train, test = frame.iloc[:-n_test], frame.iloc[-n_test:]
    train.to_csv(public / "train.csv", index=False)
    test.drop(columns=targets).to_csv(public / "test.csv", index=False)
    if sample is None:
        sample = test[[id_col, *targets]].assign(**dict.fromkeys(targets, 0))
    sample.to_csv(public / "sample_submission.csv", index=False)


def adult(root: Path) -> SyntheticTask:
    """Binary classification scored by ROC AUC: the submission holds P(income = 1)."""
    rng = np.random.default_rng(0)
    n = 140
    age = rng.integers(18, 70, n)
    work = rng.choice(["Private", "State-gov", "Self-emp"], n)
    hours = rng.integers(10, 60, n)
    income = (age / 70 + hours / 60 + (work == "Self-emp") + rng.normal(0, 0.4, n)) > 1.3
    frame = pd.DataFrame({"id": range(n), "age": age, "workclass": work, "hours": hours,
                          "income": income.astype(int)})  # fmt: skip
    frame.loc[::9, "age"] = np.nan  # gaps to impute
    frame.loc[::13, "workclass"] = None
    _split(frame, root, "id", ["income"])
    return _task(root, "adult", "roc_auc", False)


def ames(root: Path) -> SyntheticTask:
    """Regression scored on the log of a positive price (``rmse_log``)."""
    rng = np.random.default_rng(1)
    n = 120
    area = rng.integers(500, 3000, n)
    quality = rng.choice(["Ex", "Gd", "TA", "Fa"], n)
    bonus = pd.Series(quality).map({"Ex": 1.4, "Gd": 1.2, "TA": 1.0, "Fa": 0.8}).to_numpy()
    price = np.round(area * 80 * bonus * rng.lognormal(0, 0.1, n), 0)
    built = rng.integers(1950, 2010, n)
    frame = pd.DataFrame({"Id": range(1, n + 1), "GrLivArea": area, "Quality": quality,
                          "YearBuilt": built, "SalePrice": price})  # fmt: skip
    _split(frame, root, "Id", ["SalePrice"])
    return _task(root, "ames", "rmse_log", True)


def bike(root: Path) -> SyntheticTask:
    """Counts scored by RMSLE, with a date-and-time column whose hour matters."""
    rng = np.random.default_rng(2)
    when = pd.date_range("2011-01-01", periods=130, freq="7h")
    temp = rng.uniform(0, 35, len(when))
    count = np.round(5 + 10 * temp + 80 * ((when.hour >= 7) & (when.hour <= 19)), 0)
    frame = pd.DataFrame({"id": range(len(when)), "datetime": when.strftime("%Y-%m-%d %H:%M:%S"),
                          "temp": temp.round(1), "count": count.astype(int)})  # fmt: skip
    _split(frame, root, "id", ["count"])
    return _task(root, "bike", "rmsle", True)


WEATHER = ["drizzle", "fog", "rain", "snow", "sun"]


def seattle(root: Path) -> SyntheticTask:
    """Multiclass with one probability column per class, scored by the multiclass log loss."""
    rng = np.random.default_rng(3)
    n = 150
    dates = pd.date_range("2012-01-01", periods=n, freq="D")
    precipitation = rng.gamma(1.0, 3.0, n).round(1)
    temp_max = (10 + 10 * np.sin(np.arange(n) / 58) + rng.normal(0, 2, n)).round(1)
    weather = np.where(precipitation > 4, np.where(temp_max < 5, "snow", "rain"),
                       np.where(precipitation > 1.5, "drizzle",
                                np.where(rng.random(n) < 0.3, "fog", "sun")))  # fmt: skip
    weather[:25] = WEATHER * 5  # every class in every fold
    frame = pd.DataFrame({"id": range(n), "date": dates.strftime("%Y-%m-%d"),
                          "precipitation": precipitation, "temp_max": temp_max,
                          "temp_min": (temp_max - rng.uniform(3, 9, n)).round(1),
                          "wind": rng.uniform(0, 8, n).round(1), "weather": weather})  # fmt: skip
    test_ids = frame["id"].iloc[-20:]
    sample = pd.DataFrame({"id": test_ids, **dict.fromkeys(WEATHER, 0.2)})
    _split(frame, root, "id", ["weather"], sample=sample)
    return _task(root, "seattle", "multiclass_log_loss", True)


def digits(root: Path) -> SyntheticTask:
    """Image classification: 8x8 greyscale digit PNGs, labels in train.csv, no test.csv."""
    from PIL import Image
    from sklearn.datasets import load_digits

    data = load_digits(n_class=3)
    images, labels = data.images[:90], data.target[:90]
    public = root / "public"
    for folder in ("train", "test"):
        (public / folder).mkdir(parents=True)
    ids = [f"img{i:03d}" for i in range(len(images))]
    for name, pixels, i in zip(ids, images, range(len(images)), strict=True):
        folder = "train" if i < 70 else "test"
        Image.fromarray((pixels * 16).clip(0, 255).astype(np.uint8), mode="L").save(
            public / folder / f"{name}.png"
        )
    pd.DataFrame({"id": ids[:70], "label": labels[:70]}).to_csv(public / "train.csv", index=False)
    pd.DataFrame({"id": ids[70:], "label": 0}).to_csv(public / "sample_submission.csv",
                                                      index=False)  # fmt: skip
    return _task(root, "digits", "accuracy", False)


GOOD = ["great", "moving", "brilliant", "funny", "warm", "clever", "charming", "superb"]
BAD = ["dull", "boring", "tedious", "flat", "clumsy", "weak", "lifeless", "awful"]
FILLER = ["the", "film", "story", "cast", "plot", "director", "scenes", "actors", "movie",
          "script", "is", "a", "and", "of"]  # fmt: skip


def reviews(root: Path) -> SyntheticTask:
    """Text classification scored by ROC AUC: one review column, a 0/1 sentiment."""
    rng = random.Random(4)
    rows = []
    for i in range(120):
        sentiment = i % 2
        words = rng.choices(FILLER, k=8) + rng.choices(GOOD if sentiment else BAD, k=2)
        words += rng.choices(BAD if sentiment else GOOD, k=rng.choice([0, 0, 1]))
        rng.shuffle(words)
        rows.append({"id": i, "review": " ".join(words), "sentiment": sentiment})
    _split(pd.DataFrame(rows), root, "id", ["sentiment"])
    return _task(root, "reviews", "roc_auc", False)


def employment(root: Path, n_series: int = 3, months: int = 72) -> SyntheticTask:
    """Monthly series (trend x season x noise) scored by sMAPE on the next 12 months."""
    rng = np.random.default_rng(5)
    dates = pd.date_range("2010-01-01", periods=months + 12, freq="MS")
    rows = []
    for s in range(n_series):
        level = 100 * (s + 1) ** 2
        season = 1 + 0.1 * np.sin(2 * np.pi * (dates.month.to_numpy() + s) / 12)
        trend = 1 + 0.004 * (s + 1) * np.arange(len(dates))
        values = level * season * trend * rng.lognormal(0, 0.01, len(dates))
        rows += [{"date": d.strftime("%Y-%m-%d"), "series": f"sector_{s}", "value": round(v, 1)}
                 for d, v in zip(dates, values, strict=True)]  # fmt: skip
    frame = pd.DataFrame(rows)
    cut = dates[months]
    public = root / "public"
    public.mkdir(parents=True)
    frame[pd.to_datetime(frame["date"]) < cut].to_csv(public / "train.csv", index=False)
    test = frame[pd.to_datetime(frame["date"]) >= cut].reset_index(drop=True)
    test.insert(0, "id", range(len(test)))
    test[["id", "date", "series"]].to_csv(public / "test.csv", index=False)
    test[["id"]].assign(value=0.0).to_csv(public / "sample_submission.csv", index=False)
    return _task(root, "employment", "smape", True)


# --- layouts of MLE-bench's prepared public folders (and other real-world shapes) -------------
# Shaped like the files each competition's prepare.py writes (file names, columns, formats);
# the data are synthetic and carry signal.


def _public(root: Path) -> Path:
    public = root / "public"
    public.mkdir(parents=True)
    return public


PIZZA_WORDS = ["hungry", "broke", "student", "rent", "kids", "job", "paycheck", "tonight"]


def pizza(root: Path) -> SyntheticTask:
    """random-acts-of-pizza: train.json / test.json (indented JSON arrays of records, the test
    with fewer fields), their zips, and sampleSubmission.csv ``request_id,
    requester_received_pizza``. The target is True/False in train; list cells (subreddits)."""
    rng = random.Random(6)
    records = []
    for i in range(90):
        age = rng.uniform(0, 900)
        karma = rng.randint(0, 3000)
        received = age + karma / 3 + rng.gauss(0, 150) > 700
        words = rng.choices(FILLER + PIZZA_WORDS, k=12)
        records.append({
            "giver_username_if_known": "N/A",
            "number_of_upvotes_of_request_at_retrieval": rng.randint(0, 9),  # train only
            "request_id": f"t3_{i:05x}",
            "request_text_edit_aware": " ".join(words),
            "request_title": "[Request] " + " ".join(rng.choices(PIZZA_WORDS, k=4)),
            "requester_account_age_in_days_at_request": round(age, 2),
            "requester_received_pizza": received,
            "requester_subreddits_at_request": rng.sample(["AskReddit", "pics", "funny"], 2),
            "requester_upvotes_minus_downvotes_at_request": karma,
            "unix_timestamp_of_request": 1_300_000_000 + 3600 * i,
        })  # fmt: skip
    public = _public(root)
    train, test = records[:70], records[70:]
    only_train = ("number_of_upvotes_of_request_at_retrieval", "requester_received_pizza")
    test_rows = [{k: v for k, v in r.items() if k not in only_train} for r in test]
    for name, rows in (("train", train), ("test", test_rows)):
        (public / f"{name}.json").write_text(json.dumps(rows, indent=4))
        with zipfile.ZipFile(public / f"{name}.zip", "w") as archive:
            archive.write(public / f"{name}.json", f"{name}.json")
    ids = [r["request_id"] for r in test]
    pd.DataFrame({"request_id": ids, "requester_received_pizza": 0}).to_csv(
        public / "sampleSubmission.csv", index=False
    )
    return _task(root, "pizza", "roc_auc", False)


def cactus(root: Path) -> SyntheticTask:
    """aerial-cactus-identification: train.zip / test.zip of RGB JPEGs (inside a train/ or test/
    folder), train.csv ``id,has_cactus`` (ids carry the .jpg) and sample_submission.csv with
    has_cactus = 0.5. A cactus is a bright green vertical bar. 16x16 (the real ones are 32x32),
    so a draft fits in a few seconds on a loaded machine."""
    from PIL import Image

    rng = np.random.default_rng(7)
    public = _public(root)
    labels = (np.arange(80) % 2).astype(int)
    ids = [f"{rng.integers(16**8):08x}{i:02d}.jpg" for i in range(80)]
    for folder, part in (("train", slice(0, 60)), ("test", slice(60, 80))):
        with zipfile.ZipFile(public / f"{folder}.zip", "w") as archive:
            for name, label in zip(ids[part], labels[part], strict=True):
                pixels = rng.integers(60, 120, (16, 16, 3)).astype(np.uint8)
                if label:
                    pixels[:, 6:10, 1] = 230
                buffer = io.BytesIO()
                Image.fromarray(pixels, mode="RGB").save(buffer, format="JPEG")
                archive.writestr(f"{folder}/{name}", buffer.getvalue())
    pd.DataFrame({"id": ids[:60], "has_cactus": labels[:60]}).to_csv(
        public / "train.csv", index=False
    )
    pd.DataFrame({"id": ids[60:], "has_cactus": 0.5}).to_csv(
        public / "sample_submission.csv", index=False
    )
    return _task(root, "cactus", "roc_auc", False)


def _jpeg(pixels: np.ndarray) -> bytes:
    from PIL import Image

    buffer = io.BytesIO()
    Image.fromarray(pixels, mode="RGB").save(buffer, format="JPEG")
    return buffer.getvalue()


def _spotted(rng: np.random.Generator, label: int, base: tuple[int, int, int]) -> np.ndarray:
    """A 16x16 RGB image of ``base`` colour with noise; a dark blob in its middle when ``label``."""
    pixels = (np.array(base) + rng.integers(-25, 25, (16, 16, 3))).clip(0, 255).astype(np.uint8)
    if label:
        pixels[5:11, 5:11] = 40
    return pixels


def melanoma(root: Path) -> SyntheticTask:
    """siim-isic-melanoma-classification: JPEGs in ``jpeg/train/`` and ``jpeg/test/`` (the same
    ids as DICOMs in ``train/`` and ``test/``, which are no images the baseline reads, and
    ``tfrecords/``), train.csv ``image_name`` with the patient's metadata, diagnosis and
    ``target``, test.csv ``image_name`` with the metadata, sample_submission.csv
    ``image_name,target`` = 0; ROC AUC. A melanoma is a dark blob."""
    rng = np.random.default_rng(11)
    public = _public(root)
    names = [f"ISIC_{rng.integers(10**7):07d}" for _ in range(80)]
    labels = (np.arange(80) % 2).astype(int)
    for part, rows in (("train", slice(0, 60)), ("test", slice(60, 80))):
        for folder in (public / "jpeg" / part, public / part):
            folder.mkdir(parents=True)
        for name, label in zip(names[rows], labels[rows], strict=True):
            (public / "jpeg" / part / f"{name}.jpg").write_bytes(
                _jpeg(_spotted(rng, label, (200, 150, 130)))
            )
            (public / part / f"{name}.dcm").write_bytes(b"\0" * 128 + b"DICM")
    (public / "tfrecords").mkdir()
    (public / "tfrecords" / "train00-60.tfrec").write_bytes(b"\0" * 64)
    meta = pd.DataFrame({
        "image_name": names, "patient_id": [f"IP_{i // 3:07d}" for i in range(80)],
        "sex": rng.choice(["male", "female"], 80), "age_approx": rng.integers(3, 9, 80) * 10,
        "anatom_site_general_challenge": rng.choice(["torso", "head/neck", None], 80),
    })  # fmt: skip
    train = meta.iloc[:60].assign(
        diagnosis=np.where(labels[:60], "melanoma", "nevus"),
        benign_malignant=np.where(labels[:60], "malignant", "benign"),
        target=labels[:60],
    )
    train.to_csv(public / "train.csv", index=False)
    meta.iloc[60:].to_csv(public / "test.csv", index=False)
    meta[["image_name"]].iloc[60:].assign(target=0).to_csv(
        public / "sample_submission.csv", index=False
    )
    return _task(root, "melanoma", "roc_auc", False)


def plant_images(root: Path) -> SyntheticTask:
    """plant-pathology-2020-fgvc7's layout with one target: ``images/`` holds the training and
    the test JPEGs together (``Train_0.jpg``, ``Test_0.jpg``), train.csv ``image_id,healthy``
    (the real one has four one-hot columns), test.csv ``image_id``, sample_submission.csv
    ``image_id,healthy`` = 0.5; ROC AUC. A diseased leaf has a dark spot."""
    rng = np.random.default_rng(12)
    public = _public(root)
    (public / "images").mkdir()
    ids = [f"Train_{i}" for i in range(60)] + [f"Test_{i}" for i in range(20)]
    healthy = (np.arange(80) % 2).astype(int)
    for name, good in zip(ids, healthy, strict=True):
        (public / "images" / f"{name}.jpg").write_bytes(
            _jpeg(_spotted(rng, 1 - good, (60, 160, 60)))
        )
    pd.DataFrame({"image_id": ids[:60], "healthy": healthy[:60]}).to_csv(
        public / "train.csv", index=False
    )
    pd.DataFrame({"image_id": ids[60:]}).to_csv(public / "test.csv", index=False)
    pd.DataFrame({"image_id": ids[60:], "healthy": 0.5}).to_csv(
        public / "sample_submission.csv", index=False
    )
    return _task(root, "plant", "roc_auc", False)


def _zip_table(path: Path) -> None:
    """``path`` replaced by ``<path>.zip`` holding it, as text-normalization ships its tables."""
    with zipfile.ZipFile(path.with_name(f"{path.name}.zip"), "w", zipfile.ZIP_DEFLATED) as archive:
        archive.write(path, path.name)
    path.unlink()


def zipped_tables(root: Path) -> SyntheticTask:
    """adult's data shipped as text-normalization-challenge ships its tables: train.csv.zip,
    test.csv.zip and sample_submission.csv.zip, each a zip of one CSV, nothing unzipped."""
    task = adult(root)
    for name in ("train.csv", "test.csv", "sample_submission.csv"):
        _zip_table(task.public_dir / name)
    return dataclasses.replace(task, id="zipped-tables", name="zipped-tables")


def zipped_sample(root: Path) -> SyntheticTask:
    """plant_images' layout whose sample comes zipped (sample_submission.csv.zip): the image
    scripts read it for the test ids."""
    task = plant_images(root)
    _zip_table(task.public_dir / "sample_submission.csv")
    return dataclasses.replace(task, id="zipped-sample", name="zipped-sample")


def text_normalization(root: Path) -> SyntheticTask:
    """text-normalization-challenge-english-language: en_train.csv.zip ``sentence_id, token_id,
    class, before, after``, en_test_2.csv.zip without class and after, and
    en_sample_submission_2.csv.zip ``id,after`` whose ids join sentence_id and token_id."""
    public = _public(root)
    rows = [(s, t, "PLAIN", f"w{s}x{t}", f"w{s}x{t}") for s in range(20) for t in range(4)]
    frame = pd.DataFrame(rows, columns=["sentence_id", "token_id", "class", "before", "after"])
    test = frame.iloc[60:].drop(columns=["class", "after"])
    ids = test["sentence_id"].astype(str) + "_" + test["token_id"].astype(str)
    tables = {
        "en_train.csv": frame.iloc[:60],
        "en_test_2.csv": test,
        "en_sample_submission_2.csv": pd.DataFrame({"id": ids, "after": test["before"]}),
    }
    for name, table in tables.items():
        table.to_csv(public / name, index=False)
        _zip_table(public / name)
    return _task(root, "text-normalization", "accuracy", False)


IMAGE_LAYOUT_MAKERS: dict[str, Callable[[Path], SyntheticTask]] = {
    "melanoma": melanoma, "plant_images": plant_images, "zipped_sample": zipped_sample,
}  # fmt: skip


INSULTS = ["idiot", "moron", "stupid", "loser", "pathetic", "clown"]


def insults(root: Path) -> SyntheticTask:
    """detecting-insults-in-social-commentary: train.csv ``Insult,Date,Comment`` (the prediction
    column first), test.csv ``Date,Comment`` and sample_submission_null.csv ``Insult,Date,
    Comment``: no id column, the submission follows the test's rows."""
    rng = random.Random(8)
    rows = []
    for i in range(110):
        insult = i % 2
        words = rng.choices(FILLER, k=9) + (rng.choices(INSULTS, k=2) if insult else [])
        rng.shuffle(words)
        date = "" if i % 7 == 0 else f"2012{(i % 12) + 1:02d}{(i % 27) + 1:02d}120000Z"
        rows.append({"Insult": insult, "Date": date, "Comment": f'"{" ".join(words)}"'})
    frame = pd.DataFrame(rows)
    public = _public(root)
    frame.iloc[:80].to_csv(public / "train.csv", index=False)
    test = frame.iloc[80:]
    test[["Date", "Comment"]].to_csv(public / "test.csv", index=False)
    test.assign(Insult=0).to_csv(public / "sample_submission_null.csv", index=False)
    return _task(root, "insults", "roc_auc", False)


def semicolons(root: Path) -> SyntheticTask:
    """adult's layout with ``;``-separated train and test tables (a comma sample, as Kaggle's)."""
    task = adult(root)
    for name in ("train.csv", "test.csv"):
        path = task.public_dir / name
        pd.read_csv(path).to_csv(path, sep=";", index=False)
    return dataclasses.replace(task, id="semicolons", name="semicolons")


def renamed(root: Path) -> SyntheticTask:
    """ames' layout where the sample predicts ``label`` and the training table names the same
    target ``target`` (the sample's columns also in another order: ``label,Id``)."""
    task = ames(root)
    public = task.public_dir
    train = pd.read_csv(public / "train.csv").rename(columns={"SalePrice": "target"})
    train.to_csv(public / "train.csv", index=False)
    sample = pd.read_csv(public / "sample_submission.csv")
    sample.rename(columns={"SalePrice": "label"})[["label", "Id"]].to_csv(
        public / "sample_submission.csv", index=False
    )
    return dataclasses.replace(task, id="renamed", name="renamed")


def two_targets(root: Path) -> SyntheticTask:
    """A sample with two prediction columns, both training columns (multi-target regression,
    as nomad2018-predict-transparent-conductors' two energies)."""
    task = ames(root)
    public = task.public_dir
    train = pd.read_csv(public / "train.csv")
    train.assign(Rooms=train["GrLivArea"] // 300).to_csv(public / "train.csv", index=False)
    sample = pd.read_csv(public / "sample_submission.csv")
    sample.assign(Rooms=0).to_csv(public / "sample_submission.csv", index=False)
    return dataclasses.replace(task, id="two-targets", name="two-targets")


def bitcoin(root: Path) -> SyntheticTask:
    """AIDE's bitcoin-price example: one daily price table (Date, Open, Close, Volume), no test
    set, no sample, and a description that states no horizon."""
    public = _public(root)
    days = pd.date_range("2020-01-01", periods=150, freq="D")
    rng = np.random.default_rng(9)
    weekly = 300 * np.sin(2 * np.pi * np.arange(len(days)) / 7)
    close = 9000 + np.cumsum(rng.normal(5, 40, len(days))) + weekly
    pd.DataFrame({"Date": days.strftime("%Y-%m-%d"), "Open": (close - 20).round(2),
                  "Close": close.round(2), "Volume": rng.integers(10**6, 10**7, len(days))}
                 ).to_csv(public / "BTC-USD.csv", index=False)  # fmt: skip
    return _task(root, "bitcoin", "rmse", True)


def bitcoin_forecast(root: Path) -> SyntheticTask:
    """bitcoin as a data folder whose description.md states the horizon and the column."""
    task = bitcoin(root)
    text = "# Bitcoin\n\nForecast the Close price for the next 2 weeks. Scored by RMSE.\n"
    (task.public_dir / "description.md").write_text(text)
    return dataclasses.replace(task, id="bitcoin-forecast", description=text)


MAKERS: dict[str, Callable[[Path], SyntheticTask]] = {
    "adult": adult, "ames": ames, "bike": bike, "seattle": seattle, "digits": digits,
    "reviews": reviews, "employment": employment,
}  # fmt: skip


def monthly_sales(root: Path) -> SyntheticTask:
    """A lone monthly table (month-end dates, two numeric columns) whose description names the
    column and the horizon in months."""
    public = _public(root)
    months = pd.date_range("2015-01-31", periods=72, freq="ME")
    sales = 100 + 10 * np.sin(2 * np.pi * months.month.to_numpy() / 12) + np.arange(72)
    pd.DataFrame({"month": months.strftime("%Y-%m-%d"), "stores": 7, "sales": sales.round(1)}
                 ).to_csv(public / "sales.csv", index=False)  # fmt: skip
    text = "# Sales\n\nPredict sales for the next 6 months.\n"
    (public / "description.md").write_text(text)
    return dataclasses.replace(_task(root, "monthly-sales", "mae", True), description=text)


LAYOUT_MAKERS: dict[str, Callable[[Path], SyntheticTask]] = {
    "pizza": pizza, "cactus": cactus, "insults": insults, "semicolons": semicolons,
    "renamed": renamed, "two_targets": two_targets, "bitcoin_forecast": bitcoin_forecast,
    "monthly_sales": monthly_sales,
}  # fmt: skip
KIND = {"adult": "tabular", "ames": "tabular", "bike": "tabular", "seattle": "tabular",
        "digits": "image", "reviews": "text", "employment": "series"}  # fmt: skip


# --- running the operators ---------------------------------------------------------------------


class NoModel:
    async def ask(self, request: object, role: str) -> object:
        raise AssertionError("the baseline operators must never call a model")


def propose(task: Task, tree: SearchTree, action: Action, seed: int = 0) -> Proposal:
    ctx = OperatorContext(
        task=task,
        action=action,
        parents=[tree.get(p) for p in action.parent_ids],
        tree=tree,
        environment=EnvironmentInfo(python_version="3.11"),
        budget=BudgetView(steps_left=5, time_left_s=None, exec_timeout_s=600),
        model=NoModel(),
        rng=random.Random(seed),
        refs=[tree.get(r) for r in action.ref_ids],
    )
    return asyncio.run(BaselineOperators().propose(ctx))


def finished(node_id: int, proposal: Proposal, op: str, metric: float | None,
             lower_is_better: bool, parents: tuple[int, ...] = (),
             buggy: bool = False) -> Node:  # fmt: skip
    return Node(
        id=node_id, parent_ids=parents, operator=op, state=NodeState.DONE, step=node_id,
        plan=proposal.plan, code=proposal.code, is_buggy=buggy,
        bug_reason="ValueError: boom" if buggy else None,
        metric=None if metric is None else Metric(value=metric, lower_is_better=lower_is_better),
    )  # fmt: skip


def analysis(node_id: int, parent_id: int, code: str, output: str) -> Node:
    """A finished analysis (an ablation) of ``parent_id`` whose run printed ``output``; its
    findings are the output, as the loop records them without a review model."""
    return Node(
        id=node_id, parent_ids=(parent_id,), operator="ablate", kind="analysis",
        state=NodeState.DONE, step=node_id, code=code, summary=output,
        exec=ExecResult(status=ExecStatus.OK, output=output),
    )  # fmt: skip


def run(code: str, task: SyntheticTask, workspace: Path, printed: list[str] | None = None) -> float:
    """Run a solution in-process; check its submission's format; return its metric line (and
    append what it printed to ``printed``, when given).

    Thread limits a solution sets (forecasting scripts use one thread) are undone after it."""
    with threadpool_limits(limits=None):  # restores the limits on the way out
        output = exec_solution(code, task.public_dir, workspace)
    if printed is not None:
        printed.append(output)
    problem = task.check_submission(workspace / "submission" / "submission.csv")
    assert problem is None, problem
    found = re.findall(r"^VALIDATION_METRIC: (\S+)$", output, re.M)
    assert found, f"no metric line in: {output[-500:]}"
    value = float(found[-1])
    assert np.isfinite(value), output
    return value


def first_draft(task: SyntheticTask, workspace: Path) -> tuple[float, pd.DataFrame, pd.DataFrame]:
    """Run the task's first draft (:func:`run`: its format checked): its metric, its submission
    and the sample, whose columns the submission has, in order."""
    (draft,) = drafts(task, 1)
    metric = run(draft.code, task, workspace)
    submission = pd.read_csv(workspace / "submission" / "submission.csv")
    sample = pd.read_csv(find_sample(task.public_dir))
    assert list(submission.columns) == list(sample.columns)
    return metric, submission, sample


MODEL_FIELDS = {"family", "params", "scale", "per_horizon"}  # what switching the model resets


def changed_fields(before: object, after: object) -> list[str]:
    """The recipe fields that differ; improve must change one choice: one field, or the model
    (its family with that family's defaults)."""
    names = [f.name for f in fields(before)]  # type: ignore[arg-type]
    changed = [n for n in names if getattr(before, n) != getattr(after, n)]
    return changed


def one_choice(changed: list[str]) -> bool:
    if "family" in changed:
        return set(changed) <= MODEL_FIELDS
    return len(changed) == 1


def crossover_child(task: SyntheticTask, fitter_code: str, other_code: str,
                    kind_read: Callable[[str], object]) -> tuple[Proposal, object]:  # fmt: skip
    """Propose a crossover of two rendered parents (the fitter one given second, so the
    operator must pick it by metric); the child's proposal and recipe."""
    tree = SearchTree(task.lower_is_better)
    good, bad = (0.1, 0.2) if task.lower_is_better else (0.9, 0.8)
    tree.add(finished(1, Proposal("other", other_code), "draft", bad, task.lower_is_better))
    tree.add(finished(2, Proposal("fitter", fitter_code), "draft", good, task.lower_is_better))
    child = propose(task, tree, Action(operator="crossover", parent_ids=(1, 2)))
    assert child.plan.startswith("Crossover of node 2 (model) with node 1: "), child.plan
    return child, kind_read(child.code)


def improve_child(task: SyntheticTask, parent_code: str, seed: int) -> Proposal:
    tree = SearchTree(task.lower_is_better)
    tree.add(finished(1, Proposal("parent", parent_code), "draft", 1.0, task.lower_is_better))
    child = propose(task, tree, Action(operator="improve", parent_ids=(1,)), seed=seed)
    assert child.plan.startswith("Improve node 1: "), child.plan
    return child


def debug_child(task: SyntheticTask, parent_code: str = "raise ValueError('boom')\n") -> Proposal:
    tree = SearchTree(task.lower_is_better)
    broken = Proposal("An LLM's attempt.", parent_code)
    tree.add(finished(1, broken, "draft", None, task.lower_is_better, buggy=True))
    child = propose(task, tree, Action(operator="debug", parent_ids=(1,)))
    assert child.plan.startswith("Debug node 1 (ValueError: boom): fall back"), child.plan
    return child


def drafts(task: SyntheticTask, count: int) -> list[Proposal]:
    """The first ``count`` drafts of a search, as the operator writes them one after another."""
    tree = SearchTree(task.lower_is_better)
    made = []
    for node_id in range(1, count + 1):
        proposal = propose(task, tree, Action(operator="draft"), seed=node_id)
        assert proposal.plan.startswith("Draft: "), proposal.plan
        tree.add(finished(node_id, proposal, "draft", 0.5, task.lower_is_better))
        made.append(proposal)
    return made


# --- the shapes a first draft is sized for (issue 39) ------------------------------------------


def leaf(root: Path, per_class: int = 10, classes: int = 99) -> SyntheticTask:
    """leaf-classification's shape: 192 numeric columns (margin, shape, texture 1-64), 99
    species with ``per_class`` rows each (10: MLE-bench's 990 rows), a 10% test set and one
    probability column per species, scored by the multiclass log loss."""
    rng = np.random.default_rng(6)
    label = np.repeat(np.arange(classes), per_class)
    centres = rng.normal(0, 1, (classes, 192))
    values = np.abs(centres[label] + rng.normal(0, 1, (len(label), 192))) / 50
    names = [f"{group}{i}" for group in ("margin", "shape", "texture") for i in range(1, 65)]
    frame = pd.DataFrame(values.round(6), columns=names)
    species = [f"Species_{c:02d}" for c in range(classes)]
    frame.insert(0, "id", range(1, len(frame) + 1))
    frame["species"] = np.array(species)[label]
    frame = frame.sample(frac=1, random_state=0).reset_index(drop=True)
    n_test = max(20, len(frame) // 10)
    sample = pd.DataFrame({"id": frame["id"].iloc[-n_test:], **dict.fromkeys(species, 1 / classes)})
    _split(frame, root, "id", ["species"], sample=sample, n_test=n_test)
    return _task(root, "leaf", "multiclass_log_loss", True)


def wide(root: Path, rows: int = 3000, columns: int = 2000) -> SyntheticTask:
    """A wide binary table: ``columns`` numeric columns, ten of which carry the signal, scored
    by ROC AUC (the submission holds probabilities)."""
    rng = np.random.default_rng(7)
    values = rng.normal(0, 1, (rows, columns)).astype(np.float32)
    target = (values[:, :10].sum(axis=1) + rng.normal(0, 1, rows) > 0).astype(int)
    frame = pd.DataFrame(values.round(4), columns=[f"f{i}" for i in range(columns)])
    frame.insert(0, "id", range(rows))
    frame["target"] = target
    _split(frame, root, "id", ["target"], n_test=max(20, rows // 10))
    return _task(root, "wide", "roc_auc", False)


def taxi(root: Path, rows: int = 20_000) -> SyntheticTask:
    """new-york-city-taxi-fare-prediction's shape: a string key, a UTC pickup time, four
    coordinates and a passenger count; the fare grows with the distance and at night; RMSE."""
    rng = np.random.default_rng(8)
    seconds = rng.integers(0, 6 * 365 * 86400, rows)
    when = pd.Timestamp("2009-01-01") + pd.to_timedelta(seconds, unit="s")
    lon, lat = rng.normal(-73.97, 0.04, rows), rng.normal(40.75, 0.03, rows)
    lon2, lat2 = lon + rng.normal(0, 0.03, rows), lat + rng.normal(0, 0.03, rows)
    distance = np.hypot(lon2 - lon, lat2 - lat) * 100
    fare = 2.5 + 1.6 * distance + 0.5 * (when.hour >= 20) + rng.gamma(1.0, 1.0, rows)
    stamp = pd.Series(when.strftime("%Y-%m-%d %H:%M:%S UTC"))
    frame = pd.DataFrame({
        "key": stamp + "." + pd.Series(range(rows)).astype(str), "fare_amount": fare.round(2),
        "pickup_datetime": stamp, "pickup_longitude": lon.round(6),
        "pickup_latitude": lat.round(6), "dropoff_longitude": lon2.round(6),
        "dropoff_latitude": lat2.round(6), "passenger_count": rng.integers(1, 7, rows),
    })  # fmt: skip
    _split(frame, root, "key", ["fare_amount"], n_test=max(20, min(9914, rows // 10)))
    return _task(root, "taxi", "rmse", True)


SCALE_MAKERS: dict[str, Callable[[Path], SyntheticTask]] = {
    "leaf": leaf, "wide": wide, "taxi": taxi,
}  # fmt: skip


# --- several prediction columns: independent 0/1 labels, one-hot classes (issue 39) -----------
# Each maker also writes ``private/test.csv``, the test rows' answers in the sample's columns (as
# MLE-bench's prepare.py does), so a test can score the submission as the grader would.

TOXIC_LABELS = ["toxic", "severe_toxic", "obscene", "threat", "insult", "identity_hate"]
TOXIC_WORDS = {"toxic": ["idiot", "moron", "stupid"], "severe_toxic": ["scum"],
               "obscene": ["damn", "crap"], "threat": ["hurt", "destroy"],
               "insult": ["loser", "clown"], "identity_hate": ["foreigners"]}  # fmt: skip


def _answers(root: Path, answers: pd.DataFrame) -> None:
    private = root / "private"
    private.mkdir(parents=True)
    answers.to_csv(private / "test.csv", index=False)


def toxic(root: Path, rows: int = 160, n_test: int = 40) -> SyntheticTask:
    """jigsaw-toxic-comment-classification-challenge's public folder: train.csv ``id,
    comment_text`` and six 0/1 labels (a comment may have several, most have none), test.csv
    ``id, comment_text``, sample_submission.csv ``id`` and the six labels at 0.5; scored by the
    mean column-wise ROC AUC. Each label shows as its own words, with noise."""
    rng = random.Random(10)
    records = []
    for _ in range(rows):
        labels = {label: int(rng.random() < 0.3) for label in TOXIC_LABELS}
        words = rng.choices(FILLER, k=10)
        for label, on in labels.items():
            if on or rng.random() < 0.05:  # a word now and then without its label
                words += rng.choices(TOXIC_WORDS[label], k=2)
        rng.shuffle(words)
        records.append({"id": f"{rng.getrandbits(64):016x}", "comment_text": " ".join(words),
                        **labels})  # fmt: skip
    frame = pd.DataFrame(records)
    sample = frame[["id"]].iloc[-n_test:].assign(**dict.fromkeys(TOXIC_LABELS, 0.5))
    _split(frame, root, "id", TOXIC_LABELS, sample=sample, n_test=n_test)
    _answers(root, frame[["id", *TOXIC_LABELS]].iloc[-n_test:])
    return _task(root, "toxic", "roc_auc", False)


PLANT_CLASSES = ["healthy", "multiple_diseases", "rust", "scab"]
PLANT_COLOURS = {"healthy": (40, 160, 40), "multiple_diseases": (150, 90, 40),
                 "rust": (200, 110, 20), "scab": (90, 60, 50)}  # fmt: skip


def plant(root: Path, rows: int = 100, n_test: int = 20) -> SyntheticTask:
    """plant-pathology-2020-fgvc7's labels: train.csv ``image_id`` and four one-hot columns
    (healthy, multiple_diseases, rust, scab: one 1 per row), test.csv ``image_id``,
    sample_submission.csv ``image_id`` and the four at 0.25, scored by the mean column-wise ROC
    AUC. The images lie as the real ones do, training and test together in one images/ folder:
    16x16 RGB JPEGs whose leaf colour tells the class."""
    from PIL import Image

    rng = np.random.default_rng(11)
    public = _public(root)
    classes = np.array(PLANT_CLASSES)[rng.choice(4, rows, p=[0.3, 0.1, 0.3, 0.3])]
    classes[:8] = PLANT_CLASSES * 2  # every class in training and in every fold
    ids = [f"Train_{i}" for i in range(rows - n_test)] + [f"Test_{i}" for i in range(n_test)]
    for name, label in zip(ids, classes, strict=True):
        folder = public / "images"
        folder.mkdir(exist_ok=True)
        pixels = rng.normal(PLANT_COLOURS[label], 25, (16, 16, 3)).clip(0, 255).astype(np.uint8)
        Image.fromarray(pixels, mode="RGB").save(folder / f"{name}.jpg")
    onehot = pd.DataFrame({c: (classes == c).astype(int) for c in PLANT_CLASSES})
    table = pd.concat([pd.DataFrame({"image_id": ids}), onehot], axis=1)
    train, test = table.iloc[:-n_test], table.iloc[-n_test:]
    train.to_csv(public / "train.csv", index=False)
    test[["image_id"]].to_csv(public / "test.csv", index=False)
    test[["image_id"]].assign(**dict.fromkeys(PLANT_CLASSES, 0.25)).to_csv(
        public / "sample_submission.csv", index=False
    )
    _answers(root, test)
    return _task(root, "plant", "roc_auc", False)


SENSORS = ["leak", "overheat", "vibration"]


def sensors(root: Path, rows: int = 200, n_test: int = 40) -> SyntheticTask:
    """A table of machine readings with three independent 0/1 faults (a row may have several),
    a sample of one probability column per fault in another order (``vibration, id, leak,
    overheat``), scored by the log loss (column-wise)."""
    rng = np.random.default_rng(12)
    pressure, temp, rpm = rng.normal(0, 1, rows), rng.normal(0, 1, rows), rng.normal(0, 1, rows)
    site = rng.choice(["north", "south"], rows)
    faults = {"leak": pressure + rng.normal(0, 0.5, rows) < -0.3,
              "overheat": temp + 0.5 * (site == "south") + rng.normal(0, 0.5, rows) > 0.5,
              "vibration": rpm + rng.normal(0, 0.5, rows) > 0}  # fmt: skip
    frame = pd.DataFrame({"id": range(rows), "pressure": pressure.round(3), "temp": temp.round(3),
                          "rpm": rpm.round(3), "site": site,
                          **{k: v.astype(int) for k, v in faults.items()}})  # fmt: skip
    test = frame.iloc[-n_test:]
    sample = test[["id"]].assign(**dict.fromkeys(SENSORS, 0.5))[["vibration", "id", "leak",
                                                                 "overheat"]]  # fmt: skip
    _split(frame, root, "id", SENSORS, sample=sample, n_test=n_test)
    _answers(root, test[["vibration", "id", "leak", "overheat"]])
    return _task(root, "sensors", "log_loss", True)


def seattle_onehot(root: Path) -> SyntheticTask:
    """seattle's weather held one-hot in train.csv (one 0/1 column per class, one 1 per row)
    and asked as one probability column per class, scored by the multiclass log loss."""
    task = seattle(root)
    public = task.public_dir
    train = pd.read_csv(public / "train.csv")
    onehot = pd.get_dummies(train.pop("weather")).astype(int)[WEATHER]
    pd.concat([train, onehot], axis=1).to_csv(public / "train.csv", index=False)
    return dataclasses.replace(task, id="seattle-onehot", name="seattle-onehot")


def mixed(root: Path) -> SyntheticTask:
    """ames' layout whose sample predicts a price and a quality grade (a number and classes)."""
    task = ames(root)
    public = task.public_dir
    test = pd.read_csv(public / "test.csv")
    test.drop(columns=["Quality"]).to_csv(public / "test.csv", index=False)
    sample = pd.read_csv(public / "sample_submission.csv")
    sample.assign(Quality="TA").to_csv(public / "sample_submission.csv", index=False)
    return dataclasses.replace(task, id="mixed", name="mixed")


MULTI_MAKERS: dict[str, Callable[[Path], SyntheticTask]] = {
    "toxic": toxic, "plant": plant, "sensors": sensors, "seattle_onehot": seattle_onehot,
}  # fmt: skip
REFUSED_MAKERS: dict[str, Callable[[Path], SyntheticTask]] = {"mixed": mixed, "bitcoin": bitcoin}


# Every other shape of the baseline's tests at any size (perf/baseline_scale.py's 10x and 100x).


def reviews_at(root: Path, rows: int) -> SyntheticTask:
    """``reviews`` with ``rows`` documents whose words also come from a long tail (a word of
    ``rows`` made-up ones in each review), so the vocabulary grows with the documents as real
    text's does."""
    rng = random.Random(4)
    frame = []
    for i in range(rows):
        sentiment = i % 2
        words = rng.choices(FILLER, k=8) + rng.choices(GOOD if sentiment else BAD, k=2)
        words += [f"w{rng.randrange(rows)}x" for _ in range(4)]
        rng.shuffle(words)
        frame.append({"id": i, "review": " ".join(words), "sentiment": sentiment})
    _split(pd.DataFrame(frame), root, "id", ["sentiment"], n_test=max(20, rows // 6))
    return _task(root, "reviews", "roc_auc", False)


def _png_folder(folder: Path, ids: list[str], images: np.ndarray, mode: str) -> None:
    from PIL import Image

    folder.mkdir(parents=True)
    for name, pixels in zip(ids, images, strict=True):
        Image.fromarray(pixels, mode=mode).save(folder / f"{name}.png")


def digits_at(root: Path, images: int) -> SyntheticTask:
    """``digits`` with ``images`` 8x8 greyscale PNGs (sklearn's digits of 3 classes, repeated
    with noise), a fifth of them test images."""
    from sklearn.datasets import load_digits

    rng = np.random.default_rng(3)
    data = load_digits(n_class=3)
    pick = rng.integers(0, len(data.target), images)
    pixels = (data.images[pick] * 16 + rng.normal(0, 8, (images, 8, 8))).clip(0, 255)
    ids = [f"img{i:06d}" for i in range(images)]
    n_train = images * 4 // 5
    public = root / "public"
    _png_folder(public / "train", ids[:n_train], pixels[:n_train].astype(np.uint8), "L")
    _png_folder(public / "test", ids[n_train:], pixels[n_train:].astype(np.uint8), "L")
    labels = data.target[pick]
    pd.DataFrame({"id": ids[:n_train], "label": labels[:n_train]}).to_csv(
        public / "train.csv", index=False
    )
    pd.DataFrame({"id": ids[n_train:], "label": 0}).to_csv(
        public / "sample_submission.csv", index=False
    )
    return _task(root, "digits", "accuracy", False)


def bitcoin_forecast_at(root: Path, days: int) -> SyntheticTask:
    """``bitcoin_forecast`` with ``days`` daily prices (no test set, no sample)."""
    public = _public(root)
    dates = pd.date_range("1990-01-01", periods=days, freq="D")
    rng = np.random.default_rng(9)
    weekly = 300 * np.sin(2 * np.pi * np.arange(days) / 7)
    close = 9000 + np.cumsum(rng.normal(0.05, 40, days)) + weekly
    pd.DataFrame({"Date": dates.strftime("%Y-%m-%d"), "Open": (close - 20).round(2),
                  "Close": close.round(2), "Volume": rng.integers(10**6, 10**7, days)}
                 ).to_csv(public / "BTC-USD.csv", index=False)  # fmt: skip
    text = "# Bitcoin\n\nForecast the Close price for the next 2 weeks. Scored by RMSE.\n"
    (public / "description.md").write_text(text)
    return dataclasses.replace(_task(root, "bitcoin-forecast", "rmse", True), description=text)


def pizza_at(root: Path, records: int) -> SyntheticTask:
    """``pizza``'s files (JSON records, their zips, sampleSubmission.csv) with ``records``
    requests, a fifth of them test requests."""
    rng = random.Random(6)
    rows = []
    for i in range(records):
        age, karma = rng.uniform(0, 900), rng.randint(0, 3000)
        rows.append({
            "giver_username_if_known": "N/A",
            "number_of_upvotes_of_request_at_retrieval": rng.randint(0, 9),
            "request_id": f"t3_{i:06x}",
            "request_text_edit_aware": " ".join(rng.choices(FILLER + PIZZA_WORDS, k=12)),
            "request_title": "[Request] " + " ".join(rng.choices(PIZZA_WORDS, k=4)),
            "requester_account_age_in_days_at_request": round(age, 2),
            "requester_received_pizza": age + karma / 3 + rng.gauss(0, 150) > 700,
            "requester_subreddits_at_request": rng.sample(["AskReddit", "pics", "funny"], 2),
            "requester_upvotes_minus_downvotes_at_request": karma,
            "unix_timestamp_of_request": 1_300_000_000 + 3600 * i,
        })  # fmt: skip
    public = _public(root)
    cut = records * 4 // 5
    only_train = ("number_of_upvotes_of_request_at_retrieval", "requester_received_pizza")
    test = [{k: v for k, v in r.items() if k not in only_train} for r in rows[cut:]]
    for name, part in (("train", rows[:cut]), ("test", test)):
        (public / f"{name}.json").write_text(json.dumps(part, indent=4))
    ids = [r["request_id"] for r in test]
    pd.DataFrame({"request_id": ids, "requester_received_pizza": 0}).to_csv(
        public / "sampleSubmission.csv", index=False
    )
    return _task(root, "pizza", "roc_auc", False)


def two_targets_at(root: Path, rows: int) -> SyntheticTask:
    """``two_targets``' shape (ames with a second target, ``Rooms``) with ``rows`` houses."""
    rng = np.random.default_rng(1)
    area = rng.integers(500, 3000, rows)
    quality = rng.choice(["Ex", "Gd", "TA", "Fa"], rows)
    bonus = pd.Series(quality).map({"Ex": 1.4, "Gd": 1.2, "TA": 1.0, "Fa": 0.8}).to_numpy()
    price = np.round(area * 80 * bonus * rng.lognormal(0, 0.1, rows), 0)
    frame = pd.DataFrame({"Id": range(1, rows + 1), "GrLivArea": area, "Quality": quality,
                          "YearBuilt": rng.integers(1950, 2010, rows), "SalePrice": price,
                          "Rooms": area // 300})  # fmt: skip
    _split(frame, root, "Id", ["SalePrice", "Rooms"], n_test=max(20, rows // 6))
    return _task(root, "two-targets", "rmse_log", True)


def cactus_at(root: Path, images: int, side: int = 32) -> SyntheticTask:
    """``cactus``' files (train.zip / test.zip of JPEGs in a folder, ids with .jpg) with
    ``images`` images of ``side`` x ``side`` (32: the real size), a quarter of them test."""
    from PIL import Image

    rng = np.random.default_rng(7)
    public = _public(root)
    labels = (np.arange(images) % 2).astype(int)
    ids = [f"{rng.integers(16**8):08x}{i:06d}.jpg" for i in range(images)]
    cut = images * 3 // 4
    bar = slice(side * 3 // 8, side * 5 // 8)
    for folder, part in (("train", slice(0, cut)), ("test", slice(cut, images))):
        with zipfile.ZipFile(public / f"{folder}.zip", "w") as archive:
            for name, label in zip(ids[part], labels[part], strict=True):
                pixels = rng.integers(60, 120, (side, side, 3)).astype(np.uint8)
                if label:
                    pixels[:, bar, 1] = 230
                buffer = io.BytesIO()
                Image.fromarray(pixels, mode="RGB").save(buffer, format="JPEG")
                archive.writestr(f"{folder}/{name}", buffer.getvalue())
    pd.DataFrame({"id": ids[:cut], "has_cactus": labels[:cut]}).to_csv(
        public / "train.csv", index=False
    )
    pd.DataFrame({"id": ids[cut:], "has_cactus": 0.5}).to_csv(
        public / "sample_submission.csv", index=False
    )
    return _task(root, "cactus", "roc_auc", False)
