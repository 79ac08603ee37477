"""Exact leakage measures of a known joint pmf ``p[s, x]`` or channel ``k[x, y]``.

Pure NumPy, vectorised, in nats unless ``base=`` says otherwise. Orientation: rows of a joint
pmf are sensitive values, columns observed values; rows of a channel are inputs.
"""

from ._alpha import arimoto_mi, maximal_leakage, sibson_mi
from ._bayes import bayes_error, bayes_leakage, guessing_probability
from ._fdiv import F_FUNCTIONS, f_information
from ._ldp import ldp_epsilon
from ._lift import lift, lift_epsilon, log_lift, subset_log_lift
from ._report import LeakageReport, leakage_report
from ._shannon import entropy, mutual_information, nmil
from .classic import (
    ProsecutorRisk,
    basic_beta_likeness,
    delta_disclosure,
    distinct_l_diversity,
    enhanced_beta_likeness,
    entropy_l_diversity,
    k_anonymity,
    prosecutor_risk,
    recursive_cl_diversity,
    sample_uniques,
    t_closeness,
)

__all__ = [
    "F_FUNCTIONS",
    "LeakageReport",
    "ProsecutorRisk",
    "arimoto_mi",
    "basic_beta_likeness",
    "bayes_error",
    "bayes_leakage",
    "delta_disclosure",
    "distinct_l_diversity",
    "enhanced_beta_likeness",
    "entropy",
    "entropy_l_diversity",
    "f_information",
    "guessing_probability",
    "k_anonymity",
    "ldp_epsilon",
    "leakage_report",
    "lift",
    "lift_epsilon",
    "log_lift",
    "maximal_leakage",
    "mutual_information",
    "nmil",
    "prosecutor_risk",
    "recursive_cl_diversity",
    "sample_uniques",
    "sibson_mi",
    "subset_log_lift",
    "t_closeness",
]
