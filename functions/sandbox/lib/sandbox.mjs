// The sandbox service: validates a request, hands it to a fresh child (pre-spawned while the previous call ran, so
// isolation costs nothing on the hot path) and shapes the reply. Every call gets a child that has never run code.
import { createHash } from "node:crypto";
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { Child, HAS_SHELL, ROOT } from "./child-process.mjs";

export const SNAPSHOT = join(ROOT, "snapshot", "pyodide.bin");
export const LIMITS = {
  codeBytes: 256 * 1024,
  inputBytes: 4 * 1024 * 1024, // base64 of all input files together (Lambda's request payload is 6 MB)
  timeLimitMs: { default: 30_000, min: 100, max: 300_000 },
  memoryMb: { default: 256, min: 64, max: 3072 },
  stdoutBytes: 64 * 1024,
  stderrBytes: 16 * 1024,
  resultBytes: 64 * 1024,
  fileBytes: 1024 * 1024,
  filesTotalBytes: 4 * 1024 * 1024,
  maxFiles: 20,
};
const READY_TIMEOUT_MS = 30_000;
// Rust's allocator (Deno) aborts with "memory allocation of N bytes failed": a growing list once ended as
// "crashed" under load in CI, most likely so (the test now prints the sandbox's error when it fails).
const MEMORY_DEATH = /out of memory|MemoryError|Cannot allocate|allocation failed|memory allocation of \d+ bytes failed|unable to create worker threads|failed to reserve/i;

export class RequestError extends Error {}

export function snapshotStatus(path = SNAPSHOT) {
  const meta = `${path}.json`;
  if (!existsSync(path) || !existsSync(meta)) return { usable: false, why: "missing (run `npm run snapshot`)" };
  const info = JSON.parse(readFileSync(meta, "utf8"));
  const pyodide = JSON.parse(readFileSync(join(ROOT, "node_modules", "pyodide", "package.json"), "utf8")).version;
  if (info.pyodide !== pyodide || info.harness !== harnessDigest()) {
    return { usable: false, why: `stale (built for pyodide ${info.pyodide}; run \`npm run snapshot\`)` };
  }
  return { usable: true };
}

export function harnessDigest() {
  // The snapshot embeds the harness: a changed harness must invalidate it.
  return createHash("sha256").update(readFileSync(join(ROOT, "lib", "harness.mjs"))).digest("hex").slice(0, 16);
}

function integer(value, name, range) {
  if (value === undefined || value === null) return range.default;
  if (!Number.isInteger(value) || value < range.min || value > range.max) {
    throw new RequestError(`${name} must be an integer from ${range.min} to ${range.max}, got ${JSON.stringify(value)}`);
  }
  return value;
}

export function parseRequest(event) {
  if (!event || typeof event !== "object") throw new RequestError("the request must be a JSON object");
  if (typeof event.code !== "string") throw new RequestError("code must be a string");
  if (Buffer.byteLength(event.code) > LIMITS.codeBytes) throw new RequestError(`code is over ${LIMITS.codeBytes} bytes`);
  const files = event.files ?? [];
  if (!Array.isArray(files) || !files.every((f) => f && typeof f.name === "string" && typeof f.content_b64 === "string")) {
    throw new RequestError("files must be a list of {name, content_b64}");
  }
  const inputBytes = files.reduce((sum, f) => sum + f.content_b64.length, 0);
  if (inputBytes > LIMITS.inputBytes) throw new RequestError(`input files are over ${LIMITS.inputBytes} bytes (base64)`);
  return {
    code: event.code,
    files,
    timeLimitMs: integer(event.time_limit_ms, "time_limit_ms", LIMITS.timeLimitMs),
    memoryMb: integer(event.memory_mb, "memory_mb", LIMITS.memoryMb),
  };
}

export class Sandbox {
  constructor({ prespawn = true, snapshot = SNAPSHOT, log = () => {} } = {}) {
    this.prespawn = prespawn;
    const status = snapshotStatus(snapshot);
    this.snapshot = status.usable ? snapshot : null;
    if (!status.usable) log(`sandbox: Pyodide snapshot ${status.why}; loading without it (~3 s per call)`);
    if (!HAS_SHELL) log("sandbox: no /bin/sh for ulimit: memory is capped only by the function's memory size");
    this.spare = null;
    this.busy = new Set(); // the children of calls under way: close ends them too
    this.closed = false;
  }

  // Start a child for the next call (the default memory size) so it is loaded by the time the call comes.
  warm() {
    if (this.prespawn && !this.spare && !this.closed) this.spare = new Child({ memoryMb: LIMITS.memoryMb.default, snapshot: this.snapshot });
  }

