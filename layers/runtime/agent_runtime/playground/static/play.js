// The playground's page: a Slack workspace (and a JIRA site) drawn from what serve keeps, kept current by a long
// poll of /play/ui/changes; what a person does goes to /play/ui/<action> with the page's token, and serve turns it
// into the request Slack or JIRA would send. Everything shown is built as DOM nodes: no text becomes markup.
"use strict";

(() => {
  const TOKEN = document.querySelector('meta[name="playground-token"]').content;
  const EMOJI = {
    "+1": "👍", "-1": "👎", thumbsup: "👍", thumbsdown: "👎", eyes: "👀", white_check_mark: "✅", x: "❌",
    jira: "🎫", bug: "🐛", memo: "📝", hourglass: "⌛", hourglass_flowing_sand: "⏳", writing_hand: "✍️",
    raised_hand: "✋", no_entry_sign: "🚫", octagonal_sign: "🛑", warning: "⚠️", tada: "🎉", rocket: "🚀",
    heart: "❤️", fire: "🔥", merged: "🟣", grey_question: "❔", question: "❓", bulb: "💡", wave: "👋",
    hammer_and_wrench: "🛠️", mag: "🔍", robot_face: "🤖", page_facing_up: "📄", bar_chart: "📊", clock1: "🕐",
    large_green_circle: "🟢", red_circle: "🔴", stopwatch: "⏱️", money_with_wings: "💸", speech_balloon: "💬",
  };
  const TASK_MARKS = { pending: "○", in_progress: "◐", complete: "✓", error: "✗" };
  const S = {
    layout: null, model: "", version: -1, view: { kind: "channel", id: "C0GENERAL" }, thread: null,
    user: "U0DANA", issue: null, messages: new Map(), panes: new Map(), issues: new Map(), deliveries: new Map(),
    feedback: new Map(), drawn: false, maxFiles: Infinity,
  };
  const $ = (id) => document.getElementById(id);

  function el(tag, attrs, ...children) {
    const node = document.createElement(tag);
    for (const [key, value] of Object.entries(attrs || {})) {
      if (value === undefined || value === null || value === false) continue;
      if (key === "text") node.textContent = value;
      else if (key === "on") for (const [name, handler] of Object.entries(value)) node.addEventListener(name, handler);
      else if (key === "dataset") Object.assign(node.dataset, value);
      else node.setAttribute(key, value === true ? "" : String(value));
    }
    for (const child of children.flat()) {
      if (child !== null && child !== undefined && child !== false) {
        node.append(typeof child === "string" ? document.createTextNode(child) : child);
      }
    }
    return node;
  }

  // ---- talking to serve -------------------------------------------------------------------------------------
  async function act(name, body) {
    let answer = {};
    try {
      const response = await fetch(`/play/ui/${name}`, {
        method: "POST",
        headers: { "Content-Type": "application/json", "X-Playground-Token": TOKEN },
        body: JSON.stringify({ user: S.user, ...body }),
      });
      answer = await response.json();
      if (!response.ok) toast(answer.error || `refused (${response.status})`);
      else if (answer.gone) toast(answer.gone);
      else if (answer.sent) said(answer.sent);
    } catch (error) {
      toast(`serve did not answer: ${error}`);
    }
    return answer;
  }

  function said(sent) {
    if (sent.route === null) toast(String(sent.answer));
    else if (sent.status !== 200 && sent.status !== 202) toast(`${sent.route}: ${sent.status} ${JSON.stringify(sent.answer)}`);
    else if (sent.answer && sent.answer.status === "ignored") toast(`${sent.route}: ignored: ${sent.answer.reason}`);
  }

  let toastTimer = 0;
  function toast(text) {
    const node = $("toast");
    node.textContent = text;
    node.hidden = false;
    clearTimeout(toastTimer);
    toastTimer = setTimeout(() => { node.hidden = true; }, 4000);
  }

  async function poll() {
    for (;;) {
      try {
        const response = await fetch(`/play/ui/changes?after=${S.version}`);
        if (!response.ok) throw new Error(String(response.status));
        const changes = await response.json();
        merge(changes.records);
        S.version = changes.version;
        draw();
      } catch (error) {
        await new Promise((resolve) => setTimeout(resolve, 1000));
      }
    }
  }

  function merge(records) {
    const stores = { message: S.messages, pane: S.panes, issue: S.issues, delivery: S.deliveries };
    for (const record of records) {
      if (stores[record.kind]) stores[record.kind].set(record.key, record.body);
    }
  }

  // ---- text: Slack's mrkdwn and the streams' markdown, as nodes ---------------------------------------------
  const INLINE = new RegExp([
    "`([^`\\n]+)`", "<(https?://[^|>\\s]+)(?:\\|([^>]+))?>", "<@([A-Z0-9]+)>", "<#([A-Z0-9]+)(?:\\|([^>]*))?>",
    "<!(here|channel|everyone)[^>]*>", "\\[([^\\]\\n]+)\\]\\((https?://[^)\\s]+)\\)", "\\*\\*([^*\\n]+)\\*\\*",
    "(?<![\\w*])\\*([^*\\n]+)\\*(?![\\w*])", "(?<![\\w_])_([^_\\n]+)_(?![\\w_])", "~([^~\\n]+)~", ":([a-z0-9_+-]+):",
  ].join("|"), "g");

  function unescape(text) {
    return text.replace(/&lt;/g, "<").replace(/&gt;/g, ">").replace(/&amp;/g, "&");
  }

  function link(url, label) {
    return el("a", { href: url, target: "_blank", rel: "noopener noreferrer", text: label || url });
  }

  function inline(text) {
    const nodes = [];
    let at = 0;
    for (const m of text.matchAll(INLINE)) {
      if (m.index > at) nodes.push(unescape(text.slice(at, m.index)));
      nodes.push(inlineMatch(m));
      at = m.index + m[0].length;
    }
    if (at < text.length) nodes.push(unescape(text.slice(at)));
    return nodes;
  }

  function inlineMatch(m) {
    if (m[1] !== undefined) return el("code", { text: m[1] });
    if (m[2] !== undefined) return link(m[2], m[3] ? unescape(m[3]) : m[2]);
    if (m[4] !== undefined) return el("span", { class: "mention", text: `@${personName(m[4])}` });
    if (m[5] !== undefined) return el("span", { class: "mention", text: `#${m[6] || roomName(m[5])}` });
    if (m[7] !== undefined) return el("span", { class: "mention", text: `@${m[7]}` });
    if (m[8] !== undefined) return link(m[9], m[8]);
    if (m[10] !== undefined) return el("strong", {}, inline(m[10]));
    if (m[11] !== undefined) return el("strong", {}, inline(m[11]));
    if (m[12] !== undefined) return el("em", {}, inline(m[12]));
    if (m[13] !== undefined) return el("s", {}, inline(m[13]));
    return EMOJI[m[14]] || m[0];
  }

  function rich(text) {
    const box = el("div", { class: "text" });
    const parts = String(text || "").split(/```/);
    parts.forEach((part, index) => {
      if (index % 2 === 1) {
        box.append(el("pre", { text: unescape(part.replace(/^\n/, "")) }));
        return;
      }
      for (const line of part.split("\n")) {
        const heading = /^#{1,6}\s+(.*)$/.exec(line);
        const quote = /^(?:>|&gt;)\s?(.*)$/.exec(line);
        if (heading) box.append(el("p", { class: "line" }, el("strong", {}, inline(heading[1]))));
        else if (quote) box.append(el("blockquote", {}, inline(quote[1])));
        else box.append(el("p", { class: "line" }, inline(line.replace(/^(\s*)[-*]\s+/, "$1• "))));
      }
    });
    return box;
  }

  // ---- people, rooms, times ---------------------------------------------------------------------------------
  function personName(id) {
    if (!S.layout) return id;
    if (id === S.layout.bot.user) return S.layout.bot.name;
    const found = S.layout.people.find((p) => p.id === id);
    return found ? found.name : id;
  }

  function roomName(id) {
    const found = S.layout && S.layout.channels.find((c) => c.id === id);
    return found ? found.name : id;
  }

  function clock(ts) {
    const when = new Date(parseFloat(ts) * 1000);
    return when.toLocaleTimeString([], { hour: "2-digit", minute: "2-digit", second: "2-digit" });
  }

  // ---- blocks -----------------------------------------------------------------------------------------------
  function textObject(object) {
    if (!object) return "";
    return object.type === "mrkdwn" ? rich(object.text) : el("span", { text: object.text });
  }

  function blockNodes(message) {
    return (message.blocks || []).map((block) => blockNode(message, block));
  }

  function blockNode(message, block) {
    switch (block.type) {
      case "section":
        return el("div", { class: "block section" }, textObject(block.text),
          (block.fields || []).map((field) => el("div", { class: "field" }, textObject(field))));
      case "rich_text":
        return el("div", { class: "block rich" }, (block.elements || []).map(richElement));
      case "actions":
        return el("div", { class: "block actions" }, (block.elements || []).map((e) => actionNode(message, block, e)));
      case "context_actions":
        return el("div", { class: "block context-actions" },
          (block.elements || []).map((e) => contextAction(message, block, e)));
      case "context":
        return el("div", { class: "block context" }, (block.elements || []).map((e) => textObject(e)));
      case "header":
        return el("h4", { class: "block header" }, textObject(block.text));
      case "markdown":
        return el("div", { class: "block markdown" }, rich(block.text));
      case "divider":
        return el("hr", { class: "block" });
      default:
        return el("div", { class: "block unknown", text: `[a ${block.type} block]` });
    }
  }

  function richElement(element) {
    const text = (element.elements || []).map((e) => e.text || "").join("");
    if (element.type === "rich_text_preformatted") return el("pre", { text });
    if (element.type === "rich_text_quote") return el("blockquote", { text });
    return el("p", { class: "line", text });
  }

  function actionNode(message, block, element) {
    if (element.type !== "button") return el("span", { class: "unsupported", text: `[${element.type}]` });
    const label = element.text ? element.text.text : "Button";
    const press = () => click(message, block, element);
    return el("button", {
      type: "button", class: `button ${element.style || ""}`, text: label,
      dataset: { actionId: element.action_id || "", ts: message.ts },
      on: { click: () => (element.confirm ? confirmThen(element.confirm, press) : press()) },
    });
  }

  function contextAction(message, block, element) {
    if (element.type !== "feedback_buttons") return el("span", { class: "unsupported", text: `[${element.type}]` });
    const chosen = S.feedback.get(message.ts);
    const one = (verdict, mark, button) => el("button", {
      type: "button", class: `feedback${chosen === verdict ? " chosen" : ""}`, title: button.text.text,
      "aria-label": button.text.text, dataset: { verdict, ts: message.ts }, text: `${mark} ${button.text.text}`,
      on: { click: () => { S.feedback.set(message.ts, verdict); click(message, block, element, verdict); draw(); } },
    });
    return el("span", { class: "feedback-buttons" },
      one("good", "👍", element.positive_button), one("bad", "👎", element.negative_button));
  }

  function click(message, block, element, verdict) {
    act("click", {
      channel: message.channel, ts: message.ts, block_id: block.block_id, action_id: element.action_id, verdict,
    });
  }

  function confirmThen(confirm, then) {
    const plain = (object, fallback) => (object && object.text) || fallback;
    $("dialog-title").textContent = plain(confirm.title, "Are you sure?");
    $("dialog-text").textContent = plain(confirm.text, "");
    $("dialog-ok").textContent = plain(confirm.confirm, "Yes");
    $("dialog-deny").textContent = plain(confirm.deny, "Cancel");
    $("dialog").hidden = false;
    $("dialog-ok").onclick = () => { $("dialog").hidden = true; then(); };
    $("dialog-deny").onclick = () => { $("dialog").hidden = true; };
  }

  // ---- messages ---------------------------------------------------------------------------------------------
  function streamNodes(message) {
    const box = el("div", { class: `stream ${message._stream.state}` });
    const cards = new Map();
    let text = "";
    const flush = () => { if (text) box.append(rich(text)); text = ""; };
    for (const chunk of message._stream.chunks) {
      if (chunk.type === "markdown_text") { text += chunk.text; continue; }
      if (chunk.type !== "task_update") continue;
      if (cards.has(chunk.id)) { cards.get(chunk.id).replaceWith(taskCard(chunk, cards)); continue; }
      flush();
      box.append(taskCard(chunk, cards));
    }
    flush();
    if (message._stream.state === "streaming") box.append(el("span", { class: "cursor", text: "▍" }));
    return box;
  }

  function taskCard(chunk, cards) {
    const card = el("div", { class: `task ${chunk.status}`, dataset: { task: chunk.id } },
      el("span", { class: "mark", text: TASK_MARKS[chunk.status] || "•" }), el("span", { text: chunk.title }));
    cards.set(chunk.id, card);
    return card;
  }

  function messageNode(message, inThread) {
    const bot = Boolean(message.bot_id);
    const who = personName(message.user || "");
    const body = el("div", { class: "body" },
      el("div", { class: "meta" }, el("strong", { text: who }), bot ? el("span", { class: "badge", text: "APP" }) : null,
        el("time", { text: clock(message.ts) }), message.edited ? el("span", { class: "edited", text: "(edited)" }) : null,
        message._to ? el("span", { class: "ephemeral", text: "Only visible to you" }) : null));
    if (message._stream) body.append(streamNodes(message));
    if (message.blocks && message.blocks.length) body.append(...blockNodes(message));
    else if (!message._stream && message.text) body.append(rich(message.text));
    if (message.files) body.append(filesNode(message.files));
    body.append(reactionsNode(message));
    if (!inThread && message.reply_count) body.append(repliesNode(message));
    const status = inThread ? null : statusNode(message.ts, message.channel);
    if (status) body.append(status);
    const tools = el("div", { class: "tools" },
      el("button", { type: "button", class: "react", title: "Add a reaction", text: "☺+",
        on: { click: (event) => openPicker(event, message) } }),
      inThread ? null : el("button", { type: "button", class: "reply", text: "Reply in thread",
        on: { click: () => openThread(message.channel, message.ts) } }));
    return el("article", { class: `message${bot ? " bot" : ""}`, dataset: { ts: message.ts, channel: message.channel } },
      el("div", { class: `avatar${bot ? " bot" : ""}`, text: who.slice(0, 1).toUpperCase() }), body, tools);
  }

  function filesNode(files) {
    return el("ul", { class: "files" }, files.map((file) => el("li", {},
      el("a", { href: `/play/ui/file/${encodeURIComponent(file.id)}`, text: file.name, download: file.name }),
      ` · ${file.mimetype} · ${Number(file.size).toLocaleString()} bytes`)));
  }

  function reactionsNode(message) {
    return el("div", { class: "reactions" }, (message.reactions || []).map((r) => el("button", {
      type: "button", class: `reaction${r.users.includes(S.user) ? " mine" : ""}`, title: `:${r.name}:`,
      dataset: { name: r.name }, text: `${EMOJI[r.name] || `:${r.name}:`} ${r.count}`,
      on: { click: () => act("react", { channel: message.channel, ts: message.ts, name: r.name }) },
    })));
  }

  function repliesNode(message) {
    return el("button", { type: "button", class: "replies", on: { click: () => openThread(message.channel, message.ts) },
      text: `${message.reply_count} ${message.reply_count === 1 ? "reply" : "replies"} · last at ${clock(message.latest_reply)}` });
  }

  function statusNode(threadTs, channel) {
    const pane = S.panes.get(channel) || {};
    const status = (pane.status || {})[threadTs];
    return status ? el("p", { class: "status", text: `${S.layout.bot.name} ${status}` }) : null;
  }

  function visible(message) {
    if (message._deleted) return false;
    if (message._dm && message._dm !== S.user) return false;  // the app's direct message with another person
    return !message._to || message._to === S.user;
  }

  function channelMessages(channel) {
    return [...S.messages.values()]
      .filter((m) => m.channel === channel && visible(m) && (!m.thread_ts || m.thread_ts === m.ts) && !m._thread)
      .sort((a, b) => parseFloat(a.ts) - parseFloat(b.ts));
  }

  function threadMessages(channel, ts) {
    return [...S.messages.values()]
      .filter((m) => m.channel === channel && visible(m) && (m.ts === ts || m.thread_ts === ts || m._thread === ts))
      .sort((a, b) => parseFloat(a.ts) - parseFloat(b.ts));
  }

  function fill(box, nodes) {
    const atEnd = box.scrollHeight - box.scrollTop - box.clientHeight < 40;
    box.replaceChildren(...nodes);
    if (atEnd) box.scrollTop = box.scrollHeight;
  }

  // ---- the picker, threads, composers -----------------------------------------------------------------------
  function openPicker(event, message) {
    const picker = $("picker");
    picker.replaceChildren(...S.layout.reactions.map((name) => el("button", {
      type: "button", role: "menuitem", title: `:${name}:`, dataset: { name }, text: `${EMOJI[name] || ""} :${name}:`,
      on: { click: () => { picker.hidden = true; act("react", { channel: message.channel, ts: message.ts, name }); } },
    })));
    const box = event.currentTarget.getBoundingClientRect();
    picker.style.top = `${Math.min(box.bottom + 4, window.innerHeight - 260)}px`;
    picker.style.left = `${Math.max(8, box.right - 260)}px`;
    picker.hidden = false;
    event.stopPropagation();
  }

  function openThread(channel, ts) {
    S.thread = { channel, ts };
    draw();
  }

  const megabytes = (size) => `${(size / 1048576).toFixed(1).replace(/\.0$/, "")} MB`;

  // The files chosen, read as base64; null (said) when they are over what serve takes in a message.
  function readFiles(input) {
    const chosen = [...input.files];
    const total = chosen.reduce((sum, file) => sum + file.size, 0);
    if (total > S.maxFiles) {
      const named = chosen.map((file) => `${file.name} (${megabytes(file.size)})`);
      const which = named.length === 1 ? named[0] : `${named.join(", ")}: ${megabytes(total)} together`;
      toast(`${which}: the playground takes up to ${megabytes(S.maxFiles)} of files in a message (Slack: 1 GB a file)`);
      return Promise.resolve(null);
    }
    return Promise.all(chosen.map((file) => new Promise((resolve, reject) => {
      const reader = new FileReader();
      reader.onload = () => resolve({ name: file.name, data: String(reader.result).split(",", 2)[1] || "" });
      reader.onerror = () => reject(reader.error);
      reader.readAsDataURL(file);
    })));
  }

  async function send(where, text, files) {
    if (!text && !files.length) return;
    const answer = await act("message", { ...where, text, files });
    const opensThread = !where.thread_ts && answer.ts && (where.channel === S.layout.dm.id || /@agent\b/i.test(text));
    if (opensThread) openThread(where.channel, answer.ts);
  }

  function wireComposer(text, files, names, button, where) {
    button.addEventListener("click", async () => {
      const said = text.value.trim();
      const attached = await readFiles(files);
      if (attached === null) return;  // over the limit: said, and the message kept to send without them
      text.value = "";
      files.value = "";
      names.textContent = "";
      await send(where(), said, attached);
    });
    text.addEventListener("keydown", (event) => {
      if (event.key === "Enter" && !event.shiftKey) { event.preventDefault(); button.click(); }
    });
    files.addEventListener("change", () => { names.textContent = [...files.files].map((f) => f.name).join(", "); });
  }

  // ---- drawing ----------------------------------------------------------------------------------------------
  function draw() {
    if (!S.layout) return;
    drawSidebar();
    const room = S.view.kind === "channel" || S.view.kind === "dm";
    $("messages").hidden = !room;
    $("composer").hidden = !room;
    $("panel").hidden = room;
    if (room) drawRoom();
    else drawPanel();
    drawThread();
    drawDeliveries();
  }

  function roomButton(id, name, kind) {
    const current = S.view.kind === kind && S.view.id === id;
    return el("li", {}, el("button", { type: "button", class: `room${current ? " current" : ""}`, dataset: { room: id },
      text: name, on: { click: () => go(kind, id) } }));
  }

  function drawSidebar() {
    $("channels").replaceChildren(...S.layout.channels.map((c) => roomButton(c.id, `# ${c.name}`, "channel")));
    $("dms").replaceChildren(roomButton(S.layout.dm.id, `${S.layout.bot.name} (app)`, "dm"));
    for (const button of document.querySelectorAll("#others .room")) {
      button.classList.toggle("current", S.view.kind === button.dataset.view);
    }
  }

  // What happens here, as serve routes it: a mention starts the workflow the layout names (maybe one that takes
  // any channel, not the schedule that answers here).
  function topic(room) {
    const here = room.listening.length ? `Here: ${room.listening.join("; ")}. ` : "";
    return room.mention ? `${here}A mention of @agent starts ${room.mention}.`
      : `${here}A mention of @agent here starts nothing.`;
  }

  function drawRoom() {
    const dm = S.view.kind === "dm";
    const room = dm ? null : S.layout.channels.find((c) => c.id === S.view.id);
    $("title").textContent = dm ? `${S.layout.bot.name} · the app's pane` : `# ${room.name}`;
    $("topic").textContent = dm
      ? (S.layout.dm.workflow ? `Direct messages go to ${S.layout.dm.workflow}.` : "No workflow takes direct messages.")
      : topic(room);
    $("composer-text").placeholder = dm ? "Message the app…" : `Message #${room.name} (@agent to ask the app)`;
    const prompts = dm ? ((S.panes.get(S.layout.dm.id) || {}).prompts || {})[""] || [] : [];
    $("prompts").hidden = !prompts.length;
    $("prompts").replaceChildren(el("span", { class: "label", text: "Suggested:" }), ...prompts.map((p) => el("button", {
      type: "button", class: "prompt", text: p.title, title: p.message,
      on: { click: () => send({ channel: S.layout.dm.id }, p.message, []) },
    })));
    fill($("messages"), channelMessages(S.view.id).map((m) => messageNode(m, false)));
  }

  function drawThread() {
    const open = S.thread !== null;
    $("thread").hidden = !open;
    if (!open) return;
    const { channel, ts } = S.thread;
    const titles = (S.panes.get(channel) || {}).titles || {};
    $("thread-title").textContent = titles[ts] ? `· ${titles[ts]}` : `· in ${channel === S.layout.dm.id ? "the app's pane" : `#${roomName(channel)}`}`;
    fill($("thread-messages"), threadMessages(channel, ts).map((m) => messageNode(m, true)));
    const status = (((S.panes.get(channel) || {}).status) || {})[ts];
    $("thread-status").hidden = !status;
    $("thread-status").textContent = status ? `${S.layout.bot.name} ${status}` : "";
  }

  function drawDeliveries() {
    const rows = [...S.deliveries.entries()].sort((a, b) => (a[0] < b[0] ? 1 : -1)).slice(0, 50);
    $("delivery-list").replaceChildren(...rows.map(([, d]) => el("li", {},
      el("strong", { text: d.what }), ` → POST ${d.route} · ${d.status} · `,
      el("code", { text: typeof d.answer === "string" ? d.answer : JSON.stringify(d.answer) }))));
  }

  function go(kind, id) {
    S.view = { kind, id };
    if (S.thread && (kind !== "channel" && kind !== "dm" || S.thread.channel !== id)) S.thread = null;
    if (kind === "dm") act("pane", {});
    draw();
  }

  // ---- JIRA, signed webhooks, schedules ---------------------------------------------------------------------
  function drawPanel() {
    const panel = $("panel");
    const titles = { jira: "JIRA", hooks: "Signed webhooks", schedules: "Schedules" };
    $("title").textContent = titles[S.view.kind];
    $("topic").textContent = {
      jira: "A JIRA site: create an issue or comment, and JIRA's signed webhook goes to /jira/webhook.",
      hooks: "A signed delivery (GitHub's, hmac's or Notion's signature) to /hooks/<workflow>.",
      schedules: "Fire a workflow's schedule now: its tick goes into the queue, as EventBridge Scheduler's would.",
    }[S.view.kind];
    $("prompts").hidden = true;
    const key = `${S.view.kind}:${S.view.kind === "jira" ? S.issue || "" : ""}`;
    if (panel.dataset.key !== key) {
      panel.dataset.key = key;
      panel.replaceChildren(...{ jira: jiraPanel, hooks: hooksPanel, schedules: schedulesPanel }[S.view.kind]());
    }
    if (S.view.kind === "jira") refreshJira();
  }

  function refreshJira() {
    const issue = S.issue && S.issues.get(S.issue);
    if (issue) {
      $("jira-issue").replaceChildren(...issueNodes(issue).filter(Boolean));
      return;
    }
    const issues = [...S.issues.values()].sort((a, b) => Number(b.id) - Number(a.id)).map((i) => el("li", {},
      el("button", { type: "button", class: "issue", text: `${i.key} · ${i.fields.summary}`, dataset: { key: i.key },
        on: { click: () => { S.issue = i.key; drawPanel(); } } }),
      ` · ${i.fields.issuetype.name} · ${i.fields.comment.total} comment(s)`));
    $("jira-issues").replaceChildren(...issues);
  }

  function field(label, input) {
    return el("label", { class: "field" }, el("span", { text: label }), input);
  }

  function jiraPanel() {
    if (S.issue) return issuePanel(S.issue);
    const rules = S.layout.jira.map((j) => `${j.workflow}: projects ${j.projects.join(", ")}` +
      (j.labels.length ? `, labels ${j.labels.join(", ")}` : "") + `, events ${j.events.join(", ")}`);
    const project = el("input", { id: "jira-project", value: "PROJ" });
    const kind = el("select", { id: "jira-type" }, ["Story", "Task", "Bug"].map((t) => el("option", { text: t })));
    const labels = el("input", { id: "jira-labels", placeholder: S.layout.jira.flatMap((j) => j.labels).join(", ") });
    const summary = el("input", { id: "jira-summary" });
    const description = el("textarea", { id: "jira-description", rows: "4" });
    const files = el("input", { id: "jira-files", type: "file", multiple: true });
    const create = async () => {
      const attached = await readFiles(files);
      if (attached === null) return;
      const answer = await act("ticket", { project: project.value, issue_type: kind.value, labels: labels.value,
        summary: summary.value, description: description.value, files: attached });
      if (answer.key) { S.issue = answer.key; drawPanel(); }
    };
    return [
      el("p", { class: "hint", text: rules.length ? `Taking JIRA events: ${rules.join("; ")}.` : "No workflow takes JIRA events." }),
      el("div", { class: "form" }, field("Project", project), field("Type", kind), field("Labels", labels),
        field("Summary", summary), field("Description", description), field("Attachments", files),
        el("button", { type: "button", id: "jira-create", class: "send", text: "Create issue", on: { click: create } })),
      el("h3", { text: "Issues" }), el("ul", { id: "jira-issues", class: "issues" }),
    ];
  }

  function issuePanel(key) {
    const text = el("textarea", { id: "jira-comment", rows: "3", placeholder: "Add a comment (approve, deny, a question)…" });
    return [
      el("button", { type: "button", class: "back", text: "← All issues", on: { click: () => { S.issue = null; drawPanel(); } } }),
      el("div", { id: "jira-issue" }),
      el("div", { class: "form" }, text, el("button", { type: "button", id: "jira-comment-send", class: "send", text: "Comment",
        on: { click: () => { act("comment", { key, text: text.value }); text.value = ""; } } })),
    ];
  }

  function issueNodes(issue) {
    const fields = issue.fields;
    const comments = fields.comment.comments.map((c) => el("article", { class: "comment" },
      el("div", { class: "meta" }, el("strong", { text: c.author.displayName }), el("time", { text: c.created.replace("T", " ").slice(0, 19) })),
      adf(c.body)));
    return [
      el("h3", { text: `${issue.key} · ${fields.summary}` }),
      el("p", { class: "hint", text: `${fields.issuetype.name} · ${fields.status.name} · labels: ${fields.labels.join(", ") || "none"} · reporter ${fields.reporter.displayName}` }),
      el("div", { class: "description" }, adf(fields.description) || el("p", { text: "(no description)" })),
      fields.attachment.length ? el("p", { class: "hint", text: `Attachments: ${fields.attachment.map((a) => a.filename).join(", ")}` }) : null,
      el("h4", { text: `Comments (${fields.comment.total})` }), el("div", { class: "comments" }, comments),
    ];
  }

  function adf(node) {
    if (!node || typeof node !== "object") return null;
    const kids = () => (node.content || []).map(adf);
    switch (node.type) {
      case "text": {
        const marks = (node.marks || []).map((m) => m.type);
        let out = marks.includes("code") ? el("code", { text: node.text }) : document.createTextNode(node.text);
        if (marks.includes("strong")) out = el("strong", {}, out);
        if (marks.includes("em")) out = el("em", {}, out);
        const href = (node.marks || []).find((m) => m.type === "link");
        return href && /^https?:/.test(href.attrs.href) ? link(href.attrs.href, node.text) : out;
      }
      case "paragraph": return el("p", {}, kids());
      case "heading": return el("h4", {}, kids());
      case "codeBlock": return el("pre", { text: (node.content || []).map((t) => t.text || "").join("") });
      case "bulletList": return el("ul", {}, kids());
      case "orderedList": return el("ol", {}, kids());
      case "listItem": return el("li", {}, kids());
      case "blockquote": return el("blockquote", {}, kids());
      case "hardBreak": return el("br");
      case "rule": return el("hr");
      default: return el("div", {}, kids());
    }
  }

  function hooksPanel() {
    if (!S.layout.hooks.length) return [el("p", { class: "hint", text: "No workflow takes signed webhooks (triggers.webhook)." })];
    return S.layout.hooks.map((hook) => {
      const event = el("input", { value: hook.events[0] || (hook.signature === "github" ? "pull_request" : "webhook") });
      const sample = { action: "opened", pull_request: { title: "Retry webhooks with backoff", user: { login: "dana" } },
        sender: { login: "dana" } };
      if (hook.signature === "notion") Object.assign(sample, { id: "evt-1", type: hook.events[0] || "page.created" });
      const body = el("textarea", { rows: "6", class: "code" });
      body.value = JSON.stringify(sample, null, 2);
      return el("section", { class: "card", dataset: { hook: hook.workflow } },
        el("h3", { text: `${hook.workflow} · /hooks/${hook.workflow}` }),
        el("p", { class: "hint", text: `Signed as ${hook.signature} with ${hook.secret}; events: ${hook.events.join(", ") || "any"}.` }),
        field("Event", event), field("Body (JSON)", body),
        el("button", { type: "button", class: "send", text: "Send signed delivery",
          on: { click: () => act("hook", { workflow: hook.workflow, event: event.value, body: body.value }) } }));
    });
  }

  function schedulesPanel() {
    if (!S.layout.schedules.length) return [el("p", { class: "hint", text: "No workflow has a schedule (triggers.schedule)." })];
    return [el("table", {}, el("thead", {}, el("tr", {}, ["Workflow", "Schedule", "When", "Answers to", ""].map((h) => el("th", { text: h })))),
      el("tbody", {}, S.layout.schedules.map((s) => el("tr", {}, el("td", { text: s.workflow }), el("td", { text: s.schedule }),
        el("td", { text: s.expression }), el("td", { text: s.answer_to }),
        el("td", {}, el("button", { type: "button", class: "send", text: "Fire now", dataset: { schedule: s.schedule },
          on: { click: () => act("fire", { workflow: s.workflow, schedule: s.schedule }) } }))))))];
  }

  // ---- start ------------------------------------------------------------------------------------------------
  async function start() {
    const response = await fetch("/play/ui/state");
    const state = await response.json();
    S.layout = state.layout;
    S.maxFiles = state.max_files;
    $("model").textContent = `Answers come from ${state.model}.`;
    $("who").replaceChildren(...S.layout.people.map((p) => el("option", { value: p.id, text: p.name })));
    $("who").addEventListener("change", (event) => { S.user = event.target.value; draw(); });
    for (const button of document.querySelectorAll("#others .room")) {
      button.addEventListener("click", () => go(button.dataset.view, button.dataset.view));
    }
    $("thread-close").addEventListener("click", () => { S.thread = null; draw(); });
    document.addEventListener("click", (event) => {
      if (!$("picker").contains(event.target)) $("picker").hidden = true;
    });
    wireComposer($("composer-text"), $("composer-files"), $("composer-names"), $("composer-send"),
      () => ({ channel: S.view.id }));
    wireComposer($("thread-text"), $("thread-files"), $("thread-names"), $("thread-send"),
      () => ({ channel: S.thread.channel, thread_ts: S.thread.ts }));
    draw();
    document.body.dataset.ready = "true";
    poll();
  }

  start().catch((error) => toast(`the playground could not start: ${error}`));
})();
