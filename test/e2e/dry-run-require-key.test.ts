/**
 * With `server.require_api_key` a request without a client key is a 401 even from loopback (SPEC G-1):
 * the dry run of such a request (the CLI's `route` without `--header`, the Routing page's "none (as from
 * loopback)") says so with the guard's own message, rather than a plan for a request that would never be
 * routed (newuser14 K9). With a key, by name or presented in the headers, it is routed as before.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { join } from "node:path";
import { startGateway, type TestGateway } from "../support/gateway.ts";
import { providersAtFake } from "../support/configs.ts";

const YAML = `
server:
  require_api_key: true
${providersAtFake(["q", "openai-compatible"])}
accounts:
  - id: q1
    provider: q
    api_key: env:KQ
`;

let gw: TestGateway;
let secret: string;
beforeAll(async () => {
  gw = await startGateway(YAML, { env: { KQ: "sk-dry-require" } });
  const made = await admin("POST", "/keys", { name: "dev" });
  expect(made.status).toBe(201);
  secret = made.json.secret as string;
});
afterAll(async () => {
  await gw?.stop();
});

async function admin(method: string, path: string, b?: unknown): Promise<{ status: number; json: any }> {
  const res = await fetch(`${gw.url}/admin/api${path}`, {
    method,
    headers: { "content-type": "application/json", authorization: `Bearer ${gw.app.adminToken}` },
    body: b === undefined ? undefined : JSON.stringify(b),
  });
  return { status: res.status, json: await res.json() };
}

const request = { model: "q/glm-x", messages: [{ role: "user", content: "hi" }] };

test("a keyless dry run is the endpoint's 401 with the guard's message; with a key (by name or in the headers) it is routed", async () => {
  const real = await fetch(`${gw.url}/v1/chat/completions`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(request) });
  expect(real.status).toBe(401);
  const realMessage = ((await real.json()) as { error: { message: string } }).error.message;
  expect(realMessage).toStartWith("An API key is required");

  // 422 with the endpoint's 401 in refused_status: a 401 from the admin API would tell an admin client
  // (the dashboard reloads to its sign-in view) that its own credentials were refused (review14 R1)
  const keyless = await admin("POST", "/dry-run", { request, endpoint: "chat" });
  expect({ status: keyless.status, code: keyless.json.error?.code, refused: keyless.json.error?.refused_status, message: keyless.json.error?.message }).toEqual({
    status: 422,
    code: "invalid_api_key",
    refused: 401,
    message: `The endpoint would refuse this request (401): ${realMessage}`,
  });
  // an unknown secret is the guard's 401 too (from loopback it was ignored only while keys were optional)
  const unknown = await admin("POST", "/dry-run", { request, endpoint: "chat", headers: { authorization: "Bearer sy-not-a-key" } });
  expect({ status: unknown.status, refused: unknown.json.error?.refused_status }).toEqual({ status: 422, refused: 401 });

  for (const who of [{ key: "dev" }, { headers: { authorization: `Bearer ${secret}` } }]) {
    const routed = await admin("POST", "/dry-run", { request, endpoint: "chat", ...who });
    expect(routed.status).toBe(200);
    expect(routed.json.attempts.map((a: { accountId: string }) => a.accountId)).toEqual(["q1"]);
  }
  expect(gw.fake.requests).toEqual([]);
});

test("switchyard route without a client key says the request would be refused, and exits 1", async () => {
  const proc = Bun.spawn(["bun", "run", join(import.meta.dir, "../../src/main.ts"), "route", "q/glm-x", "--url", gw.url, "--key", gw.app.adminToken], {
    stdout: "pipe",
    stderr: "pipe",
    env: { ...process.env, SWITCHYARD_HOME: gw.dataDir },
  });
  const [out, err, code] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text(), proc.exited]);
  expect(code).toBe(1);
  expect(out).not.toContain("attempt order");
  expect(err).toContain("The endpoint would refuse this request (401): An API key is required");
  const withKey = Bun.spawn(["bun", "run", join(import.meta.dir, "../../src/main.ts"), "route", "q/glm-x", "--header", `Authorization: Bearer ${secret}`, "--url", gw.url, "--key", gw.app.adminToken], {
    stdout: "pipe",
    stderr: "pipe",
    env: { ...process.env, SWITCHYARD_HOME: gw.dataDir },
  });
  const [out2, , code2] = await Promise.all([new Response(withKey.stdout).text(), new Response(withKey.stderr).text(), withKey.exited]);
  expect(code2).toBe(0);
  expect(out2).toContain("attempt order: q/glm-x @ q1");
});
