/**
 * A built-in provider without an account that an alias or combo names (review17 R5): its requests are
 * refused (503 `no_account`) yet `GET /admin/api/accounts` left it out, since only providers set in the
 * config file were listed. Now it is listed, naming the alias and the combo, before any request went to
 * it; a built-in provider that nothing names and no request reached stays out, as do the providers with
 * accounts. Real gateway on 127.0.0.1:0 with the fake upstream.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { DEFAULT_YAML, startGateway, type TestGateway } from "../support/gateway.ts";

let gw: TestGateway;
beforeAll(async () => {
  gw = await startGateway(
    `${DEFAULT_YAML}
aliases:
  fast: openai/gpt-5-mini
  smart: coding
combos:
  - name: coding
    targets:
      - model: cx/gpt-5-codex
      - model: anth/claude-x
  - name: codex-only
    targets:
      - model: cx/gpt-5-codex
      - model: cx/gpt-5
`,
  );
});
afterAll(() => gw?.stop());

type Listed = { id: string; kind: string; error: string; builtin?: { routes: string[]; requests: number; lastAt?: number; lastStatus?: number } };

const accounts = async () => ((await (await fetch(`${gw.url}/admin/api/accounts`)).json()) as { providersWithoutAccounts: Listed[] }).providersWithoutAccounts;

test("the built-in providers an alias or combo names are listed without an account, with the routes naming them", async () => {
  expect(await accounts()).toEqual([
    {
      id: "openai",
      kind: "openai",
      error: "No account is configured for provider openai: add an account under `accounts:` in the config file (`provider: openai` with its `api_key`), or set OPENAI_API_KEY before starting switchyard without a config file.",
      builtin: { routes: ["alias fast"], requests: 0 },
    },
    {
      id: "cx",
      kind: "codex",
      error: "No account is configured for provider cx: log in with `switchyard login codex` (or adopt the CLI's own login with `switchyard import codex`).",
      builtin: { routes: ["alias smart", "combo coding", "combo codex-only"], requests: 0 },
    },
  ]);
});

test("a request through the alias is refused with the message the listing shows, and counted", async () => {
  const r = await fetch(`${gw.url}/v1/chat/completions`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ model: "fast", messages: [{ role: "user", content: "hi" }] }),
  });
  expect(r.status).toBe(503);
  const message = ((await r.json()) as { error: { message: string } }).error.message;
  const openai = (await accounts()).find((p) => p.id === "openai")!;
  expect(openai.error).toBe(message);
  expect({ ...openai.builtin, lastAt: typeof openai.builtin?.lastAt }).toEqual({ routes: ["alias fast"], requests: 1, lastAt: "number", lastStatus: 503 });
});

test("a combo whose built-in target has no account but whose next target serves: nothing refused, nothing counted; one refused through two such targets counts once (review18 R2)", async () => {
  const chat = (model: string) =>
    fetch(`${gw.url}/v1/chat/completions`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ model, messages: [{ role: "user", content: "hi" }] }),
    });
  const served = await chat("coding");
  expect([served.status, served.headers.get("x-switchyard-fallback")]).toEqual([200, "1"]);
  await served.text();
  expect((await accounts()).find((p) => p.id === "cx")!.builtin).toEqual({ routes: ["alias smart", "combo coding", "combo codex-only"], requests: 0 });
  const refused = await chat("codex-only");
  expect(refused.status).toBe(503);
  await refused.text();
  const cx = (await accounts()).find((p) => p.id === "cx")!.builtin;
  expect({ ...cx, lastAt: typeof cx?.lastAt }).toEqual({ routes: ["alias smart", "combo coding", "combo codex-only"], requests: 1, lastAt: "number", lastStatus: 503 });
});
