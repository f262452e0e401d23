"""A path parameter that takes any text: Starlette's ``path`` convertor matches ``.*``,
which stops at a line feed, so a key or service name holding one (sent as ``%0A``,
legal in JSON) found no route and answered 404."""

from __future__ import annotations

from starlette.convertors import Convertor, register_url_convertor

TEXT = "text"  # as in "/v1/services/{name:text}/errors"


class _TextConvertor(Convertor[str]):
    regex = r"[\s\S]*"

    def convert(self, value: str) -> str:
        return value

    def to_string(self, value: str) -> str:
        return value


register_url_convertor(TEXT, _TextConvertor())
