"""The published JSON Schema of ``leakage.json`` (draft 2020-12).

Non-finite numbers are written as the strings ``"inf"``, ``"-inf"`` and ``"nan"`` (JSON has no
infinity), so every number field accepts them.
"""

from __future__ import annotations

from typing import Any

from ..audit import LEAKAGE_KEYS, ROUTES, UTILITY_KEYS

__all__ = ["SCHEMA"]

_NUM: dict[str, Any] = {"$ref": "#/$defs/number"}
_PROB: dict[str, Any] = {"$ref": "#/$defs/number"}
_INTERVAL: dict[str, Any] = {"type": "array", "items": _NUM, "minItems": 2, "maxItems": 2}
_JUDGED: dict[str, Any] = {
    "type": "object",
    "required": ["value", "threshold", "rule", "passes", "reference"],
    "properties": {
        "value": _NUM,
        "threshold": _NUM,
        "rule": {"enum": [">=", "<=", "<"]},
        "passes": {"type": "boolean"},
        "reference": {"type": "string"},
    },
}
_REID_PART: dict[str, Any] = {
    "type": "object",
    "required": [
        "prosecutor_max",
        "prosecutor_mean",
        "journalist_max",
        "marketer",
        "population_uniques",
        "global_risk",
        "records_above_threshold",
    ],
    "properties": {
        "n_records": {"type": "integer", "minimum": 1},
        "n_classes": {"type": "integer", "minimum": 1},
        "population_source": {"enum": ["population table", "weights", "sampling fraction", "none"]},
        "prosecutor_max": _PROB,
        "prosecutor_mean": _PROB,
        "journalist_max": _PROB,
        "marketer": _PROB,
        "population_uniques": {
            "type": "object",
            "required": ["estimate", "ci", "estimator", "rule"],
            "properties": {
                "estimate": _NUM,
                "ci": {"anyOf": [{"type": "null"}, _INTERVAL]},
                "estimator": {"type": "string"},
                "rule": {"type": "string"},
            },
        },
        "global_risk": _NUM,
        "records_above_threshold": {"type": "integer", "minimum": 0},
        "k_map": {"anyOf": [{"type": "null"}, {"type": "integer", "minimum": 1}]},
        "household_risk_max": {"anyOf": [{"type": "null"}, _PROB]},
    },
}
_REID_LIMIT: dict[str, Any] = {
    "type": "object",
    "required": ["requested", "achieved", "holds"],
    "properties": {"requested": _NUM, "achieved": _NUM, "holds": {"type": "boolean"}},
}
_REID_CONSTRAINT: dict[str, Any] = {
    "type": "object",
    "required": ["model"],
    "properties": {
        "model": {"enum": ["population table", "weights", "sampling fraction", "none"]},
        "max_reid_risk": _REID_LIMIT,
        "max_population_uniques": _REID_LIMIT,
    },
}
_REID: dict[str, Any] = {
    "anyOf": [
        {"type": "null"},
        {
            "type": "object",
            "required": ["threshold", "release", "input"],
            "properties": {
                "threshold": _PROB,
                "threshold_reference": {"type": "string"},
                "release": _REID_PART,
                "input": _REID_PART,
                "constraint": {"anyOf": [{"type": "null"}, _REID_CONSTRAINT]},
            },
        },
    ]
}
_CLASSIC: dict[str, Any] = {
    "type": "object",
    "required": ["n_records", "n_classes", "quasi_identifiers", "table", "sensitive"],
    "properties": {
        "n_records": {"type": "integer", "minimum": 1},
        "n_classes": {"type": "integer", "minimum": 1},
        "quasi_identifiers": {"type": "array", "items": {"type": "string"}},
        "table": {
            "type": "object",
            "required": [
                "k_anonymity",
                "sample_uniques",
                "prosecutor_risk_max",
                "prosecutor_risk_mean",
            ],
            "additionalProperties": _JUDGED,
        },
        "sensitive": {
            "type": "object",
            "minProperties": 1,
            "additionalProperties": {
                "type": "object",
                "required": ["n_values", "t_closeness_distance", "measures"],
                "properties": {
                    "n_values": {"type": "integer"},
                    "t_closeness_distance": {"enum": ["equal", "ordered"]},
                    "recursive_l": {"type": "integer"},
                    "measures": {"type": "object", "additionalProperties": _JUDGED},
                },
            },
        },
    },
}
_ATTACK_ATTR: dict[str, Any] = {
    "type": "object",
    "required": [
        "n_targets",
        "n_control",
        "success_targets",
        "success_targets_ci",
        "success_control",
        "success_control_ci",
        "baseline_success",
        "risk",
        "risk_ci",
        "threshold",
        "passes",
        "reference",
        "prior_success",
        "bayes_success",
        "bayes_passes",
    ],
    "properties": {
        "n_targets": {"type": "integer", "minimum": 1},
        "n_control": {"type": "integer", "minimum": 1},
        "success_targets": _PROB,
        "success_targets_ci": _INTERVAL,
        "success_control": _PROB,
        "success_control_ci": _INTERVAL,
        "baseline_success": _PROB,
        "risk": _PROB,
        "risk_ci": _INTERVAL,
        "threshold": _NUM,
        "passes": {"type": "boolean"},
        "reference": {"type": "string"},
        "prior_success": _PROB,
        "bayes_success": _PROB,
        "bayes_passes": {"type": "boolean"},
    },
}

