"""``privwatch audit``: parse into an :class:`~privwatch.audit.AuditSpec`, run, write, print.

No decision is made here: the route is :func:`privwatch.audit.plan`'s, the verdict the
audit's, the files :func:`privwatch.report.write_audit`'s. Library errors name Python
parameters; :func:`~privwatch.cli._flags.to_flags` turns them into flags.
"""

from __future__ import annotations

import json
import math
import time
import warnings
from pathlib import Path
from typing import Any

import typer

from ..audit import AuditSpec, Bundled, Caller, method_for, plan, run
from ..exceptions import PrivwatchError, ValidationError
from ..release.heldout import FOLDS, TOLERANCE
from ..release.search import MAX_NODES, MAX_SUPPRESSED, MIN_CLASS_SIZE
from ..report import check_writable, write_audit
from ._audit_options import DEFAULT_MAX_LEVELS, Data, Opt
from ._flags import command_line, to_flags
from ._io import console, fail, load_config, writes_or_leaves_nothing
from ._print import print_audit, summary_json
from ._progress import progress

__all__ = ["audit_command", "spec_from_options"]

#: Command-line options that are not audit options (where the input comes from, what is
#: written and printed).
NOT_SPEC = ("data", "dataset", "out", "overwrite", "save_mechanism_to", "quiet", "as_json")


def spec_from_options(o: dict[str, Any]) -> AuditSpec:
    """The :class:`AuditSpec` of the parsed command line (``--config`` merged in)."""
    options = {k: v for k, v in o.items() if k not in NOT_SPEC}
    options["hierarchies"] = options.pop("hierarchy") or []
    options["bins"] = options["bins"] or []
    return AuditSpec.from_options(options)


def _source(o: dict[str, Any]) -> Any:
    if o["dataset"] is not None:
        if o["data"] is not None:
            raise ValidationError("give either DATA or `dataset`, not both.")
        return Bundled(str(o["dataset"]))
    if o["data"] is None:
        raise ValidationError("give a DATA file, glob or database URL, or `dataset` NAME.")
    return str(o["data"])


def _check_save_path(path: Path, source: Any, overwrite: bool) -> None:
    """Refuse, before any work, a path the mechanism cannot be saved to (the audit's outputs
    would be written and the command would then fail), the input file itself, and an existing
    file unless ``overwrite`` (as for the output folder)."""
    if path.is_dir():
        raise ValidationError(
            f"`save_mechanism` must be a file to write (e.g. M.json), not a folder; got "
            f"{str(path)!r}."
        )
    if not path.parent.is_dir():
        raise ValidationError(
            f"`save_mechanism` must be a file in an existing folder; got {str(path)!r}."
        )
    if isinstance(source, str) and path.exists() and path.resolve() == Path(source).resolve():
        raise ValidationError(
            f"`save_mechanism` must not be the input file (it would be overwritten); got "
            f"{str(path)!r}."
        )
    if path.exists() and not overwrite:
        raise ValidationError(
            f"`save_mechanism` must be a new file; got {str(path)!r}, which exists: pass "
            "`overwrite`=True to replace it."
        )


def _audit(o: dict[str, Any], talk: bool, command: str) -> tuple[Any, list[Path], Path]:
    spec = spec_from_options(o)
    source = _source(o)
    route = plan(spec, source)
    if o["save_mechanism_to"] is not None:
        refusal = method_for(spec, route.name).mechanism_refusal(
            spec, route.name
        )  # the method says
        if refusal is not None:
            raise ValidationError(refusal)
        _check_save_path(Path(o["save_mechanism_to"]), source, bool(o["overwrite"]))
    target = Path(o["out"])
    check_writable(target, bool(o["overwrite"]))
    if talk:
        console.print(f"[dim]engine: {route.engine} ({to_flags(route.reason)})[/]", highlight=False)
    with progress(talk, route.steps + 1) as step:
        with warnings.catch_warnings():  # kept in result.warnings; print_audit shows them
            warnings.simplefilter("ignore")
            result = run(spec, source, out=target, progress=step)
        result.caller = Caller(command, to_flags, "command line")  # the report speaks flags
        step("writing the outputs")
        written = write_audit(result, target, overwrite=True, records=spec.records)
        if o["save_mechanism_to"] is not None:
            written.append(result.mechanism().save(o["save_mechanism_to"]))
    return result, written, target


def audit_command(
    ctx: typer.Context,
    data: Data = None,
    sensitive: Opt.sensitive = None,
    observed: Opt.observed = None,
    engine: Opt.engine = "auto",
    table: Opt.table = None,
    write_table: Opt.write_table = None,
    epsilon: Opt.epsilon = None,
    delta: Opt.delta = None,
    epsilon_max: Opt.epsilon_max = math.inf,
    method: Opt.method = None,
    estimator: Opt.estimator = "plugin",
    bins: Opt.bins = None,
    missing: Opt.missing = "error",
    force: Opt.force = False,
    max_levels: Opt.max_levels = DEFAULT_MAX_LEVELS,
    dataset: Opt.dataset = None,
    out: Opt.out = Path("privwatch-audit"),
    overwrite: Opt.overwrite = False,
    seed: Opt.seed = 0,
    hierarchy: Opt.hierarchy = None,
    disclosure: Opt.disclosure = "both",
    max_suppressed: Opt.max_suppressed = MAX_SUPPRESSED,
    folds: Opt.folds = FOLDS,
    useful: Opt.useful = None,
    local: Opt.local = True,
    held_out_tolerance: Opt.held_out_tolerance = TOLERANCE,
    confidence: Opt.confidence = None,
    max_nodes: Opt.max_nodes = MAX_NODES,
    min_class_size: Opt.min_class_size = MIN_CLASS_SIZE,
    suppression: Opt.suppression = "star",
    checks: Opt.checks = True,
    sampling_fraction: Opt.sampling_fraction = None,
    weights: Opt.weights = None,
    population: Opt.population = None,
    cluster_id: Opt.cluster_id = None,
    risk_threshold: Opt.risk_threshold = 0.09,
    max_reid_risk: Opt.max_reid_risk = None,
    max_population_uniques: Opt.max_population_uniques = None,
    report_records: Opt.report_records = False,
    records: Opt.records = True,
    sep: Opt.sep = ",",
    encoding: Opt.encoding = "utf-8",
    config: Opt.config = None,
    save_mechanism_to: Opt.save_mechanism = None,
    quiet: Opt.quiet = False,
    as_json: Opt.as_json = False,
) -> None:
    """Audit a table: score every record, release a lift-private version, write a report."""
    t0 = time.perf_counter()
    try:
        o = load_config(ctx, config)
    except PrivwatchError as exc:
        fail(str(exc))
        return
    talk = not (o["quiet"] or o["as_json"])
    with writes_or_leaves_nothing(Path(o["out"])):
        result, written, target = _audit(o, talk, command_line("audit", ctx.command.params, o))
    seconds = time.perf_counter() - t0
    names = [p.name for p in written]
    if o["as_json"]:
        typer.echo(json.dumps(summary_json(result, str(target), names, seconds), indent=2))
    elif talk:
        print_audit(result, o["epsilon"] is None)
        console.print(
            f"wrote {', '.join(names)} to {target} in {seconds:.1f} s",
            soft_wrap=True,
            highlight=False,
        )
    if not result.satisfied:
        raise typer.Exit(3)
