"""The exceptions recfmt raises.

Every class lives in the ``recfmt`` namespace (``recfmt.RecfmtError``, ...) and pickles, so an
error raised in a worker process crosses ``multiprocessing`` and ``concurrent.futures`` intact.
Besides :class:`RecfmtError`, each error is also the built-in exception a Python user expects:
a missing recording is a :class:`FileNotFoundError`, a missing stream or column a
:class:`KeyError`, a bad argument a :class:`ValueError`.
"""

from __future__ import annotations

import errno
import re
from typing import Any, Dict, Optional

__all__ = [
    "DataLostError",
    "DataLostWarning",
    "InvalidArgumentError",
    "LimitError",
    "MalformedError",
    "NoSuchColumnError",
    "NoSuchStreamError",
    "OutputExistsError",
    "RecfmtError",
    "RecordingNotFoundError",
    "UnknownFormatError",
    "UnsupportedError",
]


class RecfmtError(Exception):
    """Base class of every error recfmt raises; the message names the file (and the byte
    offset, for a format error) and says what was expected."""


class UnknownFormatError(RecfmtError):
    """No format recognised the input (or the forced format id is unknown)."""


class MalformedError(RecfmtError):
    """The input breaks its format; the message names the file, the byte offset and what was
    expected."""


class UnsupportedError(RecfmtError):
    """The input uses something recfmt does not implement."""


class LimitError(RecfmtError):
    """A length or count in the input exceeds a configured limit."""


class RecordingNotFoundError(RecfmtError, FileNotFoundError):
    """The recording (or a file it needs) does not exist; also a :class:`FileNotFoundError`,
    with ``errno`` set to ``ENOENT``."""


class OutputExistsError(RecfmtError, FileExistsError):
    """An output is there already and ``force=True`` was not given; also a
    :class:`FileExistsError`."""


class _KeyMessage:
    # KeyError's own str() shows the repr of its argument ('"no stream ..."' in quotes);
    # these errors carry a sentence, shown as it is.
    def __str__(self) -> str:
        return Exception.__str__(self)  # type: ignore[arg-type]


class NoSuchStreamError(_KeyMessage, RecfmtError, KeyError):
    """The recording has no stream of that name; also a :class:`KeyError`."""


class NoSuchColumnError(_KeyMessage, RecfmtError, KeyError):
    """The stream has no column of that name (or matching that pattern); also a
    :class:`KeyError`."""


class InvalidArgumentError(RecfmtError, ValueError):
    """An argument recfmt cannot use (a bad time, an option that does not apply); also a
    :class:`ValueError`."""


class DataLostError(RecfmtError):
    """The read finished, but input data was lost (a truncated or corrupt file).

    ``integrity`` holds the report (as in ``recfmt info --json``); ``table`` the complete rows
    that were read, when the read built a table (else ``None``).
    """

    integrity: Optional[Dict[str, Any]] = None
    table: Any = None


class DataLostWarning(UserWarning):
    """Issued instead of :class:`DataLostError` when a read is asked to warn on loss
    (``on_loss="warn"``)."""


for _cls in (
    RecfmtError,
    UnknownFormatError,
    MalformedError,
    UnsupportedError,
    LimitError,
    RecordingNotFoundError,
    OutputExistsError,
    NoSuchStreamError,
    NoSuchColumnError,
    InvalidArgumentError,
    DataLostError,
    DataLostWarning,
):
    # Pickle finds a class by module and name: `recfmt.X` is where users see them.
    _cls.__module__ = "recfmt"
del _cls


# The command line's flags, as the Python call spells them, for messages written for both.
_FLAG_WORDS = [
    (re.compile(r"--merge (asof:STREAM) or (raster:STEP)"), r'merge="\1" or merge="\2"'),
    (re.compile(r"--stream NAME"), 'streams="NAME"'),
    (re.compile(r"--source NAME"), 'source="NAME"'),
    (re.compile(r"`recfmt convert --to ([\w-]+)`"), r'`recfmt.convert(..., to="\1")`'),
    (re.compile(r"--to ([\w-]+)"), r'to="\1"'),
    (re.compile(r"--force\b"), "force=True"),
    (re.compile(r"--(max-rows|merge|start|end|signal|delimiter|strict|resync)\b"), None),
    (re.compile(r"--carla-build ([^:\s]+)"), r'opt={"carla.build": "\1"}'),
]


def _flag_to_keyword(match: "re.Match[str]") -> str:
    name = match.group(1).replace("-", "_")
    return {"signal": "signals"}.get(name, name) + "="


_OS_ERROR_CODE = re.compile(r" \(os error \d+\)")
_BYTE = re.compile(r"(?:,\s*|:\s*|\s+)?\(?at byte (\d+)\)?")


def _speak_python(message: str) -> str:
    """`message` with command-line flags spelled as keyword arguments, and a byte offset said
    once when several contexts repeated it."""
    for pattern, replacement in _FLAG_WORDS:
        message = pattern.sub(replacement or _flag_to_keyword, message)
    seen = set()

    def once(match: "re.Match[str]") -> str:
        offset = match.group(1)
        if offset in seen:
            return ""
        seen.add(offset)
        return match.group(0)

    return _BYTE.sub(once, message)


_KINDS = {
    "unknown_format": UnknownFormatError,
    "malformed": MalformedError,
    "unsupported": UnsupportedError,
    "limit": LimitError,
    "invalid": InvalidArgumentError,
    "no_stream": NoSuchStreamError,
    "no_column": NoSuchColumnError,
    "data_lost": DataLostError,
}


def _error(kind: str, message: str) -> BaseException:
    """The exception the native module raises for an error of `kind` (see lib.rs)."""
    message = _speak_python(_OS_ERROR_CODE.sub("", message))
    if kind == "not_found":
        return RecordingNotFoundError(errno.ENOENT, message)
    if kind == "exists":
        return OutputExistsError(errno.EEXIST, message)
    return _KINDS.get(kind, RecfmtError)(message)
