/**
 * A Responses provider (kind `openai-responses`) that answers with a proxy's HTML error page (502
 * text/html): the client's error message is "Upstream returned HTTP 502.", as behind kinds `openai` and
 * `anthropic`, not the page (formats/openai-responses/errors.ts parseError, formats/raw-error-text.ts).
 * Until 2026-12-07 the OpenAI SDK's error read "502 <html><body><h1>502 Bad Gateway</h1></body></html>".
 * Real gateway, fake upstream, the official OpenAI SDK.
 */
import { expect, test } from "bun:test";
import OpenAI, { APIError } from "openai";
import { startGateway } from "../support/gateway.ts";

const PAGE = "<html><body><h1>502 Bad Gateway</h1></body></html>";

async function errorOf(call: () => Promise<unknown>): Promise<APIError> {
  try {
    await call();
  } catch (e) {
    if (e instanceof APIError) return e;
    throw e;
  }
  throw new Error("no error");
}

// A gateway each: the 502 cools the account down, and a second request would get the gateway's 503.
for (const model of ["resp/gpt-5", "oai/gpt-5"]) {
  for (const client of ["chat", "responses"] as const) {
    test(`${model}, ${client} client: "Upstream returned HTTP 502.", not the page`, async () => {
      const gw = await startGateway();
      try {
        gw.fake.handle(() => ({ status: 502, headers: { "content-type": "text/html" }, text: PAGE }));
        const openai = new OpenAI({ apiKey: "placeholder", baseURL: `${gw.url}/v1`, maxRetries: 0 });
        const err = await errorOf(() =>
          client === "chat" ? openai.chat.completions.create({ model, messages: [{ role: "user", content: "hi" }] }) : openai.responses.create({ model, input: "hi" }),
        );
        expect([err.status, err.message]).toEqual([502, "502 Upstream returned HTTP 502."]);
      } finally {
        await gw.stop();
      }
    });
  }
}
