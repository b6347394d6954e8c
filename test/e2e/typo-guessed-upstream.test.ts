/**
 * A mistyped alias or combo name guessed to a provider that has accounts (SPEC R-2) goes upstream as
 * written; when every target answers that the model does not exist, the client's 404 keeps the
 * upstream's words and adds the alias or combo it is near, as the 404 for a provider without accounts
 * does (newuser13's tryout, J10). A name near nothing, or an upstream that serves it, gets no such hint.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { startGateway, type TestGateway } from "../support/gateway.ts";
import { providersAtFake } from "../support/configs.ts";

let gw: TestGateway;
beforeAll(async () => {
  gw = await startGateway(`
${providersAtFake(["openai", "openai"])}
accounts:
  - { id: oai-1, provider: openai, api_key: env:FAKE_KEY }
combos:
  - name: coding
    targets:
      - model: openai/gpt-test
`);
  gw.fake.handle((req) =>
    req.model === "gpt-test" ? undefined : { status: 404, json: { error: { message: `The model \`${req.model}\` does not exist or you do not have access to it.`, type: "invalid_request_error", param: null, code: "model_not_found" } } },
  );
});
afterAll(async () => {
  await gw?.stop();
});

const chat = (model: string) => fetch(`${gw.url}/v1/chat/completions`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ model, messages: [{ role: "user", content: "hi" }] }) });

test("codng (combo coding) sent to openai, which has no such model: a 404 with the upstream's words and the near combo", async () => {
  const before = gw.fake.requests.length;
  const res = await chat("codng");
  expect(res.status).toBe(404);
  const body = (await res.json()) as { error: { message: string; code: string } };
  expect(body.error.message).toBe('The model `codng` does not exist or you do not have access to it. (`codng` is not an alias or combo of this gateway; did you mean "coding"?)');
  expect(gw.fake.requests.slice(before).map((r) => r.model)).toContain("codng");
});

test("a name near no alias or combo keeps the upstream's 404 as it is; the combo itself is served", async () => {
  const far = (await (await chat("zzzzzz")).json()) as { error: { message: string } };
  expect(far.error.message).toBe("The model `zzzzzz` does not exist or you do not have access to it.");
  expect((await chat("coding")).status).toBe(200);
});
