"""The OAuth 2.0 server for integrations: the authorization code and refresh token
grants, token revocation, and the environments an installation was granted.

Written by hand rather than on Authlib's server. Authlib splits a grant into
callbacks (``query_authorization_code``, ``save_token``,
``delete_authorization_code``) that each see the database on their own, while
we need the code consumed in the very transaction that issues the tokens, and a
replayed code to revoke tokens in a transaction that commits although the
request fails. Around that, the contract's JSON camelCase body, 401 for
body-credential failures, S256-only PKCE, an 86400 s token and strict request
parsing would each have meant overriding a default. What is left of a grant is
short; Authlib's test-suite served as the list of cases, and its client is used
in the end-to-end tests to show that standard OAuth clients work.
"""
