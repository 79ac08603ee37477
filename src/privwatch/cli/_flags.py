"""The one table from Python parameter names to command-line flags.

Library messages name parameters in backticks (`max_suppressed`, `disclosure`='positive');
:func:`to_flags` rewrites them as the flags a command-line user types (``--max-suppressed``,
``--disclosure positive``). No module outside ``cli/`` names a flag.
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Collection, Mapping, Sequence
from typing import Any

from ..release.search import MAX_NODES, MAX_SUPPRESSED, MIN_CLASS_SIZE

__all__ = ["ON_ONLY", "PARAM_FLAGS", "args_to_flags", "command_line", "flag", "to_flags"]

#: Parameters whose flag is not ``--`` + the name with dashes.
PARAM_FLAGS = {
    "seed": "--seed",
    "rng": "--seed",
    "local": "--local",
    "hierarchies": "--hierarchy",
    "hierarchy": "--hierarchy",
    "save_mechanism": "--save-mechanism",
    "save_mechanism_to": "--save-mechanism",
    "as_json": "--json",
    "list_": "--list",
    "out": "--out",
    "source": "DATA",
    "data": "DATA",
    "path": "DATA",
    "dataset": "--dataset",
    "config": "--config",
    "specs": "--bins",
}
#: Boolean parameters whose switch has no ``--no-`` form in some command: ``False`` is written
#: as leaving the switch out ("without --synthetic"). Every other boolean is ``--name`` /
#: ``--no-name`` (tests/test_flags.py checks both forms against every command's parser).
ON_ONLY = frozenset({"synthetic", "quiet", "as_json", "quick", "list_", "overwrite"})
#: A backticked name, then optionally ``=value``: quoted, or up to a separator (a sentence's
#: closing full stop is not part of the value: "pass `force`=True." is ``--force``).
_NAME = re.compile(
    r"`([A-Za-z_][A-Za-z0-9_]*)`"
    r"(?:=(?:'([^']*)'|\"([^\"]*)\"|([^\s,;:)]+?)(?=\.?(?:[\s,;:)]|$))))?"
)


def flag(name: str, positional: Mapping[str, str] | None = None) -> str:
    """The flag of parameter ``name`` (``max_suppressed`` -> ``--max-suppressed``); a command
    whose parameter is an argument names it in ``positional`` (``privwatch apply``:
    ``{"mechanism": "MECHANISM"}``, where ``privwatch check`` has ``--mechanism``)."""
    if positional and name in positional:
        return positional[name]
    return PARAM_FLAGS.get(name, "--" + name.replace("_", "-"))


def _replace(match: re.Match[str], positional: Mapping[str, str] | None = None) -> str:
    name = match.group(1)
    value = next((g for g in match.groups()[1:] if g is not None), None)
    text = flag(name, positional)
    if value is None:
        return text
    if value in ("True", "False") and text.startswith("--"):  # a switch takes no value
        if value == "True":
            return text
        return f"without {text}" if name in ON_ONLY else "--no-" + text[2:]
    return f"{text} {value}"


def to_flags(message: str, positional: Mapping[str, str] | None = None) -> str:
    """``message`` with every backticked parameter (and ``=value``) written as its flag
    (``positional``: the command's arguments, see :func:`flag`).

    >>> to_flags("allow `max_suppressed`=0.2 or `disclosure`='positive'")
    'allow --max-suppressed 0.2 or --disclosure positive'
    >>> to_flags("bin it or pass `force`=True. With `local`=False, `max_suppressed`=0.1.")
    'bin it or pass --force. With --no-local, --max-suppressed 0.1.'
    """
    return _NAME.sub(lambda m: _replace(m, positional), message)


#: Option values that need no flag (the command line's defaults).
DEFAULTS = {
    "local": True,
    "max_nodes": MAX_NODES,
    "min_class_size": MIN_CLASS_SIZE,
    "max_suppressed": MAX_SUPPRESSED,
}


def args_to_flags(args: dict[str, Any]) -> str:
    """An alternative's options as command-line flags, defaults left out
    (``--epsilon 1.38 --disclosure both --confidence 0.9``)."""
    parts = []
    for name, value in args.items():
        if value is None or DEFAULTS.get(name, object()) == value:
            continue
        if isinstance(value, bool):
            parts.append(f"`{name}`={value}")
        else:
            parts.append(
                f"`{name}`={value:.4g}" if isinstance(value, float) else f"`{name}`={value}"
            )
    return to_flags(" ".join(parts))


#: Options that change what is printed or whether a folder may be replaced, not the result:
#: left out of the command that reproduces a run.
NOT_REPRODUCED = ("quiet", "as_json", "overwrite", "config")


def _same(value: Any, default: Any) -> bool:
    if value is None or value == default:
        return True
    return isinstance(value, list | tuple) and not value and not default


def command_line(
    command: str,
    params: Sequence[Any],
    values: Mapping[str, Any],
    leave_out: Collection[str] = NOT_REPRODUCED,
) -> str:
    """The ``privwatch COMMAND ...`` line that gives ``values`` (a parsed command line, a
    ``--config`` file merged in): its arguments, then each option that differs from its
    default, spelled as the command's parser (``params``, click parameters) declares it and
    quoted for a POSIX shell.

    >>> import typer
    >>> from typer.main import get_command
    >>> app = typer.Typer()
    >>> @app.command()
    ... def go(data: str, epsilon: float = 1.0, local: bool = True, quiet: bool = False) -> None:
    ...     pass
    >>> params = get_command(app).params
    >>> command_line("audit", params, {"data": "my data.csv", "epsilon": 0.5, "local": False,
    ...                                "quiet": True})
    "privwatch audit 'my data.csv' --epsilon 0.5 --no-local"
    """
    words = ["privwatch", command]
    for p in params:
        if p.name in leave_out or p.name not in values:
            continue
        value = values[p.name]
        if p.param_type_name == "argument":
            words += [] if value is None else [str(value)]
        elif p.is_flag:
            if bool(value) != bool(p.default):
                words.append(p.opts[0] if value else p.secondary_opts[0])
        elif not _same(value, p.default):
            for item in value if p.multiple else [value]:
                words += [p.opts[0], str(item)]
    return " ".join(shlex.quote(w) for w in words)
