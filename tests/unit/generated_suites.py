"""Suite documents generated for the fuzz tests (tests/unit/suite/test_suitefile_fuzz.py, test_schema.py): random
structures, mutations of the shipped suites, and text-level damage. Seeded by the caller, so a failure reproduces."""

import random
from pathlib import Path

import yaml

from tfscale.axes import ALL_KEYS

SUITES = sorted((Path(__file__).resolve().parents[2] / "suites").glob("*.yaml"))
KEYS = ["name", "device", "matrix", "include", "exclude", "defaults", "models", "network", "commbench", *ALL_KEYS]
CASES = 2000


def random_value(rng: random.Random, depth: int = 0):
    kind = rng.randrange(9 if depth < 4 else 6)
    if kind == 0:
        return rng.choice([None, True, False])
    if kind == 1:
        return rng.choice([0, 1, -1, 2, 4, 7, 10**12, 2**63])
    if kind == 2:
        return rng.choice([0.0, -0.5, 1e-9, 1e300, float("inf"), float("nan")])
    if kind == 3:
        return rng.choice(["", "auto", "mlp", "tiny", "gpu", "1gbit", "x" * 300, "é", "../..", "a:b", "{task}"])
    if kind in (4, 5):
        return rng.choice(KEYS)
    if kind in (6, 7):
        return [random_value(rng, depth + 1) for _ in range(rng.randrange(4))]
    return {str(random_value(rng, depth + 1)): random_value(rng, depth + 1) for _ in range(rng.randrange(4))}


def mutate(rng: random.Random, value):
    """One random change deep inside a parsed suite: replace, delete, or add a key or item."""
    if isinstance(value, dict) and value and rng.random() < 0.7:
        key = rng.choice(list(value))
        action = rng.randrange(4)
        if action == 0:
            del value[key]
        elif action == 1:
            value[key] = random_value(rng)
        elif action == 2:
            value[rng.choice(KEYS)] = random_value(rng)
        else:
            value[key] = mutate(rng, value[key])
        return value
    if isinstance(value, list) and value and rng.random() < 0.7:
        i = rng.randrange(len(value))
        value[i] = mutate(rng, value[i]) if rng.random() < 0.5 else random_value(rng)
        return value
    return random_value(rng)


def documents(rng: random.Random):
    shipped = [yaml.safe_load(path.read_text()) for path in SUITES]
    for i in range(CASES):
        if i % 3 == 0:
            yield yaml.safe_dump({rng.choice(KEYS): random_value(rng) for _ in range(rng.randrange(6))})
        elif i % 3 == 1:
            doc = yaml.safe_load(yaml.safe_dump(rng.choice(shipped)))
            for _ in range(rng.randrange(1, 4)):
                doc = mutate(rng, doc)
            yield yaml.safe_dump(doc) if not isinstance(doc, float) else str(doc)
        else:  # text-level damage: cut, doubled or swapped characters
            text = rng.choice(SUITES).read_text()
            at = rng.randrange(len(text))
            yield rng.choice([text[:at], text[:at] + text[at:][::-1][:20] + text[at:], text.replace(":", "", 1)])
