"""A chat answer checked against its schema, and the one repair a conversation gets when it
does not validate."""

from __future__ import annotations

from collections.abc import Sequence

from pydantic import ValidationError

from fastbmrag.llm.base import T


def validate(content: str, schema: type[T], *, truncated: bool = False) -> tuple[T | None, str]:
    """Parse ``content`` into ``schema``. Returns ``(value, "")`` or ``(None, reason)``."""
    try:
        return schema.model_validate_json(content), ""
    except ValidationError as err:
        errors = err.errors()
        if not errors:
            return None, str(err)
        first = errors[0]
        where = ".".join(str(p) for p in first["loc"]) or "answer"
        msg = first["msg"]
        if first["type"] == "json_invalid":
            reason = "invalid JSON: " + msg.removeprefix("Invalid JSON: ")
        else:
            reason = f"{err.error_count()} validation error(s), first at {where}: {msg}"
        if truncated:
            reason = (
                "answer truncated at the token cap (raise num_predict or "
                "FASTBMRAG_NUM_PREDICT); " + reason
            )
        return None, reason


def repair_messages(
    messages: Sequence[dict[str, str]], content: str, reason: str
) -> list[dict[str, str]]:
    """The conversation re-sent once when an answer does not validate."""
    return [
        *messages,
        {"role": "assistant", "content": content},
        {
            "role": "user",
            "content": (
                f"Your answer could not be used: {reason}. Reply again with only one complete "
                "JSON object that matches the requested JSON schema, and nothing else."
            ),
        },
    ]