  take(memoryMb) {
    const spare = this.spare;
    if (spare && spare.memoryMb === memoryMb && spare.process.exitCode === null && !spare.killedFor) {
      this.spare = null;
      return { child: spare, prespawned: true };
    }
    return { child: new Child({ memoryMb, snapshot: this.snapshot }), prespawned: false };
  }

  // `signal` (local.mjs: the caller gave the call up) kills the call's child at once; its reply says so.
  async run(event, signal) {
    const started = performance.now();
    let request;
    try {
      request = parseRequest(event);
    } catch (error) {
      if (error instanceof RequestError) return { status: "invalid_request", error: error.message };
      throw error;
    }
    const { child, prespawned } = this.take(request.memoryMb);
    this.busy.add(child);
    const cancel = () => child.kill("cancelled");
    if (signal?.aborted) cancel();
    signal?.addEventListener("abort", cancel, { once: true });
    try {
      return await this.runOn(child, prespawned, request, started);
    } finally {
      signal?.removeEventListener("abort", cancel);
      this.busy.delete(child);
    }
  }

  async runOn(child, prespawned, request, started) {
    if (!prespawned) this.warm(); // otherwise after the call, so the replacement's start does not compete with it
    const ready = await Promise.race([child.ready, delay(READY_TIMEOUT_MS).then(() => false)]);
    const waited = performance.now() - started;
    if (!ready) {
      child.kill("start");
      const { stderr } = await child.execute({}, 1);
      // Given up while its child was still starting (a busy machine): the caller's reason, not a failed start.
      if (child.killedFor === "cancelled") return { ...GIVEN_UP, timings: { total_ms: ms(started) } };
      return { status: "crashed", error: `the sandbox did not start: ${tail(stderr)}`, timings: { total_ms: ms(started) } };
    }
    const outcome = await child.execute(childRequest(request), request.timeLimitMs);
    const reply = shape(outcome, child, request);
    this.warm();
    reply.timings = { ...reply.timings, ready_wait_ms: round(waited), total_ms: ms(started), prespawned, snapshot: !!this.snapshot };
    return reply;
  }

  // The host is going (local.mjs: its stdin closed, serve stopping): a call under way is not waited for (its time
  // limit could be minutes), so the process ends now and leaves no Deno child behind.
  close() {
    this.closed = true;
    if (this.spare) this.spare.kill("close");
    this.spare = null;
    for (const child of this.busy) child.kill("close");
  }
}

const GIVEN_UP = { status: "crashed", error: "given up by the caller (its run was stopped)" };

function childRequest(request) {
  return {
    code: request.code,
    files: request.files,
    limits: {
      stdout_bytes: LIMITS.stdoutBytes,
      stderr_bytes: LIMITS.stderrBytes,
      result_bytes: LIMITS.resultBytes,
      file_bytes: LIMITS.fileBytes,
      files_total_bytes: LIMITS.filesTotalBytes,
      max_files: LIMITS.maxFiles,
    },
  };
}

function shape({ exit, stdout, stderr }, child, request) {
  if (child.killedFor === "cancelled") return { ...GIVEN_UP };
  if (child.killedFor === "timeout" && exit.code !== 0) {
    return { status: "timeout", error: `killed after the time limit of ${request.timeLimitMs} ms` };
  }
  if (child.killedFor === "output" && exit.code !== 0) return { status: "error", error: "the sandbox wrote more output than allowed" };
  const line = stdout.trimEnd().split("\n").pop();
  let reply = null;
  try {
    reply = exit.code === 0 && line ? JSON.parse(line) : null;
  } catch {
    reply = null;
  }
  if (!reply || typeof reply !== "object" || typeof reply.status !== "string") {
    // Past the data limit, V8 aborts ("Fatal process out of memory", SIGTRAP) or Deno cannot map a thread stack.
    const memory = MEMORY_DEATH.test(stderr) || exit.signal === "SIGTRAP";
    return memory
      ? { status: "memory_limit", error: `stopped: over the memory limit of ${request.memoryMb} MB` }
      : { status: "crashed", error: `the sandbox exited (${exit.signal ?? `code ${exit.code}`}): ${tail(stderr)}` };
  }
  if (reply.status === "error" && /^MemoryError\b/.test(reply.error ?? "")) {
    reply.status = "memory_limit";
    reply.error = `MemoryError: over the memory limit of ${request.memoryMb} MB`;
  }
  reply.timings = { run_ms: reply.run_ms };
  delete reply.run_ms;
  return reply;
}

function tail(text) {
  return text.replace(/\x1b\[[0-9;]*m/g, "").trim().split("\n").slice(-3).join(" | ").slice(0, 500) || "no output";
}

const delay = (msValue) => new Promise((resolve) => setTimeout(resolve, msValue).unref());
const round = (value) => Math.round(value * 10) / 10;
const ms = (since) => round(performance.now() - since);
