"""slack/manifest.yaml stays in step with what the stack and the code need: its ${...} are template.yaml's
outputs, it subscribes to the events the webhook handles, and its scopes cover every Web API method the chat
client calls; `make slack-manifest` fills in the URLs."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import yaml

from tests.conftest import REPO

MANIFEST = (REPO / "slack" / "manifest.yaml").read_text()
# Each Web API method the chat client calls, and the bot scope it needs (api.slack.com/methods).
SCOPES = {
    "chat_postMessage": {"chat:write"},
    "chat_postEphemeral": {"chat:write"},
    "chat_update": {"chat:write"},
    "chat_delete": {"chat:write"},
    "chat_startStream": {"chat:write"},
    "chat_appendStream": {"chat:write"},
    "chat_stopStream": {"chat:write"},
    "files_upload_v2": {"files:write"},
    "conversations_replies": {"channels:history", "groups:history"},
    "reactions_get": {"reactions:read"},
    "conversations_info": {"channels:read", "groups:read"},
    "usergroups_users_list": {"usergroups:read"},
    "assistant_threads_setStatus": {"assistant:write"},
    "assistant_threads_setTitle": {"assistant:write"},
    "assistant_threads_setSuggestedPrompts": {"assistant:write"},
}


def template_outputs() -> set[str]:
    text = (REPO / "template.yaml").read_text()
    section = text[text.index("\nOutputs:\n") :]
    return set(re.findall(r"^  (\w+):$", section, re.MULTILINE))


def test_the_manifests_placeholders_are_the_stacks_outputs() -> None:
    used = set(re.findall(r"\$\{(\w+)\}", MANIFEST))
    assert used == {"SlackEventsUrl", "SlackInteractivityUrl"} and used <= template_outputs()


def test_the_manifest_subscribes_to_what_the_webhook_handles_and_has_the_scopes_the_client_needs() -> None:
    manifest = yaml.safe_load(MANIFEST)
    events = set(manifest["settings"]["event_subscriptions"]["bot_events"])
    ingress = (REPO / "layers/runtime/agent_runtime/triggers/slack.py").read_text()
    assert events == {"app_mention", "message.im", "app_home_opened", "reaction_added"}
    assert all(f'"{name}"' in ingress for name in ("app_mention", "im", "app_home_opened", "reaction_added"))
    # An app on Slack's older assistant view subscribes to these instead of app_home_opened (README):
    assert '"assistant_thread_started"' in ingress and '"assistant_thread_context_changed"' in ingress
    assert "agent_view" in manifest["features"]
    scopes = set(manifest["oauth_config"]["scopes"]["bot"])
    chat = REPO / "layers/runtime/agent_runtime/chat"
    client = "".join((chat / name).read_text() for name in ("replies.py", "stream.py"))  # where the WebClient is
    called = set(re.findall(r"self\.client\.(\w+)\(", client))
    called |= {name.replace(".", "_") for name in re.findall(r'self\._api\(\s*"([\w.]+)"', client)}
    assert called <= set(SCOPES), f"a new Web API method: add its scope to the manifest and here: {called}"
    assert all(SCOPES[method] <= scopes for method in called)
    assert {"app_mentions:read", "im:history", "files:read"} <= scopes  # events and attachments
    assert manifest["settings"]["interactivity"]["is_enabled"] is True  # approvals


def test_make_slack_manifest_fills_in_the_deployed_urls(tmp_path: Path) -> None:
    base = "https://abc123.execute-api.eu-west-1.amazonaws.com"
    outputs = [{"OutputKey": "SlackEventsUrl", "OutputValue": f"{base}/slack/events"},
               {"OutputKey": "SlackInteractivityUrl", "OutputValue": f"{base}/slack/interactivity"}]  # fmt: skip
    (tmp_path / "outputs.json").write_text(json.dumps(outputs))
    script = [sys.executable, str(REPO / "scripts" / "slack-manifest"), str(tmp_path / "outputs.json")]
    printed = subprocess.run(script, capture_output=True, text=True, check=True).stdout
    filled = yaml.safe_load(printed)
    assert filled["settings"]["event_subscriptions"]["request_url"] == f"{base}/slack/events"
    assert filled["settings"]["interactivity"]["request_url"] == f"{base}/slack/interactivity"
    (tmp_path / "old.json").write_text(json.dumps(outputs[:1]))
    old = subprocess.run([*script[:2], str(tmp_path / "old.json")], capture_output=True, text=True)
    assert old.returncode == 1 and "no output SlackInteractivityUrl" in old.stderr
