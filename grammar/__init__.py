"""The Lark grammar of the policy language (`policy.lark`), shipped as package data."""

from importlib.resources import files


def grammar_text() -> str:
    return files(__name__).joinpath("policy.lark").read_text(encoding="utf-8")
