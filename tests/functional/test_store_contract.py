"""One contract, two stores: a local directory, and S3 + DynamoDB on moto in server mode (real HTTP)."""

from __future__ import annotations

import threading
import time
from pathlib import Path
from typing import Any

import boto3
import pytest
from agent_runtime import RunState
from agent_runtime import messages as m
from agent_runtime.stores import (
    LocalStore,
    RunStore,
    Store,
    StoreError,
    StoreFileStore,
    ThreadStore,
    VersionConflictError,
)
from agent_runtime.stores.aws import AwsStore

from tests.conftest import create_state_table


def aws_store(endpoint: str, name: str) -> AwsStore:
    session = boto3.session.Session(aws_access_key_id="test", aws_secret_access_key="test", region_name="us-east-1")
    s3 = session.client("s3", endpoint_url=endpoint)
    dynamodb = session.client("dynamodb", endpoint_url=endpoint)
    s3.create_bucket(Bucket=name)
    create_state_table(dynamodb, name)
    return AwsStore(s3=s3, dynamodb=dynamodb, bucket=name, table=name, prefix="agent/")


@pytest.fixture(params=["local", "aws"])
def store(request: pytest.FixtureRequest, tmp_path: Path) -> Store:
    if request.param == "local":
        return LocalStore(tmp_path / "store")
    name = f"t{abs(hash(request.node.name)) % 10**10}"
    return aws_store(request.getfixturevalue("moto_endpoint"), name)


def test_items_are_versioned_and_writes_are_conditional(store: Store) -> None:
    assert store.get_item("run#1", "checkpoint") is None
    assert store.put_item("run#1", "checkpoint", {"turn": 1}, expected_version=None) == 1
    with pytest.raises(VersionConflictError):
        store.put_item("run#1", "checkpoint", {"turn": 9}, expected_version=None)  # exists already
    assert store.put_item("run#1", "checkpoint", {"turn": 2}, expected_version=1) == 2
    with pytest.raises(VersionConflictError):
        store.put_item("run#1", "checkpoint", {"turn": 3}, expected_version=1)  # stale
    item = store.get_item("run#1", "checkpoint")
    assert item is not None and item.data == {"turn": 2} and item.version == 2
    assert store.put_latest("run#1", "checkpoint", {"turn": 4}) == 3


def test_large_items_round_trip(store: Store) -> None:
    big = {"messages": ["x" * 1000 for _ in range(600)]}  # ~600 KB: over DynamoDB's item limit
    store.put_item("run#big", "checkpoint", big, expected_version=None)
    assert store.get_item("run#big", "checkpoint").data == big  # type: ignore[union-attr]


def test_expired_items_are_not_returned(store: Store, monkeypatch: pytest.MonkeyPatch) -> None:
    store.put_item("run#ttl", "record", {"a": 1}, expected_version=None, ttl=60)
    assert store.get_item("run#ttl", "record") is not None
    later = time.time() + 120
    monkeypatch.setattr(time, "time", lambda: later)
    assert store.get_item("run#ttl", "record") is None


def test_blobs_are_read_by_range(store: Store) -> None:
    data = bytes(range(256)) * 40
    store.put_blob("run#b", "file#x", data)
    assert store.blob_size("run#b", "file#x") == len(data)
    assert store.read_blob("run#b", "file#x", 10, 20) == data[10:20]
    assert store.read_blob("run#b", "file#x", 10_000, 20_000) == data[10_000:]
    assert store.read_blob("run#b", "file#x", 5, 5) == b""
    assert store.blob_size("run#b", "nope") is None
    with pytest.raises(StoreError):
        store.read_blob("run#b", "nope", 0, 10)


def test_partitions_list_and_delete_together(store: Store) -> None:
    for name in ("file#a", "file#b", "record", "checkpoint"):
        store.put_item("run#p", name, {"n": name}, expected_version=None)
    store.put_blob("run#p", "file#a", b"abc")
    store.put_item("run#other", "record", {}, expected_version=None)
    assert store.list_items("run#p", "file#") == ["file#a", "file#b"]
    assert store.list_items("run#p") == ["checkpoint", "file#a", "file#b", "record"]
    assert store.delete_partition("run#p") >= 5
    assert store.list_items("run#p") == [] and store.blob_size("run#p", "file#a") is None
    assert store.list_items("run#other") == ["record"]


