"""Settings are declared as options are: a value out of range or of the wrong kind is refused
with the same words at the Python API and the command line, naming the setting (and the
environment variable it came from); 0 is a value, never "the default"."""

from __future__ import annotations

import pytest
from doors_support import cli_run

from fastbmrag import RAG
from fastbmrag.config import resolve
from fastbmrag.errors import ConfigError, InputError


@pytest.mark.parametrize(
    ("given", "said"),
    [
        ({"concurrency": 0}, "concurrency must be a whole number from 1 to 1,024, got 0"),
        ({"num_ctx": 0}, "num_ctx must be a whole number from 256 to 1,048,576, got 0"),
        ({"embed_batch": 0}, "embed_batch must be a whole number from 1 to 4,096, got 0"),
        ({"use_cache": "no"}, "use_cache must be True or False, got 'no'"),
        ({"num_predict": 5}, "num_predict must be a whole number from 16 to 1,000,000, got 5"),
        ({"num_predict": "abc"}, "num_predict must be a whole number from 16 to 1,000,000"),
        ({"llm_backend": "foo"}, "llm_backend must be one of ollama, openai, got 'foo'"),
        ({"preflight_timeout": 0}, "preflight_timeout must be a number of seconds"),
        ({"qurey": 1}, "Unknown setting 'qurey': use one of working_dir"),
    ],
)
def test_a_setting_out_of_its_declaration_is_refused_by_name(
    given: dict[str, object], said: str
) -> None:
    with pytest.raises(InputError, match=None) as err:
        RAG(**given)  # type: ignore[arg-type]
    assert said in str(err.value)


@pytest.mark.parametrize(
    ("flag", "value", "said"),
    [
        ("--concurrency", "0", "--concurrency must be a whole number from 1 to 1,024, got 0"),
        ("--num-ctx", "0", "--num-ctx must be a whole number from 256 to 1,048,576, got 0"),
        ("--num-predict", "5", "--num-predict must be a whole number from 16 to 1,000,000, got 5"),
    ],
)
def test_the_command_line_refuses_the_same_values_in_the_same_words(
    flag: str, value: str, said: str, tmp_path: object
) -> None:
    result = cli_run("update", "-c", "x", "--dry-run", flag, value, "papers.csv")
    assert result.exit_code == 2 and said in result.output, result.output


def test_an_environment_value_is_refused_naming_the_variable(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("FASTBMRAG_NUM_PREDICT", "abc")
    with pytest.raises(ConfigError, match="FASTBMRAG_NUM_PREDICT='abc' is not a whole number"):
        resolve()
    monkeypatch.setenv("FASTBMRAG_NUM_PREDICT", "5")
    with pytest.raises(ConfigError, match="FASTBMRAG_NUM_PREDICT='5': num_predict must be"):
        resolve()
    monkeypatch.setenv("FASTBMRAG_NUM_PREDICT", "64")
    assert resolve().num_predict == 64
    assert resolve(num_predict=32).num_predict == 32  # the flag over the environment


def test_the_collection_is_the_second_argument_or_the_setting_by_its_name(tmp_path: object) -> None:
    """``RAG(dir, "c")`` and ``RAG(dir, collection="c")`` (the flag's name) say the same; two
    different collections are refused, not a TypeError."""
    assert RAG(str(tmp_path), "c").settings.collection == "c"
    assert RAG(str(tmp_path), collection="c").settings.collection == "c"
    assert RAG(str(tmp_path), "c", collection="c").settings.collection == "c"
    with pytest.raises(InputError, match="RAG\\(\\) was given two collections, 'a' and 'b'"):
        RAG(str(tmp_path), "a", collection="b")
