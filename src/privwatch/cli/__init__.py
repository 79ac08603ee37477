"""The ``privwatch`` command. It parses, calls library functions and prints; no logic lives here."""

from ._app import app, main

__all__ = ["app", "main"]
