/**
 * The admin API reads request bodies as JSON only (the OpenAPI document declares `application/json`):
 * a body whose Content-Type is present and not JSON is a 415 in the admin error shape, with a hint for
 * curl's `-d` default (`application/x-www-form-urlencoded`); `application/json` and `+json` types, with
 * parameters, and a body without a Content-Type are read as JSON (src/admin/replies.ts `contentTypeRefusal`).
 * A `text/plain` body (what a browser's and Node's `fetch` send for a string body given no Content-Type:
 * `text/plain;charset=UTF-8`) is read as JSON when it is JSON (until session 45 it was the 415 too), and
 * is the 415 when it is not (src/admin/replies.ts `readJson`). The dashboard's sign-in answers the same:
 * test/dashboard/access.test.ts.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { startGateway, type TestGateway } from "../support/gateway.ts";

let gw: TestGateway;
beforeAll(async () => {
  gw = await startGateway();
});
afterAll(async () => {
  await gw?.stop();
});

/** POST /admin/api/keys with the raw body bytes and exactly this Content-Type (none when null). */
const createKey = (name: string, contentType: string | null) => {
  const body = new TextEncoder().encode(JSON.stringify({ name }));
  return fetch(`${gw.url}/admin/api/keys`, { method: "POST", headers: contentType === null ? {} : { "content-type": contentType }, body });
};
const keyNames = async () => (((await (await fetch(`${gw.url}/admin/api/keys`)).json()) as any).keys as any[]).map((k) => k.name);

describe("a non-JSON Content-Type is a 415", () => {
  test("text/plain with a body that is not JSON: 415 saying so, no key created", async () => {
    const r = await fetch(`${gw.url}/admin/api/keys`, { method: "POST", headers: { "content-type": "text/plain;charset=UTF-8" }, body: "name=plain" });
    expect(r.status).toBe(415);
    expect(r.headers.get("content-type")).toBe("application/json");
    expect(await r.json()).toEqual({
      error: {
        message: 'The body must be JSON; its Content-Type is "text/plain;charset=UTF-8" and it is not valid JSON (a text/plain body is read when it is JSON): send JSON, as application/json.',
        type: "invalid_request_error",
        param: null,
        code: "unsupported_media_type",
      },
    });
    expect(await keyNames()).not.toContain("plain");
  });

  test("curl -d's application/x-www-form-urlencoded: 415 saying to add the header", async () => {
    const r = await createKey("form", "application/x-www-form-urlencoded");
    expect(r.status).toBe(415);
    expect(((await r.json()) as any).error.message).toBe(
      "The body must be JSON; its Content-Type is \"application/x-www-form-urlencoded\" (what curl -d sends when no type is given): add -H 'content-type: application/json'.",
    );
    expect(await keyNames()).not.toContain("form");
  });

  test("the same on a config route (combos) and with a JSON-looking but other type", async () => {
    const r = await fetch(`${gw.url}/admin/api/combos`, { method: "POST", headers: { "content-type": "application/jsonx" }, body: JSON.stringify({ name: "c1", targets: [{ model: "openai/gpt-x" }] }) });
    expect(r.status).toBe(415);
    await r.text();
  });
});

describe("JSON types and no Content-Type are read as JSON", () => {
  test("application/json with parameters, any case; a +json type; no header", async () => {
    expect((await createKey("j1", "application/json")).status).toBe(201);
    expect((await createKey("j2", "Application/JSON; charset=utf-8")).status).toBe(201);
    expect((await createKey("j3", "application/merge-patch+json")).status).toBe(201);
    expect((await createKey("j4", null)).status).toBe(201);
    expect(await keyNames()).toEqual(expect.arrayContaining(["j1", "j2", "j3", "j4"]));
  });

  test("text/plain with a JSON body (fetch's type for a string body): read as JSON, the key created (201)", async () => {
    const r = await createKey("plain", "text/plain;charset=UTF-8");
    expect(r.status).toBe(201);
    expect(((await r.json()) as { key: { name: string } }).key.name).toBe("plain");
    expect((await createKey("plain2", "Text/Plain")).status).toBe(201);
    expect(await keyNames()).toEqual(expect.arrayContaining(["plain", "plain2"]));
  });

  test("text/plain JSON that breaks the admin API's rules gets their 400, not a 415 (a field's type)", async () => {
    const r = await fetch(`${gw.url}/admin/api/keys`, { method: "POST", headers: { "content-type": "text/plain" }, body: JSON.stringify({ name: 5 }) });
    expect(r.status).toBe(400);
    expect(((await r.json()) as { error: { param: string } }).error.param).toBe("name");
  });

  test("an empty body with another type is not refused for its type (rotate takes an empty body)", async () => {
    expect((await createKey("r1", "application/json")).status).toBe(201);
    const r = await fetch(`${gw.url}/admin/api/keys/r1/rotate`, { method: "POST", headers: { "content-type": "text/plain" } });
    expect(r.status).toBe(200);
    await r.text();
  });
});
