"""``limelight login``: save a server's address and admin key as a profile."""

from __future__ import annotations

import os
from typing import Annotated

import typer

from limelight.cli.failures import Refused
from limelight.cli.output import say
from limelight.cli.remote import DEFAULT_PROFILE, Server, Target, normal_url, save_profile


def login(
    url: Annotated[
        str,
        typer.Option(
            "--url", envvar="LIMELIGHT_URL", show_envvar=True, help="The server's address."
        ),
    ],  # fmt: skip
    profile: Annotated[
        str, typer.Option("--profile", help="The profile's name.")
    ] = DEFAULT_PROFILE,
) -> None:
    """Save a server's address and admin key as a profile, readable by you alone.

    The key is asked for (or LIMELIGHT_API_KEY) and saved once the server accepts it."""
    address = normal_url(url)
    key = os.environ.get("LIMELIGHT_API_KEY", "").strip()
    if not key:
        key = typer.prompt("Admin key (ll_sk_...)", hide_input=True).strip()
    with Server(Target(address, key)) as server:
        response = server.send("GET", "/v1/managed")
    if response.status_code == 401:
        raise Refused(f"{address} does not accept this key")
    if response.status_code == 403:
        raise Refused("an ingest key can only send events: log in with an admin key (ll_sk_...)")
    if response.status_code != 200:
        raise Refused(f"{address} answered {response.status_code}: is it a Limelight server?")
    path = save_profile(profile, address, key)
    say(f"Logged in to {address} as profile {profile!r} (saved in {path})")
