"""An alert's secrets in and out of their sealed columns, and their resealing with the
newest key at start (the last step of a key rotation, README "Secret key")."""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from typing import Any

import orjson
from sqlalchemy import select, update

from limelight.auth.sealing import Sealer, SecretUnreadable
from limelight.store.meta.alerts_models import Alert
from limelight.store.meta.db import MetaDB

log = logging.getLogger("limelight.alerts")


@dataclass(frozen=True)
class AlertSecrets:
    destinations: list[dict[str, Any]]
    webhook_secret: str


def seal_destinations(sealer: Sealer, destinations: list[dict[str, Any]]) -> str:
    return sealer.seal(orjson.dumps(destinations).decode())


def open_secrets(sealer: Sealer, alert: Alert) -> AlertSecrets:
    """The alert's destinations and signing secret; ``SecretUnreadable`` when no key
    configured opens them."""
    destinations = orjson.loads(sealer.open(alert.sealed_destinations))
    return AlertSecrets(destinations, sealer.open(alert.sealed_webhook_secret))


# An http destination's URL in a check's history is kept under this key, sealed.
SEALED_TARGET = "sealed_target"
UNREADABLE_TARGET = "(sealed with an earlier secret key)"


def seal_delivery(sealer: Sealer, delivery: dict[str, Any]) -> dict[str, Any]:
    """A notification's outcome as the check's history stores it: the URL of a webhook or
    Slack destination sealed as the alert's own are (email recipients stay as they are)."""
    if delivery.get("type") == "email" or "target" not in delivery:
        return delivery
    return {
        SEALED_TARGET if k == "target" else k: sealer.seal(v) if k == "target" else v
        for k, v in delivery.items()
    }


def open_delivery(sealer: Sealer, stored: dict[str, Any]) -> dict[str, Any]:
    """A stored outcome with its target opened. The history is not resealed at a key
    rotation (it can hold millions of rows): a target sealed with a key since dropped
    is shown as such rather than failing the whole history."""
    if SEALED_TARGET not in stored:
        return stored
    out = {}
    for k, v in stored.items():
        if k == SEALED_TARGET:
            try:
                k, v = "target", sealer.open(v)
            except SecretUnreadable:
                k, v = "target", UNREADABLE_TARGET
        out[k] = v
    return out


@dataclass
class Resealed:
    """What ``reseal_all`` did: alerts resealed, and those no configured key opens."""

    resealed: int = 0
    unreadable: list[str] = field(default_factory=list)


def reseal_all(meta: MetaDB, sealer: Sealer) -> Resealed:
    """Seal again with the newest key every alert secret an older key sealed. One
    transaction with the write lock: an alert changed meanwhile is not overwritten
    with what was read before."""
    done = Resealed()
    columns = (Alert.id, Alert.sealed_destinations, Alert.sealed_webhook_secret)
    with meta.connection(immediate=True) as c:
        for alert_id, destinations, secret in c.execute(select(*columns)).all():
            if sealer.is_newest(destinations) and sealer.is_newest(secret):
                continue
            try:
                values = {
                    "sealed_destinations": sealer.reseal(destinations),
                    "sealed_webhook_secret": sealer.reseal(secret),
                }
            except SecretUnreadable:
                done.unreadable.append(alert_id)
                continue
            c.execute(update(Alert).where(Alert.id == alert_id).values(**values))
            done.resealed += 1
    if done.resealed:
        log.info("sealed the secrets of %d alerts with the newest secret key", done.resealed)
    if done.unreadable:
        log.error(
            "no configured secret key opens the destinations of the alerts %s: list the key "
            "they were sealed with in LIMELIGHT_PREVIOUS_SECRET_KEYS",
            ", ".join(done.unreadable),
        )
    return done
