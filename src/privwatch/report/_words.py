"""Plain words for the report: names of measures, a glossary, and numbers without float noise
(:mod:`privwatch._numbers`, shared with the audit's release methods, re-exported here)."""

from __future__ import annotations

from .._numbers import fmt, fmt_ci, pct, pct_ci

__all__ = ["GLOSSARY", "MEASURE_NAMES", "fmt", "fmt_ci", "pct", "pct_ci", "term"]

#: measure key -> (display name, unit, glossary term). Unit "nats", "prob" or "".
MEASURE_NAMES: dict[str, tuple[str, str, str]] = {
    "entropy_sensitive": ("Entropy of the sensitive column", "nats", "entropy"),
    "mutual_information": ("Mutual information", "nats", "mutual information"),
    "lift_epsilon": ("Worst log-lift (lift-privacy level)", "nats", "log-lift"),
    "sibson_mi": ("Sibson mutual information (alpha = 2)", "nats", "Sibson mutual information"),
    "arimoto_mi": ("Arimoto mutual information (alpha = 2)", "nats", "Arimoto mutual information"),
    "maximal_leakage": ("Maximal leakage", "nats", "maximal leakage"),
    "kl_information": ("f-information, Kullback-Leibler", "nats", "f-information"),
    "chi2_information": ("f-information, chi-square", "", "f-information"),
    "tv_information": ("f-information, total variation", "", "f-information"),
    "hellinger_information": ("f-information, squared Hellinger", "", "f-information"),
    "guessing_probability": ("Best guess succeeds, after release", "prob", "Bayes attacker"),
    "prior_guessing_probability": ("Best guess succeeds, without data", "prob", "Bayes attacker"),
    "bayes_error": ("Best guess fails, after release", "prob", "Bayes attacker"),
    "bayes_leakage": ("Bayes (min-entropy) leakage", "nats", "min-entropy leakage"),
    "ldp_epsilon": ("Local differential privacy level", "nats", "local differential privacy"),
    "k_anonymity": ("k-anonymity (smallest class)", "", "k-anonymity"),
    "sample_uniques": ("Sample uniques (classes of one record)", "", "sample unique"),
    "prosecutor_risk_max": ("Prosecutor re-identification risk, max", "prob", "prosecutor risk"),
    "prosecutor_risk_mean": ("Prosecutor re-identification risk, mean", "prob", "prosecutor risk"),
    "distinct_l_diversity": ("Distinct l-diversity", "", "l-diversity"),
    "entropy_l_diversity": ("Entropy l-diversity", "", "l-diversity"),
    "recursive_cl_diversity": ("Recursive (c, l = 2)-diversity: smallest c", "", "l-diversity"),
    "t_closeness": ("t-closeness (Earth mover's distance)", "", "t-closeness"),
    "basic_beta_likeness": ("Basic beta-likeness", "", "beta-likeness"),
    "enhanced_beta_likeness": ("Enhanced beta-likeness", "", "beta-likeness"),
    "delta_disclosure": ("Delta-disclosure privacy", "nats", "delta-disclosure"),
}

#: term -> one-line explanation (hover text and the glossary at the end of the report).
GLOSSARY: dict[str, str] = {
    "sensitive column": "The attribute that must stay hidden (e.g. a diagnosis or ethnicity).",
    "observed columns": "The other columns, published (possibly generalised) in the release.",
    "quasi-identifier": "An observed column an adversary may already know about a person.",
    "equivalence class": "The records that share the same released observed values (a cell).",
    "lift": "How much seeing a released cell multiplies the belief in a sensitive value: "
    "p(s | cell) / p(s).",
    "log-lift": "The natural logarithm of the lift; 0 means the release tells nothing.",
    "epsilon": "The largest log-lift allowed: beliefs may grow at most e^epsilon times.",
    "lift privacy": "Every released cell keeps every sensitive value's log-lift within epsilon "
    "(two-sided: both directions; positive: beliefs may only grow by e^epsilon).",
    "held-out tolerance": "The largest share of people outside the audited records whose "
    "released cell may break epsilon: the upper end of the held-out check's 95 % interval must "
    "lie within it.",
    "suppression limit": "The largest share of records the release may suppress (release as '*').",
    "confidence": "A credible margin: every released cell must meet epsilon with the credible "
    "bounds of its sensitive shares at this level, not only with the shares counted.",
    "minimum class size": "Every released cell but the suppressed one holds at least this many "
    "records (the k of k-anonymity).",
    "delta": "The (epsilon, delta) relaxation: the share of records allowed to break epsilon.",
    "nats": "Units of information with the natural logarithm (1 nat = 1.44 bits).",
    "held-out check": "The release is fitted on part of the records and checked on the rest, "
    "to see whether the guarantee holds for people it was not fitted on.",
    "breach probability": "The share of records whose released cell breaks epsilon.",
    "credible interval": "A range holding the true value with 95 % probability under the model.",
    "Wilson interval": "A 95 % confidence interval for a proportion (Wilson, 1927).",
    "generalisation": "Replacing a value by a coarser one (age 37 -> 35-45); '*' hides it.",
    "suppression": "Releasing every observed column of a record as '*'.",
    "global recoding": "Every value of a column generalised to the same level.",
    "local recoding": "Different cells generalised to different levels.",
    "information kept": "Entropy of the released cells (or their information about a useful "
    "column): how much detail the release keeps, in nats.",
    "entropy": "The uncertainty of a variable, in nats.",
    "mutual information": "How much the observed values tell about the sensitive one, on "
    "average, in nats.",
    "Sibson mutual information": "A worst-case-leaning average of the information (order 2).",
    "Arimoto mutual information": "Another order-2 generalisation of mutual information.",
    "maximal leakage": "How much any guess about any function of the sensitive value improves, "
    "at worst (Issa, Wagner and Kamath).",
    "f-information": "A family of divergences between the joint and independent distributions.",
    "min-entropy leakage": "Log of how much the release multiplies the best guess's success.",
    "local differential privacy": "The largest log-ratio of the chance of an observed value "
    "under two sensitive values.",
    "NMIL": "Normalised mutual information loss: the share of the observed information the "
    "release gives up.",
    "k-anonymity": "Every released cell holds at least k records (Sweeney, 2002).",
    "sample unique": "A record alone in its released cell.",
    "prosecutor risk": "Chance of re-identifying a known person: 1 / size of their cell.",
    "l-diversity": "Every cell holds at least l well-represented sensitive values "
    "(Machanavajjhala et al., 2007).",
    "t-closeness": "Every cell's sensitive distribution is within distance t of the whole "
    "table's (Li et al., 2007).",
    "beta-likeness": "No sensitive value's share in a cell exceeds its overall share by more "
    "than a relative beta (Cao and Karras, 2012).",
    "delta-disclosure": "Every cell's log ratio of sensitive shares to overall shares is within "
    "delta (Brickell and Shmatikov, 2008).",
    "inference attack": "An adversary guesses the sensitive value from the released cell; "
    "compared on records in the release and held-out records (anonymeter's design).",
    "control set": "Records not used to fit the release: the attack's success on them is what "
    "the release teaches about people in general.",
    "attack risk": "(success on released - success on control) / (1 - success on control): "
    "what the release reveals about the people in it beyond people like them.",
    "Bayes attacker": "The best possible guesser who knows the released distribution exactly.",
}


def term(name: str) -> str:
    """The one-line explanation of a glossary term ('' if none)."""
    return GLOSSARY.get(name, "")
