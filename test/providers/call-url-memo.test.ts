/**
 * The HTTP executor reuses a provider's last call URL and a credential's `Authorization` value
 * (docs/performance.md item 291): what each call is sent to and with must stay what that call asks
 * for when the next call differs in model, stream mode, format, endpoint, base URL or kind, or its
 * credential's secret changed in place (SPEC 2.3, P-2).
 */
import { expect, test } from "bun:test";
import { HttpExecutor, urlFor } from "../../src/providers/index.ts";
import type { UpstreamCall } from "../../pipeline/execute.ts";
import type { Account, Credential, ProviderInfo } from "../../pipeline/ports.ts";
import type { WireFormat } from "../../formats/hub.ts";

const sent: Array<{ url: string; authorization: string | null }> = [];
const fakeFetch = (async (url: string, init: RequestInit) => {
  sent.push({ url, authorization: new Headers(init.headers).get("authorization") });
  return new Response("{}", { headers: { "content-type": "application/json" } });
}) as unknown as typeof fetch;

function provider(over: Partial<ProviderInfo> = {}): ProviderInfo {
  return { id: "p", kind: "openai-compatible", format: "openai-chat", family: "openai", baseUrl: "http://one.invalid/v1", models: {}, idleTimeoutMs: 60_000, headerTimeoutMs: 60_000, source: "config", ...over };
}

function call(p: ProviderInfo, credential: Credential, over: Partial<UpstreamCall> = {}): UpstreamCall {
  const account = { id: "a", providerId: p.id, credential } as unknown as Account;
  return { provider: p, account, model: "m-1", body: "{}", stream: false, upstreamFormat: p.format, clientFormat: p.format, clientHeaders: new Headers(), signal: new AbortController().signal, ...over };
}

test("each call goes to its own URL whatever the provider's previous call was", async () => {
  const ex = new HttpExecutor(fakeFetch);
  const chat = provider();
  const gemini = provider({ id: "g", kind: "gemini", format: "gemini", family: "gemini", baseUrl: "http://gem.invalid" });
  const key: Credential = { type: "api_key", apiKey: "k-1" };
  const steps: Array<[ProviderInfo, Partial<UpstreamCall>]> = [
    [chat, {}],
    [chat, {}],
    [chat, { upstreamFormat: "openai-responses" as WireFormat }],
    [chat, {}],
    [gemini, {}],
    [gemini, { model: "m-2" }],
    [gemini, { model: "m-2", stream: true }],
    [gemini, { model: "m-2", stream: true, endpoint: "count_tokens" }],
    [gemini, { model: "m-2", stream: true }],
  ];
  for (const [p, over] of steps) {
    const c = call(p, key, over);
    sent.length = 0;
    await ex.send(c);
    expect(sent[0]!.url).toBe(urlFor(p, c.upstreamFormat, c.model, c.stream, c.endpoint));
  }
  // The same provider object given another base URL (a provider edited in place) is called there.
  chat.baseUrl = "http://two.invalid/v1/";
  sent.length = 0;
  await ex.send(call(chat, key));
  expect(sent[0]!.url).toBe("http://two.invalid/v1/chat/completions");
  // And another kind: a claude-code provider's Messages calls carry ?beta=true (SPEC P-2).
  const anthropic = provider({ id: "c", kind: "anthropic", format: "anthropic-messages", family: "anthropic", baseUrl: "http://claude.invalid" });
  const token: Credential = { type: "oauth", accessToken: "t-1" };
  sent.length = 0;
  await ex.send(call(anthropic, key));
  expect(sent[0]!.url).toBe("http://claude.invalid/v1/messages");
  anthropic.kind = "claude-code";
  sent.length = 0;
  await ex.send(call(anthropic, token));
  expect(sent[0]!.url).toBe("http://claude.invalid/v1/messages?beta=true");
});

test("the Authorization value follows the credential's secret, also when it changes in place", async () => {
  const ex = new HttpExecutor(fakeFetch);
  const p = provider();
  const key = { type: "api_key", apiKey: "k-1" } as Credential & { apiKey: string };
  const other: Credential = { type: "api_key", apiKey: "k-2" };
  const seen: Array<string | null> = [];
  for (const cred of [key, key, other, key]) {
    sent.length = 0;
    await ex.send(call(p, cred));
    seen.push(sent[0]!.authorization);
  }
  key.apiKey = "k-3";
  sent.length = 0;
  await ex.send(call(p, key));
  seen.push(sent[0]!.authorization);
  expect(seen).toEqual(["Bearer k-1", "Bearer k-1", "Bearer k-2", "Bearer k-1", "Bearer k-3"]);
});
