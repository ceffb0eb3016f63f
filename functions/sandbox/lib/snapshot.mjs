// Build the Pyodide memory snapshot the sandbox starts from (~0.3 s instead of ~3 s). Run once after `npm ci`
// (`npm run snapshot`; `sam build` and the Makefile do it). No user code is involved: Deno may write this one file.
import { execFileSync } from "node:child_process";
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { denoArgs, denoBinary, ROOT } from "./child-process.mjs";
import { harnessDigest, SNAPSHOT, snapshotStatus } from "./sandbox.mjs";

const target = process.argv.slice(2).find((arg) => !arg.startsWith("--")) ?? SNAPSHOT;
if (process.argv.includes("--if-stale") && snapshotStatus(target).usable) process.exit(0);
mkdirSync(dirname(target), { recursive: true });
const out = execFileSync(denoBinary(), denoArgs({ snapshot: target, mode: "snapshot", writable: target }), {
  env: { DENO_DIR: join(tmpdir(), "agent-sandbox-deno"), NO_COLOR: "1", DENO_NO_UPDATE_CHECK: "1" },
  stdio: ["ignore", "pipe", "inherit"],
});
const info = JSON.parse(out.toString().trim().split("\n").pop());
const pyodide = JSON.parse(readFileSync(join(ROOT, "node_modules", "pyodide", "package.json"), "utf8")).version;
writeFileSync(`${target}.json`, JSON.stringify({ pyodide, harness: harnessDigest(), bytes: info.bytes }) + "\n");
console.error(`sandbox: snapshot ${target} (${(info.bytes / 1e6).toFixed(1)} MB, pyodide ${pyodide})`);
