"""The OAuth 2.0 server for integrations: the authorization code and refresh token
grants, token revocation, and the environments an installation was granted.

Written by hand rather than on Authlib's server, for three reasons: Authlib
has no server adapter for ASGI (its servers are for Flask and Django), the
contract's token requests are JSON bodies with camelCase names (``grantType``,
``clientId``) where Authlib reads the RFC's form fields, and the contract
answers a client that sent wrong credentials in the body with 401, where
Authlib answers 400. What is left of the grants is short (``grants.py``);
Authlib's client is used in the end-to-end tests to show that standard OAuth
clients work, so it is a development dependency only.
"""
