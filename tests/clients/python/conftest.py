"""Fixtures for the confluent-kafka suite: the registry under test (REGISTRY_URL, set by
scripts/clients-test.sh), a fresh SchemaRegistryClient per test (no cache shared between tests) and
unique subject/topic names, so tests never see each other's subjects on the one server."""

import contextlib
import json
import os
import socket
import subprocess
import time
import urllib.error
import urllib.request
import uuid

import pytest
from confluent_kafka.schema_registry import SchemaRegistryClient
from confluent_kafka.serialization import MessageField, SerializationContext


def payment_schema(*fields: dict) -> dict:
    """The Avro record `shop.events.Payment` the suites register: `id`, `amount`, then `fields`."""
    base = [{"name": "id", "type": "string"}, {"name": "amount", "type": "double"}]
    return {"type": "record", "name": "Payment", "namespace": "shop.events", "fields": [*base, *fields]}


def wire_id(data: bytes) -> int:
    """The schema ID in Confluent framing: magic byte 0x00, then the ID as 4 big-endian bytes."""
    assert len(data) >= 5, f"framed payload too short: {data!r}"
    assert data[0] == 0, f"magic byte must be 0x00, got {data[0]:#04x}"
    return int.from_bytes(data[1:5], "big")


def registry_binary() -> str:
    """The `registry` binary: REGISTRY_BIN (scripts/clients-test.sh sets it), else `debug/registry` under
    the directory cargo builds into (`cargo metadata`'s target_directory: CARGO_TARGET_DIR or ./target).
    Fails the test when there is none."""
    binary = os.environ.get("REGISTRY_BIN")
    if not binary:
        root = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "..")
        metadata = subprocess.run(["cargo", "metadata", "--format-version", "1", "--no-deps"], cwd=root,
                                  capture_output=True, text=True, check=False)
        if metadata.returncode != 0:
            pytest.fail(f"cargo metadata failed (set REGISTRY_BIN): {metadata.stderr}")
        binary = os.path.join(json.loads(metadata.stdout)["target_directory"], "debug", "registry")
    if not os.access(binary, os.X_OK):
        pytest.fail(f"no registry binary at {binary}: run through scripts/clients-test.sh or set REGISTRY_BIN")
    return binary


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@contextlib.contextmanager
def serving(command: list[str], env: dict, url: str, log_path, what: str):
    """Runs `command` (a server answering on `url`) with its output in `log_path`: yields once
    `GET url/` answers 200, and stops the process by its PID afterwards, also on failure. The wait is
    bounded far above a start (milliseconds), so only a server that never answers fails here, never a
    slow machine; a server that exits ends the wait at once."""
    with open(log_path, "wb") as log:
        server = subprocess.Popen(command, env=env, stdout=log, stderr=log)
    try:
        deadline = time.monotonic() + 120
        while True:
            try:
                with urllib.request.urlopen(url + "/", timeout=60) as response:
                    if response.status == 200:
                        break
            except (OSError, urllib.error.HTTPError):
                pass
            if server.poll() is not None or time.monotonic() > deadline:
                pytest.fail(f"{what} did not come up:\n{log_path.read_text()}")
            time.sleep(0.1)
        yield url
    finally:
        server.terminate()
        try:
            server.wait(timeout=10)
        except subprocess.TimeoutExpired:
            server.kill()
            server.wait(timeout=10)


def write_users(users_file, users: dict) -> None:
    """Creates each user of `users` (user -> (role, password, subject prefixes)) in `users_file` with
    `registry passwd`, the password given on its standard input as an operator types it."""
    binary = registry_binary()
    env = {**os.environ, "REGISTRY_USERS_FILE": str(users_file)}
    for user, (role, password, prefixes) in users.items():
        args = [binary, "passwd", user, "--role", role]
        for prefix in prefixes:
            args += ["--subject-prefix", prefix]
        done = subprocess.run(args, input=password + "\n", env=env, capture_output=True, text=True, timeout=60)
        assert done.returncode == 0, f"registry passwd {user} failed: {done.stderr}"


def serving_with_basic_auth(work, users_file, what: str, extra_env: dict | None = None):
    """A registry of its own with HTTP Basic users from `users_file`, its data and logs in `work`, on a
    free loopback port (`serving`: yields its URL, stops it by its PID afterwards): `registry serve` on
    REGISTRY_BACKEND (memory when unset), or with LAMBDA_EMULATOR set (the Lambda run) the
    registry-lambda function under that Runtime API emulator. `extra_env` adds settings."""
    port = free_port()
    env = {
        **os.environ,
        "PORT": str(port),
        "REGISTRY_BIND": "127.0.0.1",
        "REGISTRY_DATA_DIR": str(work / "data"),
        "REGISTRY_USERS_FILE": str(users_file),
        **(extra_env or {}),
        "RUST_LOG": os.environ.get("RUST_LOG", "warn"),
    }
    backend = os.environ.get("REGISTRY_BACKEND") or "memory"
    emulator = os.environ.get("LAMBDA_EMULATOR")
    if emulator:
        backend = "lambda"
        command = [emulator, "--port", str(port), "--log", str(work / "function.log")]
    else:
        command = [registry_binary(), "serve", "--backend", backend]
    return serving(command, env, f"http://127.0.0.1:{port}", work / "server.log", f"registry serve ({what}, {backend})")


@pytest.fixture(scope="session")
def registry_url() -> str:
    url = os.environ.get("REGISTRY_URL")
    if not url:
        pytest.fail("REGISTRY_URL is not set: run the suite through scripts/clients-test.sh")
    return url


@pytest.fixture
def client(registry_url: str) -> SchemaRegistryClient:
    return SchemaRegistryClient({"url": registry_url})


@pytest.fixture
def fresh_client(registry_url: str):
    """A factory of clients with empty caches, so a read really goes to the registry."""
    return lambda: SchemaRegistryClient({"url": registry_url})


@pytest.fixture
def topic() -> str:
    return f"orders-{uuid.uuid4().hex[:12]}"


@pytest.fixture
def value_ctx(topic: str) -> SerializationContext:
    return SerializationContext(topic, MessageField.VALUE)


@pytest.fixture
def subject(topic: str) -> str:
    """The subject TopicNameStrategy gives the value of `topic`."""
    return f"{topic}-value"

