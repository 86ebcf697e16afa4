"""The MCP server at /mcp driven by the official MCP Python SDK (`mcp`'s ClientSession over its
Streamable HTTP client), as an assistant's host drives it: tools and resources listed, every read
tool called, a write without and with confirmation, and authorization as the REST API's (a scoped
user sees and changes only its subjects; no credentials, no session).

The module starts its own server with REGISTRY_MCP_ENABLED=true and HTTP Basic users from a
temporary users file: `registry serve` on REGISTRY_BACKEND (memory when unset), or with
LAMBDA_EMULATOR set (the Lambda run) the registry-lambda function under that Runtime API emulator.
It is stopped by its PID when the module ends, also on failure."""

import asyncio
import base64
import json
import urllib.error
import urllib.request
import uuid

import pytest
from conftest import serving_with_basic_auth, write_users
from mcp import ClientSession
from mcp.client.streamable_http import create_mcp_http_client, streamable_http_client

USERS = {
    "admin": ("admin", "a-secret-1", []),
    "reader": ("read", "r-secret-2", []),
    "team-a": ("write", "t-secret-3", ["team-a."]),
}

ORDER = json.dumps({"type": "record", "name": "Order", "namespace": "shop", "fields": [
    {"name": "customer_id", "type": "long"}, {"name": "total", "type": "double"}]})
ORDER_V2 = json.dumps({"type": "record", "name": "Order", "namespace": "shop", "fields": [
    {"name": "customer_id", "type": "long"}, {"name": "total", "type": "double"},
    {"name": "note", "type": "string", "default": ""}]})


def _basic(user: str) -> dict:
    token = base64.b64encode(f"{user}:{USERS[user][1]}".encode()).decode()
    return {"Authorization": f"Basic {token}"}


def _rest(url: str, method: str, path: str, user: str, body: dict | None = None) -> tuple[int, object]:
    data = json.dumps(body).encode() if body is not None else None
    headers = {**_basic(user), "Content-Type": "application/vnd.schemaregistry.v1+json"}
    request = urllib.request.Request(url + path, data=data, method=method, headers=headers)
    try:
        with urllib.request.urlopen(request, timeout=60) as answer:
            return answer.status, json.loads(answer.read() or b"null")
    except urllib.error.HTTPError as error:
        return error.code, json.loads(error.read() or b"null")


def _start(tmp_path_factory, mcp_enabled: bool):
    work = tmp_path_factory.mktemp("mcp")
    users_file = work / "users.json"
    write_users(users_file, USERS)
    return serving_with_basic_auth(work, users_file, "mcp", {"REGISTRY_MCP_ENABLED": "true" if mcp_enabled else "false"})


@pytest.fixture(scope="module")
def mcp_url(tmp_path_factory) -> str:
    with _start(tmp_path_factory, True) as url:
        yield url


def session(url: str, user: str | None):
    """Runs `body(session)` in an initialized MCP session as `user` (no credentials for None)."""

    def run(body):
        async def main():
            headers = _basic(user) if user else {}
            async with create_mcp_http_client(headers=headers) as http:
                async with streamable_http_client(url + "/mcp", http_client=http) as streams:
                    async with ClientSession(streams[0], streams[1]) as mcp:
                        await mcp.initialize()
                        return await body(mcp)

        return asyncio.run(main())

    return run


def answer(result) -> object:
    """A tool result's JSON text, parsed."""
    return json.loads(result.content[0].text)


@pytest.fixture
def names() -> dict:
    tag = uuid.uuid4().hex[:10]
    return {"orders": f"team-a.orders-{tag}-value", "other": f"team-b.orders-{tag}-value", "tag": tag}


@pytest.fixture
def seeded(mcp_url, names) -> dict:
    """Two versions under team-a's subject and one under team-b's, registered over REST by admin;
    each subject's last ID."""
    ids = {}
    for subject, schema in [(names["orders"], ORDER), (names["orders"], ORDER_V2), (names["other"], ORDER)]:
        status, body = _rest(mcp_url, "POST", f"/subjects/{subject}/versions", "admin", {"schema": schema})
        assert status == 200, body
        ids[subject] = body["id"]
    return ids


def test_tools_and_resources_are_listed_with_axonops_names(mcp_url):
    async def body(mcp):
        tools = {tool.name: tool for tool in (await mcp.list_tools()).tools}
        resources = [resource.uri for resource in (await mcp.list_resources()).resources]
        templates = [t.uri_template for t in (await mcp.list_resource_templates()).resource_templates]
        return tools, resources, templates

    tools, resources, templates = session(mcp_url, "reader")(body)
    for name in ["list_subjects", "get_latest_schema", "get_schema_by_id", "register_schema", "check_compatibility",
                 "find_schemas_by_field", "diff_schemas", "get_dependency_graph", "list_exporters", "list_keks",
                 "import_schemas", "set_config", "get_registry_statistics"]:
        assert name in tools, name
    assert tools["get_latest_schema"].annotations.read_only_hint is True
    assert tools["delete_subject"].annotations.destructive_hint is True
    assert "confirm" in tools["register_schema"].input_schema["properties"]
    assert tools["get_latest_schema"].input_schema["required"] == ["subject"]
    assert "schema://subjects" in resources
    assert "schema://subjects/{subject}/versions/{version}" in templates