def test_files_live_in_the_store_and_stream(store: Store) -> None:
    files = StoreFileStore(store, "thread#T1")
    text = "\n".join(f"line {n}" for n in range(1, 50_001)).encode()  # ~500 KB
    meta = files.put(text, name="big.log")
    again = StoreFileStore(store, "thread#T1")  # a new worker sees the same files
    assert [f.id for f in again.list()] == [meta.id]
    assert again.read(meta.id, 0, 6) == b"line 1"
    lines = list(again.iter_lines(meta.id))
    assert len(lines) == 50_000 and lines[-1][2] == "line 50000"


def test_threads_and_checkpoints(store: Store) -> None:
    threads, runs = ThreadStore(store), RunStore(store)
    assert threads.load("T-1") == (None, None)
    state = RunState("run-1", "flow", [m.system("s"), m.user("hi")])
    version = threads.save("T-1", state, expected_version=None)
    loaded, loaded_version = threads.load("T-1")
    assert loaded is not None and loaded.messages == state.messages and loaded_version == version
    with pytest.raises(VersionConflictError):
        threads.save("T-1", state, expected_version=None)
    assert runs.save_checkpoint(state, expected_version=None) == 1
    restored = runs.load_checkpoint("run-1")
    assert restored is not None and restored[0].to_dict() == state.to_dict() and restored[1] == 1


def test_two_workers_on_one_thread_lose_no_update(store: Store) -> None:
    threads = ThreadStore(store)
    threads.save("T-2", RunState("r", "flow", []), expected_version=None)
    conflicts = []

    def worker(tag: str) -> None:
        for n in range(5):
            while True:  # the loser reloads and retries
                state, version = threads.load("T-2")
                assert state is not None
                state.messages.append(m.user(f"{tag}-{n}"))
                try:
                    threads.save("T-2", state, expected_version=version)
                    break
                except VersionConflictError:
                    conflicts.append(tag)

    workers = [threading.Thread(target=worker, args=(tag,)) for tag in ("a", "b")]
    for thread in workers:
        thread.start()
    for thread in workers:
        thread.join()
    final, _ = threads.load("T-2")
    assert final is not None
    assert sorted(m.text_of(msg) for msg in final.messages) == sorted(f"{t}-{n}" for t in "ab" for n in range(5))


def test_blobs_stream_in_pieces_from_any_offset(store: Store) -> None:
    files = StoreFileStore(store, "run#stream")
    data = bytes(range(256)) * 41  # 10,496 bytes
    meta = files.put(data, name="bytes.bin")
    for start, chunk in ((0, 4096), (3, 7), (10_000, 1 << 20), (len(data), 5)):
        pieces = list(files.iter_chunks(meta.id, chunk_size=chunk, start=start))
        assert b"".join(pieces) == data[start:] and all(0 < len(p) <= chunk for p in pieces)
    stream = files.iter_chunks(meta.id, chunk_size=100)
    assert next(stream) == data[:100]
    stream.close()  # stopping early (file_regex at max_matches) releases the request


def test_runs_are_listed_newest_first_once_each(store: Store) -> None:
    from agent_runtime import RunRecord, RunStatus

    runs = RunStore(store)
    for number, (status, thread) in enumerate([("completed", "T1"), ("failed", None), ("suspended", "T1")]):
        record = RunRecord(f"run-{number}", "flow", "gpt-4o", status=RunStatus(status))
        record.started_at = f"2026-11-23T10:0{number}:00.000+00:00"
        runs.save_record(record, thread_id=thread)
    again = RunRecord("run-2", "flow", "gpt-4o", status=RunStatus.COMPLETED)  # its continuation, later
    again.started_at = "2026-11-23T10:09:00.000+00:00"
    runs.save_record(again, thread_id="T1")
    assert [(r.run_id, r.status) for r in runs.list_runs()] == [
        ("run-2", "completed"), ("run-1", "failed"), ("run-0", "completed")
    ]  # fmt: skip
    assert [r.run_id for r in runs.list_runs(thread_id="T1")] == ["run-2", "run-0"]
    assert [r.run_id for r in runs.list_runs(status="failed")] == ["run-1"]
    assert [r.run_id for r in runs.list_runs(limit=1)] == ["run-2"]
    assert [r.run_id for r in runs.list_runs(status="suspended")] == []  # run-2 completed since
    assert [r.run_id for r in runs.list_runs(status="completed")] == ["run-2", "run-0"]


