"""pycanon 1.3.6, anonymeter 1.1.0 and ANJANA 1.2.3 in their own venvs, driven by JSON.

Both pin old NumPy/pandas, so they are never dependencies of privwatch: each is installed once
into ``<repo>/.ref-venvs/<name>`` (gitignored) and run as a child process that reads a JSON
payload on stdin and writes a JSON answer on stdout. Used by ``test_reference_libs.py``,
``tests/audit/test_check_reference.py`` (ANJANA too) and ``benchmarks/bench_classic.py``.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

REPO = Path(__file__).resolve().parents[2]
VENVS = REPO / ".ref-venvs"
PINS = {"pycanon": "1.3.6", "anonymeter": "1.1.0", "anjana": "1.2.3"}


def reference_python(name: str) -> Path:
    """The Python of the ``name`` venv, created and installed (pinned) on first use."""
    venv = VENVS / name
    python = venv / "bin" / "python"
    probe = f"import importlib.metadata as m, sys; sys.exit(m.version({name!r}) != {PINS[name]!r})"
    if python.exists() and subprocess.run([python, "-c", probe], check=False).returncode == 0:
        return python
    shutil.rmtree(venv, ignore_errors=True)
    VENVS.mkdir(exist_ok=True)
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    install = subprocess.run(
        [python, "-m", "pip", "install", "-q", f"{name}=={PINS[name]}"],
        capture_output=True,
        text=True,
        check=False,
    )
    if install.returncode != 0:
        raise RuntimeError(f"pip install {name}=={PINS[name]} failed:\n{install.stderr[-3000:]}")
    return python


def run_json(python: Path, script: str, payload: dict[str, Any], timeout: float = 900) -> Any:
    """Run ``script`` with ``python``, ``payload`` as JSON on stdin; return its JSON stdout."""
    out = subprocess.run(
        [python, "-c", script],
        input=json.dumps(payload),
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )
    if out.returncode != 0:
        raise RuntimeError(out.stderr[-3000:])
    return json.loads(out.stdout.strip().splitlines()[-1])


def frame_payload(frame: pd.DataFrame) -> dict[str, list[Any]]:
    """Columns as JSON lists (ints, floats and strings keep their types)."""
    return {c: frame[c].tolist() for c in frame.columns}


PYCANON = r"""
import json, sys, time
import numpy as np, pandas as pd
from pycanon import anonymity as a
job = json.load(sys.stdin)
df = pd.DataFrame(job["data"])
if job.get("index") is not None:
    df.index = job["index"]
qi, out = job["qi"], {}
for sa in job["sa"]:
    res, times = {}, {}
    for name, f in [("k_anonymity", lambda: a.k_anonymity(df, qi)),
                    ("distinct_l_diversity", lambda: a.l_diversity(df, qi, [sa])),
                    ("entropy_l_diversity", lambda: a.entropy_l_diversity(df, qi, [sa])),
                    ("recursive_c", lambda: a.recursive_c_l_diversity(df, qi, [sa])[0]),
                    ("t_closeness", lambda: a.t_closeness(df, qi, [sa])),
                    ("basic_beta_likeness", lambda: a.basic_beta_likeness(df, qi, [sa])),
                    ("enhanced_beta_likeness", lambda: a.enhanced_beta_likeness(df, qi, [sa])),
                    ("delta_disclosure", lambda: a.delta_disclosure(df, qi, [sa]))]:
        if name not in job.get("only", [name]):
            continue
        t0 = time.perf_counter()
        res[name] = float(f())
        times[name] = time.perf_counter() - t0
    out[sa] = {"values": res, "seconds": times}
print(json.dumps(out))
"""

ANONYMETER = r"""
import json, sys, time, warnings
import numpy as np, pandas as pd
from anonymeter.evaluators import InferenceEvaluator
job = json.load(sys.stdin)
frames = {k: pd.DataFrame(job[k]) for k in ("ori", "syn", "control")}
aux, secret = job["aux"], job["secret"]

class Majority:
    # the privwatch attacker: most frequent released value in the same cell, else overall mode
    def __init__(self, syn):
        self.mode = syn.groupby(aux)[secret].agg(lambda s: s.value_counts().index[0])
        self.overall = syn[secret].value_counts().index[0]
    def predict(self, x):
        keys = pd.MultiIndex.from_frame(x[aux]) if len(aux) > 1 else x[aux[0]]
        guess = self.mode.reindex(keys).to_numpy()
        guess = np.where(pd.isna(guess), self.overall, guess)
        return pd.Series(guess, index=x.index)