_ALTERNATIVE: dict[str, Any] = {
    "type": "object",
    "required": [
        "epsilon", "disclosure", "args", "information_nats", "held_out", "feasible",
        "unprotected", "description", "searched_epsilon",
    ],
    "properties": {
        "epsilon": _NUM,
        "disclosure": {"enum": ["both", "positive"]},
        "args": {"type": "object"},
        "information_nats": {"anyOf": [_NUM, {"type": "null"}]},
        "held_out": {
            "anyOf": [
                {"type": "null"},
                {
                    "type": "object",
                    "required": ["estimate", "interval"],
                    "properties": {"estimate": _NUM, "interval": _INTERVAL},
                },
            ]
        },
        "feasible": {"type": "boolean"},
        "unprotected": {"type": "array", "items": {"type": "string"}},
        "description": {"type": "string"},
        # the epsilon whose search found the release (a smaller one's release can be the best
        # at a larger epsilon: release.search's frontier); null where no search made it or it
        # is not recorded (a re-identification constraint's alternative)
        "searched_epsilon": {"anyOf": [_NUM, {"type": "null"}]},
    },
}  # fmt: skip
_PER_VALUE: dict[str, Any] = {
    "type": "array",
    "items": {
        "type": "object",
        "required": ["value", "share", "belief_max", "belief_min", "protected"],
        "properties": {
            "value": {"type": "string"},
            "share": _NUM,
            "belief_max": _NUM,
            "belief_min": {"anyOf": [_NUM, {"type": "null"}]},
            "protected": {"type": "boolean"},
        },
    },
}

