"""Generates the arena delivery-times data: food deliveries of a made-up courier service.

A stated process, not real data (see SOURCE.md): each order's delivery time is the sum of the
restaurant's preparation, the ride, the handling of the items and the climb to the customer's
floor, times a log-normal noise. It lives in ``raw/`` because it rebuilds the answers, and
``raw/`` is hidden from solutions. ``generate(rows)`` is deterministic (numpy, seed ``SEED``).
"""

from __future__ import annotations

import numpy as np
import pandas as pd

SEED = 20_261_206
ROWS = 17_000
ZONES = [f"Z{i:02d}" for i in range(1, 16)]
VEHICLES = ["bicycle", "scooter", "car", "van"]
WEATHER = ["clear", "cloudy", "rain", "snow", "fog"]
DAYS = ["Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun"]
NOISE_SD = 0.12  # sd of the log of the multiplicative noise on each delivery time


def generate(rows: int = ROWS, seed: int = SEED) -> pd.DataFrame:
    """``rows`` orders with their features and ``delivery_minutes``."""
    rng = np.random.default_rng(seed)
    zone_traffic = dict(zip(ZONES, rng.uniform(0.75, 1.45, len(ZONES)), strict=True))
    zone_rural = dict(zip(ZONES, rng.uniform(0.0, 1.0, len(ZONES)) < 0.3, strict=True))

    zone = rng.choice(ZONES, rows)
    rural = np.array([zone_rural[z] for z in zone])
    distance = np.round(rng.lognormal(0.9 + 0.6 * rural, 0.7, rows), 2)
    vehicle = np.where(
        distance > 8,
        rng.choice(VEHICLES, rows, p=[0.05, 0.25, 0.45, 0.25]),
        rng.choice(VEHICLES, rows, p=[0.35, 0.35, 0.2, 0.1]),
    )
    weather = rng.choice(WEATHER, rows, p=[0.45, 0.25, 0.17, 0.06, 0.07])
    day = rng.choice(DAYS, rows)
    hour = rng.choice(np.arange(24), rows, p=_hour_weights())
    items = {
        "items_small": rng.poisson(2.0, rows),
        "items_medium": rng.poisson(1.2, rows),
        "items_large": rng.poisson(0.5, rows),
        "items_drinks": rng.poisson(0.9, rows),
    }
    total_items = sum(items.values())
    floor = np.minimum(rng.geometric(0.25, rows) - 1, 40) * (rng.random(rows) < 0.6)
    tenure = np.round(rng.lognormal(4.5, 1.2, rows)).astype(int) + 1  # days with the service
    order_value = np.round(rng.lognormal(3.2, 0.5, rows) + 3.5 * total_items, 2)

    # The restaurant's own estimate of its preparation time, in whole minutes; a quarter of the
    # restaurants never give one, and those are the slow, unpredictable kitchens.
    slow = rng.random(rows) < 0.25
    true_prep = np.where(slow, rng.gamma(6.0, 4.5, rows), rng.gamma(9.0, 1.6, rows))
    estimate = np.round(true_prep * rng.lognormal(0.0, 0.15, rows)).astype(float)
    estimate[slow] = np.nan

    speed = {"bicycle": 14.0, "scooter": 24.0, "car": 30.0, "van": 26.0}
    kmh = np.array([speed[v] for v in vehicle])
    kmh = kmh / np.array([zone_traffic[z] for z in zone])
    rush = np.isin(hour, [7, 8, 17, 18, 19]) & ~np.isin(day, ["Sat", "Sun"])
    kmh = kmh * np.where(rush, 0.6, 1.0) * np.where(rural, 1.5, 1.0)
    two_wheels = np.isin(vehicle, ["bicycle", "scooter"])
    bad = {"clear": 1.0, "cloudy": 1.0, "rain": 0.8, "snow": 0.55, "fog": 0.85}
    kmh = kmh * np.where(two_wheels, np.array([bad[w] for w in weather]), 1.0)
    experience = 1.35 - 0.07 * np.log(tenure)  # new couriers get lost; gains fade
    ride = 60 * distance / kmh * experience
    handling = 0.9 * total_items + 1.5 * items["items_large"]
    climb = 0.6 * floor
    minutes = (true_prep + ride + handling + climb + 3.0) * rng.lognormal(0.0, NOISE_SD, rows)

    frame = pd.DataFrame(
        {
            "zone": zone,
            "distance_km": distance,
            "vehicle": vehicle,
            "weather": weather,
            "day": day,
            "hour": hour,
            **items,
            "floor": floor,
            "courier_tenure_days": tenure,
            "order_value": order_value,
            "prep_estimate_min": estimate,
            "delivery_minutes": np.round(minutes, 1),
        }
    )
    return frame


def _hour_weights() -> np.ndarray:
    """Orders by hour of day: lunch and dinner peaks, few at night."""
    base = np.array([1, 0.5, 0.3, 0.2, 0.2, 0.3, 0.8, 2, 3, 2, 2, 4, 7, 6, 3, 2, 3, 5, 8, 9, 7,
                     4, 3, 2], dtype=float)  # fmt: skip
    out: np.ndarray = base / base.sum()
    return out
