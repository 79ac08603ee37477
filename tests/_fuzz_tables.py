"""The tables of the API fuzzing harness (issue #19): baselines, overrides, the callables it does
not drive, and the cases known to fail. The harness itself is :mod:`tests._fuzz_catalogue`."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

import privwatch
from privwatch.audit import AuditSpec
from privwatch.release import per_value
from privwatch.release.cells import CountTable

P = np.array([[0.1, 0.2, 0.1], [0.3, 0.1, 0.2]])
K = np.array([[0.7, 0.3], [0.2, 0.8]])
COUNTS = np.array([[3.0, 1.0], [2.0, 2.0], [1.0, 4.0]])

#: Baseline (valid) value of an argument, by argument name.
BASELINES: dict[str, Any] = {
    "p": P,
    "k": K,
    "alpha": 2.0,
    "base": 2.0,
    "atol": 1e-8,
    "counts": COUNTS,
    "p_x": np.array([0.4, 0.6]),
    "mask": np.array([True, False, True]),
    "epsilon": 0.5,
    "delta": 0.1,
    "epsilon_max": 2.0,
    "epsilons": np.array([0.1, 0.5, 1.0]),
    "p_x_size": 3,
    "keep": np.array([True, False, True]),
    "risk": np.array([0.1, 0.5, 1.2]),
    "n": 50,
    "rho": 0.5,
    "n_sensitive": 2,
    "n_observed": 3,
    "n_inputs": 2,
    "n_outputs": 3,
    "concentration": 1.0,
    "rng": 0,
    "users": np.array([0, 1, 1, 2]),
    "lat": np.array([48.85, 48.86]),
    "lon": np.array([2.35, 2.36]),
    "m": 3,
    "level": 0.9,
    "n_success": 3,
    "n_total": 10,
    "confidence_level": 0.95,
    "distortion": 0.5,
    "variances": np.array([1.0, 0.5]),
    "var_useful": 1.0,
    "scale": 1.0,
    "l": 2.0,
    "n_bootstrap": 20,
    "specs": ["age=3"],
    "spec": {"age": 3},
    "path": Path(__file__),
    "edges": np.array([25.0, 45.0]),
    "disclosure": "both",
}

#: Each sensitive value's share (the baseline of ``release.per_value``).
SHARES = pd.Series({"a": 0.6, "b": 0.4})
#: A count table of two observed tuples, two sensitive values and two folds.
TABLE = CountTable(
    observed=("x",),
    sensitive=("s",),
    codes=np.array([[0], [1]]),
    counts=np.array([[[3.0, 1.0], [1.0, 0.0]], [[1.0, 1.0], [3.0, 2.0]]]),
    sensitive_values=[("a",), ("b",)],
)

#: Per-function baselines where a name means something else there.
OVERRIDES: dict[str, dict[str, Any]] = {
    "engines.read_table": {
        "path": Path(privwatch.__file__).parent / "datasets" / "data" / "compas-two-years.csv.gz"
    },
    "theory.symmetric_pair_optimum": {"budget": 0.1, "m": 3, "p": 0.3},
    "theory.symmetric_pair_mi": {"p": 0.3, "m": 3},
    "datasets.symmetric_pair": {"n": 20, "m": 3, "p": 0.3},
    "measures.nmil": {"p_x": np.array([0.4, 0.6]), "k": K},
    "measures.nested_leakage_reports": {"order": np.array([2, 0, 1]), "kept": np.array([0, 3, 1])},
    "measures.t_closeness": {"counts": COUNTS},
    "measures.delta_presence": {"sample_sizes": np.array([0, 1, 3]), "population_sizes": [2, 4, 3]},
    "measures.global_risk": {"sample_sizes": np.array([1, 2]), "class_risk": [0.5, 0.25]},
    "measures.household_risk": {"record_risk": np.array([0.5, 0.2]), "cluster": [1, 1]},
    "measures.individual_risk": {"sample_sizes": np.array([1, 3]), "population_sizes": [10, 40]},
    "measures.journalist_risk": {"sample_sizes": np.array([1, 2]), "population_sizes": [4, 10]},
    "measures.k_map": {"sample_sizes": np.array([1, 2]), "population_sizes": [4, 10]},
    "measures.marketer_risk": {"sample_sizes": np.array([1, 2]), "population_sizes": [4, 10]},
    "measures.prosecutor_risk_per_class": {"sample_sizes": np.array([1, 2, 4])},
    "measures.frequencies_of_frequencies": {"class_sizes": np.array([1, 1, 2, 5])},
    "measures.pitman_uniques": {"class_sizes": np.array([1, 1, 1, 2, 3]), "population_size": 80},
    "measures.population_uniques": {
        "class_sizes": np.array([1, 1, 1, 2, 3]),
        "population_size": 80,
    },
    "measures.snb_uniques": {"class_sizes": np.array([1, 1, 1, 2, 3]), "population_size": 80},
    "measures.zayatz_uniques": {"class_sizes": np.array([1, 1, 1, 2, 3]), "population_size": 80},
    "measures.suda": {"table": np.array([[0, 0], [0, 1], [1, 1]]), "max_size": 2},
    "mechanisms.optimal_bayes_mechanism": {
        "p": np.array([[0.3, 0.0, 0.2], [0.0, 0.5, 0.0]]),
        "distance": np.array([[0.0, 1.0, 2.0], [1.0, 0.0, 1.0], [2.0, 1.0, 0.0]]),
        "budget": 1.0,
    },
    "mechanisms.optimal_privacy_mechanism": {
        "p": np.full((2, 2, 2), 0.125),
        "distance": np.array([[0.0, 1.0], [1.0, 0.0]]),
        "budget": 0.6,
    },
    "estimators.lift_intervals": {"counts": COUNTS.T},
    "estimators.miller_madow_mutual_information": {"counts": COUNTS.T},
    "estimators.learned_breach": {
        "log_lift": np.array([[0.1, -0.2], [0.9, -1.0], [-0.3, 0.2]]),
        "sd": np.full((3, 2), 0.1),
        "flags": np.array([False, True, False]),
        "s_codes": np.array([0, 1, 1]),
        "epsilon": 0.5,
    },
    "estimators.margin_flags": {
        "log_lift": np.array([[0.1, -0.2], [0.9, -1.0]]),
        "sd": np.full((2, 2), 0.1),
        "epsilon": 0.5,
    },
    "estimators.record_breach": {
        "log_lift": np.array([[0.1, -0.2], [0.9, -1.0]]),
        "sd": np.full((2, 2), 0.1),
        "epsilon": 0.5,
    },
    "release.wilson_interval": {},
    # a TOML file without an [audit] table: its top level is read
    "audit.read_config": {"path": Path(__file__).resolve().parents[1] / "pyproject.toml"},
    "audit.choose_method": {"spec": AuditSpec(epsilon=1.0), "route": "memory"},
    "audit.method_for": {"spec": AuditSpec(epsilon=1.0), "route": "memory"},
    "release.parse_hierarchy_specs": {"specs": ["age=hierarchy.csv"]},
    "theory.gaussian_rate_distortion": {"budget": 0.5},
    "theory.gaussian_vector_useful_data": {"budget": 0.5, "rho": np.array([0.5, 0.3])},
    "theory.gaussian_useful_data": {"budget": 0.5},
    "theory.gaussian_full_data": {"budget": 0.5},
    "watchdog.record_tradeoff": {"sensitive": np.array([0, 1, 1])},
    # a tuple: any values are valid data (a list of strings would get the CLI-spec catalogue)
    "watchdog.safe_marker": {"marker": "*", "values": ("a", "*", "=3", "age=")},
    "watchdog.flagged_set_guarantee": {
        "sensitive_counts": np.array([50, 50]),
        "flagged_counts": np.array([10, 2]),
        "kept_risk": 0.3,
        "basis": "a test",
    },
    "release.per_value": {"shares": SHARES},
    "release.explain_protection": {
        "rows": per_value(SHARES, 0.5, "both"),
        "name": "s",
    },
    "adversarial.gaussian_mi": {
        "sensitive": np.array([[0.1], [0.5], [0.9], [1.3], [0.2], [0.7]]),
        "release": np.array([[0.3], [0.4], [1.1], [1.2], [0.0], [0.9]]),
    },
}

#: Callables the harness cannot drive from argument names alone (frames, estimator objects,
#: audit results, figures, engine sources), each with the test module that covers it; a name
#: that is no longer public fails ``test_catalogue_is_not_stale``.
NOT_DRIVEN: dict[str, str] = {
    "privwatch.bin_columns": "tests/test_preprocessing.py (data frames)",
    "preprocessing.check_discrete": "tests/test_preprocessing.py (data frames)",
    "release.classic_counts": "tests/release/test_classic_report.py (data frames)",
    "release.classic_report": "tests/release/test_classic_report.py (data frames)",
    "audit.reid_section": "tests/audit/test_reidentification.py (data frames)",
    "audit.read_population": "tests/audit/test_reidentification.py (population files)",
    "release.find_release": "tests/release/test_release.py (data frames)",
    "mechanisms.lift_channel": "tests/release/test_randomized.py (LP constraints on random pmfs)",
    "mechanisms.lift_channel_refuses": "tests/release/test_randomized.py (the LP's size limit, "
    "patched)",
    "mechanisms.release_information": "tests/release/test_randomized.py (a solved channel's "
    "inputs and matrix)",
    "mechanisms.symbol_log_lift": "tests/release/test_randomized.py (a solved channel's inputs "
    "and matrix)",
    "release.inference_attack": "tests/release/test_attack.py (data frames)",
    "release.bayes_attack_success": "tests/release/test_attack.py (a joint pmf, as measures)",
    "release.auto_hierarchy": "tests/release/test_release.py (data frames)",
    "release.as_text": "tests/release/test_release.py (pandas Series, via hierarchies)",
    "engines.choose_engine": "tests/engines (engine sources)",
    "engines.count_table": "tests/engines (data frames and engine sources)",
    "engines.fold_of": "tests/engines (data frames and engine sources)",
    "engines.iter_batches": "tests/engines (Parquet files)",
    "engines.parquet_files": "tests/engines/test_read_table.py (Parquet files and globs)",
    "engines.write_parquet_frames": "tests/estimators/test_stream_fit.py (iterables of frames)",
    "engines.write_parquet_files": "tests/engines/test_publishable_release.py (batches of frames "
    "on the streamed route)",
    "estimators.calibrate": "tests/audit/test_method_learned.py (cross-fitted log-lifts, labels)",
    "estimators.recalibrate": "tests/audit/test_method_learned.py (a fitted Calibration)",
    "estimators.fold_deviations": "tests/estimators/test_fold_deviations.py (a cross-fitted "
    "estimator)",
    "report.classic_rows": "tests/serve/test_pages.py (an audit's leakage.json)",
    "report.attack_rows": "tests/serve/test_pages.py (an audit's leakage.json)",
    "engines.label_records": "tests/engines (data frames and engine sources)",
    "engines.label_spark_frame": "tests/engines (Spark frames)",
    "engines.numeric_columns": "tests/engines/test_engine_bins.py (engine sources: --bins)",
    "engines.distinct_counts": "tests/engines/test_engine_bins.py (engine sources: auto bins)",
    "engines.value_counts": "tests/engines/test_engine_bins.py (engine sources: quantile bins)",
    "engines.tuple_counts": "tests/engines/test_engine_bins.py (engine sources: apply)",
    "gallery.config": "tests/test_gallery.py (experiment names)",
    "gallery.describe": "tests/test_gallery.py (experiment names)",
    "gallery.lookup": "tests/test_gallery.py (results dicts)",
    "gallery.reproduce": "tests/test_gallery.py (experiment runs)",
    "gallery.side_by_side": "tests/test_gallery.py (configs and results)",
    "estimators.posterior_log_loss": "tests/estimators (fitted estimators)",
    "estimators.bayes_error_grid": "tests/estimators (samples)",
    "estimators.grid_centres": "tests/estimators (samples)",
    "estimators.make_lift_estimator": "tests/estimators (estimator names)",
    "estimators.cross_fit_source": "tests/estimators/test_stream_crossfit.py (Parquet sources)",
    "audit.run": "tests/audit/test_one_audit.py (frames, files, globs; Spark: tests/engines)",
    "audit.plan": "tests/audit/test_one_audit.py (specs and sources)",
    "check.check": (
        "tests/check/test_check.py (an original and a release frame, aligned or synthetic)"
    ),
    "audit.estimate_log_lift": "tests/check (audit steps check reuses)",
    "audit.explain_release": "tests/check (audit steps check reuses)",
    "audit.joint_sensitive": "tests/check (audit steps check reuses)",
    "audit.release_leakage": "tests/check (audit steps check reuses)",
    "audit.settings_record": "tests/check (audit steps check reuses)",
    "audit.stable_leakage": "tests/check (audit steps check reuses)",
    "audit.tradeoff_curve": "tests/check (audit steps check reuses)",
    "audit.search_rows": "tests/audit/test_methods.py (rows of searched releases)",
    "audit.prepare_table": "tests/audit (data frames, through audit.run)",
    "audit.jsonable": "tests/audit/test_one_audit.py (audits: leakage.json == to_dict())",
    "audit.make_stamp": "tests/audit/test_outputs.py (the stamp of an audited file)",
    "audit.propose_epsilon": "tests/engines/test_cli_engines.py (count tables; doctest)",
    "audit.public_source": "tests/engines/test_cli_engines.py (database URLs)",
    "report.write_audit": "tests/audit/test_one_audit.py (audits of every route)",
    "report.render_report": "tests/audit and tests/report/test_report_browser.py (audits)",
    "report.staged_files": "tests/audit/test_cli_files.py (interruptions)",
    "report.leakage_payload": "tests/audit/test_leakage_keys.py (audits)",
    "report.next_steps": "tests/audit/test_outputs.py (audits)",
    "report.checks_note": "tests/audit/test_outputs.py (audits)",
    "release.load_mechanism": "tests/test_saved_files.py (saved mechanism files)",
    "release.apply_mechanism": "tests/release/test_generalisation.py (Generalisation, frames)",
    "report.check_writable": "tests/audit and tests/test_fuzz_cli.py (output folders)",
    "plotting.plot_ecdf": "tests/test_cli.py (figures)",
    "plotting.plot_lift_scatter": "tests/test_cli.py (figures)",
    "plotting.plot_tradeoff": "tests/test_cli.py (figures)",
    "plotting.save": "tests/test_cli.py (figures)",
    "datasets.load_compas": "tests/test_datasets.py (bundled files)",
    "datasets.load_digit_images": "tests/test_digits.py (bundled files)",
    "datasets.load_gowalla_paris": "tests/test_datasets.py (bundled files)",
    "datasets.synthetic_users": "tests/test_datasets.py (generator settings)",
    "adversarial.fit_many": "tests/adversarial/test_fit_many.py (estimator objects)",
    "adversarial.batch_mutual_information": "tests/adversarial (torch tensors)",
    "adversarial.hamming": "tests/adversarial (torch tensors)",
    "adversarial.pixel_cross_entropy": "tests/adversarial (torch tensors)",
    "adversarial.squared_error": "tests/adversarial (torch tensors)",
}

#: How an error message names an argument when it is not the parameter name (CLI parsers name
#: the option it parses, e.g. `bins`; the CLI maps such names to its flags).
ARG_NAMES: dict[str, dict[str, str]] = {
    "preprocessing.parse_bins": {"specs": "bins"},
    "release.parse_hierarchy_specs": {"specs": "hierarchies"},
    "audit.read_config": {"path": "config"},  # the file of --config
}

#: Cases known to fail, by exact case id (strict xfails; the owner is named by case-id prefix
#: in ``tests/test_fuzz_api.py``'s KNOWN). Keep it empty: an entry is a bug reported to the
#: owner of the file, removed when fixed (a fixed case fails until then).
KNOWN_FAILING: frozenset[str] = frozenset(
    f"{fn}[{arg}={label}]" for fn, arg, labels in () for label in labels
)
