"""The audit of a table and its outputs: CSVs, JSON, figures and a self-contained HTML report."""

from ._audit import ESTIMATORS, AuditResult, audit
from ._prepare import MISSING_POLICIES, prepare_table
from ._write import OUTPUT_FILES, check_writable, write_audit

__all__ = [
    "ESTIMATORS",
    "MISSING_POLICIES",
    "OUTPUT_FILES",
    "AuditResult",
    "audit",
    "check_writable",
    "prepare_table",
    "write_audit",
]
