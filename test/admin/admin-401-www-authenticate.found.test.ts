/**
 * Found in an admin-API tryout (2026-12-07): with `server.require_api_key: true`, the admin API's 401
 * ("This admin API needs a key with the admin scope.") carries no `WWW-Authenticate` header. RFC 9110
 * 15.5.2 says a 401 MUST carry one, naming the scheme (the OpenAPI document declares `bearer`); HTTP
 * client libraries that answer a challenge, and generated clients' auth handling, look for it.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { providersAtFake } from "../support/configs.ts";
import { startGateway, type TestGateway } from "../support/gateway.ts";

let gw: TestGateway;
beforeAll(async () => {
  gw = await startGateway(`
server:
  require_api_key: true
${providersAtFake(["oai", "openai"])}
accounts:
  - id: oai-1
    provider: oai
    api_key: env:FAKE_KEY
`);
});
afterAll(async () => {
  await gw?.stop();
});

test("a 401 of the admin API names the Bearer scheme in WWW-Authenticate", async () => {
  for (const headers of [{}, { authorization: "Bearer not-a-key" }] as Record<string, string>[]) {
    const res = await fetch(`${gw.url}/admin/api/keys`, { headers });
    const body = (await res.json()) as { error: { type: string } };
    expect({ status: res.status, type: body.error.type, challenge: res.headers.get("www-authenticate")?.split(/\s/)[0]?.toLowerCase() }).toEqual({
      status: 401,
      type: "authentication_error",
      challenge: "bearer",
    });
  }
});