def test_a_filtered_runs_listing_reads_only_its_index(store: Store) -> None:
    """Was: --status and --thread read every run's summary (2,000 runs: ~8 s on moto)."""
    from agent_runtime import RunRecord, RunStatus

    runs = RunStore(store)
    for number in range(300):
        record = RunRecord(f"run-{number:03d}", "flow", "gpt-4o", status=RunStatus.COMPLETED)
        record.started_at = f"2026-11-23T10:{number // 60:02d}:{number % 60:02d}.000+00:00"
        runs.save_record(record, thread_id="T9" if number == 7 else None)
    reads: list[str] = []
    original = store.get_item

    def counted(partition: str, name: str) -> Any:
        reads.append(name)
        return original(partition, name)

    store.get_item = counted  # type: ignore[method-assign]
    assert [r.run_id for r in runs.list_runs(thread_id="T9")] == ["run-007"]
    assert len(reads) <= 2
    reads.clear()
    assert runs.list_runs(status="failed") == [] and reads == []


class _Paged:
    """The DynamoDB client answering 7 items a query, as DynamoDB pages at 1 MB: the listing must follow every
    LastEvaluatedKey (moto pages only when asked to)."""

    def __init__(self, client: Any) -> None:
        self.client = client

    def query(self, **kwargs: Any) -> Any:
        return self.client.query(Limit=7, **kwargs)

    def __getattr__(self, name: str) -> Any:
        return getattr(self.client, name)


def test_every_run_is_listed_newest_first_past_any_page(store: Store) -> None:
    """`runs stats` reads a period through RunStore.started: every run once (its latest invocation), newest first,
    names only — however many pages the index takes."""
    from agent_runtime import RunRecord, RunStatus

    if isinstance(store, AwsStore):
        store.dynamodb = _Paged(store.dynamodb)
    runs = RunStore(store)
    for number in range(45):
        record = RunRecord(f"run-{number:02d}", "flow", "gpt-4o", status=RunStatus.COMPLETED)
        record.started_at = f"2026-11-23T10:{number:02d}:00.000+00:00"
        runs.save_record(record)
    again = RunRecord("run-03", "flow", "gpt-4o", status=RunStatus.COMPLETED)  # its continuation, the latest
    again.started_at = "2026-11-23T11:00:00.000+00:00"
    runs.save_record(again)
    reads: list[str] = []
    original = store.get_item
    store.get_item = lambda partition, name: reads.append(name) or original(partition, name)  # type: ignore[method-assign]
    listed = list(runs.started())
    assert listed[0] == ("run-03", "2026-11-23T11:00:00.000+00:00") and len(listed) == 45 and reads == []
    assert [run_id for run_id, _ in listed[1:]] == [f"run-{n:02d}" for n in range(44, -1, -1) if n != 3]
    assert len(runs.list_runs(limit=100)) == 45


def test_an_item_the_store_cannot_read_is_a_store_error(store: Store) -> None:
    """A damaged item (cut short, written by hand) is a StoreError, on both stores: `runs stats` counts its run as
    unreadable and goes on."""
    store.put_item("run#bad", "record", {"a": 1}, expected_version=None)
    if isinstance(store, AwsStore):
        key = {"pk": {"S": "run#bad"}, "sk": {"S": "record"}, "version": {"N": "1"}}
        for data in ("{not json", "[1, 2]"):
            store.dynamodb.put_item(TableName=store.table, Item=key | {"data": {"S": data}})
            with pytest.raises(StoreError):
                store.get_item("run#bad", "record")
        return
    path = store._item("run#bad", "record")  # type: ignore[attr-defined]
    for text in ("{not json", "[1, 2]", '{"data": [], "version": 1}', '{"data": {}, "version": "1"}'):
        path.write_text(text)
        with pytest.raises(StoreError):
            store.get_item("run#bad", "record")
