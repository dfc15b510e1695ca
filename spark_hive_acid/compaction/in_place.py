"""A compaction on a store without rename (object stores): its output written where it stays.

Hive 4 writes a compaction's output as ``base_H_vT`` and hides it until its transaction T
commits; Hive 3's compactor writes elsewhere and renames. Here, with names every Hive reads
(``base_H``, ``delta_a_b``), the output is hidden from this library's readers by the install
record (``txn.logmaint``), which now comes *first*:

1. :func:`claim_outputs`: the output names must be free; the install record announces them
   (readers leave them out from then on: ``read.listing.listing_without_installs``), then each
   directory is claimed for this compaction (``write.in_place.claim``): a second compaction of
   the same output stops here, and an abort's sweep never takes a claimed directory.
2. The units write their files straight into those directories (conditional creates: a file
   appears whole, never over another).
3. :func:`check_outputs`: every file the units reported is there and the claims are still this
   compaction's; then ``installs/<id>.ready`` says the output is whole.
4. The commit, then ``<id>.done``: the output is visible (``txn.committer.commit_compaction``).

A failure before the commit rolls the install back (what was claimed is removed); a process
killed at any point leaves the install unfinished, hidden, and the next compaction or vacuum
finishes it (committed and ready) or rolls it back (``logmaint.finish_interrupted_installs``).
Hive's readers do not read the install record: on an object store they skip a directory whose
only file is the hidden claim, but while the units write they could see a partial output; see
docs/compaction.md, "Object stores".
"""
from __future__ import annotations

import logging
from typing import Sequence

from ..acid.names import is_hidden
from ..exceptions import CommitConflictError, StorageError
from ..io.filesystem import FileSystem
from ..txn.logmaint import begin_in_place_install, mark_ready
from ..write.in_place import claimed_by
from .plan import PartitionJob
from .rewrite import UnitResult

log = logging.getLogger(__name__)


def finals_of(fs: FileSystem, jobs: Sequence[PartitionJob]) -> list[str]:
    return [fs.join(job.path, out) for job in jobs for out in job.outputs]


def claim_outputs(fs: FileSystem, table_path: str, compaction: int,
                  jobs: Sequence[PartitionJob]) -> None:
    """Step 1 of the module docstring; CommitConflictError (nothing written) when an output
    name is taken."""
    finals = finals_of(fs, jobs)
    taken = [f for f in finals if fs.exists(f)]
    if taken:
        raise CommitConflictError(
            f"{taken[0]} already exists (another compaction made the same output, or one that "
            "died left it, hidden, until its install is finished): this compaction did nothing")
    begin_in_place_install(fs, table_path, compaction, finals)


def check_outputs(fs: FileSystem, table_path: str, compaction: int,
                  jobs: Sequence[PartitionJob], results: Sequence[UnitResult]) -> None:
    """Step 3 of the module docstring: StorageError when a file is missing or a claim is not
    this compaction's (the compaction then rolls back)."""
    expected: dict[str, set[str]] = {}
    for r in results:
        head, _, name = r.path.rpartition("/")
        expected.setdefault(head.rstrip("/"), set()).add(name)
    for final in finals_of(fs, jobs):
        if claimed_by(fs, final) != compaction:
            raise StorageError(f"{final} is no longer claimed by compaction {compaction}")
        present = {c.name for c in fs.list_dir(final) if not c.is_dir}
        missing = sorted(expected.get(final.rstrip("/"), set()) - present)
        if missing:
            raise StorageError(f"{final} lacks {missing[0]} after its units wrote it")
        strays = sorted(n for n in present - expected.get(final.rstrip("/"), set())
                        if not is_hidden(n))
        if strays:
            raise StorageError(f"{final} holds {strays[0]}, which no unit of compaction "
                               f"{compaction} wrote")
    mark_ready(fs, table_path, compaction)
