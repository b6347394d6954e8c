/**
 * Discovery.advertised (src/providers/discovery.ts): the models an account's upstream lists, asked with
 * the account's own key at the list endpoint of the provider's format, stored nowhere — the account
 * test's offer when nothing configured names a model.
 */
import { expect, test } from "bun:test";
import type { Account, ProviderInfo } from "../../pipeline/ports.ts";
import { Discovery } from "../../src/providers/discovery.ts";

const provider = (kind: ProviderInfo["kind"], format: ProviderInfo["format"]): ProviderInfo => ({
  id: "p",
  kind,
  format,
  family: "provider:p" as ProviderInfo["family"],
  baseUrl: "http://upstream.test",
  models: {},
  idleTimeoutMs: 60_000,
  headerTimeoutMs: 60_000,
  source: "config",
});
const account: Account = { id: "a", providerId: "p", priority: 0, credential: { type: "api_key", apiKey: "k-secret" }, disabled: false, source: "config" };

function discovery(reply: (url: string, headers: Headers) => Response) {
  const asked: Array<[string, string | null, string | null]> = [];
  const stored: string[][] = [];
  const d = new Discovery({
    store: { setAccountModels: async (_id, models) => void stored.push(models ?? []) },
    accounts: () => [account],
    providers: () => new Map(),
    healthy: () => true,
    reload: () => {},
    clock: { now: () => 0 } as never,
    fetchImpl: (async (input: string | URL | Request, init?: RequestInit) => {
      const h = new Headers(init?.headers);
      asked.push([String(input), h.get("x-goog-api-key"), h.get("authorization")]);
      return reply(String(input), h);
    }) as typeof fetch,
  });
  return { d, asked, stored };
}

test("a Gemini provider's list (models/ID names, paged) is read from /v1beta/models with the account's key", async () => {
  const { d, asked, stored } = discovery((url) =>
    url.includes("pageToken")
      ? Response.json({ models: [{ name: "models/gemini-b" }] })
      : Response.json({ models: [{ name: "models/gemini-c" }, { name: "models/gemini-a" }], nextPageToken: "t2" }),
  );
  expect(await d.advertised(account, provider("gemini", "gemini"))).toEqual({ models: ["gemini-a", "gemini-b", "gemini-c"] });
  expect(asked).toEqual([
    ["http://upstream.test/v1beta/models?pageSize=1000", "k-secret", null],
    ["http://upstream.test/v1beta/models?pageSize=1000&pageToken=t2", "k-secret", null],
  ]);
  expect(stored).toEqual([]);
});

test("an openai-compatible provider's list is read from /models; an anthropic-compatible one's from /v1/models", async () => {
  const oa = discovery(() => Response.json({ object: "list", data: [{ id: "m2" }, { id: "m1" }] }));
  expect(await oa.d.advertised(account, provider("openai-compatible", "openai-chat"))).toEqual({ models: ["m1", "m2"] });
  expect(oa.asked.map((a) => [a[0], a[2]])).toEqual([["http://upstream.test/models", "Bearer k-secret"]]);
  const an = discovery(() => Response.json({ data: [{ id: "claude-z" }], has_more: false }));
  expect(await an.d.advertised(account, provider("anthropic-compatible", "anthropic-messages"))).toEqual({ models: ["claude-z"] });
  expect(an.asked.map((a) => a[0])).toEqual(["http://upstream.test/v1/models?limit=1000"]);
});

test("a list that cannot be read says why, without the key", async () => {
  const { d } = discovery(() => new Response("nope", { status: 404 }));
  expect(await d.advertised(account, provider("openai-compatible", "openai-chat"))).toEqual({ error: "the models endpoint answered 404" });
  const empty = discovery(() => Response.json({ data: [] }));
  expect(await empty.d.advertised(account, provider("openai-compatible", "openai-chat"))).toEqual({ error: "the provider listed no models" });
});
