"""Exact leakage measures of a known joint pmf ``p[s, x]`` or channel ``k[x, y]``.

Pure NumPy, vectorised, in nats unless ``base=`` says otherwise. Orientation: rows of a joint
pmf are sensitive values, columns observed values; rows of a channel are inputs.
"""

from ._alpha import arimoto_mi, maximal_leakage, sibson_mi
from ._bayes import bayes_error, bayes_leakage, guessing_probability
from ._fdiv import F_FUNCTIONS, f_information
from ._ldp import ldp_epsilon
from ._lift import lift, lift_epsilon, log_lift, subset_log_lift
from ._nested import nested_leakage_reports
from ._reid import (
    DeltaPresence,
    ReidSummary,
    delta_presence,
    global_risk,
    household_risk,
    individual_risk,
    journalist_risk,
    k_map,
    marketer_risk,
    prosecutor_risk_per_class,
)
from ._report import LeakageReport, leakage_report
from ._shannon import entropy, mutual_information, nmil
from ._suda import SudaResult, suda
from ._uniques import (
    PopulationUniques,
    frequencies_of_frequencies,
    pitman_uniques,
    population_uniques,
    snb_uniques,
    zayatz_uniques,
)
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
    "DeltaPresence",
    "LeakageReport",
    "PopulationUniques",
    "ProsecutorRisk",
    "ReidSummary",
    "SudaResult",
    "arimoto_mi",
    "basic_beta_likeness",
    "bayes_error",
    "bayes_leakage",
    "delta_disclosure",
    "delta_presence",
    "distinct_l_diversity",
    "enhanced_beta_likeness",
    "entropy",
    "entropy_l_diversity",
    "f_information",
    "frequencies_of_frequencies",
    "global_risk",
    "guessing_probability",
    "household_risk",
    "individual_risk",
    "journalist_risk",
    "k_anonymity",
    "k_map",
    "ldp_epsilon",
    "leakage_report",
    "lift",
    "lift_epsilon",
    "log_lift",
    "marketer_risk",
    "maximal_leakage",
    "mutual_information",
    "nested_leakage_reports",
    "nmil",
    "pitman_uniques",
    "population_uniques",
    "prosecutor_risk",
    "prosecutor_risk_per_class",
    "recursive_cl_diversity",
    "sample_uniques",
    "sibson_mi",
    "snb_uniques",
    "subset_log_lift",
    "suda",
    "t_closeness",
    "zayatz_uniques",
]
