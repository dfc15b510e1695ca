"""One transaction protocol for every writer (see :mod:`.base`).

* :mod:`.base` - the interface; :mod:`.committer` - publish and commit;
* :mod:`.pathlog` (with :mod:`.log_append`, :mod:`.logmaint`, :mod:`.log_repair`) - the path-mode log; :mod:`.hms` - a metastore transaction;
* :mod:`.keepalive` - the one heartbeat mechanism; :mod:`.processes` - process identity.
"""
