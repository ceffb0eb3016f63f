// The same sandbox for local runs: JSON lines on stdin ({"id", "event"}) and stdout ({"id", "reply"}). The Python
// tool keeps one of these per process and sends requests side by side: each runs as it arrives, in its own fresh
// Deno child, and its reply goes out when it ends (not in request order: the id says whose it is). A line
// {"id", "cancel": true} gives up the call of that id (its run was stopped): its child is killed at once.
import { createInterface } from "node:readline";
import { Sandbox } from "./lib/sandbox.mjs";

const sandbox = new Sandbox({ log: (message) => process.stderr.write(message + "\n") });
sandbox.warm();
const send = (message) => process.stdout.write(JSON.stringify(message) + "\n");
const running = new Map(); // id -> the AbortController of its call under way

createInterface({ input: process.stdin, crlfDelay: Infinity })
  .on("line", async (line) => {
    let message;
    try {
      message = JSON.parse(line);
    } catch {
      return send({ id: null, reply: { status: "invalid_request", error: "not a JSON line" } });
    }
    if (message?.cancel === true) return running.get(message.id)?.abort();
    const controller = new AbortController();
    running.set(message.id, controller);
    try {
      send({ id: message.id ?? null, reply: await sandbox.run(message.event, controller.signal) });
    } catch (error) {
      send({ id: message.id ?? null, reply: { status: "crashed", error: String(error?.message ?? error) } });
    } finally {
      running.delete(message.id);
    }
  })
  .on("close", () => {
    sandbox.close();
  });