def test_every_read_tool_answers(mcp_url, names, seeded):
    subject, schema_id = names["orders"], seeded[names["orders"]]
    calls = {
        "list_subjects": {"prefix": "team-a."},
        "list_schemas": {"prefix": "team-a.", "latest_only": True},
        "list_versions": {"subject": subject},
        "get_latest_schema": {"subject": subject},
        "get_schema_version": {"subject": subject, "version": "1"},
        "get_raw_schema_version": {"subject": subject, "version": "latest"},
        "get_schema_by_id": {"id": schema_id},
        "get_raw_schema_by_id": {"id": schema_id},
        "get_subjects_for_schema": {"id": schema_id},
        "get_versions_for_schema": {"id": schema_id},
        "get_referenced_by": {"subject": subject, "version": "1"},
        "get_subject_metadata": {"subject": subject},
        "get_schema_types": {},
        "list_contexts": {},
        "get_cluster_id": {},
        "get_server_version": {},
        "health_check": {},
        "lookup_schema": {"subject": subject, "schema": ORDER},
        "check_compatibility": {"subject": subject, "schema": ORDER_V2},
        "get_config": {},
        "get_mode": {},
        "search_schemas": {"pattern": names["tag"]},
        "find_schemas_by_field": {"field": "customerId"},
        "find_schemas_by_type": {"type_pattern": "double"},
        "find_similar_schemas": {"subject": subject},
        "validate_schema": {"schema": ORDER},
        "normalize_schema": {"schema": ORDER},
        "score_schema_quality": {"subject": subject},
        "get_schema_complexity": {"schema": ORDER},
        "validate_subject_name": {"subject": subject},
        "match_subjects": {"pattern": names["tag"]},
        "get_schema_history": {"subject": subject},
        "get_dependency_graph": {"subject": subject, "version": "1"},
        "diff_schemas": {"subject": subject, "version_from": 1, "version_to": 2},
        "suggest_schema_evolution": {"subject": subject, "changes": [{"action": "add", "field": "x"}]},
        "plan_migration_path": {"subject": subject, "target_schema": ORDER},
        "export_subject": {"subject": subject},
        "export_schema": {"subject": subject, "version": "2"},
        "check_compatibility_multi": {"schema": ORDER_V2, "subjects": [subject]},
        "get_registry_statistics": {},
        "check_field_consistency": {"field": "total"},
        "detect_schema_patterns": {},
        "list_exporters": {},
        "list_keks": {},
    }
    # Tools naming an exporter or a key: none exists, so each reaches its route and answers
    # Confluent's not-found error (or 404 where the server has no such registry configured).
    named = {
        "get_exporter": {"name": "none"},
        "get_exporter_config": {"name": "none"},
        "get_exporter_status": {"name": "none"},
        "get_kek": {"name": "none"},
        "list_deks": {"kek_name": "none"},
        "get_dek": {"kek_name": "none", "subject": subject},
        "list_dek_versions": {"kek_name": "none", "subject": subject},
    }

    async def body(mcp):
        results = {}
        for tool in (await mcp.list_tools()).tools:
            read_only = tool.annotations.read_only_hint
            assert not read_only or tool.name in calls or tool.name in named, f"read tool {tool.name} not called"
            if read_only:
                results[tool.name] = await mcp.call_tool(tool.name, {**calls, **named}[tool.name])
        return results

    # As admin: exporters need the configure role (Confluent's AlterConfigs), even to be read.
    results = session(mcp_url, "admin")(body)
    assert set(results) == set(calls) | set(named)
    for name in named:
        refused = answer(results.pop(name))
        assert refused["error_code"] in (404, 40401, 40402, 40450, 40470, 40471), f"{name}: {refused}"
    for name, result in results.items():
        assert result.is_error is not True, f"{name}: {result.content[0].text}"
    assert subject in answer(results["list_subjects"])
    assert answer(results["get_latest_schema"])["version"] == 2
    assert json.loads(answer(results["get_schema_by_id"])["schema"]) == json.loads(ORDER_V2)
    assert answer(results["check_compatibility"])["is_compatible"] is True
    fields = answer(results["find_schemas_by_field"])
    assert {m["subject"] for m in fields["matches"]} >= {names["orders"], names["other"]}
    diff = answer(results["diff_schemas"])
    assert (diff["added"], diff["removed"], diff["changed"]) == ([{"field": "note", "type": "string"}], [], []), diff
    assert answer(results["get_subject_metadata"])["version"] == 2
    # The read tools left the registry as it was.
    assert answer(results["list_versions"]) == [1, 2]


