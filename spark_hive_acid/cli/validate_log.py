"""``hiveacid validate``: the checks of a path-mode table's log and of the per-directory marker
files (the data files' checks are in :mod:`.validate`)."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable, Sequence

from ..acid.log_records import (
    INSTALL_DONE_SUFFIX,
    INSTALL_SUFFIX,
    Allocation,
    Install,
    InstallDone,
    Intent,
    LogLayout,
    decode,
)
from ..acid.logstate import load_state, read_events
from ..acid.names import ACID_VERSION_FILE, ParsedDir
from ..exceptions import HiveAcidError
from ..io.filesystem import FileStatus, FileSystem


@dataclass
class Report:
    """The problems ``hiveacid validate`` found, and how many files it checked."""

    problems: list[str] = field(default_factory=list)
    files: int = 0

    def add(self, where: str, problem: str) -> None:
        self.problems.append(f"{where}: {problem}")

    def guard(self, where: str, check: Callable[[], object]) -> None:
        """Run ``check`` (what it returns is not used); anything it raises is a problem of
        ``where``, never a crash."""
        try:
            check()
        except Exception as e:  # noqa: BLE001 - report, do not crash, whatever the damage
            text = str(e).split(". ")[0] if isinstance(e, HiveAcidError) else f"{type(e).__name__}: {e}"
            self.add(where, text)



def _decodes(fs: FileSystem, path: str, parse: Callable[[dict], object]) -> None:
    """Raise (ValueError, saying what is wrong) unless ``path`` holds a readable record."""
    try:
        parse(decode(fs.read_bytes(path)))
    except (TypeError, KeyError) as e:
        raise ValueError(f"it lacks a field of its kind ({e})") from None


def check_log(fs: FileSystem, table_path: str, report: Report) -> None:
    """The chain of commit records, the checkpoints, and every other record file of the log:
    allocation records, intents, install records."""
    report.guard(table_path, lambda: load_state(fs, table_path) and read_events(fs, table_path))
    layout = LogLayout(fs, table_path)
    kinds: Sequence[tuple[str, str, Callable[[dict], object]]] = (
        (layout.writeids_dir, ".json", Allocation.from_json),
        (layout.intents_dir, ".json", Intent.from_json),
        (layout.installs_dir, INSTALL_SUFFIX, Install.from_json),
        (layout.installs_dir, INSTALL_DONE_SUFFIX, InstallDone.from_json),
    )
    for directory, suffix, parse in kinds:
        for n in layout.numbered(directory, suffix):
            path = fs.join(directory, f"{n:019d}{suffix}")
            what = {".done": "install-done record"}.get(suffix, {
                layout.writeids_dir: "allocation record", layout.intents_dir: "intent record",
                layout.installs_dir: "install record"}[directory])
            try:
                _decodes(fs, path, parse)
            except Exception as e:  # noqa: BLE001 - every damage is a finding
                report.add(path, f"the log's {what} is damaged: {e}")


def check_acid_version_files(fs: FileSystem, dirs: Sequence[tuple[ParsedDir, list[FileStatus]]],
                             report: Report) -> None:
    """``_orc_acid_version`` says ``2`` where it is present; in a table whose ACID directories
    carry it (Hive 3+ and this library write one into each), a directory without it lost it."""
    with_marker = 0
    for d, files in dirs:
        marker = next((f for f in files if f.name == ACID_VERSION_FILE), None)
        if marker is None:
            continue
        with_marker += 1
        try:
            content = fs.read_bytes(marker.path)
        except Exception as e:  # noqa: BLE001 - every damage is a finding
            report.add(marker.path, f"cannot be read: {e}")
            continue
        if content.strip() != b"2":
            report.add(marker.path, f"says {content[:20]!r}; Hive's ACID version marker holds "
                                    "the single character 2")
    if not with_marker:
        return  # a table written without markers (Hive 2, or copied without hidden files)
    for d, files in dirs:
        has_data = any(not f.is_dir and f.name.startswith("bucket_") for f in files)
        if has_data and not any(f.name == ACID_VERSION_FILE for f in files):
            report.add(d.path, f"has no {ACID_VERSION_FILE} while the table's other ACID "
                                   "directories do: it was removed (Hive 3+ writers create one in "
                                   "every directory; restore it: one byte, '2')")
