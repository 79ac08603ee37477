"""One audit of one source (docs/architecture.md, layer 6).

- :class:`AuditSpec`: every option once, validated once (Python keywords, the command line,
  ``audit.toml``);
- :func:`plan`: the route (in memory, an engine, a streamed learned estimator) and why;
- :class:`Route`: measure (count or score), decide, label — the three routes implement it;
- :class:`ReleaseMethod`: what the audit releases (the generalisation search, the (epsilon,
  delta) watchdog, the learned watchdog), by name in :data:`METHODS`; :func:`choose_method`
  picks one from the spec, and the route's decide hands it the measurements;
- :func:`run`: the audit, returning one :class:`Audit` whose :meth:`Audit.to_dict` is
  ``leakage.json`` on every route.

Examples
--------
>>> import privwatch as pw
>>> result = pw.audit.run(source=pw.audit.Bundled("compas"), epsilon=1.0, checks=False)
>>> result.route, result.engine
('memory', 'pandas')
"""

from ._caller import Caller
from ._disclosure import ATTACK_REFERENCE, ATTACK_RISK_THRESHOLD, BAYES_REFERENCE
from ._json import jsonable
from ._leakage import LEAKAGE_KEYS, UTILITY_KEYS, explain_release, release_leakage, stable_leakage
from ._method import AuditView, Decision, Measured, ReleaseMethod, SavedMechanism
from ._method_search import search_rows
from ._plan import MEMORY_ONLY, plan
from ._prepare import MISSING_POLICIES, prepare_table
from ._registry import METHODS, choose_method, method_for
from ._reidentification import RISK_THRESHOLD, read_population, reid_section
from ._result import ROUTES, Audit
from ._route import RECORD_KEY, RELEASE_FILE, SCORES_FILE, Bundled, Route, Step
from ._route_engine import EngineRoute, propose_epsilon, public_source
from ._route_memory import BUNDLED, MemoryRoute
from ._route_stream import STREAM_ESTIMATORS, StreamRoute
from ._run import run
from ._spec import DISCLOSURES, ENGINE_CHOICES, ESTIMATORS, AuditSpec, read_config
from ._stamp import file_sha256, make_stamp, privwatch_version
from ._steps import (
    PROPOSAL_GRID,
    TARGET_LOSS,
    estimate_log_lift,
    joint_sensitive,
    settings_record,
    tradeoff_curve,
)

__all__ = [
    "ATTACK_REFERENCE",
    "ATTACK_RISK_THRESHOLD",
    "BAYES_REFERENCE",
    "BUNDLED",
    "DISCLOSURES",
    "ENGINE_CHOICES",
    "ESTIMATORS",
    "LEAKAGE_KEYS",
    "MEMORY_ONLY",
    "METHODS",
    "MISSING_POLICIES",
    "PROPOSAL_GRID",
    "RECORD_KEY",
    "RELEASE_FILE",
    "RISK_THRESHOLD",
    "ROUTES",
    "SCORES_FILE",
    "STREAM_ESTIMATORS",
    "TARGET_LOSS",
    "UTILITY_KEYS",
    "Audit",
    "AuditSpec",
    "AuditView",
    "Bundled",
    "Caller",
    "Decision",
    "EngineRoute",
    "Measured",
    "MemoryRoute",
    "ReleaseMethod",
    "Route",
    "SavedMechanism",
    "Step",
    "StreamRoute",
    "choose_method",
    "estimate_log_lift",
    "explain_release",
    "file_sha256",
    "joint_sensitive",
    "jsonable",
    "make_stamp",
    "method_for",
    "plan",
    "prepare_table",
    "privwatch_version",
    "propose_epsilon",
    "public_source",
    "read_config",
    "read_population",
    "reid_section",
    "release_leakage",
    "run",
    "search_rows",
    "settings_record",
    "stable_leakage",
    "tradeoff_curve",
]
