"""``workflows validate``'s warnings for a workflow whose tools act as the requester: whatever this machine sets,
each thing connecting needs and lacks is named once — a provider's client secret, the stack's address for
``agent-runtime run``, a stack secret's ``oauth_state_key`` — and nothing that is set is."""

from __future__ import annotations

import yaml
from agent_runtime.workflows import parse_workflow
from agent_runtime.workflows.credentials import missing_credentials
from hypothesis import given, settings
from hypothesis import strategies as st

WORKFLOW = """\
name: mine
description: Acts as the asker.
prompt: You answer from the person's own account.
model: {name: gpt-4o, context_window: 128000}
oauth:
  providers:
    github: {authorize_url: "https://p.example/a", token_url: "https://p.example/t", client_id: c,
             client_secret: "${secret:github_client_secret}"}
    public: {authorize_url: "https://q.example/a", token_url: "https://q.example/t", client_id: d}
tools:
  openapi:
    - {name: gh, spec: specs/gh.yaml, as_requester: github}
"""


@settings(max_examples=40, deadline=None)
@given(st.sets(st.sampled_from(["github_client_secret", "oauth_state_key"])), st.booleans(), st.booleans())
def test_what_connecting_lacks_here_is_named_and_nothing_that_is_set(present: set[str], api: bool, stack: bool) -> None:
    workflow = parse_workflow(yaml.safe_load(WORKFLOW), file="mine.yaml")
    lacking = missing_credentials(
        workflow,
        lambda key: "v" if key in present else None,
        jira_site=False,
        api_url="http://127.0.0.1:8080" if api else None,
        stack=stack,
    )
    said = {key: why for key, why in lacking}
    assert len(said) == len(lacking) or [k for k, _ in lacking].count("oauth") == 2
    secret = "oauth.providers.github.client_secret"
    assert (secret in said) is ("github_client_secret" not in present)
    assert "oauth.providers.public.client_secret" not in said  # a public client has none to set
    whys = " ".join(why for key, why in lacking if key == "oauth")
    assert ("AGENT_API_URL is not set" in whys) is not api and ("agent-runtime serve" in whys) is not api
    assert ("oauth_state_key" in whys) is (stack and "oauth_state_key" not in present)  # serve makes its own
    if "github_client_secret" in present and api and (not stack or "oauth_state_key" in present):
        assert lacking == []
