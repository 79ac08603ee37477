"""The audit of a table and its outputs: CSVs, JSON, figures and a self-contained HTML report."""

from ._apply import APPLY_FILES, AppliedBatch, apply_saved_mechanism
from ._audit import ESTIMATORS, LEAKAGE_KEYS, AuditResult, audit, run_audit
from ._html import next_steps
from ._leakage import UTILITY_KEYS
from ._mechanism import (
    MECHANISM_FORMAT,
    AppliedRelease,
    apply_mechanism,
    load_mechanism,
    save_mechanism,
)
from ._prepare import MISSING_POLICIES, prepare_table
from ._schema import SCHEMA
from ._source import SourceAudit, audit_source, write_source_audit
from ._source_neural import NEURAL_SOURCE_ESTIMATORS, NeuralSourceAudit, audit_source_neural
from ._stamp import file_sha256, privwatch_version

# number words shared with the CLI's printer (re-exported, not part of the audited API)
from ._words import fmt as fmt
from ._words import pct as pct
from ._words import pct_ci as pct_ci
from ._write import OUTPUT_FILES, check_writable, leakage_payload, write_audit

__all__ = [
    "APPLY_FILES",
    "ESTIMATORS",
    "LEAKAGE_KEYS",
    "MECHANISM_FORMAT",
    "MISSING_POLICIES",
    "NEURAL_SOURCE_ESTIMATORS",
    "OUTPUT_FILES",
    "SCHEMA",
    "UTILITY_KEYS",
    "AppliedBatch",
    "AppliedRelease",
    "AuditResult",
    "NeuralSourceAudit",
    "SourceAudit",
    "apply_mechanism",
    "apply_saved_mechanism",
    "audit",
    "audit_source",
    "audit_source_neural",
    "check_writable",
    "file_sha256",
    "leakage_payload",
    "load_mechanism",
    "next_steps",
    "prepare_table",
    "privwatch_version",
    "run_audit",
    "save_mechanism",
    "write_audit",
    "write_source_audit",
]
