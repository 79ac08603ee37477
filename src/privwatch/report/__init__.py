"""The product surface of an audit: the HTML report, figures, words, and writing the files.

Renders a :class:`privwatch.audit.Audit` (of any route); makes no decision of its own.
"""

from ._html import attack_rows, checks_note, classic_rows, next_steps, render_report
from ._schema import SCHEMA
from ._words import GLOSSARY

# number words shared with the CLI's printer (re-exported, not part of the audited API)
from ._words import fmt as fmt
from ._words import pct as pct
from ._words import pct_ci as pct_ci
from ._write import (
    COMMON_FILES,
    OUTPUT_FILES,
    RECORD_FILES,
    check_writable,
    leakage_payload,
    staged_files,
    write_audit,
)

__all__ = [
    "COMMON_FILES",
    "GLOSSARY",
    "OUTPUT_FILES",
    "RECORD_FILES",
    "SCHEMA",
    "attack_rows",
    "check_writable",
    "checks_note",
    "classic_rows",
    "leakage_payload",
    "next_steps",
    "render_report",
    "staged_files",
    "write_audit",
]
