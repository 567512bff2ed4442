"""Benchmarks: where tasks come from (registry-layout folders, benchmark plugins) and how a
task reference on the command line becomes a :class:`podium.interfaces.Task`."""

from podium.benchmarks.folder import FolderTask, default_data_dir, load_folder_task
from podium.benchmarks.resolve import resolve_task
from podium.benchmarks.submission_format import check_against_sample

__all__ = [
    "FolderTask",
    "check_against_sample",
    "default_data_dir",
    "load_folder_task",
    "resolve_task",
]
