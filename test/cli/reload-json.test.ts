/**
 * `switchyard reload` against a running gateway when the file is refused: with `--json` the refusal is a
 * JSON object on stdout (`ok: false`, the status, code, message and each error with its path), exit 1
 * (it was a line on stderr only); and an `env:` secret whose variable the running process does not have
 * says that a reload cannot change that process's environment: restart, or use `file:`.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { writeFileSync } from "node:fs";
import { SOURCE_CLI } from "../support/instance.ts";
import { fakeProviders } from "../support/configs.ts";
import { startGateway, type TestGateway } from "../support/gateway.ts";

const BASE = fakeProviders([["oai", "openai"]]);
const YAML = `${BASE}\naliases:\n  fast: oai/gpt-fast\n`;
let gw: TestGateway;
beforeAll(async () => {
  gw = await startGateway(YAML);
});
afterAll(async () => {
  await gw?.stop();
});

/** The CLI against this process's gateway (spawned, not spawnSync: the gateway answers from this event loop). */
async function reload(...args: string[]): Promise<{ code: number; out: string; err: string }> {
  const p = Bun.spawn([...SOURCE_CLI, "reload", "--url", gw.url, ...args], { stdout: "pipe", stderr: "pipe", env: { PATH: process.env.PATH ?? "/usr/bin:/bin", HOME: "/nonexistent-home" } });
  const [out, err, code] = await Promise.all([new Response(p.stdout).text(), new Response(p.stderr).text(), p.exited]);
  return { code, out, err };
}

const NOT_SET =
  "environment variable NEW_KEY is not set in this running switchyard, whose environment is the one it started with: a reload cannot change it; restart switchyard with NEW_KEY set, or give the secret as file:PATH (read again at every reload)";

test("a file naming a variable the running process lacks: the refusal says a reload cannot change its environment; --json prints it as a JSON object, exit 1", async () => {
  writeFileSync(gw.configPath, `${BASE}  - id: oai-2\n    provider: oai\n    api_key: env:NEW_KEY\n\naliases:\n  fast: oai/gpt-fast\n`.replaceAll("{{FAKE}}", gw.fake.url));
  try {
    const json = await reload("--json");
    expect({ code: json.code, err: json.err }).toEqual({ code: 1, err: "" });
    const body = JSON.parse(json.out);
    expect(body).toMatchObject({ ok: false, status: 400, code: "config_invalid" });
    expect(body.errors.map((e: { path: string; message: string }) => [e.path, e.message])).toEqual([["accounts[1].api_key", NOT_SET]]);
    expect(body.message).toContain(NOT_SET);
    const text = await reload();
    expect({ code: text.code, out: text.out }).toEqual({ code: 1, out: "" });
    expect(text.err).toContain(NOT_SET);
  } finally {
    writeFileSync(gw.configPath, YAML.replaceAll("{{FAKE}}", gw.fake.url));
  }
  const ok = await reload("--json");
  expect(ok.code).toBe(0);
  expect(JSON.parse(ok.out).ok).toBe(true);
});
