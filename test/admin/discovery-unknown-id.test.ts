/**
 * `POST /admin/api/discovery` with a provider or account id the gateway does not know is a 404. Found
 * in an admin-API tryout (2026-12-07): it answered 200 `{"results": []}`, the same as a known one with nothing to
 * discover, so a typo goes unnoticed. Every other admin route that names an object by id answers 404
 * for an unknown one (`/accounts/nope/unlock`: 404 "No account nope.", `/providers/nope/close-circuit`:
 * 404 "No provider nope."), and the OpenAPI document lists its 404.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { startGateway, type TestGateway } from "../support/gateway.ts";

let gw: TestGateway;
beforeAll(async () => {
  gw = await startGateway();
});
afterAll(async () => {
  await gw?.stop();
});

const discover = async (body: unknown) => {
  const res = await fetch(`${gw.url}/admin/api/discovery`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(body) });
  const json = (await res.json()) as { error?: { type?: string; message?: string; param?: string | null } };
  return { status: res.status, type: json.error?.type, message: json.error?.message, param: json.error?.param };
};

test("an unknown provider or account id is a 404 not_found_error, not an empty 200", async () => {
  expect({ provider: await discover({ provider: "no-such-provider" }), account: await discover({ account: "no-such-account" }) }).toEqual({
    provider: { status: 404, type: "not_found_error", message: "No provider no-such-provider.", param: "provider" },
    account: { status: 404, type: "not_found_error", message: "No account no-such-account.", param: "account" },
  });
});

test("a known provider or account, and no filter, still answer 200 (the fix must not refuse them)", async () => {
  expect([(await discover({ provider: "oai" })).status, (await discover({ account: "oai-1" })).status, (await discover({})).status]).toEqual([200, 200, 200]);
});