def test_a_write_needs_confirmation(mcp_url, names):
    subject = names["orders"]

    async def body(mcp):
        unconfirmed = await mcp.call_tool("register_schema", {"subject": subject, "schema": ORDER})
        dry = await mcp.call_tool("register_schema", {"subject": subject, "schema": ORDER, "confirm": True,
                                                      "dry_run": True})
        listed = await mcp.call_tool("list_versions", {"subject": subject})
        confirmed = await mcp.call_tool("register_schema", {"subject": subject, "schema": ORDER, "confirm": True})
        deleted = await mcp.call_tool("delete_subject", {"subject": subject})
        return unconfirmed, dry, listed, confirmed, deleted

    unconfirmed, dry, listed, confirmed, deleted = session(mcp_url, "admin")(body)
    for preview in (unconfirmed, dry):
        assert preview.is_error is True
        shown = answer(preview)
        assert shown["confirmation_required"] is True
        assert shown["requests"][0]["path"] == f"/subjects/{subject}/versions"
    assert listed.is_error is True and answer(listed)["error_code"] == 40401, "nothing was registered"
    assert confirmed.is_error is not True and answer(confirmed)["id"] > 0
    assert deleted.is_error is True and answer(deleted)["confirmation_required"] is True
    status, versions = _rest(mcp_url, "GET", f"/subjects/{subject}/versions", "admin")
    assert (status, versions) == (200, [1]), "the unconfirmed delete changed nothing"


def test_a_scoped_user_reaches_only_its_subjects(mcp_url, names, seeded):
    mine, theirs = names["orders"], names["other"]

    async def body(mcp):
        listed = await mcp.call_tool("list_subjects", {})
        read_theirs = await mcp.call_tool("get_latest_schema", {"subject": theirs})
        search = await mcp.call_tool("find_schemas_by_field", {"field": "customer_id"})
        write_theirs = await mcp.call_tool("register_schema", {"subject": theirs, "schema": ORDER_V2,
                                                               "confirm": True})
        delete_theirs = await mcp.call_tool("delete_subject", {"subject": theirs, "confirm": True})
        write_mine = await mcp.call_tool("register_schema", {"subject": mine, "schema": ORDER, "confirm": True})
        resource = await mcp.read_resource(f"schema://subjects/{mine}")
        try:
            await mcp.read_resource(f"schema://subjects/{theirs}")
            refused_resource = None
        except Exception as error:  # the SDK raises the JSON-RPC error
            refused_resource = error
        return listed, read_theirs, search, write_theirs, delete_theirs, write_mine, resource, refused_resource

    listed, read_theirs, search, write_theirs, delete_theirs, write_mine, resource, refused = \
        session(mcp_url, "team-a")(body)
    assert all(subject.startswith("team-a.") for subject in answer(listed)) and mine in answer(listed)
    for refused_call in (read_theirs, write_theirs, delete_theirs):
        assert refused_call.is_error is True and answer(refused_call)["error_code"] == 40301, \
            refused_call.content[0].text
    found = {m["subject"] for m in answer(search)["matches"]}
    assert mine in found and all(subject.startswith("team-a.") for subject in found), found
    assert write_mine.is_error is not True and answer(write_mine)["id"] == seeded[theirs], "ORDER's one ID"
    assert json.loads(resource.contents[0].text)["subject"] == mine
    assert refused is not None and "40301" in str(refused)
    status, versions = _rest(mcp_url, "GET", f"/subjects/{theirs}/versions", "admin")
    assert (status, versions) == (200, [1]), "team-b's subject is untouched"


def test_without_credentials_there_is_no_session(mcp_url):
    request = urllib.request.Request(mcp_url + "/mcp", method="POST", data=json.dumps({
        "jsonrpc": "2.0", "id": 1, "method": "initialize",
        "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}},
    }).encode(), headers={"Content-Type": "application/json", "Accept": "application/json, text/event-stream"})
    with pytest.raises(urllib.error.HTTPError) as refused:
        urllib.request.urlopen(request, timeout=60)
    assert refused.value.code == 401
    with pytest.raises(Exception):
        session(mcp_url, None)(lambda mcp: mcp.list_tools())


def test_the_server_is_off_unless_enabled(tmp_path_factory):
    with _start(tmp_path_factory, False) as url:
        status, body = _rest(url, "POST", "/mcp", "admin", {"jsonrpc": "2.0", "id": 1, "method": "ping"})
        assert (status, body["error_code"]) == (404, 404), body
