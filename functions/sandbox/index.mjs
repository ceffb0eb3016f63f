// Lambda handler for sandboxed Python. The first child starts during init, so the first call finds it loaded.
import { Sandbox } from "./lib/sandbox.mjs";

const sandbox = new Sandbox({ log: (message) => console.warn(message) });
sandbox.warm();

export const handler = async (event) => sandbox.run(event);
