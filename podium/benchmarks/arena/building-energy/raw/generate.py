"""Generates the arena building-energy data: buildings of a made-up municipal energy survey.

A stated process, not real data (see SOURCE.md): a building's annual energy use is its floor
area times the intensity of its use, scaled by its construction era, its climate, its opening
hours and the efficiency measures installed in it, plus the fixed load of its energy-hungry
rooms (kitchens, lifts, server rooms, laundries, cold stores), times a log-normal noise. It
lives in ``raw/`` because it rebuilds the answers, and ``raw/`` is hidden from solutions.
``generate(rows)`` is deterministic (numpy, seed ``SEED``).
"""

from __future__ import annotations

import numpy as np
import pandas as pd

SEED = 20_261_207
ROWS = 19_000
# Use type -> energy intensity in MWh per m2 and year.
USES = {
    "office": 0.16,
    "school": 0.11,
    "retail": 0.20,
    "hotel": 0.22,
    "clinic": 0.30,
    "warehouse": 0.07,
    "apartments": 0.13,
}
# Construction era, the first letter of the register code -> multiplier on the intensity.
ERAS = {"H": 1.25, "M": 1.45, "L": 1.05, "N": 0.85, "Z": 0.65}
ERA_SHARES = [0.15, 0.25, 0.25, 0.20, 0.15]
MEASURES = [
    "heat_pump",
    "solar_pv",
    "led_lights",
    "insulation",
    "triple_glaze",
    "bms_control",
    "heat_recovery",
    "smart_meter",
]
MEASURE_SAVING = 0.85  # each installed measure multiplies the use by this
ROOMS = ["kitchens", "lifts", "server_rooms", "laundries", "cold_stores"]
ROOM_LOAD = 20.0  # MWh a year for each energy-hungry room ...
CENTRAL_PLANT = 5  # ... and from this many of them in all, a central plant is needed ...
PLANT_LOAD = 220.0  # ... which uses this much more (MWh a year)
REGIONS = [f"R{i:02d}" for i in range(1, 13)]
ROOFS = ["flat", "pitched", "green", "mixed"]
FACADES = ["brick", "concrete", "glass", "timber", "render"]
NOISE_SD = 0.10  # sd of the log of the multiplicative noise on each building's use


def _codes(rng: np.random.Generator, eras: np.ndarray) -> np.ndarray:
    """Register codes: the era letter, then five digits (unique within the survey)."""
    numbers = rng.permutation(90_000)[: len(eras)] + 10_000
    return np.array([f"{e}{n}" for e, n in zip(eras, numbers, strict=True)])


def _measures(rng: np.random.Generator, rows: int) -> np.ndarray:
    """Installed measures as surveyed: a ';'-separated list in the order seen, or 'none'."""
    keen = rng.beta(1.2, 2.0, rows)  # how keen the owner is on efficiency
    lists = []
    for share in keen:
        chosen = [m for m in MEASURES if rng.random() < share]
        rng.shuffle(chosen)
        lists.append(";".join(chosen) if chosen else "none")
    return np.array(lists)


def generate(rows: int = ROWS, seed: int = SEED) -> pd.DataFrame:
    """``rows`` buildings with their features and ``energy_mwh``."""
    rng = np.random.default_rng(seed)
    region_climate = dict(zip(REGIONS, rng.uniform(1800, 4200, len(REGIONS)), strict=True))

    use = rng.choice(list(USES), rows, p=[0.22, 0.12, 0.15, 0.08, 0.08, 0.10, 0.25])
    eras = rng.choice(list(ERAS), rows, p=ERA_SHARES)
    area = np.round(np.clip(rng.lognormal(np.log(1800), 0.85, rows), 150, 60_000)).astype(int)
    floors = np.clip(np.round(area / rng.uniform(300, 1200, rows)), 1, 30).astype(int)
    region = rng.choice(REGIONS, rows)
    degree_days = np.round(
        np.array([region_climate[r] for r in region]) + rng.normal(0, 150, rows)
    ).astype(int)
    hours = np.clip(np.round(rng.normal(60, 18, rows)), 30, 168).astype(int)
    hours[np.isin(use, ["clinic", "hotel"])] = 168
    rooms = {room: np.minimum(rng.poisson(0.75, rows), 9) for room in ROOMS}
    total_rooms = sum(rooms.values())
    measures = _measures(rng, rows)
    n_measures = np.array([0 if m == "none" else m.count(";") + 1 for m in measures])

    intensity = np.array([USES[u] for u in use]) * np.array([ERAS[e] for e in eras])
    climate = 0.6 + 0.4 * degree_days / 3000
    opening = np.sqrt(hours / 60)
    building = area * intensity * climate * opening * MEASURE_SAVING**n_measures
    equipment = ROOM_LOAD * total_rooms + PLANT_LOAD * (total_rooms >= CENTRAL_PLANT)
    energy = (building + equipment) * rng.lognormal(0.0, NOISE_SD, rows)

    frame = pd.DataFrame(
        {
            "building_code": _codes(rng, eras),
            "use_type": use,
            "region": region,
            "floor_area_m2": area,
            "floors": floors,
            "heating_degree_days": degree_days,
            "opening_hours_week": hours,
            **rooms,
            "efficiency_measures": measures,
            "roof": rng.choice(ROOFS, rows),
            "facade": rng.choice(FACADES, rows),
            "parking_spaces": np.round(area / 100 * rng.uniform(0, 2, rows)).astype(int) + 21,
            "surveyor_rating": np.round(rng.uniform(1, 10, rows), 1),
            "energy_mwh": np.round(energy, 1),
        }
    )
    return frame
