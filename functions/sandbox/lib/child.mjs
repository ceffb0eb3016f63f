// The untrusted side: runs under Deno with read access to the Pyodide files (and the snapshot) and nothing else.
// Deno's permissions are the boundary (Pyodide is not one: Python reaches JS through `js`/`pyodide_js`), so this
// file only has to be correct, not secure. Protocol: load, print "READY", read one request from stdin until EOF,
// print one JSON line, exit. The parent enforces time and memory.
import { loadPyodide } from "../node_modules/pyodide/pyodide.mjs";
import { HARNESS } from "./harness.mjs";

const [indexURL, snapshotPath, mode] = Deno.args;
const encoder = new TextEncoder();
const late = [];

function emit(text) {
  const bytes = encoder.encode(text + "\n");
  let written = 0;
  while (written < bytes.length) written += Deno.stdout.writeSync(bytes.subarray(written));
}

class Capture {
  constructor(limit) {
    this.limit = limit;
    this.chunks = [];
    this.kept = 0;
    this.total = 0;
  }
  write(buffer) {
    this.total += buffer.length;
    const room = this.limit - this.kept;
    if (room > 0) {
      const part = buffer.slice(0, room);
      this.chunks.push(part);
      this.kept += part.length;
    }
    return buffer.length;
  }
  text() {
    return new TextDecoder("utf-8", { fatal: false }).decode(concat(this.chunks, this.kept));
  }
}

function concat(chunks, size) {
  const out = new Uint8Array(size);
  let at = 0;
  for (const chunk of chunks) {
    out.set(chunk, at);
    at += chunk.length;
  }
  return out;
}

async function load(makeSnapshot) {
  const options = { indexURL, env: { HOME: "/work" }, stdout: () => {}, stderr: () => {} };
  if (makeSnapshot) options._makeSnapshot = true;
  else if (snapshotPath && snapshotPath !== "-") options._loadSnapshot = Deno.readFileSync(snapshotPath);
  const pyodide = await loadPyodide(options);
  if (makeSnapshot || !options._loadSnapshot) pyodide.runPython(HARNESS);
  return pyodide;
}

async function serve() {
  const pyodide = await load(false);
  // An async error the code provoked (a socket's "error" event, a rejected promise) must not kill the child
  // before it replies: it is reported on the call's stderr instead.
  const report = (event) => {
    event.preventDefault();
    const error = event.reason ?? event.error ?? event.message;
    late.push(`uncaught: ${error?.message ?? error}`);
  };
  globalThis.addEventListener("error", report);
  globalThis.addEventListener("unhandledrejection", report);
  // One throwaway call warms the interpreter's code paths before the real one arrives; it leaves only /work.
  await pyodide.globals.get("_sandbox_run")(JSON.stringify({ code: "None" }));
  emit("READY");
  const request = await new Response(Deno.stdin.readable).text();
  const limits = JSON.parse(request).limits ?? {};
  const stdout = new Capture(limits.stdout_bytes ?? 65536);
  const stderr = new Capture(limits.stderr_bytes ?? 65536);
  pyodide.setStdout({ write: (buffer) => stdout.write(buffer) });
  pyodide.setStderr({ write: (buffer) => stderr.write(buffer) });
  const started = performance.now();
  const reply = JSON.parse(await pyodide.globals.get("_sandbox_run")(request));
  pyodide.runPython("import sys; sys.stdout.flush(); sys.stderr.flush()");
  for (const line of late) stderr.write(encoder.encode(line + "\n"));
  reply.stdout = stdout.text();
  reply.stderr = stderr.text();
  reply.stdout_truncated = stdout.total > stdout.kept;
  reply.stderr_truncated = stderr.total > stderr.kept;
  reply.run_ms = Math.round((performance.now() - started) * 10) / 10;
  emit(JSON.stringify(reply));
}

async function snapshot() {
  const pyodide = await load(true);
  const bytes = pyodide.makeMemorySnapshot();
  Deno.writeFileSync(snapshotPath, bytes);
  emit(JSON.stringify({ snapshot: snapshotPath, bytes: bytes.length, pyodide: pyodide.version }));
}

await (mode === "snapshot" ? snapshot() : serve());
