"""Download an archive, unpack it, concatenate its CSV files: every step on spot, with retries.

The first article's workflow, written with spotkube. Each step is cheap CPU work that is safe to
repeat, so it runs on interruptible capacity (preferring spot, accepting the on-demand platform pool
when a cluster has no CPU spot pool) and is retried 5 times, 5 minutes apart, if its node is
evicted. Every step writes only its own KFP output artifact, so a retried step starts from a clean
slate and never sees half of an earlier attempt's work.

Compile it and check it against a stack:

    python examples/pipelines/download_csvs.py examples/pipelines/download_csvs.yaml
    spotkube pipeline-check examples/pipelines/download_csvs.yaml --stack aks-dev-uksouth
    spotkube simulate --stack aks-dev-uksouth examples/pipelines/download_csvs.yaml

The compiled file is kept next to this one, so the last two commands need no kfp.
"""

# No `from __future__ import annotations`: KFP reads the component signatures' real types.
import sys
from collections.abc import Callable
from pathlib import Path

from kfp import compiler, dsl
from kfp.dsl import Dataset, Input, Output

from spotkube.pipelines import CpuSpot, declare_timing, on_spot

#: A small image with Python's standard library, which is all the steps need.
BASE_IMAGE = "python:3.12-slim"


@dsl.component(base_image=BASE_IMAGE)
def download_archive(url: str, archive: Output[Dataset]) -> None:
    """Fetch the archive; a retry downloads it again into a fresh output file."""
    import shutil
    import urllib.request

    with urllib.request.urlopen(url, timeout=300) as response, open(archive.path, "wb") as out:
        shutil.copyfileobj(response, out)


@dsl.component(base_image=BASE_IMAGE)
def unpack_archive(archive: Input[Dataset], files: Output[Dataset]) -> None:
    """Unpack a zip or tar archive (any compression) into a folder."""
    import os
    import tarfile
    import zipfile

    os.makedirs(files.path, exist_ok=True)
    if zipfile.is_zipfile(archive.path):
        with zipfile.ZipFile(archive.path) as bundle:
            bundle.extractall(files.path)
    elif tarfile.is_tarfile(archive.path):
        with tarfile.open(archive.path) as bundle:
            bundle.extractall(files.path, filter="data")
    else:
        raise ValueError("the download is neither a zip nor a tar archive")


@dsl.component(base_image=BASE_IMAGE)
def concatenate_csvs(files: Input[Dataset], combined: Output[Dataset]) -> int:
    """Concatenate every CSV file (in path order) under one header; returns the number of rows."""
    import csv
    from pathlib import Path

    paths = sorted(p for p in Path(files.path).rglob("*.csv") if p.is_file())
    if not paths:
        raise ValueError("the archive holds no .csv files")
    rows = 0
    header: list[str] | None = None
    with open(combined.path, "w", newline="") as out:
        writer = csv.writer(out)
        for path in paths:
            with open(path, newline="") as source:
                reader = csv.reader(source)
                first = next(reader, None)
                if first is None:
                    continue
                if header is None:
                    header = first
                    writer.writerow(header)
                elif first != header:
                    raise ValueError(f"{path.name} has columns {first}, expected {header}")
                for row in reader:
                    writer.writerow(row)
                    rows += 1
    return rows


@dsl.pipeline(name="download-csvs", description="Download an archive, unpack it and concatenate its CSV files.")
def download_csvs(url: str) -> int:
    download = download_archive(url=url)
    unpack = unpack_archive(archive=download.outputs["archive"])
    concatenate = concatenate_csvs(files=unpack.outputs["files"])
    for task in (download, unpack, concatenate):
        on_spot(task, CpuSpot())
        # Short steps that restart from scratch (no checkpoints): what `spotkube simulate` assumes.
        declare_timing(task, runtime="15m")
    return concatenate.outputs["Output"]


def build() -> Callable[..., object]:
    """The pipeline function, ready for `kfp.compiler.Compiler().compile`."""
    return download_csvs


def compile(path: str | Path) -> Path:
    """Compile the pipeline to `path` (YAML) and return the path."""
    compiler.Compiler().compile(build(), str(path))
    return Path(path)


if __name__ == "__main__":
    print(compile(sys.argv[1] if len(sys.argv) > 1 else "download_csvs.yaml"))
