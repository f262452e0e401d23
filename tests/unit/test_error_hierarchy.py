"""Every exception class of the package is in the one hierarchy of ``limelight.errors``.

A class outside it is missed by whatever handles the hierarchy as a whole (the CLI's
one error path, the pages' and the API's error answers), so none may slip in unseen.
"""

from __future__ import annotations

import importlib
import inspect
import pkgutil
from collections.abc import Iterator
from types import ModuleType

import limelight
from limelight.errors import ControlFlow, InvalidValue, LimelightError


def _modules() -> Iterator[ModuleType]:
    for found in pkgutil.walk_packages(limelight.__path__, "limelight."):
        # Importing __main__ runs the command line; it defines no class.
        if found.name != "limelight.__main__":
            yield importlib.import_module(found.name)


def _classes(owner: object, module: str) -> Iterator[type]:
    """The classes defined in ``module``: at its top level and nested in its classes."""
    for value in vars(owner).values():
        if inspect.isclass(value) and value.__module__ == module and value is not owner:
            yield value
            yield from _classes(value, module)


def _exception_classes() -> dict[str, type]:
    return {
        f"{module.__name__}.{cls.__qualname__}": cls
        for module in _modules()
        for cls in _classes(module, module.__name__)
        if issubclass(cls, BaseException)
    }


def test_every_exception_class_derives_from_limelight_error() -> None:
    found = _exception_classes()
    outside = sorted(name for name, cls in found.items() if not issubclass(cls, LimelightError))
    assert outside == []
    # The walk reaches every layer (else the check above proves nothing).
    for name in (
        "limelight.errors.BadRequest",
        "limelight.cli.failures.Refused",
        "limelight.console.session.LoginRequired",
        "limelight.store.meta.db.WriteAfterRead",
        "limelight.auth.oauth.grants._CodeNotUsable",
    ):
        assert name in found


def test_control_flow_and_refused_values_are_their_documented_kinds() -> None:
    found = _exception_classes()
    control = {
        n for n, cls in found.items() if issubclass(cls, ControlFlow) and cls is not ControlFlow
    }
    assert control == {
        "limelight.auth.oauth.authorize.ErrorPage",
        "limelight.auth.oauth.authorize.ErrorRedirect",
        "limelight.auth.oauth.grants._CodeNotUsable",
        "limelight.console.session.LoginRequired",
        "limelight.store.events.buffered._Stopped",
    }
    invalid = {
        n for n, cls in found.items() if issubclass(cls, InvalidValue) and cls is not InvalidValue
    }
    assert invalid == {
        "limelight.alerts.destinations.RefusedDestination",
        "limelight.auth.oauth.logo.BadLogo",
        "limelight.auth.oauth.redirects.BadRedirect",
        "limelight.ingest.concatenated.NotConcatenatedJson",
        "limelight.auth.passwords.WeakPassword",
    }
