"""How a process hosts a program run under Pulumi's mocks: on event loops it owns and closes, without
full garbage collections, and without the alias URNs nothing reads. It imports nothing of spotkube's,
so the benchmark's floor (`bench/floor.py`) runs the SDKs exactly as the offline plan does without
loading any of spotkube's own modules."""

from __future__ import annotations

import asyncio
import atexit
import functools
import gc
import threading
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from typing import Any

from pulumi import resource as sdk_resource
from pulumi.runtime import settings
from pulumi.runtime.proto import resource_pb2


@contextmanager
def owned_event_loops() -> Iterator[None]:
    """Run the program on event loops this module owns, and close every one of them afterwards.

    Why: Pulumi's runtime never closes the loops it makes (the main thread's, and one per worker thread
    of the default executor, from `sync_await._ensure_event_loop`). An unclosed loop and its self-pipe
    socketpair form a reference cycle that the collector finalises at exit in no set order, and when a
    socket goes first Python prints "Exception ignored in: <function BaseEventLoop.__del__ ...> ...
    ValueError: Invalid file descriptor: -1" on stderr, now and then, after a clean run. So the run gets
    a loop and an executor whose threads are handed a loop up front, all closed while their sockets are open.
    """
    worker_loops: list[asyncio.AbstractEventLoop] = []
    lock = threading.Lock()

    def give_the_thread_a_loop() -> None:
        worker_loop = asyncio.new_event_loop()
        asyncio.set_event_loop(worker_loop)
        with lock:
            worker_loops.append(worker_loop)

    loop = asyncio.new_event_loop()
    executor = ThreadPoolExecutor(thread_name_prefix="spotkube-offline", initializer=give_the_thread_a_loop)
    loop.set_default_executor(executor)
    asyncio.set_event_loop(loop)
    try:
        yield
    finally:
        executor.shutdown(wait=True)
        for worker_loop in worker_loops:
            worker_loop.close()
        asyncio.set_event_loop(None)
        loop.close()


@contextmanager
def no_full_collections() -> Iterator[None]:
    """Run the program (or a whole `spotkube plan`, whose runs' objects live until it prints) without full
    garbage collections, then restore the collector's thresholds.

    Pulumi keeps every Output and future of a run alive until the run ends, so each full collection
    walks the whole heap to free almost nothing: a 50-pool plan takes 1.2 CPU s with this and 1.7
    without it (CPython 3.11). The young generations still collect what the run drops, so the peak
    memory doesn't change; an incremental collector (3.14) may ignore the third threshold.
    """
    thresholds = gc.get_threshold()
    gc.set_threshold(thresholds[0], thresholds[1], 1_000_000)
    try:
        yield
    finally:
        gc.set_threshold(*thresholds)
        _no_collection_at_exit()


@functools.cache
def _no_collection_at_exit() -> None:
    """Skip the full collection the interpreter runs as it exits, over what the process still holds.

    A plan's process keeps its runs' objects to the end (the recording, the documents), and the last
    collection walked them all to free nothing the exit wouldn't: about 0.5 CPU s at 50 GPU pools.
    Frozen objects are left out of every collection (`gc.freeze`), so freezing them as the process
    exits skips that walk; nothing is freed or finalized any differently while it runs."""
    atexit.register(gc.freeze)


@contextmanager
def alias_urns_left_to_the_engine() -> Iterator[None]:
    """Within it, `pulumi.Resource.__init__` computes a URN for each of a resource's aliases only when the
    monitor can't take the aliases as they are declared, or when computing it would fail.

    Why: the constructor turns every alias into a URN, an Output chain each, which only an engine without
    alias specs reads; Pulumi's mock monitor has them, so in a mocked run these URNs are work nobody reads.
    An azure-native AgentPool declares 110 aliases: about 25 CPU ms a pool, most of what registering it
    costs (docs/speed.md). What is registered is unchanged. Upstream: pulumi/pulumi#10010.

    An alias whose URN can't be made (a name or type of None), or one handed over as an Output, still gets
    its URN, so it fails the run as it fails `pulumi preview`. The SDK's function is replaced for the whole
    process while the context lasts: runs that overlap in threads must not use it."""
    collapse = getattr(sdk_resource, "collapse_alias_to_urn", None)
    if collapse is None:
        yield
        return

    def only_if_read(alias: Any, *args: Any, **kwargs: Any) -> Any:
        if _urn_never_fails(alias) and settings.monitor_supports_feature(
                resource_pb2.RESOURCE_MONITOR_FEATURE_ALIAS_SPECS):
            return None
        return collapse(alias, *args, **kwargs)

    sdk_resource.collapse_alias_to_urn = only_if_read  # type: ignore[assignment]
    try:
        yield
    finally:
        sdk_resource.collapse_alias_to_urn = collapse


def _urn_never_fails(alias: Any) -> bool:
    """Whether the SDK would make a URN of `alias` without an error: a URN as text, or an `Alias` whose
    name and type are each given or left to the resource's (`...`), not None."""
    if isinstance(alias, str):
        return True
    return isinstance(alias, sdk_resource.Alias) and alias.name is not None and alias.type_ is not None
