// Sandbox latencies, ours against a baseline, side by side in one run (medians of N):
//   cold start   a new Node process: handler module init + first call   vs  the same without the memory snapshot
//   fresh call   a call that must start its own child (no spare ready)   vs  the same without the memory snapshot
//   warm call    a trivial call served by the pre-spawned child         vs  a reused interpreter (no isolation)
import { spawnSync } from "node:child_process";
import { join } from "node:path";
import { Sandbox, SNAPSHOT } from "../../functions/sandbox/lib/sandbox.mjs";
import { ROOT } from "../../functions/sandbox/lib/child-process.mjs";

const N = Number(process.argv[2] ?? 7);
const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

function coldStart(snapshot) {
  const script = `
    const t0 = performance.now();
    const { Sandbox } = await import(${JSON.stringify(join(ROOT, "lib", "sandbox.mjs"))});
    const s = new Sandbox({ snapshot: ${JSON.stringify(snapshot)} }); s.warm();
    const r = await s.run({ code: "1+1" });
    if (r.result !== 2) throw new Error(JSON.stringify(r));
    console.log(performance.now() - t0); s.close(); process.exit(0);`;
  const t0 = performance.now();
  const out = spawnSync(process.execPath, ["--input-type=module", "-e", script], { encoding: "utf8" });
  if (out.status !== 0) throw new Error(out.stderr);
  return performance.now() - t0; // includes Node's own start, as a Lambda cold start would
}

async function fresh(snapshot) {
  const sandbox = new Sandbox({ prespawn: false, snapshot });
  const t0 = performance.now();
  const r = await sandbox.run({ code: "sum(i * i for i in range(1000))" });
  if (r.status !== "ok") throw new Error(JSON.stringify(r));
  return performance.now() - t0;
}

async function warm(sandbox) {
  await sandbox.spare.ready;
  await sleep(30); // let the previous child's teardown finish, as between real calls
  const t0 = performance.now();
  const r = await sandbox.run({ code: "1+1" });
  if (r.result !== 2) throw new Error(JSON.stringify(r));
  return performance.now() - t0;
}

const results = {};
const none = "/nonexistent-snapshot";
results.cold = { ours: [], baseline: [] };
for (let i = 0; i < N; i++) {
  results.cold.ours.push(coldStart(SNAPSHOT));
  results.cold.baseline.push(coldStart(none));
}
results.fresh = { ours: [], baseline: [] };
for (let i = 0; i < N; i++) {
  results.fresh.ours.push(await fresh(SNAPSHOT));
  results.fresh.baseline.push(await fresh(none));
}
const sandbox = new Sandbox();
sandbox.warm();
results.warm = { ours: [] };
for (let i = 0; i < N * 3; i++) results.warm.ours.push(await warm(sandbox));
sandbox.close();
// Baseline for the warm call: one interpreter reused for every call (mcp-run-python's model, no isolation).
const { loadPyodide } = await import("../../functions/sandbox/node_modules/pyodide/pyodide.mjs");
const reused = await loadPyodide({ indexURL: join(ROOT, "node_modules", "pyodide") + "/" });
reused.runPython("1+1");
results.warm.baseline = [];
for (let i = 0; i < N * 3; i++) {
  const t0 = performance.now();
  reused.runPython("1+1");
  results.warm.baseline.push(performance.now() - t0);
}
const summary = Object.fromEntries(
  Object.entries(results).map(([k, v]) => [k, { ours_ms: median(v.ours), baseline_ms: median(v.baseline), n: v.ours.length }]),
);
console.log(JSON.stringify(summary));
