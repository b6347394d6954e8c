/**
 * The admin API's write endpoints refuse a body field they do not know (SPEC 9.3): a 400 whose message
 * names every unknown field (and the intended one for a typo) and whose `param` is the first, and the
 * write does not happen. A field silently ignored (`tags` for `tag`) would make an object other than
 * the one asked for. The bodies the dashboard and the CLI send keep working (their own tests send them).
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { startGateway, type TestGateway } from "../support/gateway.ts";
import { providersAtFake } from "../support/configs.ts";

let gw: TestGateway;
beforeAll(async () => {
  gw = await startGateway(`
${providersAtFake(["p", "anthropic"])}
    models:
      claude-x: { context_window: 200000 }
accounts:
  - { id: a1, provider: p, api_key: "env:FAKE_KEY" }
`);
});
afterAll(() => gw?.stop());

const api = (method: string, path: string, body?: unknown) =>
  fetch(`${gw.url}/admin/api${path}`, { method, headers: { "content-type": "application/json" }, body: body === undefined ? undefined : JSON.stringify(body) });

async function refused(r: Response): Promise<{ message: string; param: string | null }> {
  const body = (await r.json()) as { error: { message: string; param: string | null; type: string } };
  expect({ status: r.status, type: body.error.type }).toEqual({ status: 400, type: "invalid_request_error" });
  return body.error;
}

describe("unknown fields are refused", () => {
  test("POST /keys with tags (for tag): 400 naming it and suggesting tag; no key is made", async () => {
    const e = await refused(await api("POST", "/keys", { name: "ci", tags: ["team-a"] }));
    expect(e.param).toBe("tags");
    expect(e.message).toBe('unknown field "tags" (did you mean "tag"?); a key has the fields name, scopes, tag, limits');
    const keys = (await (await api("GET", "/keys")).json()) as { keys: Array<{ name: string }> };
    expect(keys.keys.map((k) => k.name)).not.toContain("ci");
  });

  test("several unknown fields are all named; a nested one is led by its object", async () => {
    const e = await refused(await api("POST", "/keys", { name: "ci", colour: "red", owner: "me" }));
    expect(e.param).toBe("colour");
    expect(e.message).toStartWith('unknown fields "colour", "owner"; a key has the fields');
    const lim = await refused(await api("POST", "/keys", { name: "ci", limits: { rpm: 5, rpd: 100 } }));
    expect(lim.param).toBe("limits.rpd");
    expect(lim.message).toContain('unknown key "rpd" in limits');
  });

  test("the other write endpoints: aliases, accounts (and the credential), discovery, account test, dry run", async () => {
    const cases: Array<[string, string, unknown, string]> = [
      ["POST", "/aliases", { name: "fast", target: "p/claude-x", note: "hi" }, "note"],
      ["POST", "/accounts", { provider: "claude-code", credential: { type: "oauth", access_token: "t" }, label: "x" }, "label"],
      ["POST", "/accounts", { provider: "claude-code", credential: { type: "oauth", access_token: "t", scope: "all" } }, "credential.scope"],
      ["POST", "/discovery", { provider: "p", force: true }, "force"],
      ["POST", "/accounts/a1/test", { model: "claude-x", prompt: "hi" }, "prompt"],
      ["POST", "/dry-run", { request: { model: "p/claude-x", messages: [] }, stream: true }, "stream"],
    ];
    for (const [method, path, body, field] of cases) {
      const e = await refused(await api(method, path, body));
      expect({ path, param: e.param }).toEqual({ path, param: field });
      expect(e.message).toContain(`unknown field "${field.split(".").pop()}"`);
    }
    // nothing was written: no alias, no account
    const aliases = (await (await api("GET", "/aliases")).json()) as { aliases: Array<{ name: string }> };
    expect(aliases.aliases.map((a) => a.name)).not.toContain("fast");
    const accounts = (await (await api("GET", "/accounts")).json()) as { accounts: Array<{ id: string }> };
    expect(accounts.accounts.map((a) => a.id)).toEqual(["a1"]);
    expect(gw.fake.requests.length).toBe(0);
  });

  test("PUT /aliases/{name}, POST /combos and PATCH /settings refuse theirs too", async () => {
    expect((await api("POST", "/aliases", { name: "fast", target: "p/claude-x" })).status).toBe(201);
    const put = await refused(await api("PUT", "/aliases/fast", { target: "p/claude-y", targets: ["p/claude-z"] }));
    expect(put.param).toBe("targets");
    const combo = await refused(await api("POST", "/combos", { name: "c1", targets: [{ model: "p/claude-x" }], tags: ["x"] }));
    expect(combo.message).toContain('"tags"');
    const settings = await refused(await api("PATCH", "/settings", { flight_recorder: { enabled: true, max_request: 10 } }));
    expect(settings.message).toContain('"max_request"');
  });
});
