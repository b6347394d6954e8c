/**
 * `switchyard keys list`'s state column says when a key's budget is used up, as the dashboard's Keys page
 * does (src/limits/key-state.ts): its requests are refused (429 `key_budget_exceeded`) until the window
 * resets, and until 2026-12-07 its row said "active" (tryout5). A key under its budget, or whose used-up
 * window has already reset, is active; revoked and disabled say so first.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { SOURCE_CLI } from "../support/instance.ts";
import { buildSource } from "../../src/version.ts";

const now = Date.now();
const resets = Math.ceil((now + 3 * 3_600_000) / 1000) * 1000;
const sec = (ms: number) => new Date(ms).toISOString().replace(/\.\d{3}Z$/, "Z");
const budget = (window: string, used: number, tokens: number, resetsAt?: number) => ({ budget: { window, tokens }, used, ...(resetsAt !== undefined ? { startedAt: now - 1000, resetsAt } : {}) });
const key = (name: string, budgets: unknown[], over: Record<string, unknown> = {}) => ({
  name,
  scopes: [],
  source: "db",
  createdAt: now - 60_000,
  prefix: "sy-abcde",
  limits: { budgets: budgets.map((b) => (b as { budget: unknown }).budget) },
  use: { budgets, inFlight: 0 },
  ...over,
});
const keys = [
  key("spent", [budget("1d", 18, 10, resets)]),
  key("under", [budget("1d", 9, 10, resets)]),
  key("reset", [budget("1d", 18, 10, now - 1000)]),
  key("off", [budget("1d", 18, 10, resets)], { disabledAt: now - 5000 }),
];

let server: ReturnType<typeof Bun.serve>;
let dir: string;
beforeAll(() => {
  // a running instance's admin API: GET /admin/api/keys as the gateway answers it
  server = Bun.serve({
    hostname: "127.0.0.1",
    port: 0,
    fetch: (req) => (new URL(req.url).pathname === "/admin/api/keys" ? Response.json({ keys }) : Response.json({ error: { message: "no" } }, { status: 404 })),
  });
  dir = mkdtempSync(join(tmpdir(), "switchyard-keys-list-"));
  writeFileSync(join(dir, "instance.json"), JSON.stringify({ url: `http://127.0.0.1:${server.port}`, adminToken: "t", pid: 4264, version: "0.1.0", commit: buildSource().commit }));
});
afterAll(() => {
  server.stop(true);
  rmSync(dir, { recursive: true, force: true });
});

test("a key whose budget is used up reads 'budget used up (1d) until <reset>', not 'active'; under its budget or past its window's reset, active; disabled first", async () => {
  // not spawnSync: the "instance" answers from this process's event loop
  const p = Bun.spawn([...SOURCE_CLI, "keys", "list", "--data-dir", dir], { stdout: "pipe", stderr: "pipe" });
  const [out, err, code] = await Promise.all([new Response(p.stdout).text(), new Response(p.stderr).text(), p.exited]);
  expect({ code, err }).toEqual({ code: 0, err: "" });
  const row = (name: string) => out.split("\n").find((l) => l.startsWith(`${name} `)) ?? "";
  expect(row("spent")).toContain(`budget used up (1d) until ${sec(resets)}`);
  expect(row("under")).toContain(" active ");
  expect(row("under")).not.toContain("budget used up");
  expect(row("reset")).toContain(" active ");
  expect(row("off")).toContain(`disabled ${new Date(now - 5000).toISOString()}`);
  expect(row("off")).not.toContain("budget used up");
}, 20_000);
