from __future__ import annotations

from limelight.auth.oauth.pkce import s256, valid_challenge, verifier_matches

# RFC 7636, Appendix B.
VERIFIER = "dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk"
CHALLENGE = "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM"


def test_the_rfc_example() -> None:
    assert s256(VERIFIER) == CHALLENGE
    assert verifier_matches(VERIFIER, CHALLENGE)


def test_mismatches_and_malformed_verifiers() -> None:
    assert not verifier_matches(VERIFIER[:-1] + "l", CHALLENGE)
    assert not verifier_matches("short", s256("short"))  # under 43 characters
    assert not verifier_matches("a" * 129, s256("a" * 129))
    assert not verifier_matches("a" * 42 + "!", s256("a" * 42 + "!"))


def test_challenge_shape() -> None:
    assert valid_challenge(CHALLENGE)
    assert not valid_challenge("plain")
    assert not valid_challenge(CHALLENGE + "=")
    # `$` matched before a final line break: the consent page was shown for a challenge
    # no verifier could ever match.
    assert not valid_challenge(CHALLENGE + "\n")
    assert not verifier_matches(VERIFIER + "\n", s256(VERIFIER + "\n"))
