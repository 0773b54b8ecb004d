"""One stream of many recordings as a Ray Data dataset.

    import ray
    import recfmt.ray

    ds = ray.data.read_datasource(recfmt.ray.Datasource("runs/*.log", "position"))
    ds.groupby("source").count().take_all()

One read task per recording (or, with ``slice_seconds``, per time slice of it), each reading
on a Ray worker, which needs the ``recfmt`` package installed. The schema is the union of the
recordings' (see :mod:`recfmt.fleet`: missing columns null, a type clash an error naming both
files), with a ``source`` column.
"""

from __future__ import annotations

import os
from typing import Any, List, Optional, Sequence, Union

import ray.data
from ray.data.block import BlockMetadata
from ray.data.datasource import ReadTask

from recfmt.fleet import Fleet, Part, Paths, TimeRange

__all__ = ["Datasource"]


class Datasource(ray.data.Datasource):
    """One stream of `paths` (recordings, folders of them, globs) for
    ``ray.data.read_datasource``.

    :param columns: the columns to keep (names or patterns; the time column always comes).
    :param start, end: seconds on the recordings' time axis (``start`` inclusive).
    :param slice_seconds: one read task per this many seconds of each recording.
    :param source_column: the column holding each row's recording name (None: none).
    :param on_loss: as :meth:`recfmt.Recording.read`, for each read.
    :param open_kwargs: passed to :func:`recfmt.open` (``format``, ``strict``, ``layouts``).
    """

    def __init__(
        self,
        paths: Paths,
        stream: str,
        columns: Optional[Union[str, Sequence[str]]] = None,
        start: Optional[float] = None,
        end: Optional[float] = None,
        *,
        slice_seconds: Optional[float] = None,
        source_column: Optional[str] = "source",
        on_loss: str = "raise",
        **open_kwargs: Any,
    ) -> None:
        super().__init__()
        self.fleet = Fleet(paths, stream, columns, source_column=source_column, **open_kwargs)
        self.time = TimeRange(start, end)
        self.slice_seconds = slice_seconds
        self.on_loss = on_loss

    def get_name(self) -> str:
        return f"recfmt({self.fleet.stream})"

    def estimate_inmemory_data_size(self) -> Optional[int]:
        # The recordings' sizes on disk: decoded tables are of the same order.
        total = 0
        for path in self.fleet.schemas:
            if os.path.isdir(path):
                for folder, _, files in os.walk(path):
                    total += sum(os.path.getsize(os.path.join(folder, f)) for f in files)
            else:
                total += os.path.getsize(path)
        return total

    def get_read_tasks(
        self,
        parallelism: int,
        per_task_row_limit: Optional[int] = None,
        data_context: Any = None,
    ) -> List[ReadTask]:
        fleet, on_loss = self.fleet, self.on_loss

        def read(part: Part) -> List[Any]:
            return [fleet.read_table(part, on_loss=on_loss)]

        tasks = []
        for part in fleet.parts(time=self.time, slice_seconds=self.slice_seconds):
            metadata = BlockMetadata(
                num_rows=None, size_bytes=None, exec_stats=None, input_files=[part.path]
            )
            tasks.append(
                ReadTask(
                    lambda part=part: read(part),
                    metadata,
                    schema=fleet.schema,
                    per_task_row_limit=per_task_row_limit,
                )
            )
        return tasks
