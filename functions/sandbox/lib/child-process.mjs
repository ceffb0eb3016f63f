// One Deno child: spawned with no permissions but reading the Pyodide files, a kernel data limit (RLIMIT_DATA, the
// memory cap V8 flags cannot give: they do not bound the WebAssembly heap), and a SIGKILL when time is up.
import { spawn } from "node:child_process";
import { createRequire } from "node:module";
import { existsSync, mkdirSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const HERE = dirname(fileURLToPath(import.meta.url));
export const ROOT = dirname(HERE);
export const PYODIDE_DIR = join(ROOT, "node_modules", "pyodide");
const CHILD = join(HERE, "child.mjs");
// Deno + V8 reserve about 0.7 GB of address space before Python allocates anything (measured: with a 1 GB data
// limit Python gets ~330 MB). memory_mb is what Python may use; the kernel limit adds this allowance.
export const RUNTIME_ALLOWANCE_MB = 768;
const MAX_CHILD_OUTPUT = 48 * 1024 * 1024;
export const HAS_SHELL = existsSync("/bin/sh");

export function denoBinary() {
  if (process.env.AGENT_SANDBOX_DENO) return process.env.AGENT_SANDBOX_DENO;
  const arch = process.arch === "arm64" ? "arm64" : "x64";
  const name = process.platform === "linux" ? `linux-${arch}-glibc` : `${process.platform}-${arch}`;
  try {
    return join(dirname(createRequire(import.meta.url).resolve(`@deno/${name}/package.json`)), "deno");
  } catch {
    throw new Error(`no Deno binary for ${name}: run 'npm ci' in ${ROOT} (or set AGENT_SANDBOX_DENO)`);
  }
}

function denoDir() {
  // Deno keeps its own caches here; the child's code cannot reach it (no --allow-write).
  const dir = join(tmpdir(), "agent-sandbox-deno");
  if (!existsSync(dir)) mkdirSync(dir, { recursive: true, mode: 0o700 });
  return dir;
}

export function denoArgs({ snapshot, mode = "serve", writable = null }) {
  const readable = [PYODIDE_DIR, ...(snapshot && mode === "serve" ? [snapshot] : [])];
  return [
    "run",
    "--no-prompt",
    "--no-remote",
    "--no-npm",
    "--no-config",
    "--no-lock",
    `--allow-read=${readable.join(",")}`,
    // Denied anyway without --allow-*, but explicit: a stray allow flag or DENO_* variable cannot widen this.
    "--deny-net",
    "--deny-env",
    "--deny-run",
    "--deny-ffi",
    "--deny-sys",
    ...(writable ? [`--allow-write=${writable}`] : ["--deny-write"]),
    CHILD,
    PYODIDE_DIR + "/",
    snapshot ?? "-",
    mode,
  ];
}

export class Child {
  constructor({ memoryMb, snapshot }) {
    this.memoryMb = memoryMb;
    this.spawnedAt = performance.now();
    const limitKb = (memoryMb + RUNTIME_ALLOWANCE_MB) * 1024;
    // exec keeps the pid Deno's own, so the kill below reaches it; the environment is only what Deno needs.
    // Without a shell (a stripped image) there is no ulimit: the function's own memory size is the cap then.
    const [command, args] = HAS_SHELL
      ? ["/bin/sh", ["-c", `ulimit -d ${limitKb} && exec "$0" "$@"`, denoBinary(), ...denoArgs({ snapshot })]]
      : [denoBinary(), denoArgs({ snapshot })];
    this.process = spawn(command, args, {
      cwd: tmpdir(),
      env: { DENO_DIR: denoDir(), NO_COLOR: "1", DENO_NO_UPDATE_CHECK: "1" },
      stdio: ["pipe", "pipe", "pipe"],
    });
    this.stdout = [];
    this.stderr = [];
    this.outputBytes = 0;
    this.killedFor = null;
    this.exited = new Promise((resolve) => {
      this.process.on("close", (code, signal) => resolve({ code, signal }));
      this.process.on("error", (error) => resolve({ code: null, signal: null, error }));
    });
    this.ready = new Promise((resolve) => {
      this.markReady = resolve;
    });
    this.process.stdout.on("data", (chunk) => this.collect(this.stdout, chunk));
    this.process.stderr.on("data", (chunk) => this.collect(this.stderr, chunk));
    this.exited.then(() => this.markReady(false));
    this.process.stdin.on("error", () => {}); // a child that died early closes its stdin: reported via `exited`
  }

  collect(into, chunk) {
    this.outputBytes += chunk.length;
    if (this.outputBytes > MAX_CHILD_OUTPUT) return this.kill("output");
    into.push(chunk);
    if (into !== this.stdout) return;
    if (!this.isReady) {
      const text = Buffer.concat(into); // only the few bytes before READY
      const at = text.indexOf("READY\n");
      if (at >= 0) {
        this.isReady = true;
        this.stdout = [text.subarray(at + 6)];
        this.markReady(true);
      }
    } else if (this.onReply && chunk.includes(10)) {
      this.onReply(); // the reply is one line: no need to wait for the process to tear down
    }
  }

  kill(reason) {
    if (!this.killedFor) this.killedFor = reason;
    this.process.kill("SIGKILL");
  }

  // Send one request and wait for the reply line, the time limit, or the child's death; then the child is killed
  // (it is never reused, and tearing down a Deno process takes longer than the call itself).
  async execute(request, timeLimitMs) {
    const timer = setTimeout(() => this.kill("timeout"), timeLimitMs);
    const replied = new Promise((resolve) => {
      this.onReply = () => resolve({ code: 0, signal: null });
    });
    this.process.stdin.end(JSON.stringify(request));
    const exit = await Promise.race([this.exited, replied]);
    clearTimeout(timer);
    const stdout = Buffer.concat(this.stdout).toString("utf8");
    const stderr = Buffer.concat(this.stderr).toString();
    this.kill("done");
    return { exit, stdout, stderr };
  }
}
