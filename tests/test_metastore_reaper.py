"""Transaction timeouts on a metastore that runs Hive's house keeper (opt-in: a second server).

The session 2.3 metastore runs without the compactor initiator, so it never times anything out
(the 3.1 / 4.1 ones run it, with the default hive.txn.timeout of 300 s). Here a second Hive
Metastore of each version runs with ``hive.compactor.initiator.on=true`` (which starts
``AcidHouseKeeperService``) and ``hive.txn.timeout=3s``: a transaction that stops heartbeating is
aborted and its locks released, while ours survive thanks to the heartbeat thread.

Set ``HIVE_ACID_SLOW_TESTS=1`` to run it (about 25 s more).
"""
from __future__ import annotations

import os
import time

import pytest

from metastore_server.fixtures import new_server, version_params
from spark_hive_acid.metastore import LockSpec, MetastoreClient, write_transaction

pytestmark = pytest.mark.skipif(
    not os.environ.get("HIVE_ACID_SLOW_TESTS"),
    reason="starts a second metastore with the txn reaper; set HIVE_ACID_SLOW_TESTS=1")

TIMEOUT_S = 3.0


@pytest.fixture(scope="module", params=version_params())
def reaping_uri(request, tmp_path_factory):
    server = new_server(tmp_path_factory.mktemp(f"hms_reaper_{request.param}"), request.param,
                        tmp_path_factory.getbasetemp(), extra_settings={
        "hive.compactor.initiator.on": "true",
        "hive.txn.timeout": f"{TIMEOUT_S:g}s",
        # Hive 4 runs the reaper in AcidHouseKeeperService (default every 60 s)
        "metastore.acid.housekeeper.interval": "1s",
        "hive.timedout.txn.reaper.start": "1s",
        "hive.timedout.txn.reaper.interval": "1s",
    })
    server.start()
    try:
        yield server.uri
    finally:
        server.stop()


def test_heartbeats_keep_a_txn_alive_and_an_abandoned_one_is_reaped(reaping_uri):
    with MetastoreClient(reaping_uri) as hms:
        hms.create_table("default", "t", [("id", "int")], bucket_cols=["id"], num_buckets=1)

        # abandoned: opened and locked, then never heartbeated (like a SIGKILLed writer)
        dead = hms.open_txn()
        hms.lock([LockSpec("SHARED_READ", "INSERT", "default", "t")], dead)

        # ours: default heartbeat interval = hive.txn.timeout / 3, read from the server
        with write_transaction({"metastoreUri": reaping_uri}, "default", "t", "insert") as txn:
            assert txn.heartbeat_interval == pytest.approx(TIMEOUT_S / 3)
            deadline = time.monotonic() + 30
            while hms.get_open_txns_info().get(dead).is_open:
                assert time.monotonic() < deadline, "the reaper never aborted the dead txn"
                time.sleep(0.2)
            time.sleep(TIMEOUT_S)  # well past the timeout since ours began
            assert hms.get_open_txns_info().get(txn.txn_id).is_open
        assert txn.state == "committed"

        assert hms.get_open_txns_info().get(dead).is_aborted
        assert hms.show_locks("default", "t") == []  # the dead txn's lock went with it
