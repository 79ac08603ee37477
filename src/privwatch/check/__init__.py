"""``privwatch check``: judge a release another tool made by the audit's rules (docs/check.md).

This package sits above :mod:`privwatch.audit` (docs/architecture.md) and uses only its public
names: the :class:`~privwatch.audit.AuditSpec`, the one :class:`~privwatch.audit.Audit` result,
its ``leakage.json`` sections and the verdict rule of :mod:`privwatch.release`. Nothing in the
audit's routes uses it.

- :func:`check`: a row-aligned release (generalised, suppressed, perturbed) judged by the
  audit's held-out verdict, a release drawn through a saved channel judged against that
  channel (``mechanism=``, :mod:`._channel`), or a synthetic table judged by the inference
  attack.

Examples
--------
>>> import privwatch as pw
>>> from privwatch.check import check
>>> callable(check)
True
"""

from ._run import check

__all__ = ["check"]