#: JSON Schema of leakage.json, as written by :func:`privwatch.report.write_audit` for every route.
SCHEMA: dict[str, Any] = {
    "$schema": "https://json-schema.org/draft/2020-12/schema",
    "$id": "https://privwatch.invalid/schemas/leakage-1.json",
    "title": "privwatch leakage.json",
    "type": "object",
    "$defs": {
        "number": {"anyOf": [{"type": "number"}, {"enum": ["inf", "-inf", "nan"]}]},
    },
    "required": [
        "stamp",
        "route",
        "engine",
        "route_reason",
        "settings",
        "summary",
        "epsilon",
        "epsilon_reason",
        *LEAKAGE_KEYS,
        "tradeoff",
    ],
    "properties": {
        "route": {"enum": list(ROUTES)},
        "engine": {"type": "string"},
        "route_reason": {"type": "string"},
        "written": {"type": ["array", "null"], "items": {"type": "string"}},
        "stamp": {
            "type": "object",
            "required": [
                "input_name",
                "input_sha256",
                "input_rows",
                "input_columns",
                "privwatch_version",
                "date",
            ],
            "properties": {
                "input_name": {"type": ["string", "null"]},
                "input_sha256": {
                    "anyOf": [{"type": "null"}, {"type": "string", "pattern": "^[0-9a-f]{64}$"}]
                },
                "input_rows": {"type": "integer", "minimum": 0},
                "input_columns": {"type": "integer", "minimum": 0},
                "privwatch_version": {"type": "string"},
                "date": {
                    "type": "string",
                    "pattern": "^\\d{4}-\\d\\d-\\d\\dT\\d\\d:\\d\\d:\\d\\dZ$",
                },
            },
        },
        "settings": {
            "type": "object",
            "required": ["sensitive", "observed", "epsilon", "estimator", "rng"],
        },
        "summary": {
            "type": "object",
            "required": ["n_records", "n_input", "n_dropped_missing", "sensitive", "observed"],
            "properties": {
                "n_records": {"type": "integer", "minimum": 1},
                "n_input": {"type": "integer", "minimum": 1},
                "n_dropped_missing": {"type": "integer", "minimum": 0},
                "n_flagged": {"type": "integer", "minimum": 0},
                "n_suppressed": {"type": "integer", "minimum": 0},
            },
        },
        "epsilon": _NUM,
        "epsilon_reason": {"type": "string"},
        "status": {"enum": ["met", "not_met"]},
        "reasons": {"type": "array", "items": {"type": "string"}},
        "alternatives": {"type": "array", "items": _ALTERNATIVE},
        "guarantee": {
            "type": "object",
            # release search: the epsilon met; watchdog: its Guarantee (effective_epsilon, ...)
            "anyOf": [
                {"required": ["epsilon", "per_value"], "properties": {"per_value": _PER_VALUE}},
                {"required": ["effective_epsilon"]},
            ],
        },
        "guarantee_in_words": {"type": "string"},
        "release": {
            "anyOf": [
                {"type": "null"},
                {
                    "type": "object",
                    "required": ["method", "generalisation", "suppressed_records", "n_records"],
                },
            ]
        },
        "held_out": {
            "anyOf": [
                {"type": "null"},
                {
                    "type": "object",
                    "required": ["folds", "breach_probability", "breach_probability_ci"],
                    "properties": {
                        "folds": {"type": "integer", "minimum": 2},
                        "breach_probability": _PROB,
                        "breach_probability_ci": _INTERVAL,
                    },
                },
            ]
        },
        "frontier": {
            "anyOf": [
                {"type": "null"},
                {
                    "type": "array",
                    "items": {
                        "type": "object",
                        "required": ["epsilon", "information_nats", "suppressed_share", "method"],
                    },
                },
            ]
        },
        "before": {"type": "object", "additionalProperties": {"anyOf": [_NUM, {"type": "null"}]}},
        "after": {"anyOf": [{"type": "null"}, {"type": "object"}]},
        "utility": {
            "type": "object",
            "required": list(UTILITY_KEYS),
            "additionalProperties": {"anyOf": [_NUM, {"type": "null"}]},
        },
        "classic": {
            "anyOf": [
                {"type": "null"},
                {
                    "type": "object",
                    "required": ["release", "input"],
                    "properties": {"release": _CLASSIC, "input": _CLASSIC},
                },
            ]
        },
        "reidentification": _REID,
        "attack": {
            "anyOf": [
                {"type": "null"},
                {
                    "type": "object",
                    "required": ["design", "n_targets", "n_control", "attributes"],
                    "properties": {
                        "design": {"type": "string"},
                        "n_targets": {"type": "integer", "minimum": 1},
                        "n_control": {"type": "integer", "minimum": 1},
                        "control_unseen_tuples": {"type": "integer", "minimum": 0},
                        "attributes": {"type": "object", "additionalProperties": _ATTACK_ATTR},
                    },
                },
            ]
        },
        "warnings": {
            "type": "array",
            "items": {
                "type": "object",
                "required": ["category", "message"],
                "properties": {"category": {"type": "string"}, "message": {"type": "string"}},
            },
        },
        "tradeoff": {"type": "object", "additionalProperties": {"type": "array"}},
        # optional: privwatch check (a release made elsewhere), docs/check.md
        "check": {
            "type": "object",
            "required": ["kind"],
            "properties": {"kind": {"enum": ["aligned", "synthetic"]}},
        },
    },
}
