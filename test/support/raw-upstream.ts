/**
 * What the tests of a hand-written raw HTTP/1.1 upstream (a `Bun.listen` socket writing its own status
 * line, chunked framing and close) share: a gateway whose one provider (`p`, kind `openai`, account
 * `p-1`) calls that upstream, the two-chunk Chat stream they answer, and one chunk of a chunked body.
 * Used where the test fake (test/support/fake-upstream.ts, a Bun.serve) cannot send what the test is
 * about: a chunked body's end a few ms after `[DONE]`, a body that never ends, a close-delimited body cut
 * mid-way.
 */
import { startFakeUpstream } from "./fake-upstream.ts";
import { startGateway, type TestGateway } from "./gateway.ts";

const ev = (o: unknown) => `data: ${JSON.stringify(o)}\n\n`;
const base = { id: "chatcmpl-1", object: "chat.completion.chunk", created: 1, model: "m" };

/** A Chat stream's whole body: a content chunk ("hi"), a finish chunk (`stop`), `data: [DONE]`. */
export const CHAT_SSE =
  ev({ ...base, choices: [{ index: 0, delta: { role: "assistant", content: "hi" }, finish_reason: null }] }) +
  ev({ ...base, choices: [{ index: 0, delta: {}, finish_reason: "stop" }] }) +
  "data: [DONE]\n\n";

/** `s` as one chunk of a `Transfer-Encoding: chunked` body (size in hex, CRLF, data, CRLF). */
export const httpChunk = (s: string): string => `${Buffer.byteLength(s).toString(16)}\r\n${s}\r\n`;

/** A gateway whose provider `p` (kind `openai`) calls the raw upstream listening on 127.0.0.1:`port`. */
export async function gatewayOnRawUpstream(port: number): Promise<TestGateway> {
  const yaml = `
providers:
  - id: p
    kind: openai
    base_url: "http://127.0.0.1:${port}/v1"
accounts:
  - id: p-1
    provider: p
    api_key: env:KEY_A
`;
  return startGateway(yaml, { env: { KEY_A: "sk-test-aaaaaaaaaaaa" }, fake: await startFakeUpstream() });
}
