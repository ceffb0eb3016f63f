"""Files in the playground's Slack: the ones people attach on the page and the ones the app uploads (slack_sdk's
``files_upload_v2``: ``files.getUploadURLExternal``, a POST of the bytes to the URL it hands out, then
``files.completeUploadExternal`` shares them in the thread). A file's ``url_private`` is under the Web API's own
URL and opens only with the bot token (the runtime downloads it), or from the page with its token."""

from __future__ import annotations

import mimetypes
import secrets
import time
import urllib.parse

from .layout import BOT_USER
from .limits import Refused, listed
from .slack_api import Args, SlackWebApi, method
from .workspace import FILE

MAX_FILE_BYTES = 1024 * 1024 * 1024  # files.getUploadURLExternal: Slack's limit is 1 GB


def file_object(api: SlackWebApi, file_id: str, name: str, size: int, user: str) -> Args:
    """A file as Slack describes it (the keys the runtime reads: name, mimetype, size, url_private)."""
    kind = mimetypes.guess_type(name)[0] or "application/octet-stream"
    url = f"{api.base}files-pri/{file_id}/{urllib.parse.quote(name)}"
    return {
        "id": file_id,
        "created": int(time.time()),
        "name": name,
        "title": name,
        "mimetype": kind,
        "filetype": name.rsplit(".", 1)[-1].lower() if "." in name else "binary",
        "user": user,
        "size": size,
        "url_private": url,
        "url_private_download": url,
        "is_external": False,
    }


def attach(api: SlackWebApi, name: str, data: bytes, user: str) -> Args:
    """A file a person attached on the page: kept, and described as Slack shares it with the message."""
    file_id = "F" + secrets.token_hex(5).upper()
    api.workspace.put_blob(file_id, data)
    described = file_object(api, file_id, name[:255] or "file", len(data), user)
    api.workspace.put(FILE, file_id, described)
    return described


@method("files.getUploadURLExternal")
def _upload_url(api: SlackWebApi, args: Args) -> Args:
    name = str(args.get("filename") or "")
    try:
        length = int(args.get("length") or -1)
    except (TypeError, ValueError):  # a list, an object: what no length is
        length = -1
    if not name or not 0 <= length <= MAX_FILE_BYTES:
        raise Refused("invalid_arguments", "filename and length (in bytes) are required")
    file_id, key = "F" + secrets.token_hex(5).upper(), secrets.token_urlsafe(16)
    described = file_object(api, file_id, name[:255], length, BOT_USER)
    api.workspace.put(FILE, file_id, {**described, "_key": key, "_length": length, "_received": False})
    root = api.base.rstrip("/").rsplit("/", 1)[0]  # .../play/slack
    return {"upload_url": f"{root}/upload/{file_id}/{key}", "file_id": file_id}


def receive(api: SlackWebApi, file_id: str, key: str, data: bytes) -> tuple[int, bytes]:
    """The bytes POSTed to an upload URL; Slack answers ``OK - <length>`` in plain text."""
    found = api.workspace.get(FILE, file_id)
    if found is None or not secrets.compare_digest(str(found.get("_key")), key) or found.get("_received"):
        return 404, b"Not Found"
    api.workspace.put_blob(file_id, data)
    api.workspace.put(FILE, file_id, {**found, "size": len(data), "_received": True})
    return 200, f"OK - {len(data)}".encode()


@method("files.completeUploadExternal")
def _complete(api: SlackWebApi, args: Args) -> Args:
    """The uploaded files shared in the channel (a message of the app's, in the thread) when a channel is given."""
    given = listed(args.get("files"), "files") or []
    if not given or not all(isinstance(f, dict) and f.get("id") for f in given):
        raise Refused("invalid_arguments", "files: an array of {id, title}")
    described = []
    for item in given:
        found = api.workspace.get(FILE, str(item["id"]))
        if found is None or not found.get("_received"):
            raise Refused("file_not_found")
        done = {
            **{k: v for k, v in found.items() if not k.startswith("_")},
            "title": item.get("title") or found["name"],
        }
        api.workspace.put(FILE, done["id"], done)
        described.append(done)
    channel = str(args.get("channel_id") or "")
    if channel:
        api.channel({"channel": channel})
        message = api.bot_message(channel, args.get("thread_ts"), str(args.get("initial_comment") or ""), None)
        api.post({**message, "files": described, "upload": True, "display_as_bot": False})
    return {"files": [{"id": f["id"], "title": f["title"]} for f in described]}


def download(api: SlackWebApi, file_id: str, authorised: bool) -> tuple[int, bytes, str]:
    """A file's bytes for the bot token (or the page); Slack answers a login page to a request without one."""
    found = api.workspace.get(FILE, file_id)
    data = api.workspace.blob(file_id) if found is not None else None
    if data is None or found is None:
        return 404, b"file not found", "text/plain"
    if not authorised:
        return 200, b"<!DOCTYPE html><title>Slack</title><p>Sign in to see this file.", "text/html"
    return 200, data, str(found.get("mimetype") or "application/octet-stream")