model = Majority(frames["syn"]) if job["model"] == "majority" else None
np.random.seed(job.get("seed", 0))
t0 = time.perf_counter()
with warnings.catch_warnings():
    warnings.simplefilter("ignore")
    ev = InferenceEvaluator(ori=frames["ori"], syn=frames["syn"], control=frames["control"],
                            aux_cols=aux, secret=secret, regression=False,
                            n_attacks=len(frames["ori"]), inference_model=model)
    ev.evaluate(n_jobs=1)
    res = ev.results(confidence_level=0.95)
    risk = ev.risk(confidence_level=0.95)
print(json.dumps({"risk": risk.value, "risk_ci": list(risk.ci),
                  "n_success": int(res.n_success), "n_control": int(res.n_control),
                  "attack_rate": list(res.attack_rate), "control_rate": list(res.control_rate),
                  "seconds": time.perf_counter() - t0}))
"""


def census_like(n: int, rng: np.random.Generator) -> pd.DataFrame:
    """A UCI-adult-like table of ``n`` records and 10 columns with realistic dependencies:
    age, sex, race, education, marital status, occupation, workclass, hours per week, region
    and income (``<=50K`` / ``>50K``)."""
    age = np.clip(rng.gamma(7.0, 5.5, n) + 17, 17, 90).astype(np.int64)
    sex = rng.choice(["Female", "Male"], n, p=[0.33, 0.67])
    race = rng.choice(["White", "Black", "Asian", "Amer-Indian", "Other"], n,
                      p=[0.85, 0.09, 0.03, 0.01, 0.02])  # fmt: skip
    edu_levels = np.array(["Preschool", "1st-4th", "5th-6th", "7th-8th", "9th", "10th", "11th",
                           "12th", "HS-grad", "Some-college", "Assoc-voc", "Assoc-acdm",
                           "Bachelors", "Masters", "Prof-school", "Doctorate"])  # fmt: skip
    edu_p = np.array([1, 2, 4, 8, 7, 12, 15, 6, 135, 90, 18, 14, 70, 23, 8, 5], dtype=float)
    edu = rng.choice(16, n, p=edu_p / edu_p.sum())
    marital = np.where(
        age < 25 + rng.integers(0, 8, n),
        "Never-married",
        rng.choice(["Married", "Divorced", "Separated", "Widowed", "Never-married"], n,
                   p=[0.6, 0.17, 0.04, 0.04, 0.15]),
    )  # fmt: skip
    occupations = np.array(["Tech-support", "Craft-repair", "Other-service", "Sales",
                            "Exec-managerial", "Prof-specialty", "Handlers-cleaners",
                            "Machine-op-inspct", "Adm-clerical", "Farming-fishing",
                            "Transport-moving", "Priv-house-serv", "Protective-serv",
                            "Armed-Forces"])  # fmt: skip
    skill = np.clip(edu + rng.normal(0, 2.5, n), 0, 15) / 15
    occ = np.clip((skill * 6 + rng.integers(0, 8, n)).astype(np.int64), 0, 13)
    workclass = rng.choice(["Private", "Self-emp", "Local-gov", "State-gov", "Federal-gov",
                            "Without-pay"], n, p=[0.7, 0.11, 0.07, 0.05, 0.05, 0.02])  # fmt: skip
    hours = np.clip(np.round(rng.normal(40 + 4 * (sex == "Male"), 11, n)), 1, 99).astype(np.int64)
    region = rng.choice(["North", "South", "East", "West", "Abroad"], n,
                        p=[0.25, 0.3, 0.2, 0.15, 0.1])  # fmt: skip
    logit = -6 + 0.05 * np.minimum(age, 60) + 3 * skill + 0.6 * (marital == "Married")
    logit += 0.03 * (hours - 40) + 0.4 * (sex == "Male")
    income = np.where(rng.random(n) < 1 / (1 + np.exp(-logit)), ">50K", "<=50K")
    return pd.DataFrame(
        {
            "age": age,
            "sex": sex,
            "race": race,
            "education": edu_levels[edu],
            "marital": marital,
            "occupation": occupations[occ],
            "workclass": workclass,
            "hours": hours,
            "region": region,
            "income": income,
        }
    )


def generalise(frame: pd.DataFrame) -> pd.DataFrame:
    """A typical full-domain generalisation of :func:`census_like` quasi-identifiers: age in
    10-year bands, education in 4 levels, race White / non-White."""
    out = frame.copy()
    lo = (frame["age"] // 10) * 10
    out["age"] = lo.astype(str) + "-" + (lo + 9).astype(str)
    levels = {"Bachelors": "degree", "Masters": "degree", "Prof-school": "degree",
              "Doctorate": "degree", "HS-grad": "high-school", "Some-college": "college",
              "Assoc-voc": "college", "Assoc-acdm": "college"}  # fmt: skip
    out["education"] = frame["education"].map(levels).fillna("school")
    out["race"] = np.where(frame["race"] == "White", "White", "non-White")
    return out
