"""What a test does when a server it needs (the HDFS cluster, the S3 server) cannot start: it is
skipped with the reason, except under ``CI=true``, where it fails (CI must never pass by skipping
the real servers; the same rule as the corpus in :mod:`corpus_location`)."""
from __future__ import annotations

from typing import NoReturn

import pytest

from corpus_location import in_ci


def unavailable(what: str, reason: str) -> NoReturn:
    """Skip (fail under ``CI=true``) because ``what`` could not be started: ``reason``."""
    message = f"{what} unavailable: {reason}"
    if in_ci():
        pytest.fail(f"{message}; CI=true, so a server that cannot start fails the run",
                    pytrace=False)
    pytest.skip(message)
